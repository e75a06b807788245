"""The element-major layout (solvers.blocks) leaves every iterate, value and certificate bit-identical to
the slot kernels it replaces, on one thread and two, for every update rule."""

from __future__ import annotations

import numpy as np
import pytest

import solvers.vector as V
from solvers.blocks import BlockLayout
from solvers.cfr import ALGORITHMS
from truco_lab.abstraction.tree import build_cell
from truco_lab.rules.ruleset import RuleSet

RULES = RuleSet.from_options("paulista", ranks="QJKA23", suits="cd")


@pytest.fixture(scope="module")
def tree():
    return build_cell(RULES, 9, 9, 1, 0)


def _pair(tree, algorithm, threads=1, alternating=True, iterations=5):
    a = V.VectorSolver(tree, algorithm, alternating, threads=threads, layout="slots")
    b = V.VectorSolver(tree, algorithm, alternating, threads=threads, layout="blocks")
    assert (a.layout, b.layout) == ("slots", "blocks")
    a.iterate(iterations)
    b.iterate(iterations)
    return a, b


def _same_state(a, b) -> None:
    assert np.array_equal(a.regrets, b.regrets) and np.array_equal(a.ssum, b.ssum)
    assert np.array_equal(a.pred, b.pred) and a.iteration == b.iteration
    assert np.array_equal(a.average_strategy(), b.average_strategy())
    assert np.array_equal(a.current_strategy(), b.current_strategy())


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_every_rule_iterates_bit_identically(tree, algorithm):
    a, b = _pair(tree, algorithm)
    _same_state(a, b)
    assert a.exploitability() == b.exploitability()
    assert a.game_value() == b.game_value()


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("alternating", [True, False])
def test_threads_and_simultaneous_updates(monkeypatch, tree, threads, alternating):
    monkeypatch.setattr(V, "PARALLEL_SLOTS", 10)  # the parallel plan on a small tree too
    a, b = _pair(tree, "dcfr", threads, alternating)
    if threads > 1:
        assert b._plan() is not None and b._plan().blocks is not None  # the parallel block passes ran
    _same_state(a, b)
    assert a.best_response_values() == b.best_response_values()
    assert np.array_equal(a.element_reach(), b.element_reach())


@pytest.mark.parametrize("threads", [1, 2])
def test_update_passes_that_clear_what_they_consume_iterate_as_the_memset_did(monkeypatch, tree, threads):
    """An update pass leaves its values at 0.0 for the next one instead of clearing the whole array first: with
    certificates, evaluations and tables' passes (which leave values behind) between iterations, and a single
    update that follows one, the iterates stay bit-identical to the slot kernels, which clear every pass."""
    monkeypatch.setattr(V, "PARALLEL_SLOTS", 10)
    a = V.VectorSolver(tree, "dcfr+", threads=threads, layout="slots")
    b = V.VectorSolver(tree, "dcfr+", threads=threads, layout="blocks")
    for x in (a, b):
        x.iterate(2)
    assert b._clean
    H = tree.num_hands
    # a certificate's best responses consume their values too (only the root lists are read): still clean
    assert a.exploitability() == b.exploitability()
    assert b._clean and not b._value[2 * H:].any()
    u = tree.payoff.copy()
    assert a.best_response_values_under((u, u - 0.01)) == b.best_response_values_under((u, u - 0.01))
    assert a.best_response_value(1) == b.best_response_value(1) and b._clean and not b._value[2 * H:].any()
    assert np.array_equal(a.best_response_actions(0), b.best_response_actions(0))  # reads every node's value
    assert not b._clean  # values left behind: the next update must clear them
    for x in (a, b):
        x.iterate(1)
    assert b._clean
    for x in (a, b):
        x.slot_values()
        x.iterate(1)
        x.game_value()
        x.iterate(2)
    _same_state(a, b)
    assert a.exploitability() == b.exploitability()
    # clean means clean: every value but the root lists' is 0.0 after an update pass
    b.iterate(1)
    assert b._clean and not b._value[2 * H:].any() and b._value[:2 * H].any()


@pytest.mark.parametrize("algorithm", ["dcfr+", "pcfr+"])
def test_regrets_set_between_iterations_are_what_the_next_one_plays(tree, algorithm):
    """An update pass leaves its player's next strategy in the working buffer (the refresh then makes only the
    reaches), so regrets or predictions set from outside between iterations must replace it: the next iteration
    equals a solver that starts from that state."""
    a = V.VectorSolver(tree, algorithm)
    a.iterate(3)
    other = V.VectorSolver(tree, algorithm)
    other.iterate(1)
    a.regrets = other.regrets
    if a.predictive:
        a.pred = other.pred
    b = V.VectorSolver(tree, algorithm)
    b.load_state_dict(a.state_dict())
    for x in (a, b):
        x.iterate(2)
    _same_state(a, b)


