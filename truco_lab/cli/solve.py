"""``truco-lab solve``: one hand cell, every vira class or one, natively (argentino: its native tree, or walked)."""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import pyspiel

from solvers.api import solve
from solvers.cfr import ALGORITHMS
from solvers.storage import available_memory_gb, stable_hash, total_memory_gb, write_json
from solvers.tree import estimate_tree_size
from truco_lab.abstraction.levels import ViraClass, vira_class_of, vira_classes
from truco_lab.abstraction.payoff import units
from truco_lab.abstraction.tree import ALL_PRUNES, CAP_OWN_RAISES, effective_prunes
from truco_lab.cli.common import (
    CliError,
    add_rules_options,
    check_score,
    nonneg_int,
    positive_float,
    positive_int,
    prob,
    rules_from_args,
    score_pair,
)
from truco_lab.lab.cell import CellError, CellJob, CellSpec, Stop, run_cell
from truco_lab.lab.equity import EquityTable
from truco_lab.lab.match import AUTO, cell_algorithm, live_ladder, plan
from truco_lab.lab.runs import Progress, RunError, as_begun, claim, refuse_conflicting
from truco_lab.openspiel.games import openspiel_hand
from truco_lab.rules import RuleSet, sees_own_cards

PROG = "truco-lab solve"
MAX_WALK_NODES = 50e6  # the generic walk's tree on this machine


def add_parser(sub) -> None:
    so = sub.add_parser("solve", help="solve hand cells natively; writes Parquet tables, checkpoints, summary.json")
    so.add_argument("--score", type=score_pair, required=True, metavar="A,B", help="scores at the start of the hand")
    so.add_argument("--dealer", type=int, choices=(0, 1), required=True, help="the dealing player")
    so.add_argument("--vira", default=None, metavar="CARD|all",
                    help="a turned-up card (its vira class) or all; leave out in rule sets without a vira (mineiro)")
    so.add_argument("--ignore-memory-check", action="store_true",
                    help="solve even when the predicted peak memory exceeds what this machine has available")
    so.add_argument("--algorithm", choices=(AUTO, *ALGORITHMS), default=AUTO,
                    help="CFR variant (default auto: DCFR+ on the real deck's cells whose ladder reaches 6, DCFR "
                         "elsewhere; a run begun with DCFR continues so)")
    stop = so.add_mutually_exclusive_group(required=True)
    stop.add_argument("--iterations", type=positive_int, help="run exactly N iterations per cell")
    stop.add_argument("--target-exploitability", type=positive_float, metavar="E",
                      help="stop each cell once its exploitability (in the payoff's units) is <= E")
    so.add_argument("--max-iterations", type=positive_int, default=100_000, help="cap with a target (default 100000)")
    so.add_argument("--payoff", choices=("points", "equity"), default="points",
                    help="terminal payoffs: points (default) or match-win probability (needs --equity)")
    so.add_argument("--equity", metavar="FILE", help="equity.parquet of a match run (successor values)")
    so.add_argument("--out", required=True, metavar="DIR", help="output directory")
    so.add_argument("--resume", action="store_true", help="continue this run in DIR (finished cells are kept)")
    so.add_argument("--fresh", action="store_true", help="overwrite DIR if it holds another run")
    so.add_argument("--check-every", type=positive_int, default=5, help="iterations to the first exploitability check; later ones go where the measured "
                    "convergence meets the target (without one: at this x 1, 2, 4, ...). A warm start checks first "
                    "at twice this, then where its neighbour's logged slope meets the target")
    so.add_argument("--checkpoint-every", type=positive_int, default=50, help="iterations between checkpoints")
    so.add_argument("--prunes", choices=("all", "none"), default="all", help="value-preserving prunes (default all)")
    so.add_argument("--no-table", action="store_true", help="write no strategy table")
    so.add_argument("--threads", type=positive_int, default=2,
                    help="threads per pass (default 2: subtrees in parallel; 1 for the sequential passes)")
    so.add_argument("--split-depth", type=nonneg_int, default=None, metavar="D",
                    help="stream the tree from disk, cut at public depth D (3 for full-ladder cells: the 0x0 "
                         "cell in ~11 GB, more parts kept in memory where there is room); parts go to "
                         "DIR/parts. 0: the whole tree in memory. Default: in memory, or 3 for a cell that "
                         "cannot fit in this machine's memory")
    so.add_argument("--warm-from", metavar="CKPT",
                    help="start from a solved neighbour's regrets, as the match solver does: the checkpoint (.npz) "
                         "of a cell with the same tree (same live ladder, dealer and vira class; streamed at the "
                         "same --split-depth); needs one --vira card. Ignored when this run's own checkpoint "
                         "resumes it")
    so.add_argument("--table-min-reach", type=prob, default=0.0, metavar="P",
                    help="leave out information sets the equilibrium reaches with probability below P")
    add_rules_options(so, argentine_options=True)
    so.add_argument("--tree", choices=("native", "openspiel"), default="native",
                    help="argentino: build its native tree (default; rows keyed by hand and history, with each "
                         "set's reach) or walk the OpenSpiel hand (the independent check on small decks; rows "
                         "keyed by information-state strings)")
    so.add_argument("-q", "--quiet", action="store_true", help="no progress bar")
    so.set_defaults(func=run, prog=PROG)


