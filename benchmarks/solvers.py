"""Solver speed: Leduc DCFR end to end vs OpenSpiel's C++ CFRPlusSolver (prints, never asserts)."""

from __future__ import annotations

import resource
import sys
import time
from pathlib import Path

# Run as a script, this file's folder comes first on sys.path and its name
# would shadow the `solvers` package.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

import pyspiel  # noqa: E402

from solvers import solve  # noqa: E402


def main() -> None:
    game = pyspiel.load_game("leduc_poker")
    solve(game, algorithm="dcfr", iterations=2)  # numba compile, not timed
    t = time.perf_counter()
    r = solve(game, algorithm="dcfr", iterations=400)
    ours = time.perf_counter() - t
    print(f"ours  leduc dcfr 400 it (tree build included): {ours:.3f} s, exploitability {r.exploitability:.2e}, "
          f"{r.tree.num_infosets} infosets, {r.tree.num_slots} entries")
    t = time.perf_counter()
    cpp = pyspiel.CFRPlusSolver(game)
    for _ in range(400):
        cpp.evaluate_and_update_policy()
    theirs = time.perf_counter() - t
    pol = cpp.average_policy()
    print(f"open_spiel C++ CFRPlusSolver 400 it: {theirs:.3f} s, exploitability {pyspiel.exploitability(game, pol):.2e}")
    print(f"speed-up: {theirs / ours:.1f}x")
    print(f"peak RSS: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")


if __name__ == "__main__":
    main()
