"""``truco-lab play``: a match (or one hand) against a bot at the terminal."""

from __future__ import annotations

import argparse
import random

from truco_lab.cli.common import (
    CliError,
    add_rules_options,
    check_score,
    load_mccfr_option,
    rules_from_args,
    score_pair,
    seed,
)
from truco_lab.lab.match_run import ensure_solved
from truco_lab.lab.policy import MatchStrategy
from truco_lab.people.play import Table
from truco_lab.people.roster import make_bot

PROG = "truco-lab play"


def add_parser(sub) -> None:
    pl = sub.add_parser("play", help="play against a bot in the terminal (a match to 12, or --hand)")
    pl.add_argument("--bot", choices=("solved", "heuristic", "heuristic-high", "heuristic-low", "random", "mccfr"),
                    default="heuristic-high", help="the opponent (two against two: both rivals; default "
                    "heuristic-high)")
    pl.add_argument("--partner", choices=("heuristic", "heuristic-high", "heuristic-low", "random", "mccfr"),
                    default=None, help="two against two: your partner (default: the same bot as --bot)")
    pl.add_argument("--mccfr", nargs="+", metavar="DIR", help="the mccfr bot's truco-lab mccfr runs (one per dealer, "
                    "or a folder of them)")
    pl.add_argument("--hints", action="store_true", help="show the solution before each decision and your losses after")
    pl.add_argument("--seed", type=seed, default=None, help="seed of the deals (default: random)")
    pl.add_argument("--seat", type=int, choices=(0, 1, 2, 3), default=0, help="your seat (heads-up 0 or 1, player 1 "
                    "deals first; two against two 0-3, seat 3 deals first)")
    pl.add_argument("--hand", action="store_true", help="one hand instead of a match")
    pl.add_argument("--score", type=score_pair, default=None, metavar="A,B", help="with --hand: the score")
    pl.add_argument("--dealer", type=int, choices=(0, 1, 2, 3), default=None,
                    help="with --hand: the dealer (default 1; two against two 3)")
    pl.add_argument("--solved", metavar="DIR", help="a match run, finished or with its solved levels so far (default: the rules' own)")
    pl.add_argument("--no-solve", action="store_true", help="never solve on demand")
    pl.add_argument("--browser", action="store_true", help="play at a table in the browser: serves it on --host "
                    "and --port and prints its URL")
    pl.add_argument("--host", default="127.0.0.1", help="with --browser: the address (default 127.0.0.1)")
    pl.add_argument("--port", type=int, default=8060, help="with --browser: the port (default 8060; 0: a free one)")
    add_rules_options(pl, team=True, argentine_options=True)
    pl.set_defaults(func=run, prog=PROG)


def run(args: argparse.Namespace) -> int:
    rules = rules_from_args(args, any_pack=True)
    _check_table_rules(rules, args)
    check_score(rules, args.score)
    if args.dealer is None:
        args.dealer = 3 if rules.seats == 4 else 1
    if rules.seats == 4:
        return _browser(args, rules, None, _deal_seed(args)) if args.browser else _team(args, rules)
    strategy = None
    if rules.pack == "spanish" and (args.bot in ("solved", "br-solved") or args.hints):
        strategy = argentine_strategy(rules, args.solved)
    elif args.bot == "solved" or args.hints:
        try:
            out = ensure_solved(rules, args.solved, on_demand=not args.no_solve)
        except ValueError as e:
            raise CliError(str(e)) from None
        if out is None:
            raise CliError("--bot solved and --hints need a solved match run: give --solved DIR or drop --no-solve")
        strategy = MatchStrategy(out)
    deal_seed = _deal_seed(args)
    if args.browser:
        return _browser(args, rules, strategy, deal_seed)
    runs = load_mccfr_option(args.mccfr, rules, args.bot == "mccfr")
    try:
        bot = make_bot(args.bot, deal_seed + 1, strategy, mccfr=runs)
    except ValueError as e:
        raise CliError(str(e)) from None
    table = Table(rules, bot, match=not args.hand, seat=args.seat, seed=deal_seed,
                  hints=strategy if args.hints else None, score=args.score or (0, 0), dealer=args.dealer)
    return table.run()


