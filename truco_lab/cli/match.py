"""``truco-lab match``: every score cell in match equity, by backward induction."""

from __future__ import annotations

import argparse
from pathlib import Path

from solvers.cfr import ALGORITHMS
from truco_lab.abstraction.tree import ALL_PRUNES
from truco_lab.cli.common import (
    CliError,
    add_rules_options,
    nonnegative_float,
    positive_float,
    positive_int,
    prob,
    rules_from_args,
)
from truco_lab.lab.cell import CellError
from truco_lab.lab.match import AUTO, MatchConfig
from truco_lab.lab.match_run import MatchRun, main
from truco_lab.lab.runs import RunError, refuse_conflicting

PROG = "truco-lab match"


def cells_item(text: str):
    """One item of ``--cells``: ``all``, ``eleven``, ``endgame``, ``min:S`` or a score pair ``A,B``."""
    if text in ("all", "eleven", "endgame"):
        return text
    if text.startswith("min:"):
        if not text[4:].isdigit() or not 0 <= int(text[4:]) <= 11:
            raise argparse.ArgumentTypeError(f"expected min:S with a score S in 0..11, got {text!r}")
        return text
    try:
        a, b = (int(x) for x in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected eleven, all, endgame, min:S or score pairs A,B with integers "
                                         f"0..11, got {text!r}") from None
    if not (0 <= a <= 11 and 0 <= b <= 11):
        raise argparse.ArgumentTypeError(f"expected eleven, all, endgame, min:S or score pairs A,B with integers "
                                         f"0..11, got {text!r}")
    return a, b


def cells_of(items: list) -> str | list[tuple[int, int]]:
    if len(items) == 1 and isinstance(items[0], str):
        return items[0]
    if any(isinstance(x, str) for x in items):
        raise CliError("argument --cells: 'all', 'eleven', 'endgame' and 'min:S' stand alone, not beside score pairs")
    return list(items)


def add_parser(sub) -> None:
    ma = sub.add_parser("match", help="solve the match: every score cell in match equity, by backward induction")
    ma.add_argument("--out", required=True, metavar="DIR", help="output directory")
    ma.add_argument("--cells", type=cells_item, nargs="+", default=["all"], metavar="eleven|endgame|min:S|all|A,B ...",
                    help="cells to solve (their successors are included): all (default), eleven, min:S (both scores "
                         ">= S), endgame (min:9), or score pairs")
    ma.add_argument("--target-exploitability", type=positive_float, default=1e-3, metavar="E",
                    help="per cell and vira class, in match-win probability (default 1e-3)")
    ma.add_argument("--max-iterations", type=positive_int, default=5000, help="cap per cell (default 5000)")
    ma.add_argument("--algorithm", choices=(AUTO, *ALGORITHMS), default=AUTO,
                    help="CFR variant (default auto: DCFR+ on the real deck's cells whose ladder reaches 6, DCFR "
                         "elsewhere; a run begun with DCFR everywhere continues so)")
    ma.add_argument("--executor", choices=("local", "ray"), default="local", help="local process pool or Ray")
    ma.add_argument("--ray-address", metavar="ADDR", help="join this Ray cluster (default: start a local Ray)")
    ma.add_argument("--workers", type=positive_int, default=2, help="parallel workers (default 2)")
    ma.add_argument("--threads", type=positive_int, default=None,
                    help="threads per worker's passes (default 1, or the cores left idle when memory holds fewer "
                         "workers than --workers)")
    ma.add_argument("--plan", action="store_true", help="solve nothing: list cells, predicted memory and time")
    ma.add_argument("--nodes", type=positive_int, metavar="N",
                    help="with --plan: simulate the run on N machines and print its wall time")
    ma.add_argument("--cores", type=positive_int, metavar="C",
                    help="with --nodes: cores per machine (default this machine's)")
    ma.add_argument("--node-memory", type=positive_float, metavar="GB",
                    help="with --nodes: memory per machine (default this machine's)")
    ma.add_argument("--resume", action="store_true", help="continue this run in DIR (finished cells are kept)")
    ma.add_argument("--fresh", action="store_true", help="overwrite DIR if it holds another run")
    ma.add_argument("--check-every", type=positive_int, default=5, help="iterations to the first exploitability check; later ones go where the measured "
                    "convergence meets the target (without one: at this x 1, 2, 4, ...). A warm start checks first "
                    "at twice this, then where its neighbour's logged slope meets the target")
    ma.add_argument("--no-warm-start", action="store_true", help="start every cell from zero regrets")
    ma.add_argument("--stream-over", type=positive_float, default=None, metavar="GB",
                    help="stream cells predicted to need more than GB in memory from disk (split depth 3, "
                         "cold start): full-ladder cells on 24 GB machines, e.g. --stream-over 20")
    ma.add_argument("--tree-store-gb", type=nonnegative_float, default=None, metavar="GB",
                    help="keep built trees in DIR/trees, up to GB, for later cells with the same tree (each "
                         "dropped after its last cell; default: half the disk space free at the start; 0: none)")
    ma.add_argument("--keep-checkpoints", action="store_true",
                    help="keep every finished cell's checkpoints (by default one goes once no later cell starts "
                         "from it: its table holds its strategy; kept, a rerun to a tighter target resumes each "
                         "cell where it stopped)")
    ma.add_argument("--no-table", action="store_true", help="write no strategy tables")
    ma.add_argument("--table-min-reach", type=prob, default=0.0, metavar="P",
                    help="leave out information sets the equilibrium reaches with probability below P")
    ma.add_argument("--prunes", choices=("all", "none"), default="all", help="value-preserving prunes (default all)")
    add_rules_options(ma)
    ma.add_argument("-q", "--quiet", action="store_true", help="no progress bar")
    ma.set_defaults(func=run, prog=PROG)


