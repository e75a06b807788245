"""Bot and arena speed (prints figures, never asserts).

1. Matches per second through ``truco_paulista_match`` for bot pairs (full deck and a 10-card deck; the
   solved bot when a small-deck match run is given with ``--solved``).
2. Reading a bot's strategy at every information set of a native cell tree (what its exact
   exploitability costs): microseconds per information set.

    python benchmarks/bots.py [--matches 400] [--solved results/small-grid] [--full]   # --full: + full-deck 11x11
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

import truco_lab  # noqa: E402, F401  registers the games
from truco_lab.abstraction.levels import vira_classes  # noqa: E402
from truco_lab.abstraction.tree import DROP_CONCEDE, build_cell  # noqa: E402
from truco_lab.people.arena import load_match_game, run_pair  # noqa: E402
from truco_lab.people.bots import HeuristicBot  # noqa: E402
from truco_lab.people.responses import tree_strategy  # noqa: E402
from truco_lab.people.roster import make_bot  # noqa: E402
from truco_lab.rules.ruleset import PAULISTA  # noqa: E402

SMALL = PAULISTA.with_deck("4567QJKA23", "c").with_max_stake(3)


def matches(rules, label: str, pairs, n: int, solved=None) -> None:
    game = load_match_game(rules)
    strat = None
    if solved:
        from truco_lab.lab.policy import MatchStrategy

        strat = MatchStrategy(solved)
    for a, b in pairs:
        def make(name, seed):
            return make_bot(name, seed, strat)

        run_pair(game, make, a, b, 4, 0)  # warm-up: numba dispatch, solved parts loaded
        t = time.perf_counter()
        res, _ = run_pair(game, make, a, b, n, 1)
        dt = time.perf_counter() - t
        print(f"{label}: {a} vs {b}: {n / dt:,.0f} matches/s, {res.hands / dt:,.0f} hands/s", flush=True)


def extraction(rules, label: str, score, dealer: int) -> None:
    vc = vira_classes(rules)[0]
    tree = build_cell(rules, score[0], score[1], dealer, vc, DROP_CONCEDE)
    bot = HeuristicBot("high")
    t = time.perf_counter()
    tree_strategy(tree, bot.probabilities_at)
    dt = time.perf_counter() - t
    print(f"{label} {score[0]}x{score[1]} d{dealer}, vira class 0: {tree.num_infosets:,} information sets, "
          f"heuristic-high read in {dt:.1f} s ({dt / tree.num_infosets * 1e6:.1f} us per information set)",
          flush=True)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--matches", type=int, default=400)
    p.add_argument("--solved", help="a match run of the 10-card deck (4567QJKA23, clubs, raises to 3)")
    p.add_argument("--full", action="store_true", help="also read a bot at the full deck's 11x11 (~8 min)")
    args = p.parse_args(argv)
    pairs = [("heuristic-high", "random"), ("heuristic-high", "heuristic-low")]
    matches(PAULISTA, "full deck", pairs, args.matches)
    small_pairs = pairs + ([("solved", "heuristic-high")] if args.solved else [])
    matches(SMALL, "10-card deck", small_pairs, args.matches, args.solved)
    extraction(SMALL, "10-card deck", (0, 0), 1)
    if args.full:
        extraction(PAULISTA, "full deck", (11, 11), 1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
