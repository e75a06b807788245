"""MCCFR speed and convergence (prints figures, asserts nothing).

1. The full Argentine hand (seed 004, 40 cards, whole ladder, envido): iterations per second of external and
   outcome sampling driven by the numba engine, and the information sets they reach. Its tree (~7.6e13 nodes)
   has no exact best response.
2. Two against two (Mineiro, ranks K A 2 3, four suits, ladder to 4): head-to-head edge over uniform random
   play as MCCFR runs (a team game: no exploitability), and the full-deck 2v2 hands' iteration speed.
3. The largest Argentine variant whose tree a best response walks quickly (default: ranks 1 7 12, suits e b,
   the whole truco ladder and envido): exact exploitability of the MCCFR average over time, next to DCFR on
   the full tree.

    python benchmarks/mccfr.py [--seconds 60] [--ranks "1 7 12"] [--suits eb] [--checkpoints 1000 10000 100000]
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import replace
from pathlib import Path

# Run as a script, this file's folder comes first on sys.path and benchmarks/solvers.py would shadow the
# `solvers` package.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

import pyspiel  # noqa: E402

import truco_lab  # noqa: E402, F401  registers the games
from solvers.mccfr import MCCFRSolver  # noqa: E402
from truco_lab.openspiel.sampled import exploitability, keyed_tree, sampled_game  # noqa: E402
from truco_lab.rules.ruleset import ARGENTINO  # noqa: E402


def full_hand(seconds: float, capacity: int) -> None:
    game = sampled_game(ARGENTINO, (0, 0), 1)
    for sampling in ("external", "outcome"):
        s = MCCFRSolver(game, sampling=sampling, capacity=capacity, seed=0)
        s.iterate(1)  # compile
        s.seconds = 0.0
        start = s.iteration
        batch = 100 if sampling == "external" else 10000
        while s.seconds < seconds:
            try:
                s.iterate(batch)
            except MemoryError as e:
                print(f"  stopped: {e}")
                break
        n = s.iteration - start
        print(f"full hand, {sampling} sampling: {n:,} iterations in {s.seconds:.1f} s = {n / s.seconds:,.0f} it/s; "
              f"{s.num_infosets:,} information sets reached, table {s.nbytes() / 1e9:.2f} GB")


def teams(seconds: float, capacity: int) -> None:
    from truco_lab.openspiel.sampled import head_to_head
    from truco_lab.rules.ruleset import MINEIRO_2V2, PAULISTA_2V2

    for rules in (PAULISTA_2V2, MINEIRO_2V2):
        s = MCCFRSolver(sampled_game(rules, (0, 0), 3), capacity=capacity, seed=0)
        s.compile()
        try:
            while s.seconds < seconds:
                s.iterate(100)
        except MemoryError as e:
            print(f"  stopped: {e}")
        print(f"{rules.name} full deck, external sampling: {s.iteration / s.seconds:,.0f} it/s, "
              f"{s.num_infosets:,} information sets after {s.seconds:.1f} s")
    rules = MINEIRO_2V2.with_deck("KA23", "dshc").with_max_stake(4)
    game = sampled_game(rules, (0, 0), 3)
    base, e0 = head_to_head(game, None, None, 20000, 3)
    print(f"mineiro_2v2 KA23: random against random, side 0 (mano's) {base:+.3f} ± {e0:.3f} points per hand")
    s = MCCFRSolver(game, capacity=capacity, seed=0)
    s.compile()
    for n in (1000, 3000, 10000, 30000):
        try:
            s.iterate(n - s.iteration)
        except MemoryError as e:
            print(f"  stopped: {e}")
            break
        a, ea = head_to_head(game, s, None, 20000, 1)
        b, eb = head_to_head(game, None, s, 20000, 2)
        print(f"  {s.iteration:,} it ({s.seconds:.1f} s, {s.num_infosets:,} sets): edge over random "
              f"{(a - b) / 2:+.3f} ± {(ea**2 + eb**2) ** 0.5 / 2:.3f} points per hand (both seats)")


def small(ranks: str, suits: str, checkpoints: list[int]) -> None:
    from solvers.api import solve

    params = {"ranks": ranks, "suits": suits}
    og = pyspiel.load_game("truco_argentino", params)
    rules = ARGENTINO.with_deck(ranks, suits)
    print(f"variant {og}")
    t = time.perf_counter()
    res = solve(og, iterations=200, tree="openspiel", check_every=50)
    print(f"  DCFR on the full tree: {res.tree.num_infosets:,} information sets, exploitability "
          f"{res.exploitability:.2e} after 200 iterations in {time.perf_counter() - t:.1f} s (walk included); "
          "history " + ", ".join(f"{i}:{e:.1e}@{sec:.0f}s" for i, e, sec in res.history))
    game = sampled_game(replace(rules), (0, 0), 1)
    tree = keyed_tree(og)
    for sampling in ("external", "outcome"):
        s = MCCFRSolver(game, sampling=sampling, capacity=1 << 20, seed=0)
        s.iterate(1)
        s.seconds = 0.0
        rows = []
        for c in checkpoints:
            c = c if sampling == "external" else 10 * c
            s.iterate(c - s.iteration)
            rows.append(f"{s.iteration:,} it {s.seconds:.1f} s: {exploitability(s, tree):.3e}")
        print(f"  MCCFR {sampling}: " + "; ".join(rows) + f" ({s.num_infosets:,} sets reached)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seconds", type=float, default=30.0, help="seconds per sampling scheme on the full hand")
    ap.add_argument("--ranks", default="1 7 12")
    ap.add_argument("--suits", default="eb")
    ap.add_argument("--checkpoints", type=int, nargs="+", default=[1000, 10000, 100000])
    ap.add_argument("--no-full", action="store_true")
    ap.add_argument("--no-small", action="store_true", help="skip the Argentine variant with a best response")
    ap.add_argument("--no-teams", action="store_true")
    ap.add_argument("--capacity", type=int, default=1 << 25, help="information sets the full hand's table holds")
    a = ap.parse_args()
    if not a.no_full:
        full_hand(a.seconds, a.capacity)
    if not a.no_teams:
        teams(a.seconds, a.capacity)
    if not a.no_small:
        small(a.ranks, a.suits, a.checkpoints)


if __name__ == "__main__":
    main()
