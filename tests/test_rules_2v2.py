"""Two against two (seed 003): ``truco_paulista_2v2`` and ``truco_mineiro_2v2`` (hand and match). One or more
tests per sentence of seed 003 about four seats, with explicit deals through the OpenSpiel games.

Seats 0 and 2 (side 0) face seats 1 and 3 (side 1); the default dealer is seat 3, so seat 0 is mano.
"""

from __future__ import annotations

import random

import pyspiel
import pytest
from playouts import play_randomly

import truco_lab  # noqa: F401  registers the games
from truco_lab.rules import engine as E
from truco_lab.rules.cards import parse_cards
from truco_lab.rules.state import TrucoError


def deal(name="truco_paulista_2v2", hands=("4d 5d 6d", "4s 5s 6s", "4h 5h 6h", "4c 5c 6c"), vira="7c", **params):
    g = pyspiel.load_game(name, params)
    st = g.new_initial_state()
    for h in hands:
        for c in sorted(parse_cards(h)):  # each seat's cards are dealt in increasing id
            st.apply_action(c)
    if "mineiro" not in name:
        st.apply_action(parse_cards(vira)[0])
    assert not st.is_chance_node()
    return st


def act(st, *actions):
    for a in actions:
        st.apply_action(st._g.rules.parse_action(a))
    return st


def trick_winner(st, k=0):
    return int(E.round_winner(st.s, k))


def test_four_players_partners_facing_share_the_result():
    g = pyspiel.load_game("truco_paulista_2v2")
    assert g.num_players() == 4 and g.num_distinct_actions() == 89
    st = act(deal(), "play_face_up 6d", "play_face_up 6s", "play_face_up 6h", "play_face_up 6c")
    while not st.is_terminal():
        st.apply_action(st.legal_actions()[0])
    r = st.returns()
    assert r[0] == r[2] == -r[1] == -r[3] and abs(r[0]) >= 1


def test_each_player_is_dealt_three_cards_plus_the_vira():
    st = pyspiel.load_game("truco_paulista_2v2").new_initial_state()
    n = 0
    while st.is_chance_node():
        st.apply_action(st.chance_outcomes()[0][0])
        n += 1
    assert n == 13 and all(len([E.held_card(st.s, p, i) for i in range(3)]) == 3 for p in range(4))
    st = pyspiel.load_game("truco_mineiro_2v2").new_initial_state()
    n = 0
    while st.is_chance_node():
        st.apply_action(st.chance_outcomes()[0][0])
        n += 1
    assert n == 12  # Mineiro turns no vira


@pytest.mark.parametrize("dealer,order", [(3, [0, 1, 2, 3]), (1, [2, 3, 0, 1]), (0, [1, 2, 3, 0])])
def test_the_player_after_the_dealer_is_mano_and_play_goes_round(dealer, order):
    st = deal(dealer=dealer)
    seen = []
    for _ in range(4):
        seen.append(st.current_player())
        st.apply_action(min(a for a in st.legal_actions() if a < 40))
    assert seen == order


def test_everybody_plays_one_card_and_the_strongest_takes_the_trick_and_leads():
    # vira 7c: manilhas are Qs; seat 2's 3h is the strongest plain card, no manilha out
    st = act(deal(hands=("4d 5d 6d", "2s 5s 6s", "3h 5h 6h", "Kc 5c 6c")),
             "play_face_up 4d", "play_face_up 2s", "play_face_up 3h", "play_face_up Kc")
    assert trick_winner(st) == 0 and st.current_player() == 2


def test_two_equal_cards_from_the_two_sides_tie_the_trick():
    st = act(deal(hands=("3d 5d 6d", "3s 5s 6s", "4h 5h 6h", "4c 5c 6c")),
             "play_face_up 3d", "play_face_up 3s", "play_face_up 4h", "play_face_up 4c")
    assert trick_winner(st) == E.TIE and st.current_player() == 0  # the same seat leads again


def test_equal_top_cards_of_partners_take_the_trick_for_their_side():
    st = act(deal(hands=("3d 5d 6d", "2s 5s 6s", "3h 4h 6h", "4c 5c 6c")),
             "play_face_up 3d", "play_face_up 2s", "play_face_up 3h", "play_face_up 4c")
    assert trick_winner(st) == 0 and st.current_player() == 0  # the first of the two leads


def test_the_side_that_takes_two_tricks_takes_the_hand():
    st = act(deal(hands=("3d 2d 6d", "4s 5s 6s", "4h 5h 6h", "4c 5c 7s")),
             "play_face_up 3d", "play_face_up 4s", "play_face_up 4h", "play_face_up 4c",
             "play_face_up 2d", "play_face_up 5s", "play_face_up 5h", "play_face_up 5c")
    assert st.is_terminal() and st.returns() == [1.0, -1.0, 1.0, -1.0]


def test_a_tied_first_trick_goes_to_whoever_takes_the_second():
    st = act(deal(hands=("3d 4d 6d", "3s 2s 6s", "4h 5h 6h", "4c 5c 7s")),
             "play_face_up 3d", "play_face_up 3s", "play_face_up 4h", "play_face_up 4c",  # tie: seat 0 leads
             "play_face_up 4d", "play_face_up 2s", "play_face_up 5h", "play_face_up 5c")
    assert st.is_terminal() and st.returns()[1] == 1.0


