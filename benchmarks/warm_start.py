"""How many iterations do warm starts save? (prints figures, never asserts)

Solves the eleven row (every cell with a player on 11, backward induction in match equity) twice,
with and without warm starts (a cell starting from the last solved cell with the same tree shape),
and prints the iterations each needed to reach the target, cell by cell and in total.

    python benchmarks/warm_start.py                 # small deck (7QJKA23, clubs, ladder to 3), all cells
    python benchmarks/warm_start.py --full          # full deck, one vira class (class 0) per cell
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

from truco_lab.lab import match as M  # noqa: E402
from truco_lab.lab.executors import InlineExecutor  # noqa: E402
from truco_lab.rules.ruleset import PAULISTA  # noqa: E402


def solve_row(rules, warm: bool, target: float, out: Path) -> tuple[dict, float]:
    cfg = M.MatchConfig(rules, target=target, table=False, warm_start=warm)
    iters: dict = {}
    t = time.perf_counter()

    def on_job(job, res):
        iters[job.spec.name] = res.iterations

    M.solve_match(cfg, M.select_cells(rules, "eleven"), InlineExecutor(), out, on_job=on_job)
    return iters, time.perf_counter() - t


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--full", action="store_true", help="full deck, vira class 0 only")
    ap.add_argument("--target", type=float, default=1e-3, help="exploitability per cell (win probability)")
    args = ap.parse_args(argv)
    if args.full:
        rules = PAULISTA
        only = M.vira_classes(rules)[0]
        M.vira_classes = lambda r: [only] if r == rules else []  # one class, to keep the run short
    else:
        rules = PAULISTA.with_deck("7QJKA23", "c").with_max_stake(3)
    from truco_lab.lab.cell import CellJob, CellSpec, Stop, run_cell

    run_cell(CellJob(CellSpec.make(rules, 11, 11, 1, 0), Stop(iterations=2)))  # compile before timing
    res = {}
    for warm in (False, True):
        with tempfile.TemporaryDirectory() as d:
            res[warm] = solve_row(rules, warm, args.target, Path(d))
    cold, warm = res[False][0], res[True][0]
    print(f"{'cell':>14} {'cold':>6} {'warm':>6}")
    for k in cold:
        print(f"{k:>14} {cold[k]:>6} {warm[k]:>6}")
    print(f"total iterations: cold {sum(cold.values())}, warm {sum(warm.values())} "
          f"({1 - sum(warm.values()) / max(sum(cold.values()), 1):.0%} fewer); wall time cold "
          f"{res[False][1]:.0f} s, warm {res[True][1]:.0f} s")


if __name__ == "__main__":
    main()