def _cluster(args: argparse.Namespace) -> tuple[int, int, float] | None:
    """(nodes, cores, GB per node) for the plan's simulation, or None; refused unless with --plan."""
    if args.nodes is None:
        if args.cores is not None or args.node_memory is not None:
            raise CliError("argument --cores/--node-memory: give --nodes N too (they describe its machines)")
        return None
    if not args.plan:
        raise CliError("argument --nodes: only with --plan (it simulates the run, it does not start one)")
    from solvers.storage import total_memory_gb
    from truco_lab.lab.executors import cpu_count

    return (args.nodes, args.cores or cpu_count(),
            args.node_memory if args.node_memory is not None else total_memory_gb())


def run(args: argparse.Namespace) -> int:
    refuse_conflicting(args.resume, args.fresh)
    rules = rules_from_args(args)
    cfg = MatchConfig(rules, prunes=ALL_PRUNES if args.prunes == "all" else 0, algorithm=args.algorithm,
                      target=args.target_exploitability, max_iterations=args.max_iterations,
                      check_every=args.check_every, table=not args.no_table, table_min_reach=args.table_min_reach,
                      warm_start=not args.no_warm_start, threads=args.threads or 1,
                      keep_checkpoints=args.keep_checkpoints,
                      stream_over_gb=float("inf") if args.stream_over is None else args.stream_over,
                      tree_store_gb=args.tree_store_gb)
    how = MatchRun(cells_of(args.cells), Path(args.out), plan_only=args.plan, executor=args.executor,
                   workers=args.workers, address=args.ray_address, resume=args.resume, fresh=args.fresh,
                   progress=not args.quiet, cluster=_cluster(args),
                   auto_threads=args.threads is None)
    try:
        return main(cfg, how)
    except (RunError, CellError, ValueError) as e:
        raise CliError(str(e)) from None
    except KeyboardInterrupt:
        raise CliError(f"interrupted; finished cells and checkpoints are in {args.out}, continue with --resume",
                       130) from None
