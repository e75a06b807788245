"""The ``truco-lab`` command line."""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path


def _nonneg_int(text: str) -> int:
    try:
        v = int(text)
    except ValueError:
        v = -1
    if v < 0:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 0, got {text!r}")
    return v


def _positive_int(text: str) -> int:
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if v <= 0:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return v


def cmd_spec_check(args: argparse.Namespace) -> int:
    from truco_lab.spec import find_fixtures, run_fixture

    d = Path(args.dir)
    if not d.exists():
        print(f"truco-lab spec-check: error: DIR {str(d)!r} does not exist", file=sys.stderr)
        return 2
    fixtures, skipped = find_fixtures(d)
    if skipped:
        print(f"skipped {len(skipped)} JSON file(s) that are not fixtures (no initial_state), e.g. {skipped[0]}")
    if not fixtures:
        print(f"truco-lab spec-check: error: DIR {str(d)!r} holds no fixture (JSON with an initial_state)",
              file=sys.stderr)
        return 2
    results = [run_fixture(f) for f in fixtures]
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
    if not (v > 0 and math.isfinite(v)):
        raise argparse.ArgumentTypeError(f"expected a positive finite number, got {text!r}")
    return v


def _err(prog: str, msg: str, code: int = 2) -> int:
    print(f"{prog}: error: {msg}", file=sys.stderr)
    return code


