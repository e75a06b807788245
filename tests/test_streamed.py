"""Streamed solves (trunk in memory, parts on disk) against the in-memory solver on the same cells."""

import numpy as np
import pyspiel
import pytest
from open_spiel.python.algorithms import exploitability as os_expl

import truco_lab  # noqa: F401  registers the games
from solvers.streamed import SplitTree, StreamedSolver
from solvers.vector import VectorSolver
from truco_lab.abstraction.tree import ALL_PRUNES, build_cell, build_split
from truco_lab.rules.ruleset import MINEIRO, PAULISTA

SMALL = PAULISTA.with_deck("JKA23", "hc").with_max_stake(6)  # a ladder 1-3-6, two suits: hundreds of parts
TINY = PAULISTA.with_deck("7QJKA23", "c").with_max_stake(3)


def _pair(tmp_path, rules, score, depth, algorithm="dcfr", alternating=True, resident=0, dealer=0, vira=0):
    full = VectorSolver(build_cell(rules, score[0], score[1], dealer, vira), algorithm, alternating)
    split = build_split(tmp_path / f"d{depth}", rules, score[0], score[1], dealer, vira, depth=depth)
    return full, StreamedSolver(split, algorithm, alternating, resident_bytes=resident)


@pytest.mark.parametrize("depth", [1, 2, 3, pytest.param(5, marks=pytest.mark.slow)])  # 5: ~20 s
def test_split_tree_has_the_full_trees_information_sets_and_slots(tmp_path, depth):
    full = build_cell(SMALL, 0, 0, 0, 0)
    split = build_split(tmp_path, SMALL, 0, 0, 0, 0, depth=depth)
    assert split.num_parts > 1
    assert (split.num_infosets, split.num_slots) == (full.num_infosets, full.num_slots)
    # every node but the frontier ones (trunk leaves that reappear as their part's root) is counted once
    assert split.num_nodes - split.num_parts == full.num_nodes


@pytest.mark.parametrize("depth,algorithm,alternating", [(1, "dcfr", True), (3, "dcfr", True),
                                                         (2, "cfr+", False), (4, "pcfr+", True)])
@pytest.mark.slow
def test_streamed_iterates_are_the_in_memory_solvers(tmp_path, depth, algorithm, alternating):
    full, st = _pair(tmp_path, SMALL, (3, 3), depth, algorithm, alternating)
    # float32 regrets summed in another order round differently; PCFR+'s predictions amplify that
    tol = 1e-6 if algorithm == "pcfr+" else 1e-8
    for _ in range(3):
        full.iterate(4)
        st.iterate(4)
        assert st.exploitability() == pytest.approx(full.exploitability(), abs=tol)
        assert st.game_value() == pytest.approx(full.game_value(), abs=tol)
    b = full.best_response_values()
    assert st.best_response_values() == pytest.approx(b, abs=tol)
    assert st.regrets.sum() == pytest.approx(float(full.regrets.sum()), rel=1e-5)


def test_resident_parts_change_nothing_but_the_reads(tmp_path):
    _, a = _pair(tmp_path, SMALL, (0, 0), 3)
    b = StreamedSolver(SplitTree.open(tmp_path / "d3"), resident_bytes=1 << 40)
    a.iterate(3)
    b.iterate(3)
    assert np.array_equal(a.regrets, b.regrets) and np.array_equal(a.ssum, b.ssum)
    assert b.parts_read == b.split.num_parts < a.parts_read
    # the table pass holds one part at a time: it keeps none resident (a 0x0 class's table ran out of memory
    # when it refilled them), and the budget is back afterwards
    seen = []
    b.evaluate_parts(lambda i, *rest: seen.append((i, b.resident_used)))
    assert [i for i, _ in seen] == list(range(b.split.num_parts)) + [-1] and {u for _, u in seen} == {0}
    assert b.resident_bytes == 1 << 40


