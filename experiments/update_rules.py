"""Which CFR update rule reaches a target exploitability in the fewest iterations on a truco cell?

Builds one cell (one vira class) once, then runs each variant on it, checking the exact
exploitability every ``--check-every`` iterations until ``--target`` or ``--max-iterations``.
In points per hand by default; with ``--equity FILE`` (a match run's ``equity.parquet``) in
match-win probability, as the match solver runs the cell. A variant is ``name``,
``name:alpha,beta,gamma`` or either with ``@warm``: started, as the match solver's warm
starts are, from the regrets of ``--warm-from`` (a solved neighbour's checkpoint with the same
tree shape), strategy sums and iteration count afresh; ``@warm-count`` keeps the neighbour's iteration
count too (its discounts go on), ``@warm-all`` its whole state (sums too). Writes
``results/update_rules/<cell>.<hash>.csv`` (columns ``variant, iteration, exploitability,
seconds``), rewritten atomically after each variant; a re-run with the same arguments skips
the variants already in it.

    python experiments/update_rules.py --cell 10,10 --variants dcfr pdcfr+ dcfr:1.5,0,4
    python experiments/update_rules.py --cell 9,9 --dealer 1 --equity results/endgame/equity.parquet \
        --warm-from results/endgame/cells/s9-10_d1/checkpoints/s9-10_d1_v0.<hash>.npz --variants dcfr dcfr@warm
    python experiments/update_rules.py --rules argentino --ranks "1 3 7 12" --suits eb --max-stake 2 \
        --cell 0,0 --dealer 1 --target 1e-3 --variants dcfr pcfr+ dcfr+ hs-pcfr+

With ``--rules argentino`` the cell is the Argentine hand's native tree (in points; the deck options apply).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import pandas as pd

from solvers.cfr import ALGORITHMS
from solvers.storage import atomic_write, stable_hash

WARM = {
    "warm": "the neighbour's regrets; strategy sums and the iteration count afresh (the match solver's warm start)",
    "warm-count": "the neighbour's regrets and iteration count (its discounts go on where they were); sums afresh",
    "warm-all": "the neighbour's whole state: regrets, strategy sums and iteration count",
}


def parse_variant(text: str) -> tuple[str, tuple[float, float, float] | None, str | None]:
    """``name[:alpha,beta,gamma][@warm|@warm-count|@warm-all]`` -> (algorithm, parameters or None for its
    defaults, the warm start or None)."""
    body, at, tail = text.partition("@")
    if at and tail not in WARM:
        raise ValueError(f"variant {text!r}: the suffix is one of {', '.join('@' + w for w in WARM)}")
    name, _, params = body.partition(":")
    if name not in ALGORITHMS:
        raise ValueError(f"variant {text!r}: algorithm must be one of {', '.join(ALGORITHMS)}")
    if not params:
        return name, None, tail or None
    try:
        a, b, g = (float(x) for x in params.split(","))
    except ValueError:
        raise ValueError(f"variant {text!r}: parameters must be three numbers alpha,beta,gamma") from None
    return name, (a, b, g), tail or None


def _equity(path: str | None):
    if path is None:
        return None
    from truco_lab.lab.equity import EquityTable

    return EquityTable.load(path)


def _warm(solver, path: str, how: str) -> None:
    """Start ``solver`` from the neighbour's checkpoint as ``how`` says (:data:`WARM`); the regrets fit any
    algorithm (a DCFR checkpoint can start a PCFR+ run)."""
    import numpy as np

    with np.load(path, allow_pickle=False) as d:
        try:
            if how == "warm-all":
                solver.load_state_dict({**d, "algorithm": np.array(solver.algorithm)})
            else:
                solver.load_regrets(d)
                if how == "warm-count":
                    solver.iteration = int(d["iteration"])
        except (KeyError, ValueError):
            raise SystemExit(f"update_rules: --warm-from {path}: not a checkpoint of a tree with this cell's shape") from None


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cell", default="10,10", help="scores A,B (default 10,10)")
    ap.add_argument("--dealer", type=int, default=0)
    ap.add_argument("--vira", type=int, default=0, help="vira class index (default 0)")
    ap.add_argument("--variants", nargs="+", default=["dcfr", "pdcfr+"], help="name or name:alpha,beta,gamma")
    ap.add_argument("--target", type=float, default=2.5e-4, help="in the payoff's units (default 2.5e-4)")
    ap.add_argument("--equity", metavar="FILE", help="equity.parquet: solve in match-win probability")
    ap.add_argument("--warm-from", metavar="CKPT", help="checkpoint the @warm variants start from")
    ap.add_argument("--max-iterations", type=int, default=700)
    ap.add_argument("--check-every", type=int, default=20)
    ap.add_argument("--out", default="results/update_rules")
    ap.add_argument("--threads", type=int, default=2, help="threads per pass (default 2; results do not depend on it)")
    ap.add_argument("--rules", default="paulista", choices=("paulista", "argentino"),
                    help="paulista (default: the real deck's cells) or argentino (a native hand on --ranks/--suits)")
    ap.add_argument("--ranks")
    ap.add_argument("--suits")
    ap.add_argument("--max-stake", type=int)
    a = ap.parse_args(argv)
    try:
        variants = [(v, *parse_variant(v)) for v in a.variants]
        s0, s1 = (int(x) for x in a.cell.split(","))
        equity = _equity(a.equity)
        if any(w for *_, w in variants) and not (a.warm_from and Path(a.warm_from).is_file()):
            raise ValueError(f"--warm-from {a.warm_from!r}: an @warm variant needs an existing checkpoint file")
        rules = None
        if a.rules == "argentino":
            from truco_lab.rules.ruleset import RuleSet

            rules = RuleSet.from_options("argentino", ranks=a.ranks, suits=a.suits, max_stake=a.max_stake)
            if equity is not None:
                raise ValueError("--equity: the Argentine cell is solved in points here")
        elif a.ranks or a.suits or a.max_stake:
            raise ValueError("--ranks/--suits/--max-stake go with --rules argentino (paulista cells are the real deck's)")
    except (ValueError, OSError) as e:
        print(f"update_rules: {e}", file=sys.stderr)
        return 2

    from solvers.vector import VectorSolver
    from truco_lab.abstraction.tree import build_cell

    key = stable_hash([s0, s1, a.dealer, a.vira, a.target, a.max_iterations, a.check_every,
                       equity.key() if equity is not None else None, a.warm_from]
                      + ([rules.to_dict()] if rules is not None else []))
    stem = f"{s0}x{s1}.d{a.dealer}.v{a.vira}" if rules is None else f"argentino.{s0}x{s1}.d{a.dealer}"
    path = Path(a.out) / f"{stem}.{key[:8]}.csv"
    done = pd.read_csv(path) if path.exists() else pd.DataFrame(columns=["variant", "iteration", "exploitability",
                                                                          "seconds"])
    if rules is not None:
        from truco_lab.abstraction.argentine_tree import build_argentine_cell

        tree = build_argentine_cell(rules, s0, s1, a.dealer)
    else:
        tree = build_cell(score0=s0, score1=s1, dealer=a.dealer, vira_class=a.vira,
                          payoff="points" if equity is None else "equity", equity=equity)
    tree.offload_navigation()
    for label, alg, params, warm in variants:
        if label in set(done["variant"]):
            print(f"{label}: already in {path}")
            continue
        alpha, beta, gamma = params or (None, None, None)
        s = VectorSolver(tree, alg, alpha=alpha, beta=beta, gamma=gamma, threads=a.threads)
        if warm:
            _warm(s, a.warm_from, warm)
        start = s.iteration  # a count carried over is not this cell's work: rows count this cell's iterations
        rows, t0, e = [], time.perf_counter(), float("inf")
        while s.iteration - start < a.max_iterations and e > a.target:
            s.iterate(a.check_every)
            e = s.exploitability()
            rows.append([label, s.iteration - start, e, time.perf_counter() - t0])
            print(f"{label:>18} it {s.iteration - start:4d}  expl {e:.3e}  {rows[-1][3]:6.0f} s", flush=True)
        del s  # the next variant's state is allocated afresh: two at once would not fit beside a 4x4 tree
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
