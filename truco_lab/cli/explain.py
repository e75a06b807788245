"""``truco-lab explain``: the solution at one decision."""

from __future__ import annotations

import argparse

from truco_lab.cli.common import (
    CliError,
    add_rules_options,
    check_score,
    load_mccfr_option,
    rules_from_args,
    score_pair,
)
from truco_lab.people.advice import ExplainError, explain

PROG = "truco-lab explain"


def add_parser(sub) -> None:
    ex = sub.add_parser("explain", help="the solution at one decision: probabilities, action values, opponent range")
    ex.add_argument("--score", type=score_pair, required=True, metavar="A,B", help="scores at the start of the hand")
    ex.add_argument("--dealer", type=int, choices=(0, 1, 2, 3), required=True,
                    help="the dealing player (two against two: the dealing seat, 0-3)")
    ex.add_argument("--vira", default=None, metavar="CARD",
                    help="the turned-up card, e.g. 4c (leave out in rule sets without a vira: mineiro)")
    ex.add_argument("--hand", required=True, metavar="CARDS", help='your three cards, e.g. "5c 3d Qs"')
    ex.add_argument("--history", default="", metavar="ACTIONS",
                    help='the hand so far, comma separated, e.g. "raise 3, accept_raise, play_face_up 7h"')
    ex.add_argument("--solved", metavar="DIR", help="a match run, finished or with its solved levels so far (default: the rules' own)")
    ex.add_argument("--no-solve", action="store_true", help="never solve on demand (the default solves a missing "
                    "small-deck grid or full-deck eleven row once)")
    ex.add_argument("--mccfr", nargs="+", metavar="DIR", help="two against two: the truco-lab mccfr runs whose average "
                    "strategy to show (one per dealer, or a folder of them)")
    add_rules_options(ex, team=True, argentine_options=True)
    ex.set_defaults(func=run, prog=PROG)


def run(args: argparse.Namespace) -> int:
    rules = rules_from_args(args, any_pack=True)
    check_score(rules, args.score)
    if rules.seats == 4:
        return _team(args, rules)
    if rules.pack == "spanish":
        return _argentine(args, rules)
    if args.dealer > 1:
        raise CliError(f"argument --dealer: {rules.name} is heads-up: the dealer is 0 or 1, got {args.dealer}")
    if args.mccfr:
        raise CliError("argument --mccfr: MCCFR runs answer team games (--rules paulista_2v2 or mineiro_2v2); "
                       f"{rules.name} has its solved match run (--solved DIR)")
    if rules.vira and args.vira is None:
        raise CliError(f"argument --vira: rule set {rules.name} turns a vira: give the card, e.g. 4c")
    try:
        adv = explain(args.score, args.dealer, args.vira, args.hand, args.history, solved=args.solved, rules=rules,
                      on_demand=not args.no_solve)
    except (ExplainError, ValueError) as e:
        raise CliError(str(e)) from None
    print(adv)
    return 0 if adv.reached else 1


def _argentine(args: argparse.Namespace, rules) -> int:
    """Argentine truco: the solved small-deck match of ``--solved DIR`` at the decision."""
    from truco_lab.cli.play import argentine_strategy
    from truco_lab.people.advice import advise
    from truco_lab.people.argentine import argentine_hand_state

    if args.dealer > 1:
        raise CliError(f"argument --dealer: {rules.name} is heads-up: the dealer is 0 or 1, got {args.dealer}")
    if args.vira is not None:
        raise CliError("argument --vira: argentino turns no vira: leave --vira out")
    if args.mccfr:
        raise CliError("argument --mccfr: MCCFR runs answer team games; argentino has its solved match (--solved DIR)")
    if not args.solved:
        raise CliError("argentino: give --solved DIR, a match solved by python experiments/argentine_match.py "
                       "--out DIR (small decks)")
    strategy = argentine_strategy(rules, args.solved)
    try:
        st = argentine_hand_state(rules, args.score, args.dealer, args.hand, args.history)
    except ValueError as e:
        raise CliError(str(e)) from None
    if not strategy.covers(st):
        raise CliError(f"cell {args.score[0]}x{args.score[1]} dealer {args.dealer} is not in {args.solved}")
    adv = advise(strategy, st)
    print(adv)
    return 0 if adv.reached else 1


def _team(args: argparse.Namespace, rules) -> int:
    """Two against two: the MCCFR average strategy at the decision and how often the run visited it."""
    from truco_lab.people.mccfr_bot import team_advice, team_hand_state

    if args.solved:
        raise CliError(f"argument --solved: {rules.name} is a team game with no solved match run; give --mccfr DIR")
    runs = load_mccfr_option(args.mccfr, rules, True)
    if rules.vira and args.vira is None:
        raise CliError(f"argument --vira: rule set {rules.name} turns a vira: give the card, e.g. 4c")
    try:
        st = team_hand_state(rules, args.score, args.dealer, args.vira, args.hand, args.history)
    except ExplainError as e:
        raise CliError(str(e)) from None
    adv = team_advice(runs, st)
    print(adv)
    return 0 if adv.visits else 1
