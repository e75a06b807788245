"""This machine's memory bandwidth, as the kernels could use it: a numba triad ``a = b + s * c`` over float64
arrays far larger than the caches, on one thread and on all numba threads (prints, never asserts).

    python benchmarks/bandwidth.py [--gb 1.0] [--repeats 5]

The figure is bytes moved (two reads and one write per element; write-allocate traffic not counted) over the
best of ``repeats`` passes.
"""

from __future__ import annotations

import argparse
import time

import numba as nb
import numpy as np


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


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description="memory bandwidth (numba triad)")
    ap.add_argument("--gb", type=float, default=1.0, help="GiB per array (three arrays)")
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args(argv)
    one = triad_gbps(args.gb, 1, args.repeats)
    every = triad_gbps(args.gb, None, args.repeats)
    print(f"memory bandwidth (numba triad, {args.gb:g} GiB arrays): 1 thread {one:.1f} GB/s, "
          f"{nb.get_num_threads()} threads {every:.1f} GB/s")


if __name__ == "__main__":
    main()
