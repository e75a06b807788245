"""The suit-blind abstraction of Argentine truco: its classes, its tree, and its strategy certified in the real
game by the real tree's exact best response (issue 20 §2)."""

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from solvers.api import run
from solvers.vector import VectorSolver
from truco_lab.abstraction.argentine_abstract import build_suit_blind_cell, lift_strategy, suit_blind_classes
from truco_lab.abstraction.argentine_tree import argentine_hands, build_argentine_cell, estimate_cell_size
from truco_lab.rules.ruleset import RuleSet

EIGHT = {"ranks": "1 3 7 12", "suits": "eb"}


def _rules(deck: dict, flor: bool = False, max_stake: int = 1) -> RuleSet:
    return RuleSet.from_options("argentino", **deck, max_stake=max_stake, flor=flor)


def _solved(tree, iterations):
    s = VectorSolver(tree, "dcfr")
    run(s, iterations)
    return s


def test_classes_partition_the_hands_and_the_deal():
    rules = _rules(EIGHT)
    ab, hands = suit_blind_classes(rules), argentine_hands(rules)
    assert ab.num_classes < hands.num_hands  # 3e/3b and 12e/12b are one level each; 7b and 7c share one
    # each class's hands agree on levels, envido and flor
    for k in range(ab.num_classes):
        members = np.flatnonzero(ab.cls == k)
        assert len({tuple(sorted(ab.level[c] for c in hands.cards[h])) for h in members}) == 1
        assert len(set(hands.envido[members])) == 1 and ab.states.envido[k] == hands.envido[members[0]]
    # the class pairs' probabilities are the real deal's, summed
    W = hands.deal_weights()
    K = ab.num_classes
    agg = np.zeros((K, K))
    np.add.at(agg, (ab.cls[:, None], ab.cls[None, :]), W)
    assert np.allclose(agg, ab.weights, atol=1e-15)


def test_with_every_level_one_card_the_abstraction_is_the_real_game():
    """1 and 7 of three suits: six cards, six levels, so suits say nothing the level does not."""
    rules = _rules({"ranks": "1 7", "suits": "ebo"})
    ab = suit_blind_classes(rules)
    A, R = build_suit_blind_cell(rules), build_argentine_cell(rules)
    assert ab.num_classes == argentine_hands(rules).num_hands
    assert (A.num_nodes, A.num_infosets, A.num_slots) == (R.num_nodes, R.num_infosets, R.num_slots)
    sa = _solved(A, 60)
    lifted = lift_strategy(ab, A, sa.average_strategy(), R)
    sr = VectorSolver(R, "dcfr")
    assert sr.exploitability(lifted) == pytest.approx(sa.exploitability(), abs=1e-6)
    assert sr.game_value(lifted) == pytest.approx(sa.game_value(), abs=1e-6)


def test_a_lifted_strategy_is_a_distribution_with_the_abstract_value():
    rules = _rules(EIGHT)
    ab = suit_blind_classes(rules)
    A, R = build_suit_blind_cell(rules), build_argentine_cell(rules)
    sa = _solved(A, 40)
    lifted = lift_strategy(ab, A, sa.average_strategy(), R)
    assert np.allclose(np.add.reduceat(lifted, R.infoset_offset[R.infoset_nact > 0]), 1.0, atol=1e-5)
    assert VectorSolver(R, "dcfr").game_value(lifted) == pytest.approx(sa.game_value(), abs=1e-5)


@pytest.mark.slow
@pytest.mark.parametrize("flor", [False, True])
def test_the_lifted_strategy_keeps_its_value_and_its_exploitability_is_the_real_best_response(flor):
    rules = _rules(EIGHT, flor)
    ab = suit_blind_classes(rules)
    A, R = build_suit_blind_cell(rules), build_argentine_cell(rules)
    assert A.num_slots < R.num_slots
    sa = _solved(A, 300)
    strategy = sa.average_strategy()
    lifted = lift_strategy(ab, A, strategy, R)
    # a probability distribution at every real information set that has slots
    sums = np.add.reduceat(lifted, R.infoset_offset[R.infoset_nact > 0])
    assert np.allclose(sums, 1.0, atol=1e-5)
    sr = VectorSolver(R, "dcfr")
    # the same profile in both games: the same value (the deal weights and the lift agree)
    assert sr.game_value(lifted) == pytest.approx(sa.game_value(), abs=1e-5)
    lifted_expl = sr.exploitability(lifted)
    # the real opponent sees suits: it exploits more, by more than the solver's own gap (the loss is real)
    assert lifted_expl > sa.exploitability() + 0.005
    run(sr, 300)
    assert lifted_expl > 2 * sr.exploitability()
    # a best response's gain is what it gains against the lifted strategy: value + exploitability bounds
    b0, b1 = sr.best_response_values(lifted)
    assert b0 >= sr.game_value(lifted) - 1e-6 and b1 >= -sr.game_value(lifted) - 1e-6


def test_the_estimator_follows_the_abstract_builder():
    rules = _rules(EIGHT)
    ab = suit_blind_classes(rules)
    A = build_suit_blind_cell(rules)
    est = estimate_cell_size(rules, states=ab.states, probes=4000, seed=3)
    assert est.hands == ab.num_classes
    assert abs(est.entries - A.num_slots) < 0.15 * A.num_slots
    assert abs(est.nodes - A.num_nodes) < 0.15 * A.num_nodes


def test_experiment_refuses_bad_input_in_one_line(tmp_path):
    script = Path(__file__).parents[1] / "experiments" / "argentine_abstraction.py"
    for extra in (["--ranks", "1 9"], ["--target", "0"], ["--probes", "1", "--estimate"]):
        r = subprocess.run([sys.executable, str(script), *extra, "--out", str(tmp_path / "x")], capture_output=True,
                           text=True, timeout=120)
        assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr, r.stderr
        assert not (tmp_path / "x").exists()
