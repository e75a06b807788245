"""The OpenSpiel games pass OpenSpiel's own checks and hide what they must."""

import itertools
import random
from math import comb

import numpy as np
import pyspiel
import pytest

import truco_lab  # noqa: F401  registers the games
from truco_lab.rules.cards import parse_action, parse_card

TINY = {"ranks": "7QJKA23", "suits": "c", "max_stake": 1}


def _deal(state, cards):
    """Deal player 0's three, player 1's three (each in increasing id, as the chance nodes do), the vira."""
    ids = [parse_card(c) for c in cards]
    for c in sorted(ids[:3]) + sorted(ids[3:6]) + [ids[6]]:
        state.apply_action(c)
    return state


def test_games_load_with_defaults():
    g = pyspiel.load_game("truco_paulista")
    assert g.num_players() == 2 and g.num_distinct_actions() == 89
    assert g.get_parameters()["dealer"] == 1 and g.get_parameters()["strategic"] is True
    assert pyspiel.load_game("truco_paulista_match").get_type().short_name == "truco_paulista_match"


@pytest.mark.parametrize(
    "params",
    [{}, {"strategic": False}, {"score0": 11, "score1": 4}, {"score0": 11, "score1": 11}, {"dealer": 0, "score1": 10}, TINY],
)
def test_random_sim_test_hand(params):
    pyspiel.random_sim_test(pyspiel.load_game("truco_paulista", params), num_sims=15, serialize=True, verbose=False)


def test_random_sim_test_match():
    pyspiel.random_sim_test(pyspiel.load_game("truco_paulista_match"), num_sims=3, serialize=True, verbose=False)


@pytest.mark.parametrize("bad", [{"dealer": 2}, {"score0": 12}, {"max_stake": 5}, {"ranks": "89"}, {"suits": "x"}])
def test_bad_parameters_are_named(bad):
    with pytest.raises(Exception) as e:
        pyspiel.load_game("truco_paulista", bad)
    assert next(iter(bad)) in str(e.value)


def test_chance_nodes_deal_sorted_hands_with_exact_probabilities():
    g = pyspiel.load_game("truco_paulista", {"ranks": "67QJKA23", "suits": "c"})  # 8 cards
    s0 = g.new_initial_state()
    probs = {}

    def walk(s, p, depth):
        if depth == 7:
            probs[tuple(s.history())] = p
            return
        for a, q in s.chance_outcomes():
            walk(s.child(a), p * q, depth + 1)

    walk(s0, 1.0, 0)
    # every (hand0, hand1, vira) with increasing hands appears once, uniformly
    n = comb(8, 3) * comb(5, 3) * 2
    assert len(probs) == n
    assert all(abs(p - 1 / n) < 1e-12 for p in probs.values())
    assert all(h[0] < h[1] < h[2] and h[3] < h[4] < h[5] for h in probs)
    assert s0.action_to_string(pyspiel.PlayerId.CHANCE, parse_card("Qc")) == "Qc"


def test_chance_rejects_an_impossible_deal():
    g = pyspiel.load_game("truco_paulista")
    s = g.new_initial_state()
    s.apply_action(parse_card("3d"))
    with pytest.raises(Exception, match="increasing"):
        s.apply_action(parse_card("4d"))


def test_returns_are_points_after_the_cap():
    g = pyspiel.load_game("truco_paulista", {"score0": 10})
    s = _deal(g.new_initial_state(), ["2c", "3d", "3s", "4d", "5d", "6d", "7c"])
    for a in ["raise 3", "accept_raise", "play_face_up 3d", "play_face_up 4d", "play_face_up 3s", "play_face_up 5d"]:
        s.apply_action(parse_action(a))
    assert s.is_terminal() and s.returns() == [2.0, -2.0]


def test_strategic_omits_concede_and_full_keeps_it():
    for strategic, has in ((True, False), (False, True)):
        g = pyspiel.load_game("truco_paulista", {"strategic": strategic})
        s = _deal(g.new_initial_state(), ["2c", "3d", "3s", "4d", "5d", "6d", "7c"])
        assert (parse_action("concede_hand") in s.legal_actions()) is has


def _views(state, player):
    return [state.information_state_string(player), state.observation_string(player),
            state.information_state_tensor(player), state.observation_tensor(player)]


