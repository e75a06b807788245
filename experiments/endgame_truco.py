"""When to truco at 9-10, on the real deck: the endgame's solved strategy read one table at a time.

Question: in the full 40-card game near the end of the match (9x9 .. 10x10), how often does the
equilibrium call truco at its first chance by hand strength, and how much of its raising is done with
below-median hands (the bluff share)? Reads the strategy tables of a ``truco-lab match --cells endgame``
run (``make lab`` writes ``results/endgame``), one (cell, vira class) table at a time: a 10x10 class is
14.5 M rows, ~3 GB in pandas; all nine at once do not fit this machine. Prints one line per table and a
reach-weighted summary per cell.

    python experiments/endgame_truco.py [--run results/endgame] [--cells 10,10,1 9,9,1] [--classes 3]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import pandas as pd

from truco_lab.lab import insights
from truco_lab.rules.ruleset import PAULISTA

QUINTILES = ("weakest", "weak", "middle", "strong", "strongest")


def one_table(path: Path) -> tuple[pd.Series, float, float]:
    """(P(first raise) by strength quintile, bluff share, total raise weight) of one table."""
    df = pd.read_parquet(path, columns=insights.KEY + ["action", "probability", "reach"])
    dec = insights.decisions(PAULISTA, df)
    del df
    x = dec["reach"] * dec["p_raise"]
    return insights.first_raise_by_strength(dec, 5), insights.bluff_share(dec), float(x.sum())


def cell_arg(text: str) -> tuple[int, int, int]:
    try:
        a, b, d = (int(x) for x in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"cell {text!r}: give score0,score1,dealer, e.g. 10,10,1") from None
    return a, b, d


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--run", default="results/endgame", help="a match run folder (default results/endgame)")
    ap.add_argument("--cells", type=cell_arg, nargs="+", default=[(10, 10, 1), (9, 10, 0), (9, 10, 1), (9, 9, 1)],
                    metavar="A,B,D", help="canonical cells (default the 1->3 tier's four)")
    ap.add_argument("--classes", type=int, nargs="+", default=None, metavar="K", help="vira classes (default all)")
    args = ap.parse_args(argv)
    run = Path(args.run)
    if not (run / "cells").is_dir():
        print(f"endgame_truco: {run} holds no match run: make lab, or truco-lab match --cells endgame --out {run}",
              file=sys.stderr)
        return 2
    print(f"{'cell':>10} {'class':>5}  P(first truco) by strength quintile ({', '.join(QUINTILES)})  bluff share")
    for a, b, d in args.cells:
        files = sorted((run / "cells" / f"s{a}-{b}_d{d}").glob(f"s{a}-{b}_d{d}_v*.parquet"))
        if args.classes is not None:
            files = [f for f in files if int(f.name.split("_v")[1].split(".")[0]) in args.classes]
        if not files:
            print(f"{f'{a}x{b} d{d}':>10}: no tables (not solved yet?)")
            continue
        rows, shares, weights = [], [], []
        for f in files:
            p, share, w = one_table(f)
            vc = int(f.name.split("_v")[1].split(".")[0])
            rows.append(p.to_numpy(float))
            shares.append(share)
            weights.append(w)
            print(f"{f'{a}x{b} d{d}':>10} {vc:>5}  " + "  ".join(f"{x:.2f}" for x in p) + f"   {share:.2f}",
                  flush=True)
        mean = np.nanmean(np.array(rows), axis=0)
        share = float(np.average(shares, weights=weights)) if sum(weights) > 0 else float("nan")
        print(f"{f'{a}x{b} d{d}':>10} {'mean':>5}  " + "  ".join(f"{x:.2f}" for x in mean) + f"   {share:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
