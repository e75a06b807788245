"""One or more tests per rule sentence of seed 001 (the house rules, ``paulista_house``), with explicit deals.

Players: 0 and 1; ``dealer=1`` makes player 0 lead. Seed 000's behaviour is checked beside each rule so a
switch that leaks into the default would fail here too.
"""

from __future__ import annotations

import random

import numpy as np
import pyspiel
import pytest

import truco_lab  # noqa: F401  registers the games
from truco_lab import HandState, TrucoError
from truco_lab.cli import main
from truco_lab.rules.ruleset import PAULISTA, PAULISTA_HOUSE, RULE_SETS, rule_set


def deal(rules, p0, p1, vira, dealer=1, score=(0, 0)):
    return HandState.new(hands=(p0, p1), vira=vira, dealer=dealer, score=score, rules=rules)


def play(h, *actions):
    for a in actions:
        h.apply(a)
    return h


def test_rule_sets_by_name():
    assert rule_set("paulista") is PAULISTA and rule_set("PAULISTA_HOUSE") is PAULISTA_HOUSE
    assert {"paulista", "paulista_house"} <= set(RULE_SETS)
    with pytest.raises(ValueError, match="unknown rule set 'gaucho'; expected one of paulista, paulista_house"):
        rule_set("gaucho")


def test_all_three_tricks_tied_is_a_draw_and_nobody_scores():
    """Seed 001: "If all three tricks tie, the hand is a draw and no one scores." (Seed 000: the round-1 leader.)"""
    moves = ["play_face_up 4d", "play_face_up 4s", "play_face_up 5d", "play_face_up 5s", "play_face_up 6d",
             "play_face_up 6s"]
    house = play(deal(PAULISTA_HOUSE, "4d 5d 6d", "4s 5s 6s", "Kc", score=(3, 4)), *moves)
    assert house.is_over and house.winner is None and house.score == (3, 4)
    base = play(deal(PAULISTA, "4d 5d 6d", "4s 5s 6s", "Kc", score=(3, 4)), *moves)
    assert base.is_over and base.winner == 0 and base.score == (4, 4)


def test_a_tie_then_a_win_still_goes_to_the_first_winner():
    """Seed 001: "A tied trick belongs to nobody, and the hand then goes to the first player who wins any trick"."""
    h = play(deal(PAULISTA_HOUSE, "4d 5d 3d", "4s 6s 6h", "Kc"), "play_face_up 4d", "play_face_up 4s",
             "play_face_up 3d", "play_face_up 6s")
    assert h.is_over and h.winner == 0


def test_no_raise_when_accepting_would_already_win():
    """Seed 001: "You cannot raise if simply accepting would already give you enough points to win"."""
    start = ("raise 3", "accept_raise", "play_face_up 4d", "raise 6")  # player 1 re-raises after player 0 leads
    house = play(deal(PAULISTA_HOUSE, "4d 5d 6d", "4s 5s 6s", "Kc", score=(10, 3)), *start)
    assert "raise 9" not in house.legal_action_strings()  # 10 + 6 >= 12: accepting already wins
    assert {"accept_raise", "fold"} <= set(house.legal_action_strings())
    with pytest.raises(TrucoError) as e:
        house.apply("raise 9")
    assert e.value.code == "RAISE_NOT_ALLOWED"
    base = play(deal(PAULISTA, "4d 5d 6d", "4s 5s 6s", "Kc", score=(10, 3)), *start)
    assert "raise 9" in base.legal_action_strings()
    # below the line a raise stays legal: 10 + 1 < 12
    assert "raise 3" in deal(PAULISTA_HOUSE, "4d 5d 6d", "4s 5s 6s", "Kc", score=(10, 3)).legal_action_strings()
    # and the raiser's own score is what counts: player 1 on 9 may not raise an accepted 3 (9 + 3 >= 12)
    h = play(deal(PAULISTA_HOUSE, "4d 5d 6d", "4s 5s 6s", "Kc", score=(0, 9)), "raise 3", "accept_raise",
             "play_face_up 4d")
    assert "raise 6" not in h.legal_action_strings()
    assert "raise 6" in play(deal(PAULISTA, "4d 5d 6d", "4s 5s 6s", "Kc", score=(0, 9)), "raise 3", "accept_raise",
                             "play_face_up 4d").legal_action_strings()


def test_no_truco_of_any_kind_once_a_player_stands_at_11():
    """Seed 001: "no truco of any kind is allowed once either player stands at 11"."""
    h = deal(PAULISTA_HOUSE, "4d 5d 6d", "4s 5s 6s", "Kc", score=(4, 11))
    play(h, "accept_eleven")
    while not h.is_over:
        acts = h.legal_action_strings()
        assert not any(a.startswith("raise") for a in acts)
        h.apply(next(a for a in acts if a.startswith("play_face_up")))


