"""MCCFR's strength keys (truco_lab.openspiel.sampled): a card is its trick strength where only strength tells
cards apart. Checked against OpenSpiel's own games: merged information sets are alike (every member's legal
actions mean the same strengths, index by index), and the merged strategy, measured by an exact best
response in the OpenSpiel hand with its real information sets, converges where card keys lag."""

from __future__ import annotations

from collections import deque

import pyspiel
import pytest

from solvers.mccfr import MCCFRSolver
from truco_lab.openspiel.games import openspiel_hand
from truco_lab.openspiel.sampled import exploitability, game_params, keyed_tree, sampled_game, state_key
from truco_lab.rules import engine as E
from truco_lab.rules.cards import A_DOWN, A_RAISE
from truco_lab.rules.ruleset import RuleSet

MINEIRO8 = RuleSet.from_options("mineiro", ranks="4567", suits="dh", max_stake=2)


def _signature(state, legal) -> tuple:
    """What each legal action is, index by index, to a player who knows cards only by strength."""
    r = state.rules.to_array()
    out = []
    for a in legal:
        if a < A_RAISE:
            down = int(a >= A_DOWN)
            out.append(("card", down, int(E.strength(a - A_DOWN * down, 0, E.manilha(state.s), r))))
        else:
            out.append(("action", a))
    return tuple(out)


PAULISTA8 = RuleSet.from_options("paulista", ranks="4567", suits="dh", max_stake=1)


@pytest.mark.parametrize("rules", [MINEIRO8, pytest.param(PAULISTA8, marks=pytest.mark.slow)],
                         ids=["mineiro", "paulista"])
def test_strength_keys_merge_only_sets_whose_actions_mean_the_same(rules):
    og = pyspiel.load_game(*openspiel_hand(rules, 0, 0, 1))
    seen: dict[int, tuple] = {}
    strings: set[str] = set()
    queue = deque([og.new_initial_state()])
    while queue:
        st = queue.popleft()
        if st.is_terminal():
            continue
        if st.is_chance_node():
            queue.extend(st.child(a) for a, _ in st.chance_outcomes())
            continue
        p = st.current_player()
        legal = st.legal_actions()
        strings.add(st.information_state_string(p))
        sig = _signature(st, legal)
        assert seen.setdefault(state_key(st, p), sig) == sig
        queue.extend(st.child(a) for a in legal)
    assert len(seen) * 4 < len(strings)  # merging happened: 6-7x fewer sets on eight cards


def test_strength_keys_are_refused_where_suits_matter():
    argentino = RuleSet.from_options("argentino", ranks="1 7 12", suits="eb", max_stake=1)
    with pytest.raises(ValueError, match="envido or flor"):
        game_params(argentino, (0, 0), 1, strength=True)
    assert game_params(argentino, (0, 0), 1)[3] == 0  # the default there: cards as they are


def test_strength_keys_converge_in_the_real_game_where_card_keys_lag():
    """Both strategies are certified in the OpenSpiel hand with its own information sets (the best response
    sees every card): merging alike sets loses nothing, and each set learns from every suit's deal."""
    og = pyspiel.load_game(*openspiel_hand(MINEIRO8, 0, 0, 1))
    got = {}
    for strength in (True, False):
        s = MCCFRSolver(sampled_game(MINEIRO8, (0, 0), 1, strength), capacity=1 << 16, seed=1)
        s.iterate(20_000)
        got[strength] = (exploitability(s, keyed_tree(og, strength)), s.num_infosets)
    (e_str, n_str), (e_card, n_card) = got[True], got[False]
    assert e_str < 0.02 and e_str < e_card / 3  # measured 0.0078 vs 0.045 points per hand
    assert n_str * 4 < n_card