def run(args: argparse.Namespace) -> int:
    refuse_conflicting(args.resume, args.fresh)
    rules = rules_from_args(args, any_pack=True)
    check_score(rules, args.score)
    args.algorithm = _algorithm(args, rules)
    if rules.pack != "french":
        return _solve_generic(args, rules)
    req = _request(args, rules)
    _check_warm(args, req)
    _memory_guard(args, rules)
    out = Path(args.out)
    describe = {"rules": rules.to_dict(), "score": list(args.score), "dealer": args.dealer, "prunes": req.prunes,
                "payoff": args.payoff, "algorithm": args.algorithm,
                "equity": req.equity.key() if req.equity is not None else None}
    formers = {}
    if args.algorithm != "dcfr" and args.auto_algorithm:
        formers["algorithm"] = "dcfr"  # the default before DCFR+ on this cell's ladder (9 from stop 38, 6 from 45)
    if req.prunes & CAP_OWN_RAISES:
        formers["prunes"] = req.prunes & ~CAP_OWN_RAISES  # before the leading player's raises were capped
    begun = {} if args.fresh else as_begun(out, "solve", describe, formers)
    if begun:
        why = {"algorithm": "with DCFR (the default before DCFR+ on cells with this ladder)",
               "prunes": "before the leading player's raises were capped (cap_own_raises)"}
        print(f"{PROG}: {out} was begun {' and '.join(why[f] for f in begun)}; continuing it so (another --out, "
              "or --fresh to start it over, for the new defaults)", file=sys.stderr)
        describe.update(begun)
        args.algorithm = describe["algorithm"]
        req = replace(req, prunes=describe["prunes"])
    try:
        claim(out, "solve", stable_hash(describe), describe, resume=args.resume, fresh=args.fresh)
    except RunError as e:
        raise CliError(str(e)) from None
    summary = _run_classes(args, req, out, describe)
    for c in summary["cells"]:
        spi = f"{c['seconds_per_iteration']:.3f} s/it" if c["seconds_per_iteration"] else "reused"
        print(f"vira {c['vira']:>3} (class {c['vira_class']}): value {c['game_value']:+.5f}  "
              f"exploitability {c['exploitability']:.2e}  {c['iterations']} it  {spi}  {c['infosets']:,} infosets  "
              f"{c['entries']:,} entries  {c['bytes_per_entry_total']:.0f} B/entry  peak {c['peak_memory_gb']:.2f} GB")
    print(f"game value {summary['game_value']:+.6f} {summary['units']}, exploitability "
          f"{summary['exploitability']:.3e}, written to {out}/summary.json")
    if not summary["target_met"]:
        print(f"{PROG}: warning: target exploitability {args.target_exploitability:g} not reached within "
              f"--max-iterations {args.max_iterations} (see target_met in summary.json)", file=sys.stderr)
        return 3
    return 0


def _algorithm(args: argparse.Namespace, rules: RuleSet) -> str:
    """The update rule for this cell: ``--algorithm``, or ``auto``'s choice by the cell's live ladder
    (remembered in ``args.auto_algorithm``, so a run begun under the old default can continue as it was)."""
    args.auto_algorithm = args.algorithm == AUTO
    cell = (*args.score, args.dealer)
    return cell_algorithm(args.algorithm, rules, live_ladder(rules, cell, ALL_PRUNES if args.prunes == "all" else 0))