@pytest.mark.parametrize("answer,winner,score", [("accept_eleven", None, None), ("fold_eleven", 1, (11, 5))])
def test_hand_of_eleven_play_for_3_or_concede_1(answer, winner, score):
    """Seed 001: "at 11 points you choose: play for 3 or concede 1"."""
    h = play(deal(PAULISTA_HOUSE, "4d 5d 6d", "3s 3h 2s", "Kc", score=(11, 4)), answer)
    if answer == "fold_eleven":
        assert h.is_over and h.winner == winner and h.score == score
    else:
        assert h.hand_value == 3
        while not h.is_over:
            h.apply(next(a for a in h.legal_action_strings() if a.startswith("play_face_up")))
        assert h.winner == 1 and h.score == (11, 7)


def test_iron_hand_is_blind_and_flipped_in_dealt_order():
    """Seed 001: "If BOTH players stand at 11, an iron hand is played: nobody looks at their cards at all,
    everyone flips blind, and the winner takes the game." In the OpenSpiel game the hand has no decisions
    (both flip in dealt order), nobody's information state shows their own cards, the deal order is
    uniform, and the hand decides the match."""
    g = pyspiel.load_game("truco_paulista", {"rules": "paulista_house", "score0": 11, "score1": 11})
    st = g.new_initial_state()
    probs = [p for _, p in st.chance_outcomes()]
    assert np.allclose(probs, 1 / 40)
    deal_order = []
    rng = random.Random(3)
    while st.is_chance_node():
        if len(deal_order) in (2, 5):
            for p in (0, 1):
                assert "dealt" not in st.information_state_string(p) and "hand:" not in \
                    st.observation_string(p).replace("hand:blind", "")
        a = rng.choice([a for a, _ in st.chance_outcomes()])
        deal_order.append(a)
        st.apply_action(a)
    assert st.is_terminal()  # decided at the deal
    plays = {0: [a for p, a in st.hand_actions if p == 0], 1: [a for p, a in st.hand_actions if p == 1]}
    assert plays[0] == deal_order[0:len(plays[0])] and plays[1] == deal_order[3:3 + len(plays[1])]
    assert sorted(st.returns()) == [-1.0, 1.0]  # 11 + 3 caps at 12: the winner takes the game
    # the engine offers exactly the next card in dealt order, face up
    h = deal(PAULISTA_HOUSE, "Kd 4c 7h", "5s 6s Qs", "2c", score=(11, 11))
    assert h.legal_action_strings() == ["play_face_up Kd", "concede_hand"]
    with pytest.raises(TrucoError) as e:
        h.apply("play_face_up 4c")
    assert e.value.code == "BLIND_PLAY_IN_DEALT_ORDER"
    # seed 000's 11 x 11 is played normally, seeing the cards
    base = deal(PAULISTA, "Kd 4c 7h", "5s 6s Qs", "2c", score=(11, 11))
    assert {"play_face_up Kd", "play_face_up 4c", "play_face_up 7h"} <= set(base.legal_action_strings())
    g0 = pyspiel.load_game("truco_paulista", {"score0": 11, "score1": 11})
    st0 = g0.new_initial_state()
    for c in (0, 1, 2, 3, 4, 5, 39):
        st0.apply_action(c)
    assert not st0.is_terminal() and "hand:" in st0.observation_string(st0.current_player())


@pytest.mark.slow
@pytest.mark.parametrize("name", ["truco_paulista", "truco_paulista_match"])
def test_house_games_pass_openspiel_checks_and_playouts(name):
    params = {"rules": "paulista_house", "ranks": "KA23", "suits": "hc", "max_stake": 3}
    if name == "truco_paulista":
        params |= {"score0": 10, "score1": 9, "dealer": 0}
    g = pyspiel.load_game(name, params)
    pyspiel.random_sim_test(g, num_sims=40, serialize=True, verbose=False)
    if name == "truco_paulista_match":
        rng = random.Random(0)
        for _ in range(40):
            st = g.new_initial_state()
            last = (0, 0)
            while not st.is_terminal():
                if st.is_chance_node():
                    st.apply_action(rng.choice([a for a, _ in st.chance_outcomes()]))
                else:
                    st.apply_action(rng.choice(st.legal_actions()))
                now = tuple(st.start_score)
                assert now[0] >= last[0] and now[1] >= last[1]  # scores only grow
                last = now
            r = st.returns()
            assert r[0] == -r[1] and abs(r[0]) == 1.0


@pytest.mark.slow
def test_house_cell_native_value_agrees_with_the_generic_openspiel_walk():
    """The raise rule in the native builder (player 0 on 10 may not re-raise a 3 to 6): the native value agrees
    with a solve through the generic OpenSpiel walk of the house game, which knows nothing of the builder."""
    from solvers import solve

    g3 = pyspiel.load_game("truco_paulista", {"rules": "paulista_house", "ranks": "7QJKA23", "suits": "c",
                                              "max_stake": 6, "score0": 10, "score1": 9, "dealer": 0})
    native = solve(g3, algorithm="dcfr", iterations=300)
    generic = solve(g3, algorithm="dcfr", iterations=300, tree="openspiel")
    tol = 2 * (native.exploitability + generic.exploitability) + 1e-9
    assert abs(native.game_value - generic.game_value) <= tol


