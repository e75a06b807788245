"""The ``truco-lab`` command line: :func:`main` builds the parser from one module per command (each
``add_parser(sub)`` and ``run(args) -> exit code``; thin: parse, call, print) and turns a command's
:class:`~truco_lab.cli.common.CliError` into one line on stderr."""

from __future__ import annotations

import os
import sys

from truco_lab.cli import arena, bench, explain, explore, match, mccfr, play, solve, spec_check
from truco_lab.cli.common import CliError, Parser, join_negative_values, sigterm_as_interrupt
from truco_lab.lab.runs import RunError, release_locks

COMMANDS = (spec_check, bench, solve, mccfr, match, arena, explain, play, explore)


def build_parser() -> Parser:
    from truco_lab import __version__

    p = Parser(prog="truco-lab", description="truco-lab: engine, games and solvers for truco paulista")
    p.add_argument("--version", action="version", version=f"truco-lab {__version__}")
    sub = p.add_subparsers(dest="command", required=True, parser_class=Parser)
    for cmd in COMMANDS:
        cmd.add_parser(sub)
    return p


def os_error_line(e: OSError) -> str:
    """An operating-system error as one line: what, where, and for a full disk what to do (every write is
    atomic, so what finished before it is whole)."""
    import errno

    where = f": {e.filename}" if e.filename else ""
    line = f"{e.strerror or e}{where}"
    if e.errno in (errno.ENOSPC, errno.EDQUOT):
        line += " (what finished is kept: free some space and run the command again, with --resume where it has one)"
    return line


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(join_negative_values(sys.argv[1:] if argv is None else list(argv)))
    try:
        with sigterm_as_interrupt():
            return args.func(args)
    except CliError as e:
        if e.code == 130:  # interrupted: the resume hint, after the progress bar's line
            print(f"\n{args.prog}: {e}", file=sys.stderr)
        else:
            print(f"{args.prog}: error: {str(e).splitlines()[0]}", file=sys.stderr)
        return e.code
    except RunError as e:  # e.g. --resume with --fresh, refused before anything is touched
        print(f"{args.prog}: error: {e}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # `truco-lab ... | head`: the reader left, nothing is wrong
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except KeyboardInterrupt:
        print(f"\ntruco-lab {args.command}: interrupted", file=sys.stderr)
        return 130
    except OSError as e:  # a full disk, a folder it may not write: one line naming the file, not a traceback
        print(f"{args.prog}: error: {os_error_line(e)}", file=sys.stderr)
        return 1
    finally:
        release_locks()  # the command's run folders (a process running main again may claim them again)