@dataclass(frozen=True)
class _Request:
    """What the arguments ask for, checked: the vira classes (with their labels), the payoff's equity
    table, the prunes and the stopping rule."""

    rules: RuleSet
    viras: list[tuple[ViraClass, str]]
    vira: str  # "all" or the one card's literal
    equity: EquityTable | None
    prunes: int
    stop: Stop


def _request(args: argparse.Namespace, rules: RuleSet) -> _Request:
    a, b = args.score
    vira_arg = args.vira
    if not rules.vira:
        if (vira_arg or "all").lower() not in ("all", "none"):
            raise CliError(f"argument --vira: rule set {rules.name} turns no vira (its manilhas are fixed); "
                           f"leave --vira out, got {vira_arg!r}")
        vira_arg = "all"
    elif vira_arg is None:
        raise CliError(f"argument --vira: rule set {rules.name} turns a vira: give a card (e.g. 7c) or all")
    if vira_arg.lower() == "all":
        viras = [(vc, vc.name) for vc in vira_classes(rules)]
    else:
        try:
            card = rules.parse_card(vira_arg)
            viras = [(vira_class_of(rules, card), rules.card_str(card))]
        except ValueError:
            raise CliError(f"argument --vira: expected 'all' or a card of the deck (ranks {rules.ranks}, "
                           f"suits {rules.suits}, e.g. 7c), got {vira_arg!r}") from None
    if not sees_own_cards(rules, (a, b)):
        raise CliError(f"argument --score: under {rules.name} the {a}x{b} hand is played blind (no decisions): "
                       "nothing to solve")
    equity = None
    if args.payoff == "equity":
        if not args.equity:
            raise CliError("argument --equity: --payoff equity needs --equity FILE (an equity.parquet)")
        try:
            equity = EquityTable.load(args.equity)
        except ValueError as e:
            raise CliError(f"argument --equity: {e}") from None
    elif args.equity:
        raise CliError("argument --equity: only with --payoff equity")
    try:
        stop = Stop(iterations=args.iterations, target=args.target_exploitability,
                    max_iterations=args.max_iterations, check_every=args.check_every,
                    checkpoint_every=args.checkpoint_every)
    except ValueError as e:
        raise CliError(str(e)) from None
    # prunes as the cell has them (those that change nothing there left out, so its run keeps its key)
    prunes = effective_prunes(rules, *args.score, ALL_PRUNES if args.prunes == "all" else 0)
    return _Request(rules, viras, "all" if vira_arg.lower() == "all" else viras[0][1], equity, prunes, stop)


def _check_warm(args: argparse.Namespace, req: _Request) -> None:
    """Refuse a ``--warm-from`` that cannot start this run: several vira classes, or no readable file. (Whether
    its tree is this cell's is known once the tree is built: a checkpoint of another shape fails then.)"""
    if args.warm_from is None:
        return
    if len(req.viras) != 1:
        raise CliError(f"argument --warm-from: a checkpoint starts one vira class; give --vira CARD, not {req.vira!r}")
    if not Path(args.warm_from).is_file():
        raise CliError(f"argument --warm-from: {args.warm_from!r} is not a file (a solved cell's "
                       "checkpoints/*.npz)")