def test_certificates_of_a_callers_strategy(tree):
    a, b = _pair(tree, "dcfr", iterations=4)
    s = a.current_strategy()  # a strategy from outside, not the solver's average
    for p in (0, 1):
        assert a.best_response_value(p, s) == b.best_response_value(p, s)
        assert np.array_equal(a.best_response_actions(p, s), b.best_response_actions(p, s))
    assert a.game_value(s) == b.game_value(s)
    av, ar = a.slot_values(s)
    bv, br = b.slot_values(s)
    assert np.array_equal(av, bv, equal_nan=True) and np.array_equal(ar, br)
    # a table's pass (float32, forced sets left out): the same numbers where it keeps them, NaN elsewhere
    tv, tr = b.slot_values(s, np.float32, min_actions=2)
    keep = tree.infoset_nact >= 2
    slot_keep = np.repeat(keep, tree.infoset_nact)
    assert tv.dtype == tr.dtype == np.float32 and keep.sum() and (~keep).sum()
    assert np.array_equal(tr[keep], br[keep].astype(np.float32)) and np.isnan(tr[~keep]).all()
    assert np.array_equal(tv[slot_keep], bv[slot_keep].astype(np.float32), equal_nan=True)
    assert np.isnan(tv[~slot_keep]).all()
    # a forced slot's probability is 1 whatever the caller's array holds (a table without forced rows)
    z = s.copy()
    z[tree.infoset_offset[tree.infoset_nact == 1]] = 0.0
    assert b.best_response_value(0, z) == a.best_response_value(0, s)


def test_checkpoints_cross_layouts(tree):
    a, b = _pair(tree, "pcfr+", iterations=3)
    c = V.VectorSolver(tree, "pcfr+", layout="slots")
    c.load_state_dict(b.state_dict())  # a block solver's checkpoint is in slot order
    d = V.VectorSolver(tree, "pcfr+", layout="blocks")
    d.load_state_dict(a.state_dict())
    for x in (c, d):
        x.iterate(2)
    a.iterate(2)
    _same_state(a, c)
    _same_state(a, d)


def test_parked_and_rebuilt(tree):
    a = V.VectorSolver(tree, "dcfr", layout="slots")
    b = V.VectorSolver(build_cell(RULES, 9, 9, 1, 0), "dcfr", builder=lambda: build_cell(RULES, 9, 9, 1, 0))
    a.iterate(2)
    b.iterate(2)
    b.park(min_slots=0)
    assert b._tree is None
    a.iterate(2)
    b.iterate(2)  # the tree and its layout are remade
    _same_state(a, b)
    # every reader of a parked solver rebuilds first (game_value on a parked solver once met a None buffer:
    # a native Argentine solve of 11.7 M slots crashed at its end, where SubgameSolver had parked it)
    for read in (lambda s: s.game_value(), lambda s: s.exploitability(), lambda s: float(s.average_strategy().sum()),
                 lambda s: float(s.current_strategy().sum())):
        b.park(min_slots=0)
        assert read(b) == read(a)


def test_layout_blocks_and_parents(tree):
    lay = BlockLayout.make(tree)
    H = tree.num_hands
    # every slot's element has its information set's element as parent, and the blocks cover every
    # element below the roots exactly once
    node = tree.infoset_node()
    rank = np.arange(tree.num_infosets) - tree.node_infoset[node]
    elem = tree.node_list[node, tree.node_actor[node]] + rank
    slot_parent = np.repeat(elem, tree.infoset_nact.astype(np.int64))
    par = lay.parent[tree.entry_child]
    assert np.array_equal(np.where(par < 0, ~par, par), slot_parent)
    forced = np.repeat(tree.infoset_nact == 1, tree.infoset_nact.astype(np.int64))
    assert np.array_equal(par < 0, forced)  # forced slots are marked, choices are not
    assert (lay.parent[:2 * H] == -1).all()
    sizes = (lay.block_hi - lay.block_lo).astype(np.int64)
    assert sizes.sum() == tree.num_elements - 2 * H
    x = np.zeros(tree.num_elements, np.int64)
    for lo, hi in zip(lay.block_lo[sizes > 0], lay.block_hi[sizes > 0], strict=True):
        x[lo:hi] += 1
    assert (x[2 * H:] == 1).all()
    # the state arrays hold choices only: forced slots come back as the fill
    slots = np.arange(tree.num_slots, dtype=np.float32)
    back = lay.to_slots(tree, lay.to_choices(tree, slots), -1.0)
    assert lay.num_choices == int((~forced).sum())
    assert np.array_equal(back, np.where(forced, -1.0, slots))


def test_unknown_layout_is_refused(tree):
    with pytest.raises(ValueError, match="layout must be one of blocks, slots, got 'rows'"):
        V.VectorSolver(tree, layout="rows")


def test_asymmetric_deal_weights_read_through_the_transpose(tree):
    """Every rule set deals both hands alike (a symmetric matrix, read in place); a matrix that is not is
    transposed once for the kernels, and iterates stay the slot kernels'."""
    import dataclasses

    assert BlockLayout.make(tree).weights_t is None
    W = tree.deal_weight.copy()
    W *= 1.0 + np.arange(W.shape[0])[:, None] / W.shape[0]  # rows scaled: no longer symmetric
    skew = dataclasses.replace(tree, deal_weight=W)
    lay = BlockLayout.make(skew)
    assert lay.weights_t is not None and np.array_equal(lay.weights_t, W.T)
    a, b = _pair(skew, "dcfr", iterations=4)
    _same_state(a, b)
    assert a.best_response_values() == b.best_response_values()


