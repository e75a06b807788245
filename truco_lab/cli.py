"""The ``truco-lab`` command line."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def _positive_int(text: str) -> int:
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if v <= 0:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return v


def cmd_spec_check(args: argparse.Namespace) -> int:
    from truco_lab.spec import run_fixtures

    d = Path(args.dir)
    if not d.exists():
        print(f"truco-lab spec-check: error: DIR {str(d)!r} does not exist", file=sys.stderr)
        return 2
    results = run_fixtures(d)
    failed = [r for r in results if not r.passed]
    for r in results:
        if args.verbose or not r.passed:
            print(f"{'PASS' if r.passed else 'FAIL'} {r.id}" + (f": {r.message}" if r.message else ""))
    print(f"{len(results) - len(failed)} passed, {len(failed)} failed")
    return 1 if failed else 0


def cmd_bench_engine(args: argparse.Namespace) -> int:
    import numba
    import numpy as np

    from truco_lab.bench import numba_rate, openspiel_rate

    threads = args.threads or numba.get_num_threads()
    kuhn_games, kuhn_steps = openspiel_rate("python_kuhn_poker", seconds=args.seconds)
    truco_games, truco_steps = openspiel_rate("truco_paulista", seconds=args.seconds)
    print(f"openspiel python_kuhn_poker: {kuhn_games:,.0f} games/s, {kuhn_steps:,.0f} steps/s")
    print(
        f"openspiel truco_paulista:    {truco_games:,.0f} hands/s, {truco_steps:,.0f} steps/s "
        f"({1e6 / truco_steps:.1f} us/step vs kuhn {1e6 / kuhn_steps:.1f} us/step)"
    )
    if threads > 1:
        one, _ = numba_rate(args.hands, seed=args.seed, threads=1)
        print(f"numba, 1 thread: {one:,.0f} hands/s")
    rate, out = numba_rate(args.hands, seed=args.seed, threads=threads)
    pts = np.bincount(out[:, 1], minlength=13)
    print(
        f"numba batch: {args.hands:,} random hands, {out[:, 3].mean():.2f} actions/hand, "
        f"player 0 wins {np.mean(out[:, 0] == 0):.3f}, points paid "
        + " ".join(f"{v}:{pts[v]}" for v in (1, 2, 3, 6, 9, 12) if pts[v])
    )
    print(f"numba, {threads} thread(s): {rate:,.0f} hands/s")
    return 0


class _Parser(argparse.ArgumentParser):
    """Bad arguments: one line naming the argument and what is accepted, exit code 2."""

    def error(self, message: str):
        self.exit(2, f"{self.prog}: error: {message}\n")


def _score(text: str) -> tuple[int, int]:
    parts = text.split(",")
    try:
        a, b = (int(x) for x in parts)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected A,B with integers 0..11, got {text!r}") from None
    if not (0 <= a <= 11 and 0 <= b <= 11):
        raise argparse.ArgumentTypeError(f"expected A,B with integers 0..11, got {text!r}")
    return a, b


def _positive_float(text: str) -> float:
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive number, got {text!r}") from None
    if not v > 0:
        raise argparse.ArgumentTypeError(f"expected a positive number, got {text!r}")
    return v


def cmd_solve(args: argparse.Namespace) -> int:
    from truco_lab.games import rules_from_params
    from truco_lab.jobs import parse_viras, solve_cells
    from truco_lab.public_tree import ALL_PRUNES

    prog = "truco-lab solve"
    try:
        rules = rules_from_params({"ranks": args.ranks, "suits": args.suits, "max_stake": args.max_stake})
    except ValueError as e:
        print(f"{prog}: error: {e}", file=sys.stderr)
        return 2
    try:
        viras = parse_viras(args.vira, rules)
    except ValueError:
        print(f"{prog}: error: argument --vira: expected 'all' or a card of the deck "
              f"(ranks {rules.ranks}, suits {rules.suits}, e.g. 7c), got {args.vira!r}", file=sys.stderr)
        return 2
    if args.score[0] >= rules.target or args.score[1] >= rules.target:
        print(f"{prog}: error: argument --score: scores must be below the target {rules.target}", file=sys.stderr)
        return 2
    out = Path(args.out)
    if args.resume and not (out / "checkpoints").is_dir():
        print(f"{prog}: error: argument --resume: no checkpoints under {out}/checkpoints to resume from",
              file=sys.stderr)
        return 2
    try:
        summary = solve_cells(
            rules, args.score, args.dealer, viras, out, algorithm=args.algorithm, iterations=args.iterations,
            target_exploitability=args.target_exploitability, max_iterations=args.max_iterations,
            resume=args.resume, check_every=args.check_every, checkpoint_every=args.checkpoint_every,
            progress=not args.quiet, prunes=ALL_PRUNES if args.prunes == "all" else 0,
        )
    except KeyboardInterrupt:
        # the running cell's checkpoint was written on the way out; finished cells keep their tables
        print(f"\n{prog}: interrupted; checkpoints are in {out}/checkpoints, continue with --resume",
              file=sys.stderr)
        return 130
    for c in summary["cells"]:
        print(f"vira {c['vira']:>3} (class {c['vira_class']}): value {c['game_value']:+.5f}  "
              f"exploitability {c['exploitability']:.2e}  {c['iterations']} it  "
              f"{c['seconds_per_iteration']:.3f} s/it  {c['infosets']:,} infosets  {c['entries']:,} entries  "
              f"{c['bytes_per_entry_total']:.0f} B/entry  peak {c['peak_rss_mb']:.0f} MB")
    print(f"game value {summary['game_value']:+.6f} points/hand (player 0), exploitability "
          f"{summary['exploitability']:.3e}, written to {out}/summary.json")
    return 0


def main(argv: list[str] | None = None) -> int:
    from solvers.cfr import ALGORITHMS

    p = _Parser(prog="truco-lab", description="truco-lab: engine, games and solvers for truco paulista")
    sub = p.add_subparsers(dest="command", required=True, parser_class=_Parser)

    sc = sub.add_parser("spec-check", help="run truco-spec engine fixtures; ends with 'N passed, M failed'")
    sc.add_argument("dir", metavar="DIR", help="a fixture directory (searched recursively) or one fixture file")
    sc.add_argument("-v", "--verbose", action="store_true", help="print every fixture, not only failures")
    sc.set_defaults(func=cmd_spec_check)

    bench = sub.add_parser("bench", help="speed measurements")
    bsub = bench.add_subparsers(dest="what", required=True)
    be = bsub.add_parser("engine", help="random hands through the numba batch path and the OpenSpiel wrapper")
    be.add_argument("--hands", type=_positive_int, default=2_000_000, help="hands for the numba batch (default 2,000,000)")
    be.add_argument("--threads", type=_positive_int, default=None, help="numba threads (default: all numba has)")
    be.add_argument("--seed", type=int, default=0, help="random seed (results are deterministic per seed)")
    be.add_argument("--seconds", type=float, default=1.0, help="seconds per OpenSpiel wrapper measurement")
    be.set_defaults(func=cmd_bench_engine)

    so = sub.add_parser("solve", help="solve hand cells natively; writes Parquet tables, checkpoints, summary.json")
    so.add_argument("--score", type=_score, required=True, metavar="A,B", help="scores at the start of the hand")
    so.add_argument("--dealer", type=int, choices=(0, 1), required=True, help="the dealing player")
    so.add_argument("--vira", required=True, metavar="CARD|all", help="a turned-up card (its vira class) or all")
    so.add_argument("--algorithm", choices=ALGORITHMS, default="dcfr", help="CFR variant (default dcfr)")
    stop = so.add_mutually_exclusive_group(required=True)
    stop.add_argument("--iterations", type=_positive_int, help="run exactly N iterations per cell")
    stop.add_argument("--target-exploitability", type=_positive_float, metavar="E",
                      help="stop each cell once its exploitability (points/hand) is <= E")
    so.add_argument("--max-iterations", type=_positive_int, default=100_000, help="cap with a target (default 100000)")
    so.add_argument("--out", required=True, metavar="DIR", help="output directory")
    so.add_argument("--resume", action="store_true", help="continue from the checkpoints in DIR")
    so.add_argument("--check-every", type=_positive_int, default=5, help="iterations between exploitability checks")
    so.add_argument("--checkpoint-every", type=_positive_int, default=50, help="iterations between checkpoints")
    so.add_argument("--prunes", choices=("all", "none"), default="all", help="value-preserving prunes (default all)")
    so.add_argument("--ranks", default="4567QJKA23", help="deck ranks (small variants)")
    so.add_argument("--suits", default="dshc", help="deck suits (small variants)")
    so.add_argument("--max-stake", type=int, choices=(1, 3, 6, 9, 12), default=12, help="top of the raise ladder")
    so.add_argument("-q", "--quiet", action="store_true", help="no progress bar")
    so.set_defaults(func=cmd_solve)

    args = p.parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