def _memory_guard(args: argparse.Namespace, rules: RuleSet) -> None:
    """Refuse up front a cell this machine cannot hold (the plan's prediction against what is available)."""
    a, b = args.score
    row = plan(rules, [(a, b, args.dealer)], ALL_PRUNES if args.prunes == "all" else 0, table=not args.no_table)[0]
    if args.split_depth is None:
        # decided by the machine's size, not by what is free now, so a repeated command (--resume) finds
        # the same cell files
        try:
            total = total_memory_gb()
        except OSError:
            total = float("inf")
        args.split_depth = 3 if row.peak_gb > 0.9 * total else 0
        if args.split_depth:
            print(f"{PROG}: cell {a}x{b} needs ~{row.peak_gb:.0f} GB in memory, this machine has {total:.0f} GB: "
                  f"streaming it from disk (--split-depth 3, parts in {args.out}/parts; --split-depth 0 keeps it in memory)",
                  file=sys.stderr)
    if args.split_depth:
        _disk_guard(args, row.entries)
    if args.ignore_memory_check:
        return
    need = row.streamed_peak_gb(args.threads) if args.split_depth else row.peak_gb
    try:
        have = available_memory_gb()
    except OSError as e:
        raise CliError(f"{e}: the memory check cannot run; pass --ignore-memory-check to solve anyway") from None
    if need > have:
        hint = "" if args.split_depth else "--split-depth 3 (stream the tree from disk), "
        raise CliError(f"cell {a}x{b} needs ~{need:.0f} GB per vira class (predicted from the measured tiers, "
                       f"`truco-lab match --plan`), this machine has {have:.0f} GB available: solve a small "
                       f"variant (--ranks/--suits/--max-stake), {hint}a bigger machine, or --ignore-memory-check")


STREAMED_DISK_BYTES = 30.0  # per entry: slot parts 16.1, block files 10.9, choice maps 2 (measured at 0x0)


def _disk_guard(args: argparse.Namespace, entries: float) -> None:
    """Refuse up front a streamed solve whose parts cannot fit on the output's disk: one vira class's at a
    time (a 0x0 class ~31 GB), kept for a resume until the class is solved, then deleted."""
    import shutil

    need = STREAMED_DISK_BYTES * entries / 1e9
    where = Path(args.out).resolve()
    while not where.exists():
        where = where.parent
    free = shutil.disk_usage(where).free / 1e9
    if need > free:
        raise CliError(f"streaming cell {args.score[0]}x{args.score[1]} needs ~{need:.0f} GB of disk for one vira "
                       f"class's parts, {where} has {free:.0f} GB free: free some disk, give --out on a bigger "
                       "one, or solve a small variant (--ranks/--suits/--max-stake)")


def _run_classes(args: argparse.Namespace, req: _Request, out: Path, describe: dict) -> dict:
    """Solve each requested vira class in turn; the summary is rewritten after each."""
    a, b = args.score
    try:
        specs = [(CellSpec.make(req.rules, a, b, args.dealer, vc.index, prunes=req.prunes, payoff=args.payoff,
                                equity=req.equity, algorithm=args.algorithm), label) for vc, label in req.viras]
    except ValueError as e:
        raise CliError(str(e)) from None
    cells: list[dict] = []
    for spec, label in specs:
        job = CellJob(spec, req.stop, workdir=str(out), table=not args.no_table, table_min_reach=args.table_min_reach,
                      resume=True, split_depth=args.split_depth, threads=args.threads, warm_from=args.warm_from)
        bar = Progress(f"vira {label} d{args.dealer}", req.stop.target, req.stop.iterations, enabled=not args.quiet)
        try:
            res = run_cell(job, progress=bar)
        except KeyboardInterrupt:
            bar.close()
            raise CliError(f"interrupted; checkpoints are in {out}/checkpoints, continue with --resume", 130) from None
        except CellError as e:
            bar.close()
            raise CliError(str(e)) from None
        bar.close()
        d = res.to_dict()
        d["vira"] = label
        cells.append(d)
        write_json(out / "summary.json", _summary(cells, args, req, describe))
    return _summary(cells, args, req, describe)


def _summary(cells: list[dict], args: argparse.Namespace, req: _Request, describe: dict) -> dict:
    w = np.array([c["vira_weight"] for c in cells])
    w = w / w.sum() if len(cells) > 1 else np.ones(1)
    secs = [c["seconds_per_iteration"] for c in cells if c["seconds_per_iteration"]]
    return {
        "game_value": float(np.dot(w, [c["game_value"] for c in cells])),
        "exploitability": float(np.dot(w, [c["exploitability"] for c in cells])),
        "iterations": max(c["iterations"] for c in cells),
        "seconds_per_iteration": float(np.mean(secs)) if secs else None,
        "score": list(args.score), "dealer": args.dealer, "vira": req.vira,
        "algorithm": args.algorithm, "payoff": args.payoff, "units": units(args.payoff),
        "target": args.target_exploitability, "target_met": all(c["target_met"] for c in cells),
        "peak_memory_gb": max(c["peak_memory_gb"] for c in cells), "run": describe,
        "cells": cells,
    }


