"""Argentine truco's match equity on a small deck (issue 20 §2).

Question: on a deck small enough to walk, what is each score of an Argentine match worth to each side, and
how much does being mano (the seat after the dealer) and the score-dependent falta envido move it? Solves
every cell backward (:mod:`truco_lab.lab.argentine_match`), each to exploitability <= ``--target`` in
match-win probability, prints the equity table per dealer and writes ``equity.csv`` and ``summary.json``
(keyed by a hash of the rules and target) under ``--out``. A toy deck: ranks 1 7 12 of two suits (all six
cards are dealt), raises to 1 by default (the envido family decides the points), to 5 points.

    python experiments/argentine_match.py [--match-target 5] [--max-stake 1] [--out results/argentine-match]
    python experiments/argentine_match.py --ranks "1 3 7 12" --suits eb --match-target 30 --workers 2 --out DIR
    python experiments/argentine_match.py --ranks "1 2 3 4 5 6 7 10 11 12" --suits eboc --plan --out DIR

Each solved cell is appended to DIR/cells.jsonl first, so an interrupted run resumes where it stopped;
``--plan`` estimates every cell's native tree (any deck, the full one included) and prices the match.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

from solvers.storage import atomic_write, read_json, stable_hash, write_json
from truco_lab.lab.argentine_match import ArgentineCell, cells_to_solve, match_rules, solve_match
from truco_lab.lab.runs import RunError, lock_folder
from truco_lab.rules.ruleset import RuleSet


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ranks", default="1 7 12")
    ap.add_argument("--suits", default="eb")
    ap.add_argument("--max-stake", type=int, default=1, choices=(1, 2, 3, 4))
    ap.add_argument("--match-target", type=int, default=5, help="points to win the match (default 5)")
    ap.add_argument("--target", type=float, default=1e-4, help="exploitability per cell, match-win probability")
    ap.add_argument("--flor", action="store_true", help="play with flor (seed 003's option)")
    ap.add_argument("--tree", default="native", choices=("native", "openspiel"),
                    help="native trees (default), or each hand walked through OpenSpiel (the slow check)")
    ap.add_argument("--out", default="results/argentine-match")
    ap.add_argument("--workers", type=int, default=1, help="processes solving the cells of one total score side by "
                    "side (default 1; the results do not depend on it)")
    ap.add_argument("--plan", action="store_true", help="estimate the match's trees and price solving it (any deck, "
                    "the full one included); writes plan.csv under --out and solves nothing")
    ap.add_argument("--plan-probes", type=int, default=400, help="with --plan: random walks per cell (default 400)")
    args = ap.parse_args(argv)
    try:
        rules = match_rules(RuleSet.from_options("argentino", ranks=args.ranks, suits=args.suits,
                                                 max_stake=args.max_stake, flor=args.flor), args.match_target)
    except ValueError as e:
        print(f"argentine_match: error: {e}", file=sys.stderr)
        return 2
    out = Path(args.out)
    if args.workers < 1:
        print(f"argentine_match: error: --workers must be at least 1, got {args.workers}", file=sys.stderr)
        return 2
    if args.plan:
        return _plan(rules, args, out)
    key = stable_hash({"rules": rules.to_dict(), "target": args.target, "tree": args.tree})
    summary = out / "summary.json"
    if summary.exists() and read_json(summary, "summary").get("key") == key:
        print(f"already solved: {summary}")
        return 0
    out.mkdir(parents=True, exist_ok=True)
    try:
        lock_folder(out)  # a second run on this folder would append to the same cells.jsonl
    except RunError as e:
        print(f"argentine_match: error: {e}", file=sys.stderr)
        return 2
    t0 = time.perf_counter()
    known = _resume(out / "cells.jsonl", key)
    from tqdm import tqdm

    bar = tqdm(total=cells_to_solve(rules), initial=len(known), unit=" cells", desc="solving cells")
    log = (out / "cells.jsonl").open("a")
    if not known:
        log.write(json.dumps({"key": key}) + "\n")

    def say(c) -> None:
        # each solved cell is on disk before the next starts: an interrupted run resumes from here
        log.write(json.dumps(vars(c)) + "\n")
        log.flush()
        os.fsync(log.fileno())
        bar.update(1)
        bar.write(f"  {c.score0}x{c.score1} d{c.dealer}: equity {c.equity:.4f}, exploitability "
                  f"{c.exploitability:.1e}, {c.nodes:,} nodes, {c.iterations} it, {c.seconds:.1f} s")

    from truco_lab.cli.common import sigterm_as_interrupt

    try:
        with sigterm_as_interrupt():  # a cluster's preemption stops it like Ctrl-C
            df = solve_match(rules, args.target, say, tree=args.tree, known=known, workers=args.workers)
    except KeyboardInterrupt:
        bar.close()
        print(f"argentine_match: interrupted; {bar.n} cells are in {out}/cells.jsonl, run the same command to "
              "resume", file=sys.stderr)
        return 130
    finally:
        log.close()
    bar.close()
    atomic_write(out / "equity.csv", lambda tmp: df.to_csv(tmp, index=False))
    top = rules.target
    for d in (0, 1):
        print(f"player 0's match-win probability, player {d} dealing (rows: player 0's score, columns: player 1's)")
        t = df[df.dealer == d].pivot(index="score0", columns="score1", values="equity")
        print(t.round(3).to_string())
    mano = df[(df.score0 == 0) & (df.score1 == 0)].set_index("dealer").equity
    print(f"at 0x0 player 0 wins {mano[1]:.3f} as mano (player 1 deals) and {mano[0]:.3f} as dealer")
    write_json(summary, {"key": key, "rules": rules.to_dict(), "target": args.target, "tree": args.tree,
                         "cells": len(df),
                         "solved": int((~df.mirrored).sum()), "max_exploitability": float(df.exploitability.max()),
                         "equity_0x0": {"dealer0": float(mano[0]), "dealer1": float(mano[1])},
                         "seconds": time.perf_counter() - t0, "match_target": top})
    print(f"written to {out}/equity.csv and {out}/summary.json ({time.perf_counter() - t0:.0f} s)")
    return 0


def _plan(rules, args, out: Path) -> int:
    """``--plan``: every cell's tree estimated, the whole match priced (nothing solved)."""
    from tqdm import tqdm

    from truco_lab.lab.argentine_match import cells_to_solve, plan_match

    if args.plan_probes < 2:
        print(f"argentine_match: error: --plan-probes must be at least 2, got {args.plan_probes}", file=sys.stderr)
        return 2
    bar = tqdm(total=cells_to_solve(rules), unit=" cells", desc="estimating cells")
    plan = plan_match(rules, args.plan_probes, progress=lambda _row: bar.update(1))
    bar.close()
    out.mkdir(parents=True, exist_ok=True)
    atomic_write(out / "plan.csv", lambda tmp: plan.cells.to_csv(tmp, index=False))
    for line in plan.lines():
        print(line)
    print(f"per-cell estimates written to {out}/plan.csv")
    return 0


def _resume(path: Path, key: str) -> list[ArgentineCell]:
    """Cells a previous run of the same key solved (an interrupted run; a different key starts afresh)."""
    if not path.exists():
        return []
    lines = path.read_text().splitlines()
    try:
        head = json.loads(lines[0]) if lines else {}
    except json.JSONDecodeError:
        head = {}
    if head.get("key") != key:
        path.unlink()  # another run's cells, never a finished one (summary.json decides that)
        return []
    cells = []
    for line in lines[1:]:
        try:
            cells.append(ArgentineCell(**json.loads(line)))
        except (json.JSONDecodeError, TypeError):
            break  # a line cut short by the interruption: solved again
    print(f"resuming: {len(cells)} cells already solved in {path}")
    return cells


if __name__ == "__main__":
    sys.exit(main())
