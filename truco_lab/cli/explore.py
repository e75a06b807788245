"""``truco-lab explore``: the study lab's explorer over one run folder (and a second to compare)."""

from __future__ import annotations

import argparse
import ipaddress
import sys

from truco_lab.cli.common import CliError

PROG = "truco-lab explore"


def add_parser(sub) -> None:
    ex = sub.add_parser("explore", help="explore a solved run in the browser: match heatmap, decisions, diffs")
    ex.add_argument("folders", nargs="+", metavar="DIR", help="a run folder (truco-lab match/solve --out), "
                    "and optionally a second one to compare")
    ex.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1: this machine only)")
    ex.add_argument("--port", type=int, default=8050, help="port (default 8050; 0 picks a free one)")
    ex.set_defaults(func=run, prog=PROG)


def run(args: argparse.Namespace) -> int:
    from truco_lab.lab.browse import BrowseError
    from truco_lab.people.explorer.server import serve

    if len(args.folders) > 2:
        raise CliError(f"argument DIR: give one or two run folders, got {len(args.folders)}")
    if not 0 <= args.port <= 65535:
        raise CliError(f"argument --port: {args.port} is not a port (0-65535)")
    try:
        ipaddress.ip_address(args.host)
    except ValueError:
        if args.host != "localhost":
            raise CliError(f"argument --host: {args.host!r} is not an IP address (e.g. 127.0.0.1)") from None
    try:
        httpd = serve(args.folders, args.host, args.port, tables=_tables(args.folders[0]))
    except BrowseError as e:
        raise CliError(str(e)) from None
    except OSError as e:
        raise CliError(f"cannot listen on {args.host}:{args.port} ({e.strerror}); try --port 0") from None
    print(f"truco-lab explore: serving {', '.join(args.folders)} at {httpd.url} (Ctrl-C stops)", flush=True)
    try:
        httpd.serve_forever()
    except KeyboardInterrupt:
        print("\ntruco-lab explore: stopped", file=sys.stderr)
    finally:
        httpd.server_close()
    return 0


def _tables(folder: str):
    """The browser table behind "play from here": the run's rules, and for a match run its strategy (the
    solved bot and hints)."""
    from truco_lab.lab.browse import Run
    from truco_lab.people.explorer.api import TableHost

    run = Run(folder)
    if run.kind != "match":
        return TableHost(run.rules, None, f"{folder} is a solve folder (one cell), not a match run")
    from truco_lab.lab.policy import MatchStrategy

    return TableHost(run.rules, MatchStrategy(folder))