def _solve_generic(args: argparse.Namespace, rules: RuleSet) -> int:
    """``solve`` for argentino: its native tree (the default), or the OpenSpiel game walked once into a flat
    tree (``--tree openspiel``); exploitability is exact either way (best response on that tree)."""
    if args.vira not in (None, "all", "none"):
        raise CliError(f"argument --vira: rule set {rules.name} turns no vira; leave --vira out, got {args.vira!r}")
    if args.warm_from is not None:
        raise CliError(f"argument --warm-from: rule set {rules.name} is solved on its own tree here, with no warm "
                       "start (the paulista family's cells take one)")
    if args.payoff != "points":
        raise CliError(f"argument --payoff: rule set {rules.name} is solved in points (the match solver covers "
                       "the paulista family)")
    a, b = args.score
    game = pyspiel.load_game(*openspiel_hand(rules, a, b, args.dealer))
    native = args.tree == "native"
    nodes = 0 if native else estimate_tree_size(game)
    if native and not args.ignore_memory_check:
        from truco_lab.abstraction.argentine_tree import estimate_cell_size

        size = estimate_cell_size(rules, a, b, args.dealer, probes=2000)
        if size.entries * 73 > 0.8 * available_memory_gb() * 1e9:
            raise CliError(f"this {rules.name} hand's native tree has ~{size.entries:.1e} entries (~{size.entries * 73 / 1e9:,.0f} "
                           f"GB at 73 bytes each), more than this machine's memory: solve a small variant "
                           "(--ranks/--suits/--max-stake), or --ignore-memory-check")
    if nodes > MAX_WALK_NODES and not args.ignore_memory_check:
        raise CliError(f"this {rules.name} hand has ~{nodes:.1e} nodes, too many to walk into a tree on this "
                       "machine (limit 5e7): solve a small variant (--ranks/--suits/--max-stake), or "
                       "--ignore-memory-check")
    out = Path(args.out)
    describe = {"rules": rules.to_dict(), "score": [a, b], "dealer": args.dealer, "algorithm": args.algorithm,
                "tree": args.tree}
    try:
        claim(out, "solve", stable_hash(describe), describe, resume=args.resume, fresh=args.fresh)
    except RunError as e:
        raise CliError(str(e)) from None
    ck = out / "checkpoints" / "hand.npz"
    t0 = time.perf_counter()
    try:
        res = solve(game, args.algorithm, iterations=args.iterations or args.max_iterations,
                    target_exploitability=args.target_exploitability, tree=args.tree, check_every=args.check_every,
                    checkpoint=ck, checkpoint_every=args.checkpoint_every, resume=args.resume and ck.exists(),
                    progress=not args.quiet, max_nodes=None if args.ignore_memory_check else MAX_WALK_NODES)
    except KeyboardInterrupt:
        raise CliError(f"interrupted; the checkpoint is in {ck}, continue with --resume", 130) from None
    except (ValueError, MemoryError) as e:
        raise CliError(str(e).splitlines()[0] if str(e) else type(e).__name__) from None
    target_met = args.target_exploitability is None or res.exploitability <= args.target_exploitability
    if not args.no_table:
        res.table().write(out / "strategy.parquet")
    summary = {"run": describe, "game": str(game), "units": "points", "game_value": res.game_value,
               "exploitability": res.exploitability, "iterations": res.iterations,
               "seconds": time.perf_counter() - t0,
               "infosets": int(sum(s.tree.num_infosets for s in res.solver.solvers) if native
                               else len(res.tree.infoset_keys)),
               "target": args.target_exploitability, "target_met": target_met,
               "history": [list(h) for h in res.history]}
    write_json(out / "summary.json", summary)
    print(f"game value {res.game_value:+.6f} points, exploitability {res.exploitability:.3e}, "
          f"{res.iterations} it, {summary['infosets']:,} infosets, written to {out}/summary.json")
    if not target_met:
        print(f"{PROG}: warning: target exploitability {args.target_exploitability:g} not reached within "
              f"--max-iterations {args.max_iterations} (see target_met in summary.json)", file=sys.stderr)
        return 3
    return 0
