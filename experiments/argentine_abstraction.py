"""How much does Argentine truco lose when play forgets suits? (issue 20 §2)

The suit-blind abstraction (:mod:`truco_lab.abstraction.argentine_abstract`) keeps each hand's trick levels,
envido points and flor, and shows only the level of a card played. This solves one hand of that abstract game
to ``--target`` points per hand, plays its strategy in the real game and prints the real tree's exact best
response to it (the certificate), beside the real hand solved to the same target. It also estimates the
abstract tree of any deck (the full one included, ``--estimate``) where the real tree cannot be built.

    python experiments/argentine_abstraction.py                                   # 1 3 7 12 x e b (8 cards)
    python experiments/argentine_abstraction.py --suits ebo --out results/argentine-abstraction-12
    python experiments/argentine_abstraction.py --ranks "1 2 3 4 5 6 7 10 11 12" --suits eboc --estimate

Writes ``summary.json`` under ``--out``, keyed by a hash of the rules, cell and target; a finished run is
not redone.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from solvers.storage import read_json, stable_hash, write_json
from truco_lab.rules.ruleset import RuleSet


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ranks", default="1 3 7 12")
    ap.add_argument("--suits", default="eb")
    ap.add_argument("--max-stake", type=int, default=1, choices=(1, 2, 3, 4))
    ap.add_argument("--flor", action="store_true", help="play with flor")
    ap.add_argument("--target", type=float, default=1e-3, help="exploitability of both solves, points per hand")
    ap.add_argument("--max-iterations", type=int, default=4000)
    ap.add_argument("--no-real-solve", action="store_true", help="certify only; do not solve the real hand too")
    ap.add_argument("--estimate", action="store_true", help="estimate the abstract and real trees' sizes (any "
                    "deck, the full one included) and solve nothing")
    ap.add_argument("--probes", type=int, default=2000, help="with --estimate: random walks (default 2000)")
    ap.add_argument("--out", default="results/argentine-abstraction")
    args = ap.parse_args(argv)
    try:
        rules = RuleSet.from_options("argentino", ranks=args.ranks, suits=args.suits, max_stake=args.max_stake,
                                     flor=args.flor)
    except ValueError as e:
        print(f"argentine_abstraction: error: {e}", file=sys.stderr)
        return 2
    for name, v, lo in (("--target", args.target, 0.0), ("--max-iterations", args.max_iterations, 1),
                        ("--probes", args.probes, 2)):
        if not v > lo - (1 if isinstance(v, int) else 0):
            print(f"argentine_abstraction: error: {name} must be {'positive' if lo == 0 else f'at least {lo}'}, "
                  f"got {v}", file=sys.stderr)
            return 2
    if args.estimate:
        return _estimate(rules, args.probes)
    out = Path(args.out)
    key = stable_hash({"rules": rules.to_dict(), "cell": [0, 0, 1], "target": args.target,
                       "max_iterations": args.max_iterations, "real": not args.no_real_solve,
                       "abstraction": "suit-blind"})
    summary = out / "summary.json"
    if summary.exists() and read_json(summary, "summary").get("key") == key:
        print(f"already solved: {summary}")
        _print(read_json(summary, "summary")["certificate"])
        return 0
    from truco_lab.cli.common import sigterm_as_interrupt
    from truco_lab.lab.argentine_certify import certify

    t0 = time.perf_counter()
    try:
        with sigterm_as_interrupt():  # a cluster's preemption stops it like Ctrl-C
            cert = certify(rules, target=args.target, max_iterations=args.max_iterations,
                           solve_real=not args.no_real_solve, progress=True)
    except KeyboardInterrupt:
        print("argentine_abstraction: interrupted; nothing was written (one hand: run the same command again)",
              file=sys.stderr)
        return 130
    out.mkdir(parents=True, exist_ok=True)
    write_json(summary, {"key": key, "rules": rules.to_dict(), "target": args.target,
                         "certificate": cert.row(), "seconds": time.perf_counter() - t0})
    _print(cert.row())
    print(f"written to {summary}")
    return 0


def _print(c: dict) -> None:
    print(f"{c['hands']:,} real hands in {c['classes']:,} classes; entries: abstract {c['abstract_entries']:,}, "
          f"real {c['real_entries']:,}")
    print(f"abstract hand: exploitability {c['abstract_exploitability']:.2e} after {c['abstract_iterations']} "
          f"iterations ({c['abstract_seconds']:.0f} s), value {c['abstract_value']:+.5f}")
    print(f"its strategy in the real hand: value {c['lifted_value']:+.5f}, exploitability "
          f"{c['lifted_exploitability']:.4f} points per hand (the real tree's exact best response)")
    if c.get("real_value") is not None:
        print(f"real hand solved: exploitability {c['real_exploitability']:.2e} after {c['real_iterations']} "
              f"iterations ({c['real_seconds']:.0f} s), value {c['real_value']:+.5f}")


def _estimate(rules: RuleSet, probes: int) -> int:
    from truco_lab.abstraction.argentine_abstract import suit_blind_classes
    from truco_lab.abstraction.argentine_tree import estimate_cell_size

    ab = suit_blind_classes(rules)
    for name, states in (("abstract", ab.states), ("real", None)):
        est = estimate_cell_size(rules, 0, 0, 1, probes=probes, seed=1, states=states)
        print(f"{name}: {est.hands:,} private states, ~{est.nodes:.3g} public nodes, ~{est.infosets:.3g} "
              f"information sets, ~{est.entries:.3g} entries (standard error {est.entries_se:.2g})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
