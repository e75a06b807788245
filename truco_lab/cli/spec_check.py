"""``truco-lab spec-check DIR``: the truco-spec engine fixtures under DIR."""

from __future__ import annotations

import argparse
from pathlib import Path

from truco_lab.cli.common import CliError
from truco_lab.rules.spec import find_fixtures, run_fixture


def add_parser(sub) -> None:
    sc = sub.add_parser("spec-check", help="run truco-spec engine fixtures; ends with 'N passed, M failed'")
    sc.add_argument("dir", metavar="DIR", help="a fixture directory (searched recursively) or one fixture file")
    sc.add_argument("-v", "--verbose", action="store_true", help="print every fixture, not only failures")
    sc.set_defaults(func=run, prog="truco-lab spec-check")


def run(args: argparse.Namespace) -> int:
    d = Path(args.dir)
    if not d.exists():
        raise CliError(f"DIR {str(d)!r} does not exist")
    fixtures, skipped = find_fixtures(d)
    if skipped:
        print(f"skipped {len(skipped)} JSON file(s) that are not fixtures (no initial_state), "
              f"e.g. {skipped[0]}")
    if not fixtures:
        raise CliError(f"DIR {str(d)!r} holds no fixture (JSON with an initial_state)")
    results = [run_fixture(f) for f in fixtures]
    failed = [r for r in results if not r.passed]
    for r in results:
        if args.verbose or not r.passed:
            print(f"{'PASS' if r.passed else 'FAIL'} {r.id}" + (f": {r.message}" if r.message else ""))
    print(f"{len(results) - len(failed)} passed, {len(failed)} failed")
    return 1 if failed else 0