def test_big_trees_keep_the_choice_slot_map_file_backed(monkeypatch, tree):
    """On big trees the choice -> slot map is made with the layout (the slot index is in memory then) and
    kept in a file-backed mapping; translating through it gives what the in-memory map gives."""
    import solvers.blocks as B

    plain = BlockLayout.make(tree)
    assert plain._choice_slot is None  # small: made on demand, in memory
    ref = plain.choice_slots(tree)
    monkeypatch.setattr(B, "OFFLOAD_BYTES", 0)
    lay = BlockLayout.make(tree)
    assert isinstance(lay._choice_slot, np.memmap) and np.array_equal(lay._choice_slot, ref)
    x = np.random.default_rng(0).random(tree.num_slots).astype(np.float32)
    assert np.array_equal(lay.to_choices(tree, x), plain.to_choices(tree, x))
    c = lay.to_choices(tree, x)
    assert np.array_equal(lay.to_slots(tree, c, 1.0), plain.to_slots(tree, c, 1.0))


@pytest.mark.parametrize("min_actions", [1, 2, 3])
def test_table_rows_are_the_slot_arrays_at_the_rows_a_table_keeps(tree, min_actions):
    """``table_rows`` (straight from the element-major state, nothing per slot made) against the per-slot
    average, action values, reaches and regrets of the slot layout, gathered at the sets of at least
    ``min_actions`` actions: bit for bit, both layouts."""
    a, b = _pair(tree, "dcfr+", iterations=4)
    sets = np.flatnonzero(tree.infoset_nact >= min_actions)
    nact = tree.infoset_nact[sets].astype(np.int64)
    slot = np.repeat(tree.infoset_offset[sets].astype(np.int64), nact) + (
        np.arange(nact.sum()) - np.repeat(np.cumsum(nact) - nact, nact))
    av, reach = a.slot_values(None, np.float32, min_actions)
    want = (sets, tree.infoset_nact[sets], reach[sets], np.asarray(tree.entry_action)[slot], a.average_strategy()[slot],
            av[slot], a.regrets[slot])
    assert len(sets) and (min_actions > 1 or (tree.infoset_nact == 1).any())
    for solver in (a, b):
        rows = solver.table_rows(min_actions)
        for name, got, exp in zip(V.TableRows._fields, rows, want, strict=True):
            assert got.shape == exp.shape and np.array_equal(got, exp, equal_nan=True), (solver.layout, name)


def test_dropped_buffers_are_made_again(tree):
    """A solver whose working buffers a table writer dropped iterates and certifies exactly as one that kept them."""
    a, b = _pair(tree, "dcfr+", iterations=3)
    b.drop_buffers()
    assert b.nbytes() < a.nbytes()
    b.drop_buffers()  # twice: still nothing to lose
    a.iterate(2)
    b.iterate(2)
    _same_state(a, b)
    a.drop_buffers()
    assert a.exploitability() == b.exploitability()


@pytest.mark.parametrize("layout", V.LAYOUTS)
def test_the_kept_average_follows_every_change_of_state(tree, layout):
    """The average strategy stays in the working buffer between certificates and tables; every change of the
    state (an iteration, new sums or regrets, reset averages, a loaded checkpoint) makes it again."""
    s = V.VectorSolver(tree, "dcfr+", layout=layout)
    other = V.VectorSolver(tree, "dcfr+", layout=layout)
    other.iterate(7)

    def certified() -> float:
        kept = s.exploitability()
        assert kept == s.exploitability(s.average_strategy())  # made afresh from the sums
        return kept

    s.iterate(3)
    seen = [certified(), certified()]
    s.iterate(1)
    seen.append(certified())
    s.ssum = other.ssum
    seen.append(certified())
    s.reset_averages()
    seen.append(certified())
    s.load_state_dict(other.state_dict())
    seen.append(certified())
    # the loaded checkpoint holds the sums set before the reset: its average again
    assert seen[0] == seen[1] and seen[3] == seen[5] and len(set(seen)) == 4
    rows = s.table_rows(2)
    fresh = V.VectorSolver(tree, "dcfr+", layout=layout)
    fresh.load_state_dict(other.state_dict())
    assert np.array_equal(rows.probability, fresh.table_rows(2).probability)


def test_a_solver_takes_another_solvers_layout_of_its_tree(tree):
    """Solvers on one tree may share its block layout (made once): the same iterates as a layout of its own;
    another tree's layout is refused in one line."""
    a = V.VectorSolver(tree, "dcfr+")
    b = V.VectorSolver(tree, "dcfr+", layout=a._layout())
    assert b._layout() is a._layout() and b.layout == "blocks"
    c = V.VectorSolver(tree, "dcfr+")
    for x in (b, c):
        x.iterate(3)
    _same_state(b, c)
    other = build_cell(RULES, 10, 11, 0, 0)
    with pytest.raises(ValueError, match="block layout of"):
        V.VectorSolver(other, "dcfr", layout=a._layout())
