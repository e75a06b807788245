"""cap_own_raises: a player whose own win at the stake standing already wins the match may not raise (once
someone has raised). The prune must keep the game's value, leave every cell it does not touch with its old
keys, and give cells of one shape one tree."""

import numpy as np
import pyspiel
import pytest

import truco_lab  # noqa: F401  registers the games
from solvers.vector import VectorSolver
from truco_lab.abstraction.levels import vira_classes
from truco_lab.abstraction.tree import (
    ALL_PRUNES,
    CAP_OWN_RAISES,
    CAP_RAISES,
    DROP_CONCEDE,
    DROP_DOMINATED_HIDE,
    build_cell,
    own_capped_stakes,
)
from truco_lab.lab.cell import CellSpec
from truco_lab.lab.match import OWN_CAPPED_ENTRIES, TIERS, live_ladder, plan, tree_shape
from truco_lab.rules.ruleset import MINEIRO, PAULISTA, PAULISTA_HOUSE

BEFORE = DROP_CONCEDE | DROP_DOMINATED_HIDE | CAP_RAISES  # every prune before this one
SEVEN = PAULISTA.with_deck("7QJKA23", "c")


class _Monotone:
    """A made-up match equity that rises with player 0's score and falls with player 1's (as a solved one does)."""

    def value(self, a: int, b: int, d: int) -> float:
        return 0.5 + 0.035 * (a - b) + 0.01 * (d - 0.5)


def test_cells_it_does_not_touch_keep_their_keys():
    for cell in [(10, 10, 1), (9, 10, 0), (11, 11, 1), (11, 5, 0), (4, 4, 1), (0, 0, 1), (2, 2, 0), (7, 8, 1)]:
        new, old = CellSpec.make(PAULISTA, *cell, 0), CellSpec.make(PAULISTA, *cell, 0, prunes=BEFORE)
        assert new.describe()["prunes"] == BEFORE, cell
        assert new.key() == old.key() and new.structure_key() == old.structure_key(), cell
    # where it bites, the cell is another one, and so is its tree
    new, old = CellSpec.make(PAULISTA, 0, 7, 1, 0), CellSpec.make(PAULISTA, 0, 7, 1, 0, prunes=BEFORE)
    assert new.prunes == ALL_PRUNES and new.key() != old.key() and new.structure_key() != old.structure_key()
    # seed 001 forbids those raises by rule: nothing left to prune, nothing changes
    assert own_capped_stakes(PAULISTA_HOUSE, 0, 9) == ()
    assert CellSpec.make(PAULISTA_HOUSE, 0, 9, 1, 0).prunes == BEFORE


def test_live_ladders_with_the_leader_capped():
    expect = {(0, 0): 5, (0, 3): 5, (2, 5): 5, (0, 6): 4, (1, 8): 4, (0, 10): 3, (3, 6): 4, (3, 9): 3,
              (6, 9): 3, (4, 4): 4, (7, 7): 3, (9, 10): 2, (11, 5): 1}
    for (a, b), rungs in expect.items():
        for cell in [(a, b, 0), (b, a, 1)]:
            assert len(live_ladder(PAULISTA, cell)) == rungs, cell
    # without the prune, the lower score alone caps them, as before
    assert live_ladder(PAULISTA, (0, 10, 0), BEFORE) == (1, 3, 6, 9, 12)
    assert own_capped_stakes(PAULISTA, 0, 10) == (3, 6, 9) and own_capped_stakes(PAULISTA, 3, 6) == (6,)
    assert tree_shape(PAULISTA, (0, 10, 1)) == tree_shape(PAULISTA, (6, 9, 0)) == (3, 1)
    assert tree_shape(PAULISTA, (0, 7, 1)) == tree_shape(PAULISTA, (3, 6, 0)) == (4, 1)
    assert tree_shape(PAULISTA, (0, 4, 1)) == (5, 1) and tree_shape(PAULISTA, (0, 2, 1)) == (5, 0)


def test_cells_of_one_shape_build_one_tree():
    rules = SEVEN.with_max_stake(12)
    vc = vira_classes(rules)[0]
    sizes = {c: build_cell(rules, *c, 1, vc).num_slots for c in [(0, 10), (6, 9), (3, 9), (0, 7), (3, 6), (0, 0)]}
    assert sizes[(0, 10)] == sizes[(6, 9)] == sizes[(3, 9)] < sizes[(0, 7)] == sizes[(3, 6)] < sizes[(0, 0)]
    assert build_cell(rules, 0, 10, 1, vc, BEFORE).num_slots == sizes[(0, 0)]  # the lower score caps nothing
    same = [CellSpec.make(rules, 0, b, 1, 0).structure_key() for b in (9, 10)]
    assert same[0] == same[1] != CellSpec.make(rules, 0, 4, 1, 0).structure_key()


