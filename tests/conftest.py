"""Shared test helpers.

Some tests read ``../shared/truco-spec`` (the public conformance corpus, beside
the project). CI always has it; a user's clone may not, so those tests skip
with a reason when the folder is absent.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

SHARED = Path(__file__).resolve().parents[1].parent / "shared"
SPEC = SHARED / "truco-spec"
FIXTURES = SPEC / "engine" / "fixtures"
SCHEMAS = SPEC / "engine" / "schemas"

if os.environ.get("CI") and not FIXTURES.is_dir():
    raise RuntimeError(f"CI must have the truco-spec corpus at {SPEC}; refusing to skip the conformance tests")

needs_spec = pytest.mark.skipif(
    not FIXTURES.is_dir(), reason=f"truco-spec corpus not found at {SPEC} (../shared is absent in this clone)"
)


def fixture_files() -> list[Path]:
    return sorted(FIXTURES.rglob("*.json")) if FIXTURES.is_dir() else []


@pytest.fixture(scope="session")
def small_grid(tmp_path_factory):
    """The whole grid of a 7-card, one-suit, raise-to-3 variant, solved to 1e-4 per cell, with strategy tables."""
    from truco_lab.lab.match import MatchConfig
    from truco_lab.lab.match_run import run_match
    from truco_lab.rules.ruleset import PAULISTA

    rules = PAULISTA.with_deck("7QJKA23", "c").with_max_stake(3)
    out = tmp_path_factory.mktemp("grid")
    cfg = MatchConfig(rules, target=1e-4)  # with tables: the notebooks read them
    state, summary = run_match(cfg, "all", out, workers=1, progress=False)
    return out, cfg, state, summary


def pytest_collection_modifyitems(config, items):
    """A test that uses the whole-grid fixture solves a 10-card match first (~15 s): it is slow."""
    for item in items:
        if "small_grid" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.slow)


def cli_in_process(argv: list[str]) -> tuple[int, str]:
    """``truco-lab argv`` in this process: its exit code and stderr. For refusals (one line, exit 2), where a new
    interpreter per case costs ~1.2 s of imports; one case per test keeps the real process (``python -m``)."""
    import contextlib
    import io

    from truco_lab.cli import main

    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        try:
            code = main(list(argv))
        except SystemExit as e:  # argparse's own refusals
            code = e.code
    return int(code), err.getvalue()
