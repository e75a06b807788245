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


@pytest.mark.parametrize("rules", [pytest.param(MINEIRO8, marks=pytest.mark.slow), pytest.param(PAULISTA8, marks=pytest.mark.slow)],
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
        assert seen.setdefault(state_key(st, p), sig) == sig  # the default here: strength keys
        queue.extend(st.child(a) for a in legal)
    assert len(seen) * 4 < len(strings)  # merging happened: 6-7x fewer sets on eight cards


def test_strength_keys_are_refused_where_suits_matter():
    argentino = RuleSet.from_options("argentino", ranks="1 7 12", suits="eb", max_stake=1)
    with pytest.raises(ValueError, match="envido or flor"):
        game_params(argentino, (0, 0), 1, keys="strength")
    with pytest.raises(ValueError, match="suit-blind keys are for"):
        game_params(MINEIRO8, (0, 0), 1, keys="suit-blind")
    assert game_params(argentino, (0, 0), 1)[3] == 0  # the default there: cards as they are


@pytest.mark.slow  # ~28 s: two MCCFR runs on the 8-card hand
def test_strength_keys_converge_in_the_real_game_where_card_keys_lag():
    """Both strategies are certified in the OpenSpiel hand with its own information sets (the best response
    sees every card): merging alike sets loses nothing, and each set learns from every suit's deal."""
    og = pyspiel.load_game(*openspiel_hand(MINEIRO8, 0, 0, 1))
    got = {}
    for keys in ("strength", "cards"):
        s = MCCFRSolver(sampled_game(MINEIRO8, (0, 0), 1, keys), capacity=1 << 16, seed=1)
        s.iterate(20_000)
        got[keys] = (exploitability(s, keyed_tree(og, keys)), s.num_infosets)
    (e_str, n_str), (e_card, n_card) = got["strength"], got["cards"]
    assert e_str < 0.02 and e_str < e_card / 3  # measured 0.0078 vs 0.045 points per hand
    assert n_str * 4 < n_card


@pytest.mark.slow  # ~14 s, most of it MCCFR's per-process compile: keeps the fast set under two minutes
def test_suit_blind_keys_abstract_argentine_hands_and_are_certified_in_the_real_game():
    """Argentine truco: suit-blind keys merge hands of equal trick levels, envido points and flor (an
    abstraction: a card played shows its level only). Its MCCFR average is played in the OpenSpiel hand with
    its real information sets and certified there by the exact best response."""
    rules = RuleSet.from_options("argentino", ranks="1 7 12", suits="eb", max_stake=1)
    og = pyspiel.load_game(*openspiel_hand(rules, 0, 0, 1))
    tree = keyed_tree(og, "suit-blind")
    assert len(set(tree.infoset_extra)) < tree.num_infosets  # merged
    s = MCCFRSolver(sampled_game(rules, (0, 0), 1, "suit-blind"), capacity=1 << 16, seed=1)
    s.iterate(2_000)
    e1 = exploitability(s, tree)
    s.iterate(18_000)
    e2 = exploitability(s, tree)
    assert e2 < e1 / 3 and e2 < 0.12  # measured 0.85 -> 0.077 (card keys: 1.06 -> 0.104)


@pytest.mark.slow
def test_a_suit_blind_argentine_run_plays_heads_up_in_the_arena(tmp_path, capsys):
    """Trained with suit-blind keys through the CLI, the mccfr bot plays argentino heads-up from its own table
    (going to the deck is one of its actions there: its table and the table's legal actions agree)."""
    import re

    from truco_lab.cli import main

    deck = ["--rules", "argentino", "--ranks", "1 7 12", "--suits", "eb", "--max-stake", "1", "--target", "3"]
    for d in (0, 1):
        assert main(["mccfr", *deck, "--keys", "suit-blind", "--score", "0,0", "--dealer", str(d), "--iterations",
                     "3000", "--out", str(tmp_path / "runs" / f"d{d}"), "-q"]) == 0
    assert main(["mccfr", *deck, "--keys", "strength", "--score", "0,0", "--dealer", "1", "--iterations", "10",
                 "--out", str(tmp_path / "bad"), "-q"]) == 2
    assert "--keys" in capsys.readouterr().err and not (tmp_path / "bad").exists()
    assert main(["arena", *deck, "--bots", "mccfr,random", "--mccfr", str(tmp_path / "runs"),
                 "--matches", "20", "--out", str(tmp_path / "arena"), "-q"]) == 0
    err = capsys.readouterr().err
    share = re.search(r"decisions \(([\d.]+)%\) played by its fallback", err)
    assert share and float(share.group(1)) < 20, err  # with concede left out of its actions, every lookup missed
