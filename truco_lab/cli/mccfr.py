"""``truco-lab mccfr``: Monte-Carlo CFR on the numba engine, for hands whose tree does not fit."""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import pyspiel
from tqdm import tqdm

from solvers.mccfr import MCCFRSolver
from solvers.storage import stable_hash, write_json
from solvers.tree import estimate_tree_size
from truco_lab.cli.common import (
    CliError,
    add_rules_options,
    check_score,
    nonneg_int,
    positive_float,
    positive_int,
    rules_from_args,
    score_pair,
    seed,
)
from truco_lab.lab.runs import RunError, claim, refuse_conflicting
from truco_lab.openspiel.games import openspiel_hand
from truco_lab.openspiel.sampled import KEY_KINDS, exploitability, head_to_head, key_kind, sampled_game
from truco_lab.rules import check_start

PROG = "truco-lab mccfr"


def add_parser(sub) -> None:
    mc = sub.add_parser("mccfr", help="Monte-Carlo CFR on the engine, for hands whose tree does not fit "
                                      "(full Argentine hands, two against two); resumable")
    mc.add_argument("--score", type=score_pair, required=True, metavar="A,B", help="scores (of the sides)")
    mc.add_argument("--dealer", type=int, choices=(0, 1, 2, 3), required=True, help="the dealing seat")
    mc.add_argument("--sampling", choices=("external", "outcome"), default="external")
    mstop = mc.add_mutually_exclusive_group(required=True)
    mstop.add_argument("--iterations", type=positive_int, help="run until N iterations in all")
    mstop.add_argument("--seconds", type=positive_float, help="run this many seconds")
    mc.add_argument("--capacity", type=positive_int, default=1 << 22,
                    help="information sets the table holds (default 4,194,304: ~0.8 GB)")
    mc.add_argument("--keys", choices=KEY_KINDS, default=None,
                    help="how information sets are keyed: strength (default where lossless: paulista, mineiro and "
                         "their 2v2 games), cards (default elsewhere) or suit-blind (argentino: trick levels, own "
                         "envido points and flor; an abstraction, certified with --exploitability on small decks)")
    mc.add_argument("--seed", type=seed, default=0, help="random seed (runs are reproducible per seed)")
    mc.add_argument("--exploitability", action="store_true",
                    help="heads-up small variants: exact exploitability of the average (walks the tree)")
    mc.add_argument("--head-to-head", type=positive_int, default=None, metavar="HANDS",
                    help="play HANDS deals against uniform random play on each side (team games' measure)")
    mc.add_argument("--out", required=True, metavar="DIR", help="output directory")
    mc.add_argument("--resume", action="store_true", help="continue the run in DIR from its checkpoint")
    mc.add_argument("--fresh", action="store_true", help="overwrite DIR if it holds another run")
    mc.add_argument("--checkpoint-every", type=positive_int, default=10_000, help="iterations between checkpoints")
    mc.add_argument("--checkpoint-seconds", type=nonneg_int, default=60, metavar="S",
                    help="and at least S seconds between them (default 60: a full-deck table is gigabytes, and "
                         "saving it every 10,000 iterations took a third of a run's time; 0: every N "
                         "iterations); the end, Ctrl-C and SIGTERM always save")
    add_rules_options(mc, team=True, argentine_options=True)
    mc.add_argument("-q", "--quiet", action="store_true", help="no progress bar")
    mc.set_defaults(func=run, prog=PROG)


