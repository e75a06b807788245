"""Strategy tables, the ``truco-lab solve`` CLI and the quickstart notebook."""

import json
import random
import subprocess
import sys
from pathlib import Path

import numpy as np
import pyspiel
import pytest

import truco_lab  # noqa: F401
from solvers import solve
from solvers.tables import StrategyTable
from truco_lab.cli import main
from truco_lab.rules.cards import action_str, card_str

ROOT = Path(__file__).resolve().parents[1]
SMALL = ["--ranks", "7QJKA23", "--suits", "c", "--max-stake", "3"]
COLUMNS = ["vira", "vira_class", "score0", "score1", "dealer", "player", "hand", "history", "hidden", "action",
           "probability", "reach", "action_value", "regret"]


def test_cli_solve_writes_tables_checkpoint_and_summary_then_resumes(tmp_path, capsys):
    out = tmp_path / "run"
    args = ["solve", "--score", "0,0", "--dealer", "0", "--vira", "7c", "--algorithm", "dcfr", *SMALL,
            "--out", str(out), "-q", "--checkpoint-every", "5"]
    assert main([*args, "--iterations", "20"]) == 0
    s = json.loads((out / "summary.json").read_text())
    for k in ("game_value", "exploitability", "iterations", "seconds_per_iteration", "score", "dealer", "vira",
              "algorithm"):
        assert k in s
    assert s["iterations"] == 20 and s["score"] == [0, 0] and s["dealer"] == 0 and s["vira"] == "7c"
    assert abs(s["game_value"] - 0.1) < 0.01
    assert len(list((out / "checkpoints").glob("*.npz"))) == 1
    t = StrategyTable.load(out)
    assert list(t.df.columns) == COLUMNS
    for k in ("rules", "algorithm", "iterations", "exploitability", "version", "date"):
        assert k in t.metadata
    # probabilities of every information set sum to one
    sums = t.df.groupby(["player", "hand", "history", "hidden"], observed=True)["probability"].sum()
    assert np.allclose(sums, 1.0, atol=1e-5)
    # resume continues from iteration 20, not from scratch
    assert main([*args, "--iterations", "30", "--resume"]) == 0
    s2 = json.loads((out / "summary.json").read_text())
    assert s2["iterations"] == 30
    assert s2["exploitability"] <= s["exploitability"] * 1.5
    assert "game value" in capsys.readouterr().out


def test_cli_target_exploitability_for_all_viras(tmp_path):
    out = tmp_path / "all"
    assert main(["solve", "--score", "11,11", "--dealer", "1", "--vira", "all", "--target-exploitability", "1e-3",
                 "--ranks", "KA23", "--suits", "hc", "--max-stake", "1", "--out", str(out), "-q"]) == 0
    s = json.loads((out / "summary.json").read_text())
    assert s["vira"] == "all" and len(s["cells"]) == 3  # vira K, A, and 2 or 3
    assert all(c["exploitability"] <= 1e-3 for c in s["cells"])
    assert len(list(out.glob("*.parquet"))) == 3


@pytest.mark.parametrize(
    ("args", "named"),
    [
        (["--score", "12,0"], "--score"),
        (["--score", "3"], "--score"),
        (["--dealer", "2"], "--dealer"),
        (["--vira", "9z"], "--vira"),
        (["--algorithm", "cfr++"], "--algorithm"),
        (["--iterations", "0"], "--iterations"),
        (["--target-exploitability", "-1"], "--target-exploitability"),
    ],
)
def test_cli_bad_arguments_get_one_line_naming_them_and_exit_2(tmp_path, capsys, args, named):
    base = {"--score": "0,0", "--dealer": "0", "--vira": "7c", "--iterations": "5"}
    for k, v in zip(args[::2], args[1::2], strict=True):
        base[k] = v
    if "--target-exploitability" in base:
        del base["--iterations"]
    argv = ["solve", *SMALL, "--out", str(tmp_path / "x")]
    for k, v in base.items():
        argv += [k, v]
    if args[0] == "--score":  # as a user's shell runs it: a process, its exit status and its whole stderr
        p = subprocess.run([sys.executable, "-m", "truco_lab.cli", *argv], capture_output=True, text=True, cwd=ROOT)
        code, err = p.returncode, p.stderr
    else:  # the same entry point in this process (a new interpreter per case cost ~1.5 s of the fast set each)
        try:
            code = main(argv)
        except SystemExit as e:  # argparse's own refusals
            code = e.code
        err = capsys.readouterr().err
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1 and named in lines[0], err
    assert not (tmp_path / "x").exists()  # refused before anything is written