@pytest.mark.slow
def test_house_native_trees_know_draws_and_the_raise_rule():
    """Native trees of house cells: three tied tricks end in a draw paying nothing (two suits make ties), and
    the forbidden raises are gone (fewer slots than seed 000's tree of the same cell without prunes)."""
    from solvers.vector import VectorSolver
    from truco_lab.abstraction.payoff import decode
    from truco_lab.abstraction.tree import build_cell, outcome_codes
    from truco_lab.rules.engine import DRAW

    house = PAULISTA_HOUSE.with_deck("KA23", "hc").with_max_stake(6)  # on 10, facing a 3: no raise to 6
    base = PAULISTA.with_deck("KA23", "hc").with_max_stake(6)
    th, tb = build_cell(house, 10, 9, 0, 0, prunes=0), build_cell(base, 10, 9, 0, 0, prunes=0)
    draws = [c for c in outcome_codes(th) if decode(int(c))[0] == DRAW]
    assert draws and not [c for c in outcome_codes(tb) if decode(int(c))[0] == DRAW]
    assert (th.utilities()[np.isin(th.node_outcome, draws)] == 0).all()
    assert th.num_slots < tb.num_slots
    vh, vb = VectorSolver(th, "dcfr"), VectorSolver(tb, "dcfr")
    vh.iterate(300)
    vb.iterate(300)
    assert vh.exploitability() < 0.02 and vb.exploitability() < 0.02


def test_cli_rules_option(tmp_path, capsys):
    assert main(["solve", "--rules", "paulista_house", "--score", "10,9", "--dealer", "0", "--vira", "all",
                 "--iterations", "20", "--out", str(tmp_path / "h"), "-q", "--ranks", "7QJKA23", "--suits", "c",
                 "--max-stake", "3"]) == 0
    assert "game value" in capsys.readouterr().out
    assert main(["solve", "--rules", "paulista_house", "--score", "11,11", "--dealer", "0", "--vira", "all",
                 "--iterations", "2", "--out", str(tmp_path / "b"), "-q"]) == 2
    assert "played blind" in capsys.readouterr().err
    with pytest.raises(SystemExit) as e:
        main(["solve", "--rules", "gaucho", "--score", "0,0", "--dealer", "0", "--vira", "all", "--iterations", "1",
              "--out", str(tmp_path / "m")])
    assert e.value.code == 2


def test_play_table_uses_the_chosen_rules():
    from truco_lab.people.bots import RandomBot
    from truco_lab.people.play import Table

    out = []
    t = Table(PAULISTA_HOUSE, RandomBot(1), match=False, score=(11, 11), seed=2, read=lambda p="": "1",
              write=out.append)
    assert t.run() == 0
    text = "\n".join(out)
    assert "played blind" in text and "your move" not in text


@pytest.mark.slow
def test_blind_iron_hand_value_matches_openspiel_enumeration():
    """The exact blind-hand value the match solver uses equals OpenSpiel's exact expectation over the
    house game's chance nodes (no decisions): a fair coin, for any deck."""
    from open_spiel.python import policy
    from open_spiel.python.algorithms import expected_game_score

    from truco_lab.abstraction.levels import blind_hand_value

    rules = PAULISTA_HOUSE.with_deck("KA23", "hc")
    g = pyspiel.load_game("truco_paulista", {"rules": "paulista_house", "score0": 11, "score1": 11,
                                             "ranks": "KA23", "suits": "hc"})
    u = policy.UniformRandomPolicy(g)
    ret = expected_game_score.policy_value(g.new_initial_state(), [u, u])[0]  # P(win) - P(loss), in points of 1
    v = blind_hand_value(rules)
    assert v == pytest.approx(0.5, abs=1e-12) and ret == pytest.approx(0.0, abs=1e-12)


@pytest.mark.slow
def test_house_match_solved_and_played(tmp_path, capsys):
    """The match solver takes the house rules: the blind 11x11 cell gets its exact value, every other cell is
    solved and certified; the solved bot plays whole house matches through the OpenSpiel game."""
    out = tmp_path / "house"
    assert main(["match", "--rules", "paulista_house", "--out", str(out), "--ranks", "7QJKA23", "--suits", "c",
                 "--max-stake", "3", "--target-exploitability", "1e-3", "--no-table", "-q"]) == 0
    import json

    summary = json.loads((out / "summary.json").read_text())
    cells = {(c["score0"], c["score1"], c["dealer"]): c for c in summary["cells"]}
    assert cells[(11, 11, 1)]["equity"] == pytest.approx(0.5) and cells[(11, 11, 1)]["blind"]
    assert summary["max_cell_exploitability"] <= 1e-3
    capsys.readouterr()
    assert main(["arena", "--rules", "paulista_house", "--bots", "solved,random", "--matches", "20", "--solved",
                 str(out), "--cell", "10,10", "--out", str(tmp_path / "a"), "-q", "--ranks", "7QJKA23", "--suits",
                 "c", "--max-stake", "3"]) == 0
    assert "solved vs random: solved wins" in capsys.readouterr().out