def test_parts_on_two_threads_give_the_same_iterates_bit_for_bit(tmp_path):
    """Two threads work on two parts at once; their root values are added in part order, so the
    iterates, the certificate and the table pass are exactly the one-thread ones."""
    _, a = _pair(tmp_path, SMALL, (0, 0), 3)
    b = StreamedSolver(SplitTree.open(tmp_path / "d3"), threads=2)
    for s in (a, b):
        s.iterate(3)
    assert np.array_equal(a.regrets, b.regrets) and np.array_equal(a.ssum, b.ssum)
    assert a.best_response_values() == b.best_response_values()
    assert b.parts_read == 8 * b.split.num_parts  # 3 iterations x 2 passes, then 2 best responses
    seen = []
    b.evaluate_parts(lambda i, *rest: seen.append(i))
    assert seen == list(range(b.split.num_parts)) + [-1]


def test_equity_payoffs_and_other_rule_sets_stream_too(tmp_path):
    full, st = _pair(tmp_path, MINEIRO.with_deck("7QJKA23", "hc").with_max_stake(4), (2, 6), 2, dealer=1)
    full.iterate(5)
    st.iterate(5)
    assert st.exploitability() == pytest.approx(full.exploitability(), abs=1e-8)


@pytest.mark.slow
def test_streamed_certificate_is_openspiels_exploitability(tmp_path):
    """The streamed best response against something we did not write: OpenSpiel's exploitability of
    the same average profile, exported through the in-memory solver's tree (same iterates)."""
    from solvers import solve

    game = pyspiel.load_game("truco_paulista", {"ranks": "7QJKA23", "suits": "c", "max_stake": 3,
                                                 "score0": 11, "score1": 11, "dealer": 0})
    r = solve(game, algorithm="dcfr", iterations=30, native_options={"prunes": 0})
    parts = []
    for w, tree in zip(r.solver.weights, r.solver.trees, strict=True):
        c = tree.source
        split = build_split(tmp_path / f"v{c.vira_class.index}", c.rules, c.score0, c.score1, c.dealer,
                            c.vira_class, prunes=c.prunes, depth=2)
        assert split.num_parts > 1
        s = StreamedSolver(split)
        s.iterate(30)
        parts.append((w, s))
    ours = sum(w * s.exploitability() for w, s in parts)
    assert ours == pytest.approx(os_expl.exploitability(game, r.to_openspiel_policy()), abs=1e-6)


def test_build_resumes_and_refuses_another_cells_folder(tmp_path):
    a = build_split(tmp_path, TINY, 0, 0, 0, 0, depth=2)
    s1 = StreamedSolver(a)
    s1.iterate(5)
    # an interrupted build: some parts missing; building again writes only those
    gone = sorted(tmp_path.glob("part-*.bin"))[1::2]
    for p in gone:
        p.unlink()
    b = build_split(tmp_path, TINY, 0, 0, 0, 0, depth=2)
    assert all(p.exists() for p in gone)
    s2 = StreamedSolver(b)
    s2.iterate(5)
    assert np.array_equal(s1.regrets, s2.regrets)
    with pytest.raises(ValueError, match="another cell"):
        build_split(tmp_path, TINY, 0, 0, 1, 0, depth=2)
    with pytest.raises(ValueError, match="split depth"):
        build_split(tmp_path / "x", TINY, 0, 0, 0, 0, depth=0)


def test_a_truncated_part_is_a_clear_error(tmp_path):
    split = build_split(tmp_path, TINY, 0, 0, 0, 0, depth=2)
    p = sorted(tmp_path.glob("part-*.bin"))[0]
    p.write_bytes(p.read_bytes()[:-8])
    with pytest.raises(ValueError, match="part file"):
        StreamedSolver(split).iterate(1)