def test_lookup_by_real_cards_finds_the_solved_information_set():
    g = pyspiel.load_game("truco_paulista", {"ranks": "7QJKA23", "suits": "c", "max_stake": 3, "dealer": 1})
    r = solve(g, algorithm="dcfr", iterations=50)
    table = r.table(include_forced=True)
    assert list(table.df.columns) == COLUMNS
    sub = r.solver.solvers[0]
    avg = sub.average_strategy()
    def route(st):
        return sub.tree.source.route(sub.tree, st)

    rng = random.Random(0)
    checked = 0
    while checked < 40:
        st = g.new_initial_state()
        while st.is_chance_node():
            outs = st.chance_outcomes()
            st.apply_action(rng.choices([a for a, _ in outs], [p for _, p in outs])[0])
        depth = rng.randrange(0, 8)
        for _ in range(depth):
            if st.is_terminal():
                break
            st.apply_action(rng.choice(st.legal_actions()))
        if st.is_terminal():
            continue
        try:
            slots = route(st)
        except KeyError:  # a pruned action was taken: not in the table
            continue
        p = st.current_player()
        cards = " ".join(card_str(c) for c in st.deal[3 * p:3 * p + 3])
        hist = [action_str(a) for _, a in st.hand_actions]
        hist = [h if not (h.startswith("play_face_down") and q != p) else "play_face_down ?"
                for h, (q, _) in zip(hist, st.hand_actions, strict=True)]
        rows = table.lookup(card_str(st.deal[6]), cards, hist)
        assert len(rows) == len({s for s in slots.values() if s >= 0}), (cards, hist)
        assert np.isclose(rows["probability"].sum(), 1.0, atol=1e-5)
        want = sorted(float(avg[s]) for s in set(slots.values()) if s >= 0)
        assert np.allclose(sorted(rows["probability"]), want, atol=1e-6)
        checked += 1


def test_table_filters_and_aggregate_view():
    g = pyspiel.load_game("truco_paulista", {"ranks": "7QJKA23", "suits": "c", "max_stake": 3, "dealer": 0})
    t = solve(g, algorithm="dcfr", iterations=100).table()
    p1 = t.filter(player=1)
    assert len(p1) and set(p1.df["player"]) == {1}
    with pytest.raises(KeyError, match="no column"):
        t.filter(colour="red")
    f = t.frequency("raise", by="hand")
    assert len(f) and ((f >= 0) & (f <= 1 + 1e-6)).all()


@pytest.mark.slow
def test_quickstart_notebook_runs_on_a_small_solve(tmp_path, monkeypatch):
    """The notebook reads results/eleven by default; here the eleven row of a small deck."""
    nbformat = pytest.importorskip("nbformat")
    from nbclient import NotebookClient

    sys.path.insert(0, str(ROOT / "experiments"))
    try:
        import eleven_row
    finally:
        sys.path.pop(0)
    res = tmp_path / "eleven"
    assert eleven_row.main(["--out", str(res), *SMALL, "-q"]) == 0
    assert (res / "equity.parquet").exists()
    monkeypatch.setenv("TRUCO_RESULTS", str(res))
    nb = nbformat.read(ROOT / "notebooks" / "01_quickstart.ipynb", as_version=4)
    NotebookClient(nb, timeout=600, kernel_name="python3",
                   resources={"metadata": {"path": str(ROOT / "notebooks")}}).execute()
    images = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])
              if "image/png" in o.get("data", {})]
    assert images, "the notebook should draw at least one plot"


