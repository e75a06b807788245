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


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="truco-lab", description="truco-lab: engine, games and solvers for truco paulista")
    sub = p.add_subparsers(dest="command", required=True)

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

    args = p.parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
