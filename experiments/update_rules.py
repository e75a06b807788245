"""Which CFR update rule reaches a target exploitability in the fewest iterations on a truco cell?

Builds one cell (one vira class) once, then runs each variant from scratch on it, checking the
exact exploitability (points per hand) every ``--check-every`` iterations until ``--target`` or
``--max-iterations``. Writes ``results/update_rules/<cell>.<hash>.csv`` (columns ``variant,
iteration, exploitability, seconds``), rewritten atomically after each variant; a re-run with
the same arguments skips the variants already in it.

    python experiments/update_rules.py --cell 10,10 --variants dcfr pdcfr+ dcfr:1.5,0,4
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import pandas as pd

from solvers.cfr import ALGORITHMS
from solvers.storage import atomic_write, stable_hash


def parse_variant(text: str) -> tuple[str, tuple[float, float, float] | None]:
    """``name`` or ``name:alpha,beta,gamma`` -> (algorithm, parameters or None for its defaults)."""
    name, _, params = text.partition(":")
    if name not in ALGORITHMS:
        raise ValueError(f"variant {text!r}: algorithm must be one of {', '.join(ALGORITHMS)}")
    if not params:
        return name, None
    try:
        a, b, g = (float(x) for x in params.split(","))
    except ValueError:
        raise ValueError(f"variant {text!r}: parameters must be three numbers alpha,beta,gamma") from None
    return name, (a, b, g)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cell", default="10,10", help="scores A,B (default 10,10)")
    ap.add_argument("--dealer", type=int, default=0)
    ap.add_argument("--vira", type=int, default=0, help="vira class index (default 0)")
    ap.add_argument("--variants", nargs="+", default=["dcfr", "pdcfr+"], help="name or name:alpha,beta,gamma")
    ap.add_argument("--target", type=float, default=2.5e-4, help="points per hand (default 2.5e-4)")
    ap.add_argument("--max-iterations", type=int, default=700)
    ap.add_argument("--check-every", type=int, default=20)
    ap.add_argument("--out", default="results/update_rules")
    ap.add_argument("--threads", type=int, default=2, help="threads per pass (default 2; results do not depend on it)")
    a = ap.parse_args(argv)
    try:
        variants = [(v, *parse_variant(v)) for v in a.variants]
        s0, s1 = (int(x) for x in a.cell.split(","))
    except ValueError as e:
        print(f"update_rules: {e}", file=sys.stderr)
        return 2

    from solvers.vector import VectorSolver
    from truco_lab.abstraction.tree import build_cell

    key = stable_hash([s0, s1, a.dealer, a.vira, a.target, a.max_iterations, a.check_every])
    path = Path(a.out) / f"{s0}x{s1}.d{a.dealer}.v{a.vira}.{key[:8]}.csv"
    done = pd.read_csv(path) if path.exists() else pd.DataFrame(columns=["variant", "iteration", "exploitability",
                                                                          "seconds"])
    tree = build_cell(score0=s0, score1=s1, dealer=a.dealer, vira_class=a.vira)
    tree.offload_navigation()
    for label, alg, params in variants:
        if label in set(done["variant"]):
            print(f"{label}: already in {path}")
            continue
        alpha, beta, gamma = params or (None, None, None)
        s = VectorSolver(tree, alg, alpha=alpha, beta=beta, gamma=gamma, threads=a.threads)
        rows, t0, e = [], time.perf_counter(), float("inf")
        while s.iteration < a.max_iterations and e > a.target:
            s.iterate(a.check_every)
            e = s.exploitability()
            rows.append([label, s.iteration, e, time.perf_counter() - t0])
            print(f"{label:>18} it {s.iteration:4d}  expl {e:.3e}  {rows[-1][3]:6.0f} s", flush=True)
        done = pd.concat([done, pd.DataFrame(rows, columns=done.columns)], ignore_index=True)
        atomic_write(path, lambda p, d=done: d.to_csv(p, index=False), ".csv")
    for label in done["variant"].unique():
        d = done[done["variant"] == label]
        hit = {t: d[d["exploitability"] <= t]["iteration"].min() for t in (1e-3, a.target)}
        print(f"{label:>18}: to 1e-3 {hit[1e-3]}, to {a.target:g} {hit[a.target]}, last {d['exploitability'].iloc[-1]:.3e}")
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
