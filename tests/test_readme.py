"""README blocks run as written (one once failed: names it never defined)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

README = (Path(__file__).resolve().parents[1] / "README.md").read_text()
BLOCKS = re.findall(r"```python\n(.*?)```", README, re.S)


def _block(marker: str) -> str:
    found = [b for b in BLOCKS if marker in b]
    assert len(found) == 1, f"README has {len(found)} python blocks with {marker!r}"
    return found[0]


@pytest.mark.slow
@pytest.mark.parametrize("marker", ["MCCFRSolver(sampled_game(small", "HandState.new(hands=", "simulate.random_hands("])
def test_readme_block_runs(marker):
    code = _block(marker).replace("1_000_000", "1_000")  # the random-play block's size, cut for the suite
    namespace: dict = {}
    exec(compile(code, f"README block {marker}", "exec"), namespace)  # noqa: S102 - our own README
    if "exploitability" in marker or "MCCFR" in marker:
        assert namespace["s"].iteration == 2_000