def _score_below_30(text: str) -> tuple[int, int]:
    """``--score`` of ``solve``: any rule set's scores (argentino plays to 30); checked against the target later."""
    try:
        a, b = (int(x) for x in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected A,B with integers 0..29, got {text!r}") from None
    if not (0 <= a <= 29 and 0 <= b <= 29):
        raise argparse.ArgumentTypeError(f"expected A,B with integers 0..29, got {text!r}")
    return a, b


def _rules(args: argparse.Namespace, any_pack: bool = False):
    """The rule set of ``--rules`` on the deck ``--ranks`` x ``--suits`` (defaults: the rule set's own),
    the ladder cut at ``--max-stake``, with argentino's options. ``ValueError`` naming the argument."""
    from dataclasses import replace

    from truco_lab.rules import rule_set

    base = rule_set(args.rules)
    flor, penalty = getattr(args, "flor", False), getattr(args, "deck_penalty", False)
    if (flor or penalty) and not base.envido:
        raise ValueError(f"argument --{'flor' if flor else 'deck-penalty'}: an option of rule set argentino, "
                         f"not of {base.name}")
    if flor or penalty:
        base = replace(base, flor=flor, deck_extra=1 if penalty else 0)
    if base.pack != "french" and not any_pack:
        raise ValueError(f"argument --rules: rule set {base.name} works with `truco-lab solve` and its OpenSpiel "
                         "games so far; this command covers paulista, paulista_house and mineiro")
    try:
        rules = base.with_deck(args.ranks, args.suits)
    except ValueError as e:
        raise ValueError(f"argument --ranks/--suits: {e}") from None
    stake = rules.max_stake if args.max_stake is None else args.max_stake
    if stake not in rules.ladder:
        raise ValueError(f"argument --max-stake: a rung of {rules.name}'s ladder "
                         f"{' '.join(map(str, rules.ladder))}, got {stake}")
    return rules.with_max_stake(stake)


def _solve_generic(args: argparse.Namespace, rules, prog: str) -> int:
    """``solve`` for rule sets without a native tree builder (argentino): the OpenSpiel game is walked once
    into a flat tree and solved by CFR; exploitability is exact (best response on that tree)."""
    import time

    import pyspiel

    from solvers.api import solve
    from solvers.storage import stable_hash, write_json
    from truco_lab.lab.runs import RunError, claim
    from truco_lab.public_tree import rules_to_dict

    if args.vira not in (None, "all", "none"):
        return _err(prog, f"argument --vira: rule set {rules.name} turns no vira; leave --vira out, got {args.vira!r}")
    if args.payoff != "points":
        return _err(prog, f"argument --payoff: rule set {rules.name} is solved in points (the match solver covers "
                          "the paulista family)")
    a, b = args.score
    if a >= rules.target or b >= rules.target:
        return _err(prog, f"argument --score: scores must be below the target {rules.target}")
    params = {"score0": a, "score1": b, "dealer": args.dealer, "flor": rules.flor, "target": rules.target,
              "deck_penalty": rules.deck_extra > 0, "ranks": rules.ranks, "suits": rules.suits,
              "max_stake": rules.max_stake}
    game = pyspiel.load_game("truco_argentino", params)
    from solvers.tree import estimate_tree_size

    nodes = estimate_tree_size(game)
    if nodes > 50e6 and not args.ignore_memory_check:
        return _err(prog, f"this {rules.name} hand has ~{nodes:.1e} nodes, too many to walk into a tree on this "
                          "machine (limit 5e7): solve a small variant (--ranks/--suits/--max-stake), or "
                          "--ignore-memory-check")
    out = Path(args.out)
    describe = {"rules": rules_to_dict(rules), "score": [a, b], "dealer": args.dealer, "algorithm": args.algorithm,
                "tree": "openspiel"}
    try:
        claim(out, "solve", stable_hash(describe), describe, resume=args.resume, fresh=args.fresh)
    except RunError as e:
        return _err(prog, str(e))
    ck = out / "checkpoints" / "hand.npz"
    t0 = time.perf_counter()
    try:
        res = solve(game, args.algorithm, iterations=args.iterations or args.max_iterations,
                    target_exploitability=args.target_exploitability, tree="openspiel", check_every=args.check_every,
                    checkpoint=ck, checkpoint_every=args.checkpoint_every, resume=args.resume and ck.exists(),
                    progress=not args.quiet, max_nodes=None if args.ignore_memory_check else 50e6)
    except KeyboardInterrupt:
        print(f"\n{prog}: interrupted; the checkpoint is in {ck}, continue with --resume", file=sys.stderr)
        return 130
    except (ValueError, MemoryError) as e:
        return _err(prog, str(e).splitlines()[0] if str(e) else type(e).__name__)
    target_met = args.target_exploitability is None or res.exploitability <= args.target_exploitability
    if not args.no_table:
        res.table().write(out / "strategy.parquet")
    summary = {"run": describe, "game": str(game), "units": "points", "game_value": res.game_value,
               "exploitability": res.exploitability, "iterations": res.iterations,
               "seconds": time.perf_counter() - t0, "infosets": int(len(res.tree.infoset_keys)),
               "target": args.target_exploitability, "target_met": target_met,
               "history": [list(h) for h in res.history]}
    write_json(out / "summary.json", summary)
    print(f"game value {res.game_value:+.6f} points, exploitability {res.exploitability:.3e}, "
          f"{res.iterations} it, {summary['infosets']:,} infosets, written to {out}/summary.json")
    if not target_met:
        print(f"{prog}: warning: target exploitability {args.target_exploitability:g} not reached within "
              f"--max-iterations {args.max_iterations} (see target_met in summary.json)", file=sys.stderr)
        return 3
    return 0


def cmd_mccfr(args: argparse.Namespace) -> int:
    """MCCFR driven by the numba engine, for hands whose tree does not fit (the full Argentine hand, two
    against two). Resumable; reports speed, and exploitability or head-to-head results where they exist."""
    import time

    from solvers.mccfr import MCCFRSolver
    from solvers.storage import stable_hash, write_json
    from truco_lab.lab.runs import RunError, claim
    from truco_lab.public_tree import rules_to_dict
    from truco_lab.rules import check_start
    from truco_lab.sampled import head_to_head, sampled_game

    prog = "truco-lab mccfr"
    try:
        rules = _rules(args, any_pack=True)
    except ValueError as e:
        return _err(prog, str(e))
    a, b = args.score
    try:
        check_start(rules, a, b, args.dealer)
    except ValueError as e:
        return _err(prog, f"argument --score/--dealer: {e}")
    game = sampled_game(rules, (a, b), args.dealer)
    og = None
    if args.exploitability:
        if game.num_players != 2:
            return _err(prog, "argument --exploitability: a team game has no exploitability certificate; use "
                              "--head-to-head")
        import pyspiel

        from solvers.tree import estimate_tree_size

        og = pyspiel.load_game(*_openspiel_hand(rules, a, b, args.dealer))
        if estimate_tree_size(og) > 50e6:
            return _err(prog, "argument --exploitability: this hand's tree is too big for an exact best response "
                              "(a small variant: --ranks/--suits/--max-stake)")
    describe = {"rules": rules_to_dict(rules), "score": [a, b], "dealer": args.dealer, "sampling": args.sampling,
                "capacity": args.capacity, "seed": args.seed, "algorithm": "mccfr"}
    key = stable_hash(describe)
    out = Path(args.out)
    try:
        claim(out, "mccfr", key, describe, resume=args.resume, fresh=args.fresh)
    except RunError as e:
        return _err(prog, str(e))
    solver = MCCFRSolver(game, sampling=args.sampling, capacity=args.capacity, seed=args.seed)
    solver.compile()
    ck = out / "checkpoints" / "mccfr.npz"
    if args.resume and ck.exists():
        try:
            solver.load(ck, key)
        except ValueError as e:
            return _err(prog, str(e))
    target = args.iterations
    batch = max(1, min(1000 if args.sampling == "external" else 20000, args.checkpoint_every))
    bar = None
    if not args.quiet:
        from tqdm import tqdm

        bar = tqdm(total=target, initial=min(solver.iteration, target or 0), unit=" it", desc=f"mccfr {rules.name}") \
            if target else tqdm(total=args.seconds, unit=" s", desc=f"mccfr {rules.name}", bar_format="{l_bar}{bar}| {n:.0f}/{total:.0f} s [{elapsed}<{remaining}]")
    t0 = time.perf_counter()
    last_save = solver.iteration
    try:
        while (target and solver.iteration < target) or (not target and time.perf_counter() - t0 < args.seconds):
            n = min(batch, target - solver.iteration) if target else batch
            before = solver.iteration
            try:
                solver.iterate(n)
            except (MemoryError, RuntimeError) as e:
                if bar is not None:
                    bar.close()
                msg = str(e).replace("create the solver with a larger capacity", "give a larger --capacity "
                                     "(and --fresh: the table size is part of the run)")
                return _err(prog, msg)
            if bar is not None:
                if target:
                    bar.update(solver.iteration - before)
                else:
                    bar.n = min(time.perf_counter() - t0, args.seconds)
                    bar.refresh()
                bar.set_postfix(sets=f"{solver.num_infosets:,}")
            if solver.iteration - last_save >= args.checkpoint_every:
                solver.save(ck, key)
                last_save = solver.iteration
    except KeyboardInterrupt:
        solver.save(ck, key)
        if bar is not None:
            bar.close()
        print(f"\n{prog}: interrupted after {solver.iteration:,} iterations; checkpoint in {ck}, continue with "
              "--resume", file=sys.stderr)
        return 130
    if bar is not None:
        bar.close()
    solver.save(ck, key)
    summary = {"run": describe, "game": game.name, "iterations": solver.iteration, "seconds": solver.seconds,
               "iterations_per_second": solver.iteration / solver.seconds if solver.seconds else None,
               "infosets": solver.num_infosets, "table_gb": solver.nbytes() / 1e9, "players": game.num_players}
    line = (f"{solver.iteration:,} iterations in {solver.seconds:.1f} s, {solver.num_infosets:,} information sets, "
            f"table {solver.nbytes() / 1e9:.2f} GB")
    if og is not None:
        from truco_lab.sampled import exploitability

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


def _openspiel_hand(rules, a: int, b: int, dealer: int) -> tuple[str, dict]:
    """The OpenSpiel hand game (name, params) of a heads-up rule set at a score."""
    base = {"score0": a, "score1": b, "dealer": dealer, "ranks": rules.ranks, "suits": rules.suits,
            "max_stake": rules.max_stake}
    if rules.pack == "spanish":
        return "truco_argentino", {**base, "flor": rules.flor, "target": rules.target,
                                   "deck_penalty": rules.deck_extra > 0}
    return "truco_paulista", {**base, "rules": rules.name}


def cmd_solve(args: argparse.Namespace) -> int:
    from solvers.storage import stable_hash, write_json
    from truco_lab.lab.cell import CellError, CellJob, CellSpec, Stop, run_cell
    from truco_lab.lab.runs import Progress, RunError, claim
    from truco_lab.public_tree import ALL_PRUNES, rules_to_dict, vira_class_of, vira_classes

    prog = "truco-lab solve"
    try:
        rules = _rules(args, any_pack=True)
    except ValueError as e:
        return _err(prog, str(e))
    if rules.pack != "french":
        return _solve_generic(args, rules, prog)
    if not rules.vira:
        if (args.vira or "all").lower() not in ("all", "none"):
            return _err(prog, f"argument --vira: rule set {rules.name} turns no vira (its manilhas are fixed); "
                              f"leave --vira out, got {args.vira!r}")
        args.vira = "all"
    elif args.vira is None:
        return _err(prog, f"argument --vira: rule set {rules.name} turns a vira: give a card (e.g. 7c) or all")
    if args.vira.lower() == "all":
        args.vira = "all"
        viras = [(vc, vc.name) for vc in vira_classes(rules)]
    else:
        from truco_lab.cards import card_str, parse_card

        try:
            card = parse_card(args.vira)
            viras = [(vira_class_of(rules, card), card_str(card))]
        except ValueError:
            return _err(prog, f"argument --vira: expected 'all' or a card of the deck (ranks {rules.ranks}, "
                              f"suits {rules.suits}, e.g. 7c), got {args.vira!r}")
    a, b = args.score
    if a >= rules.target or b >= rules.target:
        return _err(prog, f"argument --score: scores must be below the target {rules.target}")
    from truco_lab.rules import sees_own_cards

    if not sees_own_cards(rules, (a, b)):
        return _err(prog, f"argument --score: under {rules.name} the {a}x{b} hand is played blind (no decisions): "
                          "nothing to solve")
    equity = None
    if args.payoff == "equity":
        if not args.equity:
            return _err(prog, "argument --equity: --payoff equity needs --equity FILE (an equity.parquet)")
        from truco_lab.lab.equity import EquityTable

        try:
            equity = EquityTable.load(args.equity)
        except ValueError as e:
            return _err(prog, f"argument --equity: {e}")
    elif args.equity:
        return _err(prog, "argument --equity: only with --payoff equity")
    prunes = ALL_PRUNES if args.prunes == "all" else 0
    if not args.ignore_memory_check:
        from solvers.storage import available_memory_gb
        from truco_lab.lab.match import plan

        row = plan(rules, [(a, b, args.dealer)], prunes)[0]
        need = row.streamed_peak_gb(args.threads) if args.split_depth else row.peak_gb
        have = available_memory_gb()
        if need > have:
            hint = "" if args.split_depth else "--split-depth 3 (stream the tree from disk), "
            return _err(prog, f"cell {a}x{b} needs ~{need:.0f} GB per vira class (predicted from the measured tiers, "
                              f"`truco-lab match --plan`), this machine has {have:.0f} GB available: solve a small "
                              f"variant (--ranks/--suits/--max-stake), {hint}a bigger machine, or --ignore-memory-check")
    try:
        specs = [(CellSpec.make(rules, a, b, args.dealer, vc.index, prunes=prunes, payoff=args.payoff,
                                equity=equity, algorithm=args.algorithm), label) for vc, label in viras]
        stop = Stop(iterations=args.iterations, target=args.target_exploitability,
                    max_iterations=args.max_iterations, check_every=args.check_every,
                    checkpoint_every=args.checkpoint_every)
    except ValueError as e:
        return _err(prog, str(e))
    out = Path(args.out)
    describe = {"rules": rules_to_dict(rules), "score": [a, b], "dealer": args.dealer, "prunes": prunes,
                "payoff": args.payoff, "algorithm": args.algorithm,
                "equity": equity.key() if equity is not None else None}
    try:
        claim(out, "solve", stable_hash(describe), describe, resume=args.resume, fresh=args.fresh)
    except RunError as e:
        return _err(prog, str(e))
    cells = []
    for spec, label in specs:
        job = CellJob(spec, stop, workdir=str(out), table=not args.no_table, table_min_reach=args.table_min_reach,
                      resume=True, split_depth=args.split_depth, threads=args.threads)
        bar = Progress(f"vira {label} d{args.dealer}", stop.target, stop.iterations, enabled=not args.quiet)
        try:
            res = run_cell(job, progress=bar)
        except KeyboardInterrupt:
            bar.close()
            print(f"\n{prog}: interrupted; checkpoints are in {out}/checkpoints, continue with --resume",
                  file=sys.stderr)
            return 130
        except CellError as e:
            bar.close()
            return _err(prog, str(e))
        bar.close()
        d = res.to_dict()
        d["vira"] = label
        cells.append(d)
        write_json(out / "summary.json", _solve_summary(cells, args, rules, describe))
    summary = _solve_summary(cells, args, rules, describe)
    for c in summary["cells"]:
        spi = f"{c['seconds_per_iteration']:.3f} s/it" if c["seconds_per_iteration"] else "reused"
        print(f"vira {c['vira']:>3} (class {c['vira_class']}): value {c['game_value']:+.5f}  "
              f"exploitability {c['exploitability']:.2e}  {c['iterations']} it  {spi}  {c['infosets']:,} infosets  "
              f"{c['entries']:,} entries  {c['bytes_per_entry_total']:.0f} B/entry  peak {c['peak_memory_gb']:.2f} GB")
    print(f"game value {summary['game_value']:+.6f} {summary['units']}, exploitability "
          f"{summary['exploitability']:.3e}, written to {out}/summary.json")
    if not summary["target_met"]:
        print(f"{prog}: warning: target exploitability {args.target_exploitability:g} not reached within "
              f"--max-iterations {args.max_iterations} (see target_met in summary.json)", file=sys.stderr)
        return 3
    return 0


def _solve_summary(cells: list[dict], args, rules, describe: dict) -> dict:
    import numpy as np

    from truco_lab.payoff import units

    w = np.array([c["vira_weight"] for c in cells])
    w = w / w.sum() if len(cells) > 1 else np.ones(1)
    secs = [c["seconds_per_iteration"] for c in cells if c["seconds_per_iteration"]]
    return {
        "game_value": float(np.dot(w, [c["game_value"] for c in cells])),
        "exploitability": float(np.dot(w, [c["exploitability"] for c in cells])),
        "iterations": max(c["iterations"] for c in cells),
        "seconds_per_iteration": float(np.mean(secs)) if secs else None,
        "score": list(args.score), "dealer": args.dealer, "vira": args.vira if args.vira == "all" else cells[0]["vira"],
        "algorithm": args.algorithm, "payoff": args.payoff, "units": units(args.payoff),
        "target": args.target_exploitability, "target_met": all(c["target_met"] for c in cells),
        "peak_memory_gb": max(c["peak_memory_gb"] for c in cells), "run": describe,
        "cells": cells,
    }


def _cells_arg(text: str):
    """One item of ``--cells``: ``all``, ``eleven`` or a score pair ``A,B``."""
    if text in ("all", "eleven"):
        return text
    try:
        return _score(text)
    except argparse.ArgumentTypeError:
        raise argparse.ArgumentTypeError(f"expected eleven, all or score pairs A,B with integers 0..11, got {text!r}"
                                         ) from None


def _cells(items: list) -> str | list[tuple[int, int]]:
    if len(items) == 1 and isinstance(items[0], str):
        return items[0]
    if any(isinstance(x, str) for x in items):
        raise ValueError("argument --cells: 'all' and 'eleven' stand alone, not beside score pairs")
    return list(items)


def cmd_match(args: argparse.Namespace) -> int:
    from truco_lab.lab.cell import CellError
    from truco_lab.lab.runs import RunError

    prog = "truco-lab match"
    try:
        rules = _rules(args)
    except ValueError as e:
        return _err(prog, str(e))
    from truco_lab.lab import match_run

    try:
        args.cells = _cells(args.cells)
        return match_run.main(args, rules)
    except (RunError, CellError, ValueError) as e:
        return _err(prog, str(e))
    except KeyboardInterrupt:
        print(f"\n{prog}: interrupted; finished cells and checkpoints are in {args.out}, continue with --resume",
              file=sys.stderr)
        return 130


def _bot_list(text: str) -> list[str]:
    from truco_lab.bots import BOT_NAMES

    names = [x.strip().lower() for x in text.split(",") if x.strip()]
    known = (*BOT_NAMES, "heuristic", "br-solved", "br-heuristic-high", "br-heuristic-low", "br-random")
    bad = [x for x in names if x not in known]
    if bad:
        raise argparse.ArgumentTypeError(f"unknown bot {bad[0]!r}; expected a comma list of {', '.join(known)}")
    if len(names) < 2:
        raise argparse.ArgumentTypeError(f"expected at least two bots (comma separated), got {text!r}")
    return names


def cmd_arena(args: argparse.Namespace) -> int:
    import itertools

    import numpy as np
    from tqdm import tqdm

    from solvers.storage import write_json
    from truco_lab.arena import bot_exploitability, load_match_game, run_pair, solved_exploitability, write_results
    from truco_lab.bots import SolvedBot, make_bot
    from truco_lab.lab.match_run import ensure_solved

    prog = "truco-lab arena"
    try:
        rules = _rules(args)
    except ValueError as e:
        return _err(prog, str(e))
    notes: list[str] = []

    def note(msg: str) -> None:
        notes.append(msg)
        tqdm.write(msg, file=sys.stderr)

    solved = None
    if any(b in ("solved", "br-solved") for b in args.bots):
        try:
            solved = ensure_solved(rules, args.solved, on_demand=not args.no_solve, notify=note)
        except ValueError as e:
            return _err(prog, str(e))
        if solved is None:
            return _err(prog, "the solved bot needs a match run: give --solved DIR or drop --no-solve")
        from truco_lab.lab.policy import MatchStrategy

        solved = MatchStrategy(solved)
    out = Path(args.out)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        return _err(prog, f"--out {out} is not writable ({e.strerror})")
    game = load_match_game(rules)
    built: dict[tuple[str, int], object] = {}

    def make(name: str, seed: int):
        bot = make_bot(name, seed, solved, notify=note, rules=rules, cell=(*(args.cell or (11, 11)), args.dealer),
                       equity=solved.equity if solved is not None else None) if (name, seed) not in built else None
        if name.startswith("br-") and name != "br-solved":  # a best response costs tree walks: build it once
            bot = built.setdefault((name, seed), bot)
            bot.rng = np.random.default_rng(seed)  # ... but sample as a fresh bot would
        return bot

    pairs = list(itertools.combinations(args.bots, 2))
    bar = tqdm(total=len(pairs) * args.matches, unit="match", desc="arena", disable=args.quiet)
    results, rows = [], []
    for a, b in pairs:
        res, r = run_pair(game, make, a, b, args.matches, args.seed, progress=bar.update)
        results.append(res)
        rows += r
    bar.close()
    key = {"bots": args.bots, "matches": args.matches, "seed": args.seed, "rules": _rules_dict(rules),
           "solved": str(solved.out) if solved is not None else None}
    write_results(rows, out / "arena.parquet", key)
    for res in results:
        print(res.line())
    expl = {}
    if args.cell is None and len(rules.deck) > 10 and not args.no_exploitability:
        print("per-bot exploitability skipped on this deck (over an hour per bot at 11x11): choose a cell with "
              "--cell A,B to compute it", file=sys.stderr)
        args.no_exploitability = True
    args.cell = args.cell or (11, 11)
    if not args.no_exploitability:
        a, b = args.cell
        print(f"exploitability in cell {a}x{b} dealer {args.dealer}: reading each bot's strategy at every "
              "information set (~60-80 us each: about a minute per million; the full deck's 11x11 takes "
              "over an hour per bot; --no-exploitability skips this)", file=sys.stderr, flush=True)
        for name in dict.fromkeys(args.bots):
            if name.startswith("br-"):
                continue  # a best response's exploitability is not a question the arena answers
            bot = make_bot(name, 0, solved, notify=note)
            try:
                if isinstance(bot, SolvedBot):
                    v = solved_exploitability(bot, (a, b), args.dealer)
                else:
                    v = bot_exploitability(bot, rules, (a, b), args.dealer,
                                           equity=solved.equity if solved is not None else None)
            except (KeyError, TypeError) as e:
                print(f"{name}: exploitability not computed ({str(e).strip(chr(39))})")
                continue
            expl[name] = v
            units = "match-win probability" if solved is not None else "points per hand"
            print(f"{name}: exploitability {v:.4f} ({units}) in cell {a}x{b} dealer {args.dealer}")
    write_json(out / "arena.json", {"run": key, "pairs": [dict(vars(r), win_rate=r.win_rate, half_width=r.half_width,
                                                                 points_per_hand=r.points_per_hand)
                                                            for r in results],
                                    "exploitability": expl, "cell": [*args.cell, args.dealer], "notes": notes})
    print(f"results written to {out}/arena.parquet and {out}/arena.json")
    return 0


def _rules_dict(rules) -> dict:
    from truco_lab.public_tree import rules_to_dict

    return rules_to_dict(rules)


def cmd_explain(args: argparse.Namespace) -> int:
    from truco_lab.advice import ExplainError, explain

    prog = "truco-lab explain"
    try:
        rules = _rules(args)
        if rules.vira and args.vira is None:
            return _err(prog, f"argument --vira: rule set {rules.name} turns a vira: give the card, e.g. 4c")
        adv = explain(args.score, args.dealer, args.vira, args.hand, args.history, solved=args.solved, rules=rules,
                      on_demand=not args.no_solve)
    except ExplainError as e:
        return _err(prog, str(e))
    except ValueError as e:
        return _err(prog, str(e))
    print(adv)
    return 0


def cmd_play(args: argparse.Namespace) -> int:
    from truco_lab.bots import make_bot
    from truco_lab.lab.match_run import ensure_solved
    from truco_lab.lab.policy import MatchStrategy
    from truco_lab.play import Table

    prog = "truco-lab play"
    try:
        rules = _rules(args)
    except ValueError as e:
        return _err(prog, str(e))
    strategy = None
    if args.bot == "solved" or args.hints:
        try:
            out = ensure_solved(rules, args.solved, on_demand=not args.no_solve)
        except ValueError as e:
            return _err(prog, str(e))
        if out is None:
            return _err(prog, "--bot solved and --hints need a solved match run: give --solved DIR or drop --no-solve")
        strategy = MatchStrategy(out)
    if args.seed is None:
        import random

        args.seed = random.randrange(2**31)
    bot = make_bot(args.bot, args.seed + 1, strategy)
    if args.hand and args.score is None:
        args.score = (0, 0)
    table = Table(rules, bot, match=not args.hand, seat=args.seat, seed=args.seed, hints=strategy if args.hints else None,
                  score=args.score or (0, 0), dealer=args.dealer)
    return table.run()


def _small_variant_options(p: argparse.ArgumentParser, team: bool = False) -> None:
    from truco_lab.rules import RULE_SETS, TEAM_RULE_SETS

    p.add_argument("--rules", choices=tuple(RULE_SETS) + (tuple(TEAM_RULE_SETS) if team else ()), default="paulista",
                   help="rule set: paulista (seed 000, default), paulista_house (seed 001's table), mineiro (seed "
                        "003) or argentino (seed 004; solve only)")
    p.add_argument("--ranks", default=None, help="deck ranks (small variants; default the rule set's whole pack; "
                                                 "argentino: numbers, e.g. '1 7 12')")
    p.add_argument("--suits", default=None, help="deck suits (small variants; argentino: e b o c)")
    stakes = sorted({v for rs in RULE_SETS.values() for v in rs.ladder})
    p.add_argument("--max-stake", type=int, choices=stakes, default=None, metavar="{" + ",".join(map(str, stakes)) + "}",
                   help="top of the raise ladder, a rung of the rules' ladder (default its top: paulista 1 3 6 9 12, "
                        "mineiro 2 4 8 10 12, argentino 1 2 3 4)")


def _prob(text: str) -> float:
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a probability in [0, 1), got {text!r}") from None
    if not 0 <= v < 1:
        raise argparse.ArgumentTypeError(f"expected a probability in [0, 1), got {text!r}")
    return v


def _sigterm_as_interrupt() -> None:
    """A cluster's preemption (SIGTERM) is handled like Ctrl-C: checkpoint, one line, exit 130."""
    import signal
    import threading

    def handler(signum, frame):
        raise KeyboardInterrupt(f"signal {signum}")

    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, handler)


