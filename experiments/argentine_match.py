"""Argentine truco's match equity on a small deck (issue 20 §2).

Question: on a deck small enough to walk, what is each score of an Argentine match worth to each side, and
how much does being mano (the seat after the dealer) and the score-dependent falta envido move it? Solves
every cell backward (:mod:`truco_lab.lab.argentine_match`), each to exploitability <= ``--target`` in
match-win probability, prints the equity table per dealer and writes ``equity.csv`` and ``summary.json``
(keyed by a hash of the rules and target) under ``--out``. A toy deck: ranks 1 7 12 of two suits (all six
cards are dealt), raises to 1 by default (the envido family decides the points), to 5 points.

    python experiments/argentine_match.py [--match-target 5] [--max-stake 1] [--out results/argentine-match]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from solvers.storage import atomic_write, read_json, stable_hash, write_json
from truco_lab.lab.argentine_match import match_rules, solve_match
from truco_lab.rules.ruleset import RuleSet


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ranks", default="1 7 12")
    ap.add_argument("--suits", default="eb")
    ap.add_argument("--max-stake", type=int, default=1, choices=(1, 2, 3, 4))
    ap.add_argument("--match-target", type=int, default=5, help="points to win the match (default 5)")
    ap.add_argument("--target", type=float, default=1e-4, help="exploitability per cell, match-win probability")
    ap.add_argument("--out", default="results/argentine-match")
    args = ap.parse_args(argv)
    try:
        rules = match_rules(RuleSet.from_options("argentino", ranks=args.ranks, suits=args.suits,
                                                 max_stake=args.max_stake), args.match_target)
    except ValueError as e:
        print(f"argentine_match: error: {e}", file=sys.stderr)
        return 2
    out = Path(args.out)
    key = stable_hash({"rules": rules.to_dict(), "target": args.target})
    summary = out / "summary.json"
    if summary.exists() and read_json(summary, "summary").get("key") == key:
        print(f"already solved: {summary}")
        return 0
    out.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()

    def say(c) -> None:
        print(f"  {c.score0}x{c.score1} d{c.dealer}: equity {c.equity:.4f}, exploitability {c.exploitability:.1e}, "
              f"{c.nodes:,} nodes, {c.iterations} it, {c.seconds:.0f} s", flush=True)

    df = solve_match(rules, args.target, say)
    atomic_write(out / "equity.csv", lambda tmp: df.to_csv(tmp, index=False))
    top = rules.target
    for d in (0, 1):
        print(f"player 0's match-win probability, player {d} dealing (rows: player 0's score, columns: player 1's)")
        t = df[df.dealer == d].pivot(index="score0", columns="score1", values="equity")
        print(t.round(3).to_string())
    mano = df[(df.score0 == 0) & (df.score1 == 0)].set_index("dealer").equity
    print(f"at 0x0 player 0 wins {mano[1]:.3f} as mano (player 1 deals) and {mano[0]:.3f} as dealer")
    write_json(summary, {"key": key, "rules": rules.to_dict(), "target": args.target, "cells": len(df),
                         "solved": int((~df.mirrored).sum()), "max_exploitability": float(df.exploitability.max()),
                         "equity_0x0": {"dealer0": float(mano[0]), "dealer1": float(mano[1])},
                         "seconds": time.perf_counter() - t0, "match_target": top})
    print(f"written to {out}/equity.csv and {out}/summary.json ({time.perf_counter() - t0:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
