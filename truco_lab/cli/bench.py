"""``truco-lab bench engine``: random hands through the numba batch path and the OpenSpiel wrapper."""

from __future__ import annotations

import argparse

import numba
import numpy as np

from truco_lab.cli.common import positive_int, seed
from truco_lab.openspiel.bench import numba_rate, openspiel_rate


def add_parser(sub) -> None:
    bench = sub.add_parser("bench", help="speed measurements")
    bsub = bench.add_subparsers(dest="what", required=True)
    be = bsub.add_parser("engine", help="random hands through the numba batch path and the OpenSpiel wrapper")
    be.add_argument("--hands", type=positive_int, default=2_000_000, help="hands for the numba batch (default 2,000,000)")
    be.add_argument("--threads", type=positive_int, default=None, help="numba threads (default: all numba has)")
    be.add_argument("--seed", type=seed, default=0, help="random seed (results are deterministic per seed)")
    be.add_argument("--seconds", type=float, default=1.0, help="seconds per OpenSpiel wrapper measurement")
    be.set_defaults(func=run, prog="truco-lab bench engine")


def run(args: argparse.Namespace) -> int:
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