def test_a_raise_is_answered_by_the_next_player_on_the_other_side():
    st = act(deal(), "raise 3")
    assert st.current_player() == 1
    act(st, "raise 6")  # raising again: now the next player after seat 1, seat 2, answers
    assert st.current_player() == 2 and E.pending_to(st.s) == 6


def test_turned_down_the_callers_take_what_the_hand_was_worth_before():
    st = act(deal(), "raise 3", "fold")
    assert st.is_terminal() and st.returns() == [1.0, -1.0, 1.0, -1.0]
    st = act(deal(), "raise 3", "raise 6", "fold")  # seat 2 turns down side 1's 6: side 1 takes 3
    assert st.returns() == [-3.0, 3.0, -3.0, 3.0]


def test_only_the_side_that_accepted_may_raise_next():
    st = act(deal(), "raise 3", "accept_raise", "play_face_up 4d")
    assert st.current_player() == 1 and "raise 6" in [st.action_to_string(a) for a in st.legal_actions()]
    act(st, "play_face_up 4s")
    assert st.current_player() == 2  # seat 2, partner of the raiser
    assert not any(80 <= a < 84 for a in st.legal_actions())
    with pytest.raises(TrucoError):
        act(st, "raise 6")


@pytest.mark.parametrize("name,value,fold", [("truco_paulista_2v2", 3, 1), ("truco_mineiro_2v2", 4, 2)])
def test_hand_of_eleven_decided_after_seeing_the_partners_cards(name, value, fold):
    st = deal(name, score0=11)
    assert st.current_player() == 0  # side 0's first seat decides
    info = st.information_state_string(0)
    assert "partner:4h 5h 6h" in info and "partner" in st.information_state_string(2)
    assert "partner" not in st.information_state_string(1)
    act(st, "fold_eleven")
    assert st.is_terminal() and st.returns()[1] == fold
    st = act(deal(name, score0=11), "accept_eleven")
    assert E.value(st.s) == value and not any(80 <= a < 84 for a in st.legal_actions())


def test_with_both_sides_on_eleven_nobody_may_raise():
    st = deal(score0=11, score1=11)
    for _ in range(4):
        assert not any(80 <= a < 84 for a in st.legal_actions())
        st.apply_action(min(a for a in st.legal_actions() if a < 40))
    assert "partner" not in st.information_state_string(0)


@pytest.mark.parametrize("name", ["truco_paulista_2v2", "truco_mineiro_2v2", "truco_paulista_2v2_match",
                                  "truco_mineiro_2v2_match"])
def test_team_games_pass_openspiel_checks(name):
    g = pyspiel.load_game(name)
    pyspiel.random_sim_test(g, num_sims=5, serialize=True, verbose=False)
    assert pyspiel.load_game(str(g)).get_parameters() == g.get_parameters()


def test_match_to_12_playouts_zero_sum_scores_grow_and_the_deal_goes_round():
    g = pyspiel.load_game("truco_mineiro_2v2_match")
    rng = random.Random(5)
    for _ in range(15):
        seen, dealers = [(0, 0)], []

        def check(st, chance, seen=seen, dealers=dealers):
            if chance and not st.deal:
                dealers.append(st.dealer)
            sc = (int(E.score(st.s, 0)), int(E.score(st.s, 1)))
            assert sc[0] >= seen[-1][0] and sc[1] >= seen[-1][1]
            seen.append(sc)

        st = play_randomly(g.new_initial_state(), rng, check)
        assert max(E.score(st.s, 0), E.score(st.s, 1)) == 12 and sum(st.returns()) == 0
        assert dealers[:4] == [3, 0, 1, 2][: len(dealers[:4])]


def test_handstate_deals_four_seats_with_the_same_api():
    from truco_lab import MINEIRO_2V2, PAULISTA_2V2, HandState

    h = HandState.new(hands=("4d 5d 6d", "4s 5s 6s", "4h 5h 6h", "3c 5c 6c"), vira="7c", dealer=3,
                      rules=PAULISTA_2V2)
    assert h.actor == 0 and len(h.hand(3)) == 3
    for a in ("play_face_up 4d", "play_face_up 4s", "play_face_up 4h", "play_face_up 3c"):
        h.apply(a)
    assert int(E.round_winner(h.s, 0)) == 1 and h.actor == 3
    assert h.check("play_face_up 4d", player=0) == "ACT_OUT_OF_TURN"
    with pytest.raises(ValueError, match="deals 4 hands"):
        HandState.new(hands=("4d 5d 6d", "4s 5s 6s"), rules=MINEIRO_2V2)
    with pytest.raises(ValueError, match="heads-up"):
        h.to_json()
    h = HandState.new(hands=("4d 5d 6d", "4s 5s 6s", "4h 5h 6h", "3c 5c 6c"), dealer=3, rules=MINEIRO_2V2)
    h.apply("raise 4")
    h.apply("fold")
    assert h.is_over and h.returns() == [2.0, -2.0, 2.0, -2.0]


def test_a_face_down_card_is_hidden_from_the_partner_too():
    st = act(deal(), "play_face_up 4d", "play_face_up 4s", "play_face_up 4h", "play_face_up 4c",
             "play_face_down 5d")  # round 2: face-down allowed; seat 0 led again after the tie
    assert "play_face_down 5d" in st.information_state_string(0)
    for seat in (1, 2, 3):
        info = st.information_state_string(seat)
        assert "play_face_down ??" in info and "5d" not in info.split("|")[1]
