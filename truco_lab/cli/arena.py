"""``truco-lab arena``: bots against each other over whole matches; win rates and exploitability."""

from __future__ import annotations

import argparse
import itertools
import sys
from pathlib import Path

from tqdm import tqdm

from solvers.storage import write_json
from truco_lab.cli.common import (
    CliError,
    add_rules_options,
    check_score,
    load_mccfr_option,
    positive_int,
    rules_from_args,
    score_pair,
    seed,
)
from truco_lab.lab.match_run import ensure_solved
from truco_lab.lab.policy import MatchStrategy
from truco_lab.people.arena import ArenaBots, exploitability_table, load_match_game, run_pair, write_results
from truco_lab.people.roster import BOT_NAMES, BR_NAMES
from truco_lab.rules import RuleSet, sees_own_cards

PROG = "truco-lab arena"


def bot_list(text: str) -> list[str]:
    names = [x.strip().lower() for x in text.split(",") if x.strip()]
    known = (*BOT_NAMES, *BR_NAMES)
    bad = [x for x in names if x not in known]
    if bad:
        raise argparse.ArgumentTypeError(f"unknown bot {bad[0]!r}; expected a comma list of {', '.join(known)}")
    if len(names) < 2:
        raise argparse.ArgumentTypeError(f"expected at least two bots (comma separated), got {text!r}")
    return names


def add_parser(sub) -> None:
    ar = sub.add_parser("arena", help="bots against each other over whole matches; win rates and exploitability")
    ar.add_argument("--bots", type=bot_list, required=True, metavar="A,B[,C...]",
                    help="bots: solved, heuristic-high, heuristic-low, random, br-solved, br-heuristic-high, br-heuristic-low, "
                    "br-random (best responses in --cell) — every pair plays")
    ar.add_argument("--matches", type=positive_int, default=2000, help="matches per pair (default 2000)")
    ar.add_argument("--seed", type=seed, default=0, help="seed of the deals and the bots' sampling")
    ar.add_argument("--solved", metavar="DIR", help="match run of the solved bot (default: the rules' own, "
                    "solved on demand)")
    ar.add_argument("--no-solve", action="store_true", help="never solve on demand")
    ar.add_argument("--out", default="results/arena", metavar="DIR", help="output folder (default results/arena)")
    ar.add_argument("--cell", type=score_pair, default=None, metavar="A,B",
                    help="score cell of the exploitability figures (default 11,11 on decks of <= 10 cards, 10,10 "
                    "where 11x11 is played blind; on bigger decks only when given)")
    ar.add_argument("--dealer", type=int, choices=(0, 1), default=1, help="dealer of that cell (default 1)")
    ar.add_argument("--no-exploitability", action="store_true", help="skip the per-bot exploitability")
    ar.add_argument("--mccfr", nargs="+", metavar="DIR", help="the mccfr bot's truco-lab mccfr runs (one per "
                    "dealer; a folder of such runs also works)")
    add_rules_options(ar, team=True, argentine_options=True)
    ar.add_argument("-q", "--quiet", action="store_true", help="no progress bar")
    ar.set_defaults(func=run, prog=PROG)


def _cell(args: argparse.Namespace, rules: RuleSet) -> tuple[tuple[int, int], bool]:
    """The exploitability cell and whether to compute there."""
    check_score(rules, args.cell, "--cell")
    top = rules.target - 1
    cell = args.cell or ((top, top) if sees_own_cards(rules, (top, top)) else (top - 1, top - 1))
    if not sees_own_cards(rules, cell):
        raise CliError(f"argument --cell: under {rules.name} the {cell[0]}x{cell[1]} hand is played blind (no "
                       "decisions, so no exploitability): choose another cell")
    compute = not args.no_exploitability
    if args.cell is None and len(rules.deck) > 10 and compute:
        print("per-bot exploitability skipped on this deck (over an hour per bot at 11x11): choose a cell with "
              "--cell A,B to compute it", file=sys.stderr)
        compute = False
    return cell, compute