def test_lookup_answers_in_the_users_cards_and_says_why_when_empty():
    g = pyspiel.load_game("truco_paulista", {"ranks": "KA23", "suits": "hc", "max_stake": 3, "dealer": 1})
    t = solve(g, algorithm="dcfr", iterations=30).table()
    vira = "Kh"  # manilha A; levels: K, 2, 3, Ah, Ac
    rows = t.lookup(vira, ["3c", "Ac", "2h"], "")
    assert len(rows) > 1 and abs(rows["probability"].sum() - 1) < 1e-5
    played = {a.split()[1] for a in rows["action"].astype(str) if a.startswith("play_face_up")}
    assert played <= {"3c", "Ac", "2h"} and played  # the user's own cards, not the level representatives
    same = t.lookup(vira, "3C AC 2H", "")
    assert list(same["probability"]) == list(rows["probability"])
    with pytest.raises(LookupError, match="score"):
        t.lookup(vira, "3c Ac 2h", "", score=(5, 5))
    with pytest.raises(ValueError):
        t.lookup(vira, "3c Ac 2h", "RAISE 3, ACCEPT_RAISE, fold")


def test_written_table_is_the_in_memory_frame_row_for_row(tmp_path):
    """The writers build Arrow columns directly; the file must hold exactly the rows, columns, types and
    categories of the pandas frame the in-memory table is made of (``subgame_frame``)."""
    import pandas as pd
    import pyarrow.parquet as pq

    from solvers.tables import subgame_frame, write_table
    from solvers.vector import VectorSolver
    from truco_lab.abstraction.tree import build_cell
    from truco_lab.rules.ruleset import PAULISTA

    rules = PAULISTA.with_deck("JKA23", "hc").with_max_stake(6)
    solver = VectorSolver(build_cell(rules, 3, 3, 0, 0), "dcfr")
    for _ in range(3):
        solver.iterate()
    path, rows, dropped = write_table(solver, tmp_path / "t.parquet", {"x": 1}, rows_per_group=997)
    assert pq.ParquetFile(path).metadata.num_row_groups > 2  # several groups, each with its own categories
    got = pq.read_table(path).to_pandas()
    want = subgame_frame(solver)
    assert (rows, dropped) == (len(want), 0) and list(got.columns) == list(want.columns)
    for k in want.columns:
        a, b = got[k], want[k]
        if isinstance(b.dtype, pd.CategoricalDtype):
            assert list(a.astype(str)) == list(b.astype(str)), k
        else:
            assert a.dtype == b.dtype and np.array_equal(a.to_numpy(), b.to_numpy()), k
    # how the file is encoded (solvers.tables._parquet_writer): the numbers never dictionary-encoded, min/max
    # statistics on the one-value columns only (a query over many files skips whole files by them)
    meta = pq.ParquetFile(path).metadata.row_group(0)
    cols = {meta.column(i).path_in_schema: meta.column(i) for i in range(meta.num_columns)}
    assert all("RLE_DICTIONARY" not in cols[k].encodings for k in ("probability", "reach", "action_value", "regret"))
    assert "RLE_DICTIONARY" in cols["hand"].encodings
    # the constant numbers in plain pages, every column required (no definition levels)
    assert all("RLE_DICTIONARY" not in cols[k].encodings for k in ("vira_class", "score0", "score1", "dealer"))
    assert not any(f.nullable for f in pq.read_schema(path))
    stats = {k for k, c in cols.items() if c.statistics is not None and c.statistics.has_min_max}
    assert stats == {"player", "vira", "vira_class", "score0", "score1", "dealer"}