def _join_negative_values(argv: list[str]) -> list[str]:
    """``--score -1,0`` reaches the score check (argparse would take ``-1,0`` for an option)."""
    out = []
    i = 0
    while i < len(argv):
        if argv[i] in ("--score", "--cell", "--cells") and i + 1 < len(argv) and argv[i + 1][:1] == "-" \
                and argv[i + 1][1:2].isdigit():
            out.append(f"{argv[i]}={argv[i + 1]}")
            i += 2
            continue
        out.append(argv[i])
        i += 1
    return out


def main(argv: list[str] | None = None) -> int:
    from solvers.cfr import ALGORITHMS
    from truco_lab import __version__

    p = _Parser(prog="truco-lab", description="truco-lab: engine, games and solvers for truco paulista")
    p.add_argument("--version", action="version", version=f"truco-lab {__version__}")
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
    so.add_argument("--score", type=_score_below_30, required=True, metavar="A,B",
                    help="scores at the start of the hand")
    so.add_argument("--dealer", type=int, choices=(0, 1), required=True, help="the dealing player")
    so.add_argument("--vira", default=None, metavar="CARD|all",
                    help="a turned-up card (its vira class) or all; leave out in rule sets without a vira (mineiro)")
    so.add_argument("--ignore-memory-check", action="store_true",
                    help="solve even when the predicted peak memory exceeds what this machine has available")
    so.add_argument("--algorithm", choices=ALGORITHMS, default="dcfr", help="CFR variant (default dcfr)")
    stop = so.add_mutually_exclusive_group(required=True)
    stop.add_argument("--iterations", type=_positive_int, help="run exactly N iterations per cell")
    stop.add_argument("--target-exploitability", type=_positive_float, metavar="E",
                      help="stop each cell once its exploitability (in the payoff's units) is <= E")
    so.add_argument("--max-iterations", type=_positive_int, default=100_000, help="cap with a target (default 100000)")
    so.add_argument("--payoff", choices=("points", "equity"), default="points",
                    help="terminal payoffs: points (default) or match-win probability (needs --equity)")
    so.add_argument("--equity", metavar="FILE", help="equity.parquet of a match run (successor values)")
    so.add_argument("--out", required=True, metavar="DIR", help="output directory")
    so.add_argument("--resume", action="store_true", help="continue this run in DIR (finished cells are kept)")
    so.add_argument("--fresh", action="store_true", help="overwrite DIR if it holds another run")
    so.add_argument("--check-every", type=_positive_int, default=5, help="iterations between exploitability checks")
    so.add_argument("--checkpoint-every", type=_positive_int, default=50, help="iterations between checkpoints")
    so.add_argument("--prunes", choices=("all", "none"), default="all", help="value-preserving prunes (default all)")
    so.add_argument("--no-table", action="store_true", help="write no strategy table")
    so.add_argument("--threads", type=_positive_int, default=2,
                    help="threads per pass (default 2: subtrees in parallel; 1 for the sequential passes)")
    so.add_argument("--split-depth", type=_nonneg_int, default=0, metavar="D",
                    help="stream the tree from disk, cut at public depth D (3 for full-ladder cells: the 0x0 "
                         "cell in ~10 GB); parts go to DIR/parts. 0 (default): the whole tree in memory")
    so.add_argument("--table-min-reach", type=_prob, default=0.0, metavar="P",
                    help="leave out information sets the equilibrium reaches with probability below P")
    _small_variant_options(so)
    so.add_argument("--flor", action="store_true", help="argentino: play with flor (seed 003's option)")
    so.add_argument("--deck-penalty", action="store_true",
                    help="argentino: going to the deck in the first trick before the envido costs one more (seed 003)")
    so.add_argument("-q", "--quiet", action="store_true", help="no progress bar")
    so.set_defaults(func=cmd_solve)

    mc = sub.add_parser("mccfr", help="Monte-Carlo CFR on the engine, for hands whose tree does not fit "
                                      "(full Argentine hands, two against two); resumable")
    mc.add_argument("--score", type=_score_below_30, required=True, metavar="A,B", help="scores (of the sides)")
    mc.add_argument("--dealer", type=int, choices=(0, 1, 2, 3), required=True, help="the dealing seat")
    mc.add_argument("--sampling", choices=("external", "outcome"), default="external")
    mstop = mc.add_mutually_exclusive_group(required=True)
    mstop.add_argument("--iterations", type=_positive_int, help="run until N iterations in all")
    mstop.add_argument("--seconds", type=_positive_float, help="run this many seconds")
    mc.add_argument("--capacity", type=_positive_int, default=1 << 22,
                    help="information sets the table holds (default 4,194,304: ~0.8 GB)")
    mc.add_argument("--seed", type=int, default=0, help="random seed (runs are reproducible per seed)")
    mc.add_argument("--exploitability", action="store_true",
                    help="heads-up small variants: exact exploitability of the average (walks the tree)")
    mc.add_argument("--head-to-head", type=_positive_int, default=None, metavar="HANDS",
                    help="play HANDS deals against uniform random play on each side (team games' measure)")
    mc.add_argument("--out", required=True, metavar="DIR", help="output directory")
    mc.add_argument("--resume", action="store_true", help="continue the run in DIR from its checkpoint")
    mc.add_argument("--fresh", action="store_true", help="overwrite DIR if it holds another run")
    mc.add_argument("--checkpoint-every", type=_positive_int, default=10_000, help="iterations between checkpoints")
    _small_variant_options(mc, team=True)
    mc.add_argument("--flor", action="store_true", help="argentino: play with flor (seed 003's option)")
    mc.add_argument("--deck-penalty", action="store_true", help="argentino: the deck penalty (seed 003)")
    mc.add_argument("-q", "--quiet", action="store_true", help="no progress bar")
    mc.set_defaults(func=cmd_mccfr)

    ma = sub.add_parser("match", help="solve the match: every score cell in match equity, by backward induction")
    ma.add_argument("--out", required=True, metavar="DIR", help="output directory")
    ma.add_argument("--cells", type=_cells_arg, nargs="+", default=["all"], metavar="eleven|all|A,B ...",
                    help="cells to solve (their successors are included): all (default), eleven, or score pairs")
    ma.add_argument("--target-exploitability", type=_positive_float, default=1e-3, metavar="E",
                    help="per cell and vira class, in match-win probability (default 1e-3)")
    ma.add_argument("--max-iterations", type=_positive_int, default=5000, help="cap per cell (default 5000)")
    ma.add_argument("--algorithm", choices=ALGORITHMS, default="dcfr", help="CFR variant (default dcfr)")
    ma.add_argument("--executor", choices=("local", "ray"), default="local", help="local process pool or Ray")
    ma.add_argument("--ray-address", metavar="ADDR", help="join this Ray cluster (default: start a local Ray)")
    ma.add_argument("--workers", type=_positive_int, default=2, help="parallel workers (default 2)")
    ma.add_argument("--threads", type=_positive_int, default=1,
                    help="threads per worker's passes (default 1: the workers use the cores)")
    ma.add_argument("--plan", action="store_true", help="solve nothing: list cells, predicted memory and time")
    ma.add_argument("--resume", action="store_true", help="continue this run in DIR (finished cells are kept)")
    ma.add_argument("--fresh", action="store_true", help="overwrite DIR if it holds another run")
    ma.add_argument("--check-every", type=_positive_int, default=5, help="iterations between exploitability checks")
    ma.add_argument("--no-warm-start", action="store_true", help="start every cell from zero regrets")
    ma.add_argument("--stream-over", type=_positive_float, default=None, metavar="GB",
                    help="stream cells predicted to need more than GB in memory from disk (split depth 3, "
                         "cold start): full-ladder cells on 24 GB machines, e.g. --stream-over 20")
    ma.add_argument("--no-table", action="store_true", help="write no strategy tables")
    ma.add_argument("--table-min-reach", type=_prob, default=0.0, metavar="P",
                    help="leave out information sets the equilibrium reaches with probability below P")
    ma.add_argument("--prunes", choices=("all", "none"), default="all", help="value-preserving prunes (default all)")
    _small_variant_options(ma)
    ma.add_argument("-q", "--quiet", action="store_true", help="no progress bar")
    ma.set_defaults(func=cmd_match)

    ar = sub.add_parser("arena", help="bots against each other over whole matches; win rates and exploitability")
    ar.add_argument("--bots", type=_bot_list, required=True, metavar="A,B[,C...]",
                    help="bots: solved, heuristic-high, heuristic-low, random, br-solved, br-heuristic-high, br-heuristic-low, "
                    "br-random (best responses in --cell) — every pair plays")
    ar.add_argument("--matches", type=_positive_int, default=2000, help="matches per pair (default 2000)")
    ar.add_argument("--seed", type=int, default=0, help="seed of the deals and the bots' sampling")
    ar.add_argument("--solved", metavar="DIR", help="match run of the solved bot (default: the rules' own, "
                    "solved on demand)")
    ar.add_argument("--no-solve", action="store_true", help="never solve on demand")
    ar.add_argument("--out", default="results/arena", metavar="DIR", help="output folder (default results/arena)")
    ar.add_argument("--cell", type=_score, default=None, metavar="A,B",
                    help="score cell of the exploitability figures (default 11,11 on decks of <= 10 cards; on "
                    "bigger decks only when given)")
    ar.add_argument("--dealer", type=int, choices=(0, 1), default=1, help="dealer of that cell (default 1)")
    ar.add_argument("--no-exploitability", action="store_true", help="skip the per-bot exploitability")
    _small_variant_options(ar)
    ar.add_argument("-q", "--quiet", action="store_true", help="no progress bar")
    ar.set_defaults(func=cmd_arena)

    ex = sub.add_parser("explain", help="the solution at one decision: probabilities, action values, opponent range")
    ex.add_argument("--score", type=_score, required=True, metavar="A,B", help="scores at the start of the hand")
    ex.add_argument("--dealer", type=int, choices=(0, 1), required=True, help="the dealing player")
    ex.add_argument("--vira", default=None, metavar="CARD",
                    help="the turned-up card, e.g. 4c (leave out in rule sets without a vira: mineiro)")
    ex.add_argument("--hand", required=True, metavar="CARDS", help='your three cards, e.g. "5c 3d Qs"')
    ex.add_argument("--history", default="", metavar="ACTIONS",
                    help='the hand so far, comma separated, e.g. "raise 3, accept_raise, play_face_up 7h"')
    ex.add_argument("--solved", metavar="DIR", help="a finished match run (default: the rules' own)")
    ex.add_argument("--no-solve", action="store_true", help="never solve on demand (the default solves a missing "
                    "small-deck grid or full-deck eleven row once)")
    _small_variant_options(ex)
    ex.set_defaults(func=cmd_explain)

    pl = sub.add_parser("play", help="play against a bot in the terminal (a match to 12, or --hand)")
    pl.add_argument("--bot", choices=("solved", "heuristic", "heuristic-high", "heuristic-low", "random"),
                    default="heuristic-high", help="the opponent (default heuristic-high)")
    pl.add_argument("--hints", action="store_true", help="show the solution before each decision and your losses after")
    pl.add_argument("--seed", type=int, default=None, help="seed of the deals (default: random)")
    pl.add_argument("--seat", type=int, choices=(0, 1), default=0, help="your seat (player 1 deals first)")
    pl.add_argument("--hand", action="store_true", help="one hand instead of a match")
    pl.add_argument("--score", type=_score, default=None, metavar="A,B", help="with --hand: the score")
    pl.add_argument("--dealer", type=int, choices=(0, 1), default=1, help="with --hand: the dealer")
    pl.add_argument("--solved", metavar="DIR", help="a finished match run (default: the rules' own)")
    pl.add_argument("--no-solve", action="store_true", help="never solve on demand")
    _small_variant_options(pl)
    pl.set_defaults(func=cmd_play)

    args = p.parse_args(_join_negative_values(sys.argv[1:] if argv is None else list(argv)))
    _sigterm_as_interrupt()
    try:
        return args.func(args)
    except BrokenPipeError:  # `truco-lab ... | head`: the reader left, nothing is wrong
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except KeyboardInterrupt:
        print(f"\ntruco-lab {args.command}: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
