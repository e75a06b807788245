"""The flat forward schedule (solvers.flat) leaves every iterate bit-identical to the node walk."""

from __future__ import annotations

import numpy as np
import pytest

import solvers.vector as V
from solvers.flat import FlatSchedule, _parents_first
from truco_lab.abstraction.tree import build_cell
from truco_lab.rules.ruleset import RuleSet

RULES = RuleSet.from_options("paulista", ranks="QJKA23", suits="cd")


def _run(tree, algorithm, threads, flat, iterations=6):
    s = V.VectorSolver(tree, algorithm, threads=threads, layout="slots")  # the slot kernels (solvers.blocks aside)
    if not flat:
        s._sched = False  # the node walk, as before the schedule
    s.iterate(iterations)
    return s, s.exploitability()


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("algorithm", ["dcfr", "pcfr+", "cfr+"])
def test_flat_iterates_are_bit_identical(monkeypatch, threads, algorithm):
    monkeypatch.setattr(V, "PARALLEL_SLOTS", 10)  # the parallel plan on a small tree too
    tree = build_cell(RULES, 9, 9, 1, 0)
    a, ea = _run(tree, algorithm, threads, flat=False)
    b, eb = _run(tree, algorithm, threads, flat=True)
    assert b._schedule() is not None
    if threads > 1:
        assert b._plan() is not None and b._plan().flat  # the parallel flat pass ran
    assert np.array_equal(a.regrets, b.regrets) and np.array_equal(a.ssum, b.ssum)
    assert np.array_equal(a.pred, b.pred)
    assert ea == eb
    assert np.array_equal(a.element_reach(), b.element_reach())


def test_schedule_parents():
    tree = build_cell(RULES, 10, 10, 0, 0)
    sc = FlatSchedule.make(tree)
    # each slot's parent is its information set's element: the actor's list at its node plus its rank
    node = tree.infoset_node()
    rank = np.arange(tree.num_infosets) - tree.node_infoset[node]
    elem = tree.node_list[node, tree.node_actor[node]] + rank
    assert np.array_equal(sc.slot_parent, np.repeat(elem, tree.infoset_nact.astype(np.int64)))
    assert np.array_equal(sc.iplayer, tree.node_actor[node])


def test_parents_first_refuses_a_child_before_its_parent():
    # element 0 is the root; slot 0 writes element 1 from 0, slot 1 writes element 2 from 1
    assert _parents_first(np.array([0, 1]), np.array([1, 2]), 3, 1)
    assert not _parents_first(np.array([1, 0]), np.array([2, 1]), 3, 1)
