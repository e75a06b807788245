"""Does a second thread pay on this machine? (prints figures, never asserts)

1. A memory-bound loop (a streamed sum) and a compute-bound one (sin*cos) on 1 and 2 numba threads.
2. One native truco cell: seconds per DCFR iteration with the sequential passes and with the
   parallel passes (subtrees below depth 2 split over 2 bins, solvers/vector.py:ParallelPlan).

    python benchmarks/threads.py [--cell 11,11]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

import numba as nb  # noqa: E402
import numpy as np  # noqa: E402


@nb.njit(parallel=True)
def _stream(x, bins):
    out = np.zeros(bins)
    n = x.shape[0]
    for b in nb.prange(bins):
        acc = 0.0
        for i in range(n * b // bins, n * (b + 1) // bins):
            acc += x[i] * 1.0001
        out[b] = acc
    return out.sum()


@nb.njit(parallel=True)
def _compute(x, bins):
    out = np.zeros(bins)
    n = x.shape[0]
    for b in nb.prange(bins):
        acc = 0.0
        for i in range(n * b // bins, n * (b + 1) // bins):
            acc += np.sin(x[i]) * np.cos(x[i])
        out[b] = acc
    return out.sum()


def timed(fn, *args, reps: int = 3) -> float:
    fn(*args)
    t = time.perf_counter()
    for _ in range(reps):
        fn(*args)
    return (time.perf_counter() - t) / reps


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cell", default="11,11", help="score cell to time (default 11,11)")
    args = ap.parse_args(argv)
    print(f"numba threads available: {nb.get_num_threads()}")
    x = np.random.default_rng(0).random(100_000_000)
    for name, fn in (("streamed sum (memory-bound)", _stream), ("sin*cos (compute-bound)", _compute)):
        one, two = timed(fn, x, 1), timed(fn, x, 2)
        print(f"{name}: 1 thread {one:.3f} s, 2 threads {two:.3f} s, speed-up {one / two:.2f}x", flush=True)
    from solvers.vector import VectorSolver
    from truco_lab.abstraction.tree import build_cell
    from truco_lab.rules.ruleset import PAULISTA

    a, b = (int(v) for v in args.cell.split(","))
    tree = build_cell(PAULISTA, a, b, 0, 0)
    per = {}
    for threads in (1, 2):
        s = VectorSolver(tree, "dcfr", threads=threads)
        s.iterate(2)
        t = time.perf_counter()
        s.iterate(5)
        per[threads] = (time.perf_counter() - t) / 5
    print(f"cell {a}x{b} ({tree.num_slots:,} entries): sequential passes {per[1]:.3f} s/iteration, parallel "
          f"passes {per[2]:.3f} s/iteration, speed-up {per[1] / per[2]:.2f}x")


if __name__ == "__main__":
    main()
