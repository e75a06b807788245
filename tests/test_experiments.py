"""Research scripts: bad input is one line and exit 2."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest


def _load(name: str):
    spec = importlib.util.spec_from_file_location(name, Path(__file__).parent.parent / "experiments" / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_endgame_truco_without_a_run_says_how_to_make_one(tmp_path, capsys):
    mod = _load("endgame_truco")
    assert mod.main(["--run", str(tmp_path / "none")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "truco-lab match --cells endgame" in err
    with pytest.raises(SystemExit) as e:
        mod.main(["--cells", "10,10"])
    assert e.value.code == 2


def test_load_tables_refuses_what_memory_cannot_hold(tmp_path, monkeypatch):
    import pandas as pd

    import solvers.storage
    from truco_lab.lab import insights

    pd.DataFrame({"hand": ["4c 5c 6c"] * 10, "probability": [0.5] * 10}).to_parquet(tmp_path / "s0-0_d0_v0.x.parquet")
    assert len(insights.load_tables(tmp_path)) == 10
    monkeypatch.setattr(solvers.storage, "available_memory_gb", lambda: 1e-9)
    with pytest.raises(MemoryError, match="10 rows .* cells="):
        insights.load_tables(tmp_path)
