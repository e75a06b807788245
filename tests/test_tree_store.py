"""The tree store: built trees kept on disk by structure key, so a later cell of the same structure (on any
worker or node) reads its tree instead of building it. A stored tree must be the built one, and a match
solved with the store must give the same numbers as without it."""

import numpy as np
import pytest

from solvers.tree import STORED, load_tree, save_tree
from solvers.vector import VectorSolver
from truco_lab.lab.cell import CellSpec
from truco_lab.lab.executors import InlineExecutor
from truco_lab.lab.match import MatchConfig, select_cells, solve_match
from truco_lab.rules.ruleset import PAULISTA

SMALL = PAULISTA.with_deck("7QJKA23", "c").with_max_stake(3)


def test_a_stored_tree_is_the_built_one(tmp_path):
    spec = CellSpec.make(PAULISTA.with_deck("7QJKA23", "c").with_max_stake(12), 0, 7, 1, 0)
    built = spec.build()
    key = spec.structure_key()
    assert save_tree(built, tmp_path / key, key)
    assert not save_tree(built, tmp_path / key, key)  # a second writer finds it there and leaves it
    assert not list(tmp_path.glob(".*tmp"))  # its temporary copy is gone
    loaded = load_tree(tmp_path / key, key)
    assert loaded.num_hands == built.num_hands
    for name in STORED:
        a, b = getattr(built, name), getattr(loaded, name)
        assert (a is None) == (b is None), name
        if a is not None:
            assert a.dtype == b.dtype and np.array_equal(a, b), name
    # another cell of the same structure solves on it exactly as on its own build
    other = CellSpec.make(spec.rules, 3, 6, 1, 0)
    assert other.structure_key() == key and other.utilities != spec.utilities
    other.adopt_stored(loaded)
    own = other.build()
    assert loaded.source == own.source and np.array_equal(loaded.utilities(), own.utilities())
    s1, s2 = VectorSolver(loaded, "dcfr"), VectorSolver(own, "dcfr")
    s1.iterate(7)
    s2.iterate(7)
    assert np.array_equal(s1.average_strategy(), s2.average_strategy())
    assert s1.exploitability() == s2.exploitability()
    with pytest.raises(ValueError, match="holds the tree of"):
        load_tree(tmp_path / key, "another")
    assert load_tree(tmp_path / "absent", key) is None


def _solve(tmp_path, name, store_gb):
    origins = {}
    cfg = MatchConfig(SMALL, table=False, tree_store_gb=store_gb)
    out = tmp_path / name
    state = solve_match(cfg, select_cells(SMALL, "min:8"), InlineExecutor(cache_gb=0.0), out,
                        on_job=lambda job, res: origins.__setitem__(job.spec.name, res.tree))
    return state, origins, out


def test_a_match_reads_stored_trees_and_gets_the_same_numbers(tmp_path):
    with_store, origins, out = _solve(tmp_path, "store", None)
    without, plain, _ = _solve(tmp_path, "plain", 0)
    assert set(plain.values()) == {"built"}
    # on a ladder of 1-3 every start below 11 has one tree per dealer and class: built once, then read
    assert "store" in origins.values() and sum(v == "built" for v in origins.values()) < len(origins) / 2
    for cell, summ in without.cells.items():
        assert with_store.cells[cell]["equity"] == summ["equity"], cell
        assert with_store.cells[cell]["exploitability"] == summ["exploitability"], cell
    # each tree is dropped after the last cell that uses it
    assert not list((out / "trees").glob("*/tree.json"))


def test_the_plan_prices_what_the_store_holds():
    from truco_lab.abstraction.tree import ALL_PRUNES
    from truco_lab.lab.match import BUILD_S_PER_ENTRY, LOAD_S_PER_ENTRY, plan, store_plan

    cells = select_cells(PAULISTA, "all")
    keys = {CellSpec.make(PAULISTA, *c, 0).structure_key() for c in cells}
    free, none = plan(PAULISTA, cells), plan(PAULISTA, cells, store_gb=0.0)
    sp = store_plan(PAULISTA, free, ALL_PRUNES, float("inf"))
    assert sp.built == 9 * len(keys) and sp.built + sp.read == 9 * len(cells)  # each tree built once per class
    for a, b in zip(free, none, strict=True):
        saved = (b.hours - a.hours) * 3600
        assert saved == pytest.approx(9 * a.entries * (BUILD_S_PER_ENTRY - LOAD_S_PER_ENTRY) if a.cell in sp.reads
                                      else 0.0, abs=1e-6)
    assert store_plan(PAULISTA, none, ALL_PRUNES, 0.0).read == 0
    small = store_plan(PAULISTA, free, ALL_PRUNES, 50.0)
    assert 0 < small.read < sp.read and small.peak_gb <= 50.0 < sp.peak_gb


def test_the_store_heals_what_a_crash_or_a_bad_disk_leaves(tmp_path):
    """A copy whose writer was killed is swept by the next writer on this host; a damaged stored tree is built
    again and replaced, never a failed cell."""
    import subprocess

    from solvers.storage import _HOST
    from truco_lab.lab.cell import CellJob, Stop, run_cell

    rules = PAULISTA.with_deck("7QJKA23", "c").with_max_stake(12)
    spec = CellSpec.make(rules, 0, 7, 1, 0)
    key = spec.structure_key()
    dead = subprocess.Popen(["true"])
    dead.wait()
    stale = tmp_path / f".{key}.{_HOST}.{dead.pid}.tmp"
    stale.mkdir()
    (stale / "node_actor.npy").write_bytes(b"half")

    def solve(s):
        return run_cell(CellJob(s, Stop(iterations=1), table=False, tree_store=str(tmp_path), tree_store_gb=10.0))

    assert solve(spec).tree == "built" and not stale.exists() and (tmp_path / key / "tree.json").exists()
    other = CellSpec.make(rules, 3, 6, 1, 0)
    assert solve(other).tree == "store"
    (tmp_path / key / "entry_child.npy").write_bytes(b"damaged")
    first = solve(other)
    assert first.tree == "built" and load_tree(tmp_path / key, key) is not None  # rebuilt and stored again
    again = solve(other)
    assert again.tree == "store" and again.game_value == first.game_value


def test_the_store_is_measured_while_another_worker_renames_its_copy(tmp_path, monkeypatch):
    """A worker's temporary copy renamed into place between the listing of the store and the walk into it
    (which failed a match in CI with FileNotFoundError) counts nothing and stops nothing."""
    import os

    from truco_lab.lab.cell import store_gb

    (tmp_path / "kept").mkdir()
    np.save(tmp_path / "kept" / "a.npy", np.zeros(1 << 16))
    moving = tmp_path / ".key.host.1.tmp7"
    moving.mkdir()
    np.save(moving / "b.npy", np.zeros(1 << 16))
    real = os.scandir

    def scandir(path="."):
        it = real(path)
        if os.path.abspath(path) == str(tmp_path):  # the store is listed: now the copy moves
            moving.rename(tmp_path / "key")
        return it

    monkeypatch.setattr(os, "scandir", scandir)
    size = store_gb(tmp_path) * 2**30
    assert size >= (1 << 16) * 8 and size < 3 * (1 << 16) * 8