@pytest.mark.slow
def test_cli_solve_streamed_equals_in_memory(tmp_path, capsys):
    import json

    from truco_lab.cli import main

    base = ["solve", "--score", "3,3", "--dealer", "0", "--vira", "all", "--ranks", "JKA23", "--suits", "hc",
            "--max-stake", "6", "--iterations", "8", "--no-table", "-q"]
    assert main(base + ["--out", str(tmp_path / "mem")]) == 0
    assert main(base + ["--out", str(tmp_path / "st"), "--split-depth", "2"]) == 0
    a = json.loads((tmp_path / "mem" / "summary.json").read_text())
    b = json.loads((tmp_path / "st" / "summary.json").read_text())
    assert b["exploitability"] == pytest.approx(a["exploitability"], abs=1e-8)
    assert b["game_value"] == pytest.approx(a["game_value"], abs=1e-8)
    assert [c["entries"] for c in b["cells"]] == [c["entries"] for c in a["cells"]]
    assert [c["split_depth"] for c in b["cells"]] == [2] * len(b["cells"])
    assert [c["split_depth"] for c in a["cells"]] == [0] * len(a["cells"])
    assert not (tmp_path / "st" / "parts").exists()  # each class's parts deleted once it was solved
    # a repeated run reports the finished cells again
    assert main(base + ["--out", str(tmp_path / "st"), "--split-depth", "2", "--resume"]) == 0
    capsys.readouterr()
    with pytest.raises(SystemExit) as e:
        main(base[:-2] + ["--out", str(tmp_path / "x"), "--split-depth", "-1"])
    assert e.value.code == 2


@pytest.mark.slow
@pytest.mark.parametrize("depth,min_reach", [(1, 0.0), (3, 0.0), (2, 1e-3)])
def test_streamed_tables_are_the_in_memory_tables(tmp_path, depth, min_reach):
    """The same rows (keys, actions), probabilities, reaches and action values as the in-memory table,
    part histories prefixed by the trunk's and face-down cards carried over; row counts in the metadata."""
    import json

    from solvers.tables import StrategyTable, read_metadata
    from truco_lab.cli import main

    base = ["solve", "--score", "3,3", "--dealer", "0", "--vira", "Kc", "--ranks", "7QJKA23", "--suits", "c",
            "--max-stake", "6", "--iterations", "6", "-q", "--table-min-reach", str(min_reach)]
    assert main(base + ["--out", str(tmp_path / "mem")]) == 0
    assert main(base + ["--out", str(tmp_path / "st"), "--split-depth", str(depth)]) == 0
    a, b = (StrategyTable.load(tmp_path / d).df for d in ("mem", "st"))
    key = ["player", "hand", "history", "hidden", "action"]
    assert len(a) == len(b) > 100
    assert a["hidden"].astype(str).str.len().max() > 0  # the cell has face-down plays
    a, b = (x.astype({k: str for k in key}).sort_values(key).reset_index(drop=True) for x in (a, b))
    assert (a[key] == b[key]).all().all()
    for col in ("probability", "reach"):
        assert np.allclose(a[col], b[col], atol=1e-6)
    assert np.allclose(a["action_value"], b["action_value"], atol=1e-5, equal_nan=True)
    s = json.loads((tmp_path / "st" / "summary.json").read_text())
    meta = read_metadata(next((tmp_path / "st").glob("*.parquet")))
    assert meta["rows"] == len(b) == s["cells"][0]["rows"]
    assert meta["rows_dropped"] == s["cells"][0]["rows_dropped"]
    assert (meta["rows_dropped"] > 0) == (min_reach > 0)