def test_nothing_reveals_unseen_or_face_down_cards():
    g = pyspiel.load_game("truco_paulista")
    # two deals that differ only in player 1's cards, including the card hidden face down
    a = _deal(g.new_initial_state(), ["Kd", "3d", "7c", "4s", "5s", "6h", "Qc"])
    b = _deal(g.new_initial_state(), ["Kd", "3d", "7c", "4s", "5h", "6s", "Qc"])
    for s, down in ((a, "6h"), (b, "6s")):
        for act in ["play_face_up Kd", "play_face_up 4s", "play_face_up 3d", f"play_face_down {down}"]:
            s.apply_action(parse_action(act))
    va, vb = _views(a, 0), _views(b, 0)
    assert va[0] == vb[0] and va[1] == vb[1]
    assert np.array_equal(va[2], vb[2]) and np.array_equal(va[3], vb[3])
    assert _views(a, 1)[0] != _views(b, 1)[0]  # player 1 does see its own cards


def test_information_state_has_perfect_recall_observation_does_not():
    g = pyspiel.load_game("truco_paulista")
    s = _deal(g.new_initial_state(), ["Kd", "3d", "7c", "4s", "5s", "6h", "Qc"])
    s.apply_action(parse_action("play_face_up Kd"))
    assert "Kd" in s.information_state_string(0)
    obs = s.observation_string(0)
    assert "hand:7c 3d" in obs and "r1[p0:Kd]" in obs
    s.apply_action(parse_action("play_face_up 4s"))
    assert "Kd" not in s.observation_string(0).split("r1")[0]  # no longer held


def test_match_alternates_the_deal_and_returns_plus_minus_one():
    g = pyspiel.load_game("truco_paulista_match")
    rng = random.Random(5)
    for _ in range(5):
        s = g.new_initial_state()
        dealers = []
        while not s.is_terminal():
            if s.is_chance_node():
                if not s.deal:
                    dealers.append(s.dealer)
                outs = s.chance_outcomes()
                s.apply_action(rng.choice(outs)[0])
            else:
                s.apply_action(rng.choice(s.legal_actions()))
        assert dealers[0] == 1
        assert all(x != y for x, y in itertools.pairwise(dealers))
        assert sorted(s.returns()) == [-1.0, 1.0]
        assert len(s.past) == len(dealers)
        assert all(max(score) < 12 for _, score, _, _ in s.past)  # every hand started below 12


@pytest.mark.slow
def test_cpp_cfr_and_exploitability_run_on_a_tiny_variant():
    """OpenSpiel's C++ CFR+ and exploitability on a 7-card deck (one suit, no raises)."""
    g = pyspiel.load_game("truco_paulista", TINY)
    solver = pyspiel.CFRPlusSolver(g)
    first = solver.average_policy()  # keep references: OpenSpiel crashes on freed policies
    uniform = pyspiel.exploitability(g, first)
    solver.evaluate_and_update_policy()
    solver.evaluate_and_update_policy()
    avg = solver.average_policy()
    after = pyspiel.exploitability(g, avg)
    assert 0 <= after < uniform


@pytest.mark.parametrize("name", ["truco_paulista", "truco_paulista_match"])
def test_every_illegal_action_id_raises_with_the_spec_code(name):
    """OpenSpiel's convention: applying an illegal action raises (it never silently changes the state)."""
    from truco_lab.rules import engine as E
    from truco_lab.rules.state import TrucoError

    game = pyspiel.load_game(name, {"ranks": "7QJKA23", "suits": "cd", "max_stake": 12})
    rng = np.random.default_rng(3)
    checked = 0
    for _ in range(40):
        st = game.new_initial_state()
        while not st.is_terminal():
            if st.is_chance_node():
                outs = st.chance_outcomes()
                st.apply_action(outs[rng.integers(len(outs))][0])
                continue
            legal = set(st.legal_actions())
            before = str(st)
            for a in rng.choice(game.num_distinct_actions(), 6, replace=False):
                if int(a) in legal:
                    continue
                with pytest.raises(TrucoError) as e:
                    st.apply_action(int(a))
                assert e.value.code in E.ERROR_NAMES.values()
                assert str(st) == before
                checked += 1
            st.apply_action(int(rng.choice(sorted(legal))))
    assert checked > 200