def _check_table_rules(rules, args: argparse.Namespace) -> None:
    """Which bots, seats and options each rule set's table takes (the solved bot and hints where a solution
    exists; the partner, seats 2-3 and dealers 2-3 two against two)."""
    bot, hints = args.bot, args.hints
    if rules.seats == 4:
        if bot == "solved" or hints:
            raise CliError(f"{'--hints' if hints else '--bot solved'}: {rules.name} is a team game, with no solved "
                           "strategy (CFR has no equilibrium to find for teams); play --bot heuristic-high, "
                           "heuristic-low, random or mccfr")
        return
    if args.partner is not None:
        raise CliError(f"argument --partner: {rules.name} is heads-up (no partner); --partner is for *_2v2 rules")
    if args.seat > 1 or (args.dealer is not None and args.dealer > 1):
        what = f"--seat {args.seat}" if args.seat > 1 else f"--dealer {args.dealer}"
        raise CliError(f"argument {what.split()[0]}: {rules.name} is heads-up: seats and dealers are 0 or 1, got "
                       f"{what.split()[1]}")
    if bot == "mccfr" and args.browser:
        raise CliError("--bot mccfr: heads-up, the mccfr bot plays at the terminal table (drop --browser); in the "
                       "browser it plays team games (paulista_2v2, mineiro_2v2)")
    if rules.pack == "spanish" and (bot in ("solved", "br-solved") or hints) and not args.solved:
        what = "--hints" if hints else f"--bot {bot}"
        raise CliError(f"{what}: argentino's solved strategy comes from a solved match folder: give --solved DIR "
                       "(python experiments/argentine_match.py --out DIR solves one on a small deck)")


def argentine_strategy(rules, solved):
    """The solved Argentine match in ``solved``, refused (one line) unless it was solved under ``rules``."""
    from truco_lab.lab.argentine_match import ArgentineStrategy

    try:
        strategy = ArgentineStrategy(solved)
    except ValueError as e:
        raise CliError(str(e)) from None
    if strategy.rules != rules:
        raise CliError(f"--solved {solved}: solved under {strategy.rules.cli_options()}, not under these options "
                       f"({rules.cli_options()}); "
                       "give the same --ranks, --suits, --max-stake, --target and --flor")
    return strategy


def _team(args: argparse.Namespace, rules) -> int:
    """Two against two at the terminal: you, a bot partner, two bot rivals."""
    from truco_lab.people.team_table import TeamTable

    partner = args.partner or args.bot
    runs = load_mccfr_option(args.mccfr, rules, "mccfr" in (partner, args.bot))
    deal_seed = _deal_seed(args)
    try:
        mate = make_bot(partner, deal_seed + 3, mccfr=runs)
        rivals = (make_bot(args.bot, deal_seed + 1, mccfr=runs), make_bot(args.bot, deal_seed + 2, mccfr=runs))
    except ValueError as e:
        raise CliError(str(e)) from None
    table = TeamTable(rules, mate, rivals, match=not args.hand, seat=args.seat, seed=deal_seed,
                      score=args.score or (0, 0), dealer=args.dealer)
    return table.run()


def _deal_seed(args: argparse.Namespace) -> int:
    return random.randrange(2**31) if args.seed is None else args.seed


def _browser(args: argparse.Namespace, rules, strategy, deal_seed: int) -> int:
    """Serve the browser table (the same bots, rule sets and hints as the terminal's; two against two, the
    partner and the mccfr runs too)."""
    from urllib.parse import urlencode

    from truco_lab.people.explorer.api import TableHost
    from truco_lab.people.explorer.server import serve

    if not 0 <= args.port <= 65535:
        raise CliError(f"argument --port: {args.port} is not a port (0-65535)")
    team = rules.seats == 4
    runs = load_mccfr_option(args.mccfr, rules, "mccfr" in (args.partner, args.bot)) if team else None
    host = TableHost(rules, strategy, "give --solved DIR, or --bot solved / --hints to solve on demand", mccfr=runs)
    try:
        httpd = serve([], args.host, args.port, tables=host)
    except OSError as e:
        raise CliError(f"cannot listen on {args.host}:{args.port} ({e.strerror}); try --port 0") from None
    def plain(name: str) -> str:  # the page's bot names ("heuristic" is the CLI's alias)
        return "heuristic-high" if name == "heuristic" else name

    q = {"bot": plain(args.bot), "seat": args.seat, "seed": deal_seed, "hints": int(bool(args.hints))}
    if team and args.partner:
        q["partner"] = plain(args.partner)
    if args.hand:
        q.update(hand=1, score=",".join(map(str, args.score or (0, 0))), dealer=args.dealer)
    print(f"truco-lab play: the table is at {httpd.url}#{urlencode(q)} (Ctrl-C stops)", flush=True)
    try:
        httpd.serve_forever()
    except KeyboardInterrupt:
        print("\ntruco-lab play: stopped")
    finally:
        httpd.server_close()
    return 0
