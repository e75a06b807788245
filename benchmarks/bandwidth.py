"""This machine's memory bandwidth, as the kernels could use it: a numba triad ``a = b + s * c`` over float64
arrays far larger than the caches, on one thread and on all numba threads (prints, never asserts).

    python benchmarks/bandwidth.py [--gb 1.0] [--repeats 5]

The figure is bytes moved (two reads and one write per element; write-allocate traffic not counted) over the
best of ``repeats`` passes.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numba as nb
import numpy as np

# Run as a script, this file's folder comes first on sys.path and benchmarks/solvers.py would shadow the
# `solvers` package (first_touch_ms_per_mb imports it).
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]


# not cached: benchmarks/solvers.py loads this file by path, and numba's cache of a module loaded that way
# failed to load in the next process ("No module named '<dynamic>'"); it compiles in well under a second
@nb.njit(parallel=True)
def _triad(a, b, c, s):
    for i in nb.prange(a.shape[0]):
        a[i] = b[i] + s * c[i]


def triad_gbps(gb: float = 1.0, threads: int | None = None, repeats: int = 5) -> float:
    """Best triad bandwidth (GB/s, 1e9 bytes) over float64 arrays of ``gb`` GiB each on ``threads``."""
    n = int(gb * 2**30 / 8)
    a, b, c = np.zeros(n), np.ones(n), np.full(n, 2.0)
    old = nb.get_num_threads()
    nb.set_num_threads(threads or old)
    try:
        _triad(a, b, c, 3.0)  # compile and touch the pages
        best = float("inf")
        for _ in range(repeats):
            t = time.perf_counter()
            _triad(a, b, c, 3.0)
            best = min(best, time.perf_counter() - t)
    finally:
        nb.set_num_threads(old)
    return 3 * 8 * n / best / 1e9


def first_touch_ms_per_mb(gb: float = 1.0, rounds: int = 3) -> tuple[list[float], list[float]]:
    """Milliseconds per MB to allocate, fill and free ``gb`` GiB, each of ``rounds`` rounds: with glibc's defaults
    (every big block its own mapping, so memory new to the process each time) and with freed memory kept
    (``solvers.storage.keep_freed_memory``, as a task runs). On a VM the first can cost many times the
    second: the host backs guest memory as it is touched (how much varies with what the host reclaimed)."""
    from solvers.storage import keep_freed_memory, release_freed_memory

    n = int(gb * 2**30 / 8)

    def each() -> list[float]:
        out = []
        for _ in range(rounds):
            t = time.perf_counter()
            a = np.empty(n)
            a[:] = 1.0
            del a
            out.append((time.perf_counter() - t) * 1e3 / (gb * 1024))
        return out

    release_freed_memory()
    fresh = each() if not keep_freed_memory() else _fresh(each)
    kept = each()
    release_freed_memory()
    return fresh, kept


def _fresh(measure) -> float:
    """``measure()`` with glibc's defaults for big blocks (each its own mapping, returned on free)."""
    import ctypes
    import ctypes.util

    libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
    libc.mallopt(-4, 65536)  # M_MMAP_MAX: glibc's default
    libc.mallopt(-3, 128 * 1024)  # M_MMAP_THRESHOLD: the default start (fixes it there)
    try:
        return measure()
    finally:
        libc.mallopt(-4, 0)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description="memory bandwidth (numba triad)")
    ap.add_argument("--gb", type=float, default=1.0, help="GiB per array (three arrays)")
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args(argv)
    one = triad_gbps(args.gb, 1, args.repeats)
    every = triad_gbps(args.gb, None, args.repeats)
    print(f"memory bandwidth (numba triad, {args.gb:g} GiB arrays): 1 thread {one:.1f} GB/s, "
          f"{nb.get_num_threads()} threads {every:.1f} GB/s")
    fresh, kept = first_touch_ms_per_mb(args.gb)
    print(f"allocate, fill and free {args.gb:g} GiB, {len(fresh)} rounds: " + " ".join(f"{x:.2f}" for x in fresh)
          + " ms per MB in memory new to the process, " + " ".join(f"{x:.2f}" for x in kept)
          + " with freed memory kept (solvers.storage.keep_freed_memory, as a task runs)")


if __name__ == "__main__":
    main()