def run(args: argparse.Namespace) -> int:
    """Resumable; reports speed, and exploitability or head-to-head results where they exist."""
    refuse_conflicting(args.resume, args.fresh)
    rules = rules_from_args(args, any_pack=True)
    check_score(rules, args.score)
    a, b = args.score
    try:
        check_start(rules, a, b, args.dealer)
    except ValueError as e:
        raise CliError(f"argument --score/--dealer: {e}") from None
    try:
        keys = key_kind(rules, args.keys)
    except ValueError as e:
        raise CliError(f"argument --keys: {e}") from None
    game = sampled_game(rules, (a, b), args.dealer, keys)
    og = _certificate_game(args, rules, game.num_players)
    describe = {"rules": rules.to_dict(), "score": [a, b], "dealer": args.dealer, "sampling": args.sampling,
                "capacity": args.capacity, "seed": args.seed, "algorithm": "mccfr"}
    if keys != "cards":
        # part of the run (a run keyed otherwise cannot resume into it); runs keyed by cards keep their hash
        describe["keys"] = keys
    key = stable_hash(describe)
    out = Path(args.out)
    try:
        claim(out, "mccfr", key, describe, resume=args.resume, fresh=args.fresh)
    except RunError as e:
        raise CliError(str(e)) from None
    solver = MCCFRSolver(game, sampling=args.sampling, capacity=args.capacity, seed=args.seed)
    solver.compile()
    ck = out / "checkpoints" / "mccfr.npz"
    if args.resume and ck.exists():
        try:
            solver.load(ck, key)
        except ValueError as e:
            raise CliError(str(e)) from None
    _iterate(args, solver, ck, key, rules.name)
    summary = {"run": describe, "game": game.name, "iterations": solver.iteration, "seconds": solver.seconds,
               "iterations_per_second": solver.iteration / solver.seconds if solver.seconds else None,
               "infosets": solver.num_infosets, "table_gb": solver.nbytes() / 1e9, "players": game.num_players}
    line = (f"{solver.iteration:,} iterations in {solver.seconds:.1f} s, {solver.num_infosets:,} information sets, "
            f"table {solver.nbytes() / 1e9:.2f} GB")
    if og is not None:
        summary["exploitability"] = exploitability(solver, og)
        summary["units"] = "points"
        line += f", exploitability {summary['exploitability']:.3e} points"
    if args.head_to_head:
        x, ex = head_to_head(game, solver, None, args.head_to_head, args.seed + 1)
        y, ey = head_to_head(game, None, solver, args.head_to_head, args.seed + 2)
        edge, se = (x - y) / 2, (ex**2 + ey**2) ** 0.5 / 2
        summary["head_to_head_vs_random"] = {"hands": args.head_to_head, "edge_points_per_hand": edge,
                                             "standard_error": se}
        line += f", edge over random play {edge:+.3f} ± {se:.3f} points per hand"
    write_json(out / "summary.json", summary)
    print(line + f"; written to {out}/summary.json")
    return 0


def _certificate_game(args: argparse.Namespace, rules, players: int):
    """The OpenSpiel hand for ``--exploitability`` (``None`` without it); refused where it cannot work."""
    if not args.exploitability:
        return None
    if players != 2:
        raise CliError("argument --exploitability: a team game has no exploitability certificate; use "
                       "--head-to-head")
    a, b = args.score
    og = pyspiel.load_game(*openspiel_hand(rules, a, b, args.dealer))
    if estimate_tree_size(og) > 50e6:
        raise CliError("argument --exploitability: this hand's tree is too big for an exact best response "
                       "(a small variant: --ranks/--suits/--max-stake)")
    return og


def _iterate(args: argparse.Namespace, solver: MCCFRSolver, ck: Path, key: str, name: str) -> None:
    """Iterate to ``--iterations`` or for ``--seconds``, checkpointing; Ctrl-C saves whole iterations."""
    target = args.iterations
    batch = max(1, min(1000 if args.sampling == "external" else 20000, args.checkpoint_every))
    bar = None
    if not args.quiet:
        bar = tqdm(total=target, initial=min(solver.iteration, target or 0), unit=" it", desc=f"mccfr {name}") \
            if target else tqdm(total=args.seconds, unit=" s", desc=f"mccfr {name}",
                                bar_format="{l_bar}{bar}| {n:.0f}/{total:.0f} s [{elapsed}<{remaining}]")
    t0 = time.perf_counter()
    last_save, last_time = solver.iteration, t0
    try:
        while (target and solver.iteration < target) or (not target and time.perf_counter() - t0 < args.seconds):
            n = min(batch, target - solver.iteration) if target else batch
            before = solver.iteration
            try:
                solver.iterate(n)
            except (MemoryError, RuntimeError) as e:
                msg = str(e).replace("create the solver with a larger capacity", "give a larger --capacity "
                                     "(and --fresh: the table size is part of the run)")
                kept = (f"the checkpoint of iteration {last_save:,} is kept" if ck.exists() else
                        "no checkpoint was written yet")
                raise CliError(f"{msg}; {kept}") from None
            if bar is not None:
                if target:
                    bar.update(solver.iteration - before)
                else:
                    bar.n = min(time.perf_counter() - t0, args.seconds)
                    bar.refresh()
                bar.set_postfix(sets=f"{solver.num_infosets:,}")
            if (solver.iteration - last_save >= args.checkpoint_every
                    and time.perf_counter() - last_time >= args.checkpoint_seconds):
                solver.save(ck, key)
                last_save, last_time = solver.iteration, time.perf_counter()
    except KeyboardInterrupt:
        solver.save(ck, key)
        raise CliError(f"interrupted after {solver.iteration:,} iterations; checkpoint in {ck}, continue with "
                       "--resume", 130) from None
    finally:
        if bar is not None:
            bar.close()
    solver.save(ck, key)
