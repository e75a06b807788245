"""The default main job (``make solve``): the eleven row in match equity.

Question: with a player on 11 (mão de onze), what is each score worth, and when
should the player on 11 accept the hand? Solves every cell with a player on 11
(11x0 ... 11x11 and their mirrors), both dealers, each to exploitability <= 1e-3
in match-win probability, on both cores; prints the row's equity table and the
accept frequency of the player on 11 by hand strength, and writes
``equity.parquet``, ``equity.png``, strategy tables and ``summary.json`` under
``results/eleven``. Re-running continues or reports the finished run.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

from truco_lab.abstraction.levels import level_names, vira_classes
from truco_lab.lab.cell import CellError
from truco_lab.lab.match import MatchConfig
from truco_lab.lab.match_run import run_match
from truco_lab.lab.runs import RunError
from truco_lab.rules.ruleset import PAULISTA

QUINTILES = ("weakest", "weak", "middle", "strong", "strongest")


def accept_by_strength(out: Path, rules=PAULISTA) -> dict[int, list[float]]:
    """P(accept the hand of eleven) of the player on 11, by the opponent's score and by hand-strength
    quintile (hands ranked by the sum of their strength levels, weighted by deal probability)."""
    import pyarrow.parquet as pq

    classes = vira_classes(rules)
    names = {vc.index: {n: i for i, n in enumerate(level_names(rules, vc))} for vc in classes}
    t = rules.target
    table: dict[int, list[float]] = {}
    for opp in range(t - 1):
        frames = []
        for d in (0, 1):
            # the canonical cell has player 1 on 11: (opp, 11, d)
            for f in sorted((out / "cells" / f"s{opp}-{t - 1}_d{d}").glob("*.parquet")):
                df = pq.read_table(f, columns=["vira_class", "player", "hand", "history", "action", "probability",
                                               "reach"]).to_pandas()
                df = df[(df["history"].astype(str) == "") & (df["action"].astype(str) == "accept_eleven")]
                frames.append(df)
        if not frames:
            continue
        import pandas as pd

        df = pd.concat(frames, ignore_index=True)
        strength = np.array([sum(names[int(v)][x] for x in str(h).split()) / (len(names[int(v)]) - 1)
                             for v, h in zip(df["vira_class"], df["hand"], strict=True)])
        w = df["reach"].to_numpy(float)
        order = np.argsort(strength, kind="stable")
        cum = np.cumsum(w[order]) / w.sum()
        bucket = np.empty(len(df), int)
        bucket[order] = np.minimum((cum * 5 - 1e-9).astype(int), 4)
        p = df["probability"].to_numpy(float)
        table[opp] = [float((w * p)[bucket == q].sum() / max(w[bucket == q].sum(), 1e-300)) for q in range(5)]
    return table


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="results/eleven", help="output directory (default results/eleven)")
    ap.add_argument("--target-exploitability", type=float, default=1e-3, help="win probability (default 1e-3)")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--fresh", action="store_true", help="start over in --out")
    ap.add_argument("--ranks", default=PAULISTA.ranks, help="deck ranks (small variants, e.g. for tests)")
    ap.add_argument("--suits", default=PAULISTA.suits, help="deck suits (small variants)")
    ap.add_argument("--max-stake", type=int, default=12, help="top of the raise ladder (small variants)")
    ap.add_argument("-q", "--quiet", action="store_true")
    args = ap.parse_args(argv)
    rules = PAULISTA.with_deck(args.ranks, args.suits).with_max_stake(args.max_stake)
    out = Path(args.out)
    t0 = time.perf_counter()
    cfg = MatchConfig(rules, target=args.target_exploitability)
    resume = (out / "run.json").exists() and not args.fresh
    try:
        state, summary = run_match(cfg, "eleven", out, workers=args.workers, resume=resume, fresh=args.fresh,
                                   progress=not args.quiet)
    except (RunError, CellError) as e:
        print(f"eleven_row: error: {e}", file=sys.stderr)
        return 2
    t = rules.target
    print()
    print("The eleven row: player 0's match-win probability E at the start of the hand")
    print(f"{'score':>7} {'E(p0 deals)':>12} {'E(p1 deals)':>12}   {'score':>7} {'E(p0 deals)':>12} {'E(p1 deals)':>12}")
    for b in range(t):
        e = state.equity.values[:, t - 1, b]
        m = state.equity.values[:, b, t - 1]
        print(f"{f'11x{b}':>7} {e[0]:>12.4f} {e[1]:>12.4f}   {f'{b}x11':>7} {m[0]:>12.4f} {m[1]:>12.4f}")
    print()
    print("Player on 11: P(accept the hand of eleven) by hand-strength quintile (deal-weighted, both dealers)")
    print(f"{'opp':>4} " + " ".join(f"{q:>9}" for q in QUINTILES))
    acc = accept_by_strength(out, rules)
    for opp, row in acc.items():
        print(f"{opp:>4} " + " ".join(f"{x:>9.3f}" for x in row))
    print()
    edge = state.equity.values[0, t - 1, t - 1]
    print(f"11x11: the dealer (player 0) wins the match with probability {edge:.4f}")
    print(f"match exploitability {summary['match_exploitability']:.3e} (win probability, worst eleven-row cell); "
          f"largest cell exploitability {summary['max_cell_exploitability']:.3e}; {summary['cells_solved']} cells "
          f"solved ({summary['cells_in_table']} with mirrors); {time.perf_counter() - t0:.0f} s; written to {out}")
    return 0 if summary["target_met"] else 3


if __name__ == "__main__":
    raise SystemExit(main())