@pytest.mark.parametrize("algorithm,alternating", [("dcfr", True), ("pcfr+", True), ("cfr+", False)])
def test_block_parts_give_the_slot_parts_iterates_bit_for_bit(tmp_path, algorithm, alternating):
    """The element-major parts (the default) against the slot kernels on the parts as built: regrets,
    sums and predictions per slot, both best responses and the game value, exactly."""
    build_split(tmp_path, TINY, 0, 0, 0, 0, depth=2)
    a = StreamedSolver(SplitTree.open(tmp_path), algorithm, alternating, layout="slots")
    b = StreamedSolver(SplitTree.open(tmp_path), algorithm, alternating, threads=2)
    assert b.layout == "blocks" and b.state_start[-1] < b.split.num_slots  # forced slots hold no state
    for s in (a, b):
        s.iterate(4)
    assert np.array_equal(a.regrets, b.regrets) and np.array_equal(a.ssum, b.ssum)
    assert np.array_equal(a.pred, b.pred)
    assert a.best_response_values() == b.best_response_values()
    assert a.game_value() == b.game_value()
    assert b.exploitability() > 0


def test_block_checkpoints_load_into_either_layout(tmp_path):
    """A checkpoint keeps the kernels' order (choices) and continues bit for bit in either layout; a
    slot-order one loads into blocks; one of another shape is refused."""
    build_split(tmp_path, TINY, 0, 0, 0, 0, depth=2)
    ref = StreamedSolver(SplitTree.open(tmp_path))
    ref.iterate(6)
    b = StreamedSolver(SplitTree.open(tmp_path))
    b.iterate(3)
    d = b.state_dict()
    assert str(d["order"]) == "streamed-choices" and d["regrets"].shape == (b.state_start[-1],)
    for layout in ("blocks", "slots"):
        c = StreamedSolver(SplitTree.open(tmp_path), layout=layout)
        c.load_state_dict(d)
        c.iterate(3)
        assert np.array_equal(c.regrets, ref.regrets) and np.array_equal(c.ssum, ref.ssum), layout
        e = StreamedSolver(SplitTree.open(tmp_path))
        e.load_state_dict(c.state_dict())
        assert np.array_equal(e.regrets, ref.regrets) and e.iteration == 6
    bad = dict(d, regrets=d["regrets"][:-1])
    with pytest.raises(ValueError, match="shape"):
        StreamedSolver(SplitTree.open(tmp_path)).load_state_dict(bad)


def test_block_files_are_made_once_and_remade_when_stale(tmp_path):
    split = build_split(tmp_path, TINY, 0, 0, 0, 0, depth=2)
    s = StreamedSolver(split)
    blk = sorted(tmp_path.glob("part-*.blk"))
    assert len(blk) == split.num_parts and len(list(tmp_path.glob("part-*.choices.npy"))) == split.num_parts
    stamp = [p.stat().st_mtime_ns for p in blk]
    StreamedSolver(SplitTree.open(tmp_path))
    assert [p.stat().st_mtime_ns for p in blk] == stamp  # not made again
    # a block file that does not match its slot part (another build's) is remade, not trusted
    other = np.frombuffer(blk[0].read_bytes(), np.uint8).copy()
    other[:8] = np.frombuffer(np.int64(10**9).tobytes(), np.uint8)
    blk[0].write_bytes(other.tobytes())
    t = StreamedSolver(SplitTree.open(tmp_path))
    s.iterate(2)
    t.iterate(2)
    assert np.array_equal(s.regrets, t.regrets)
    # a truncated block file is a clear error
    blk[1].write_bytes(blk[1].read_bytes()[:-8])
    with pytest.raises(ValueError, match="part file"):
        StreamedSolver(SplitTree.open(tmp_path)).iterate(1)


