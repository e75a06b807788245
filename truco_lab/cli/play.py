"""``truco-lab play``: a match (or one hand) against a bot at the terminal."""

from __future__ import annotations

import argparse
import random

from truco_lab.cli.common import CliError, add_rules_options, check_score, rules_from_args, score_pair, seed
from truco_lab.lab.match_run import ensure_solved
from truco_lab.lab.policy import MatchStrategy
from truco_lab.people.play import Table
from truco_lab.people.roster import make_bot

PROG = "truco-lab play"


def add_parser(sub) -> None:
    pl = sub.add_parser("play", help="play against a bot in the terminal (a match to 12, or --hand)")
    pl.add_argument("--bot", choices=("solved", "heuristic", "heuristic-high", "heuristic-low", "random"),
                    default="heuristic-high", help="the opponent (default heuristic-high)")
    pl.add_argument("--hints", action="store_true", help="show the solution before each decision and your losses after")
    pl.add_argument("--seed", type=seed, default=None, help="seed of the deals (default: random)")
    pl.add_argument("--seat", type=int, choices=(0, 1), default=0, help="your seat (player 1 deals first)")
    pl.add_argument("--hand", action="store_true", help="one hand instead of a match")
    pl.add_argument("--score", type=score_pair, default=None, metavar="A,B", help="with --hand: the score")
    pl.add_argument("--dealer", type=int, choices=(0, 1), default=1, help="with --hand: the dealer")
    pl.add_argument("--solved", metavar="DIR", help="a finished match run (default: the rules' own)")
    pl.add_argument("--no-solve", action="store_true", help="never solve on demand")
    pl.add_argument("--browser", action="store_true", help="play at a table in the browser: serves it on --host "
                    "and --port and prints its URL")
    pl.add_argument("--host", default="127.0.0.1", help="with --browser: the address (default 127.0.0.1)")
    pl.add_argument("--port", type=int, default=8060, help="with --browser: the port (default 8060; 0: a free one)")
    add_rules_options(pl, argentine_options=True)
    pl.set_defaults(func=run, prog=PROG)


def run(args: argparse.Namespace) -> int:
    rules = rules_from_args(args, any_pack=True)
    _check_table_rules(rules, args.bot, args.hints)
    check_score(rules, args.score)
    strategy = None
    if args.bot == "solved" or args.hints:
        try:
            out = ensure_solved(rules, args.solved, on_demand=not args.no_solve)
        except ValueError as e:
            raise CliError(str(e)) from None
        if out is None:
            raise CliError("--bot solved and --hints need a solved match run: give --solved DIR or drop --no-solve")
        strategy = MatchStrategy(out)
    deal_seed = random.randrange(2**31) if args.seed is None else args.seed
    if args.browser:
        return _browser(args, rules, strategy, deal_seed)
    bot = make_bot(args.bot, deal_seed + 1, strategy)
    table = Table(rules, bot, match=not args.hand, seat=args.seat, seed=deal_seed,
                  hints=strategy if args.hints else None, score=args.score or (0, 0), dealer=args.dealer)
    return table.run()


def _check_table_rules(rules, bot: str, hints: bool) -> None:
    """The rule sets the table seats: heads-up, either pack; the solved bot and hints where a solution exists."""
    if rules.seats > 2:
        raise CliError(f"argument --rules: {rules.name} is played two against two; the table seats heads-up rule "
                       "sets so far (paulista, paulista_house, mineiro, argentino)")
    if rules.pack == "spanish" and (bot in ("solved", "br-solved") or hints):
        what = "--hints" if hints else f"--bot {bot}"
        raise CliError(f"{what}: rule set {rules.name} has no solved match strategy yet (its native trees are not "
                       "built); play --bot heuristic-high, heuristic-low or random")


def _browser(args: argparse.Namespace, rules, strategy, deal_seed: int) -> int:
    """Serve the browser table (the same bots, rule sets and hints as the terminal's)."""
    from urllib.parse import urlencode

    from truco_lab.people.explorer.api import TableHost
    from truco_lab.people.explorer.server import serve

    if not 0 <= args.port <= 65535:
        raise CliError(f"argument --port: {args.port} is not a port (0-65535)")
    host = TableHost(rules, strategy, "give --solved DIR, or --bot solved / --hints to solve on demand")
    try:
        httpd = serve([], args.host, args.port, tables=host)
    except OSError as e:
        raise CliError(f"cannot listen on {args.host}:{args.port} ({e.strerror}); try --port 0") from None
    q = {"bot": args.bot, "seat": args.seat, "seed": deal_seed, "hints": int(bool(args.hints))}
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