def run(args: argparse.Namespace) -> int:
    rules = rules_from_args(args, any_pack=True)
    no_tree = rules.pack == "spanish" or rules.seats == 4  # no native tree: no solved bot, no best response
    argentine_solved = None
    if rules.pack == "spanish" and any(b in ("solved", "br-solved") for b in args.bots):
        # argentino's solved bot (and the best response to it) come from a solved small-deck match folder
        if not args.solved:
            raise CliError("argument --bots: argentino's solved bot comes from a solved match folder: give --solved "
                           "DIR (python experiments/argentine_match.py --out DIR solves one on a small deck)")
        from truco_lab.cli.play import argentine_strategy

        argentine_solved = argentine_strategy(rules, args.solved)
    if no_tree and any((b in ("solved", "br-solved") and argentine_solved is None)
                       or (b.startswith("br-") and b != "br-solved") for b in args.bots):
        if rules.seats == 4:
            raise CliError(f"argument --bots: rule set {rules.name} has no solved strategy nor native best responses; "
                           "its bots are random, heuristic-low, heuristic-high and mccfr")
        raise CliError(f"argument --bots: rule set {rules.name} has no exact best response to a heuristic; its bots are "
                       "random, heuristic-low, heuristic-high, and solved and br-solved with --solved DIR")
    mccfr = load_mccfr_option(args.mccfr, rules, "mccfr" in args.bots)
    cell, compute = _cell(args, rules) if not no_tree else ((0, 0), False)
    notes: list[str] = []

    def note(msg: str) -> None:
        notes.append(msg)
        tqdm.write(msg, file=sys.stderr)

    needs_solved = any(b in ("solved", "br-solved") for b in args.bots)
    if no_tree:
        args.solved, needs_solved, args.no_solve = None, False, True
        if not args.no_exploitability:
            why = "a team game has no exploitability (no equilibrium to measure against)" if rules.seats == 4 else \
                "argentino's per-bot certificates are not computed (its native trees certify the solved cells only)"
            note(f"per-bot exploitability skipped: {why}")
    try:  # the solution also fixes the exploitability's units for every bot: match-win probability
        run_dir = ensure_solved(rules, args.solved, on_demand=needs_solved and not args.no_solve, notify=note)
    except ValueError as e:
        raise CliError(str(e)) from None
    if needs_solved and run_dir is None:
        raise CliError("the solved bot needs a match run: give --solved DIR or drop --no-solve")
    solved = MatchStrategy(run_dir) if run_dir is not None else argentine_solved
    out = Path(args.out)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise CliError(f"--out {out} is not writable ({e.strerror})") from None
    game = load_match_game(rules)
    bots = ArenaBots(rules, solved, (*cell, args.dealer), notify=note, mccfr=mccfr)
    pairs = list(itertools.combinations(args.bots, 2))
    bar = tqdm(total=len(pairs) * args.matches, unit="match", desc="arena", disable=args.quiet)
    results, rows = [], []
    for a, b in pairs:
        res, r = run_pair(game, bots.make, a, b, args.matches, args.seed, progress=bar.update)
        results.append(res)
        rows += r
    bar.close()
    key = {"bots": args.bots, "matches": args.matches, "seed": args.seed, "rules": rules.to_dict(),
           "solved": str(solved.out) if solved is not None else None}
    if mccfr:
        key["mccfr"] = {str(r.folder): r.iterations for r in mccfr}
    write_results(rows, out / "arena.parquet", key)
    for res in results:
        print(res.line())
    for line in bots.fallback_lines():
        note(line)
    expl, unit = {}, None
    if compute:
        a, b = cell
        print(f"exploitability in cell {a}x{b} dealer {args.dealer}: reading each bot's strategy at every "
              "information set (~60-80 us each: about a minute per million; the full deck's 11x11 takes "
              "over an hour per bot; --no-exploitability skips this)", file=sys.stderr, flush=True)
        expl, unit = exploitability_table(bots, args.bots, print)
    write_json(out / "arena.json", {"run": key, "pairs": [dict(vars(r), win_rate=r.win_rate, low=r.interval[0],
                                                                 high=r.interval[1], half_width=r.half_width,
                                                                 points_per_hand=r.points_per_hand)
                                                            for r in results],
                                    "exploitability": expl, "exploitability_units": unit,
                                    "cell": [*cell, args.dealer], "notes": notes})
    print(f"results written to {out}/arena.parquet and {out}/arena.json")
    return 0