@pytest.mark.parametrize(("payoff", "max_stake", "score"), [("points", 6, (5, 9)), ("equity", 12, (1, 6))])
def test_the_prune_keeps_the_value(payoff, max_stake, score):
    """Solved with and without it: the same value within the two certificates, in points and in a match
    equity that rises with the winner's score (the condition the argument needs)."""
    rules = PAULISTA.with_deck("KA23", "hc").with_max_stake(max_stake)  # two suits: card removal, two manilhas
    out = []
    for prunes in (ALL_PRUNES, ALL_PRUNES & ~CAP_OWN_RAISES):
        spec = CellSpec.make(rules, *score, 0, 0, prunes=prunes, payoff=payoff,
                             equity=_Monotone() if payoff == "equity" else None)
        tree = spec.build()
        s = VectorSolver(tree, "dcfr")
        s.iterate(150)
        out.append((tree.num_slots, s.game_value(), s.exploitability()))
    (n1, v1, e1), (n2, v2, e2) = out
    assert n1 < 0.7 * n2  # it bites
    assert abs(v1 - v2) <= 2 * (e1 + e2) + 1e-7, out


def test_a_pruned_raise_is_accepted_and_play_goes_on_as_if_not_made():
    """The solution's extension off the tree: a raise the tree prunes (the player on 9 raising back to 6) is
    accepted with probability 1 (in the bots and the OpenSpiel export alike), and the hand goes on on the solved tree."""
    from solvers import solve
    from solvers.tree import FORCED
    from truco_lab.abstraction.tree import slot_probabilities
    from truco_lab.rules.cards import A_ACCEPT, A_RAISE

    g = pyspiel.load_game("truco_paulista", {"ranks": "7QJKA23", "suits": "c", "max_stake": 6, "dealer": 1,
                                             "score0": 5, "score1": 9})
    r = solve(g, algorithm="dcfr", iterations=20)
    tree = r.solver.trees[0]
    st = g.new_initial_state()
    while st.is_chance_node():
        st.apply_action(st.chance_outcomes()[0][0])
    st.apply_action(A_RAISE)  # player 0 (on 5) calls truco: in the tree
    assert tree.source.route(tree, st)[A_RAISE + 1] == -1  # raising back to 6 is pruned for the player on 9
    st.apply_action(A_RAISE + 1)  # a human on 9 raises back anyway
    route = tree.source.route(tree, st)
    assert route[A_ACCEPT] == FORCED and sorted(route.values()) == [FORCED, -1]
    assert slot_probabilities(route, r.solver.solvers[0].average_strategy())[A_ACCEPT] == 1.0
    st.apply_action(A_ACCEPT)
    cards = tree.source.route(tree, st)  # player 0 leads the first card, as after an accepted truco
    assert st.current_player() == 0 and len(cards) == 3 and min(cards.values()) >= 0


def test_the_plan_prices_a_capped_cell_by_its_own_tree():
    rows = {r.cell: r for r in plan(PAULISTA, [(0, 10, 1), (0, 7, 1), (0, 4, 1), (0, 2, 1), (6, 9, 1), (7, 7, 1)])}
    assert rows[(0, 10, 1)].entries == pytest.approx(OWN_CAPPED_ENTRIES[(3, 1)])
    assert rows[(6, 9, 1)].entries == rows[(0, 10, 1)].entries < rows[(7, 7, 1)].entries == TIERS[3][0]
    assert rows[(0, 7, 1)].entries == pytest.approx(OWN_CAPPED_ENTRIES[(4, 1)])
    assert rows[(0, 4, 1)].entries == pytest.approx(OWN_CAPPED_ENTRIES[(5, 1)])
    assert rows[(0, 7, 1)].entries < TIERS[4][0] and rows[(0, 4, 1)].entries < rows[(0, 2, 1)].entries == TIERS[5][0]
    assert rows[(0, 10, 1)].hours < rows[(0, 7, 1)].hours < rows[(0, 4, 1)].hours < rows[(0, 2, 1)].hours


TREE_ARRAYS = ("node_actor", "node_list", "node_len", "node_infoset", "infoset_offset", "infoset_nact", "entry_child",
               "entry_action", "elem_hand", "node_outcome", "deal_weight")


@pytest.mark.parametrize("rules", [SEVEN.with_max_stake(12), PAULISTA_HOUSE.with_deck("7QJKA23", "c"),
                                   MINEIRO.with_deck("JKA7", "cd")], ids=["paulista", "house", "mineiro"])
def test_every_start_with_equal_structure_keys_builds_the_same_tree(rules):
    """The whole grid (one dealer, one vira class): cells grouped by structure key build identical trees,
    array by array (outcome codes included), and cells in different groups do not."""
    t = rules.target
    groups: dict = {}
    for a in range(t):
        for b in range(t):
            if not (rules.blind_iron_hand and a == b == t - 1):  # played blind: no tree
                groups.setdefault(CellSpec.make(rules, a, b, 1, 0).structure_key(), []).append((a, b))
    assert len(groups) < t * t // 4  # the key does merge starts (144 -> a handful of trees)
    firsts = []
    for cells in groups.values():
        trees = [CellSpec.make(rules, *c, 1, 0).build() for c in {cells[0], cells[-1]}]
        for name in TREE_ARRAYS:
            assert all(np.array_equal(getattr(trees[0], name), getattr(x, name)) for x in trees[1:]), (cells, name)
        firsts.append(trees[0])
    # distinct keys are distinct trees (else the key splits what one build could serve)
    for i, x in enumerate(firsts):
        for y in firsts[:i]:
            assert not all(np.array_equal(getattr(x, n), getattr(y, n)) for n in TREE_ARRAYS)