def test_cli_streams_a_cell_that_cannot_fit_this_machine(tmp_path, capsys, monkeypatch):
    """Without --split-depth, a cell predicted above this machine's memory is streamed (said in one line)
    with the in-memory solve's results; --split-depth 0 keeps it in memory."""
    import json

    import truco_lab.cli.solve as solve_cli
    from truco_lab.cli import main

    base = ["solve", "--score", "3,3", "--dealer", "0", "--vira", "Kc", "--ranks", "7QJKA23", "--suits", "c",
            "--max-stake", "6", "--iterations", "4", "--no-table", "-q"]
    assert main(base + ["--out", str(tmp_path / "mem")]) == 0
    assert "streaming" not in capsys.readouterr().err
    monkeypatch.setattr(solve_cli, "total_memory_gb", lambda: 1e-6)
    assert main(base + ["--out", str(tmp_path / "st")]) == 0
    err = capsys.readouterr().err
    assert "streaming it from disk (--split-depth 3" in err and str(tmp_path / "st") in err
    a, b = (json.loads((tmp_path / d / "summary.json").read_text()) for d in ("mem", "st"))
    assert b["exploitability"] == pytest.approx(a["exploitability"], abs=1e-8)
    assert b["cells"][0]["split_depth"] == 3 and a["cells"][0]["split_depth"] == 0
    assert main(base + ["--out", str(tmp_path / "m0"), "--split-depth", "0"]) == 0
    assert "streaming" not in capsys.readouterr().err and not (tmp_path / "m0" / "parts").exists()


@pytest.mark.slow
def test_interrupted_streamed_solve_keeps_its_parts_and_resumes_to_the_same_answer(tmp_path, monkeypatch, capsys):
    """Ctrl-C mid-run: the checkpoint and the parts stay (a resume does not rebuild); the resumed run ends
    where an uninterrupted one does, and only then are the class's part files deleted."""
    import json
    import os
    import signal

    from truco_lab.cli import main

    base = ["solve", "--score", "3,3", "--dealer", "0", "--vira", "Kc", "--ranks", "JKA23", "--suits", "hc",
            "--max-stake", "6", "--iterations", "8", "--checkpoint-every", "2", "--no-table", "-q",
            "--split-depth", "2"]
    assert main(base + ["--out", str(tmp_path / "whole")]) == 0
    real = StreamedSolver.iterate

    def interrupted(self, n=1):
        real(self, n)
        if self.iteration == 5:
            os.kill(os.getpid(), signal.SIGINT)

    monkeypatch.setattr(StreamedSolver, "iterate", interrupted)
    assert main(base + ["--out", str(tmp_path / "cut")]) == 130
    assert "--resume" in capsys.readouterr().err
    parts = tmp_path / "cut" / "parts"
    assert list(parts.glob("*/part-*.bin")) and list((tmp_path / "cut" / "checkpoints").iterdir())
    monkeypatch.setattr(StreamedSolver, "iterate", real)
    assert main(base + ["--out", str(tmp_path / "cut"), "--resume"]) == 0
    a, b = (json.loads((tmp_path / d / "summary.json").read_text()) for d in ("whole", "cut"))
    assert b["exploitability"] == a["exploitability"] and b["game_value"] == a["game_value"]
    assert not parts.exists()


def test_a_table_reads_saved_navigation_as_the_rebuilt_parts_give_it(tmp_path):
    """Parts keep their navigation arrays beside them (a table pass need not rebuild them); a split made
    before that (no navigation files) rebuilds its parts, and both write the same table, row for row."""
    from solvers.tables import StrategyTable, write_split_table
    from truco_lab.abstraction.tree import SplitLabels

    rules = PAULISTA.with_deck("7QJKA23", "c").with_max_stake(6)
    split = build_split(tmp_path / "parts", rules, 3, 3, 0, 0, depth=2)
    assert len(list((tmp_path / "parts").glob("*.nav"))) == split.num_parts > 1
    s = StreamedSolver(split, "dcfr")
    s.iterate(4)
    src = SplitLabels(split, rules, 3, 3, 0, 0, ALL_PRUNES, "points", 2)
    write_split_table(s, tmp_path / "nav.parquet", {"cell": "3x3"}, src)
    for p in (tmp_path / "parts").glob("*.nav"):
        p.unlink()
    write_split_table(s, tmp_path / "rebuilt.parquet", {"cell": "3x3"}, src)
    a, b = (StrategyTable.load(tmp_path / f).df for f in ("nav.parquet", "rebuilt.parquet"))
    assert len(a) > 100 and a.equals(b)
