"""One or more tests per sentence of seed 000 (the engine's contract), with explicit deals.

Players: 0 and 1. ``dealer=1`` (the default) makes player 0 the Leader.
"""

import pytest

from truco_lab import HandState, TrucoError
from truco_lab.rules.cards import RANKS, SUITS, card_str
from truco_lab.rules.ruleset import PAULISTA


def deal(p0, p1, vira, dealer=1, score=(0, 0)):
    return HandState.new(hands=(p0, p1), vira=vira, dealer=dealer, score=score)


def play(h, *actions):
    for a in actions:
        h.apply(a)
    return h


def round1_winner(c0, c1, vira, down=False):
    """Winner of a round where player 0 leads ``c0`` and player 1 answers ``c1``."""
    fill0 = [c for c in ("4d", "5d", "6d", "7d", "4s", "5s") if c not in (c0, c1, vira)]
    fill1 = [c for c in ("4h", "5h", "6h", "7h", "4c", "5c") if c not in (c0, c1, vira) + tuple(fill0[:2])]
    h = deal([c0, *fill0[:2]], [c1, *fill1[:2]], vira)
    play(h, f"play_face_up {c0}", f"play_face_up {c1}")
    return h.public_state()["completed_rounds"][0]["winner"]


# -- The deck, the turn-up, the manilhas ------------------------------------
def test_deck_has_40_cards_without_8_9_10():
    assert len(PAULISTA.deck) == 40
    for bad in ("8c", "9d", "10h"):
        with pytest.raises(ValueError):
            deal([bad, "4d", "5d"], ["4s", "5s", "6s"], "7c")


def test_listing_is_the_order_4_lowest_3_highest():
    # vira 4 makes 5s the manilhas; every other adjacent pair keeps the listed order
    order = [r for r in RANKS if r not in "45"]
    for lo, hi in zip(order, order[1:], strict=False):
        assert round1_winner(f"{hi}d", f"{lo}c", "4s") == 0
        assert round1_winner(f"{lo}d", f"{hi}c", "4s") == 1


def test_suits_never_matter_and_same_rank_ties():
    assert round1_winner("7d", "7c", "As") is None
    assert round1_winner("Kc", "Kd", "As") is None


def test_rank_above_the_turnup_are_manilhas_and_beat_everything():
    # vira A -> manilha 2: the weakest manilha (2d) beats the strongest plain card (3c)
    assert round1_winner("2d", "3c", "Ah") == 0
    assert round1_winner("3c", "2d", "Ah") == 1


def test_manilha_suit_order_diamonds_spades_hearts_clubs():
    for i, weak in enumerate(SUITS):
        for strong in SUITS[i + 1 :]:
            assert round1_winner(f"2{strong}", f"2{weak}", "Ad") == 0


def test_under_a_4_turnup_the_5_of_clubs_is_the_strongest_card():
    for c in range(40):
        other = card_str(c)
        if other in ("5c", "4s"):
            continue
        assert round1_winner("5c", other, "4s") == 0, other


def test_turnup_3_makes_the_4s_manilhas():
    assert round1_winner("4d", "3c", "3s") == 0
    assert round1_winner("3c", "4d", "3s") == 1


# -- Rounds, leads, and every tie ------------------------------------------------
def test_the_leader_is_the_dealers_opponent():
    assert deal("7d 6c 4h", "3c 5s 4d", "As", dealer=1).actor == 0
    assert deal("7d 6c 4h", "3c 5s 4d", "As", dealer=0).actor == 1


def test_round_winner_leads_next_round():
    h = play(deal("4h 6c 7d", "3c 5s 4d", "As"), "play_face_up 4h", "play_face_up 3c")
    assert h.actor == 1


def test_tied_round_keeps_the_same_leader():
    h = play(deal("7d 6c 4h", "7c 5s 4d", "As"), "play_face_up 7d", "play_face_up 7c")
    assert h.actor == 0
    h = deal("7d 6c 4h", "7c 5s 4d", "As", dealer=0)  # player 1 leads
    play(h, "play_face_up 7c", "play_face_up 7d")
    assert h.actor == 1


def test_win_then_tie_ends_the_hand_for_the_winner():
    h = play(deal("7d 6c Qh", "6s 6h Jd", "4s"), "play_face_up 7d", "play_face_up 6s", "play_face_up 6c", "play_face_up 6h")
    assert h.winner == 0 and h.score == (1, 0)
    assert len(h.public_state()["completed_rounds"]) == 2  # no third round


def test_tie_then_win_ends_the_hand_for_the_winner():
    h = play(deal("7d 6c Qh", "7c Kh Jd", "4s"), "play_face_up 7d", "play_face_up 7c", "play_face_up 6c", "play_face_up Kh")
    assert h.winner == 1 and h.score == (0, 1)
    assert len(h.public_state()["completed_rounds"]) == 2


def test_split_then_tied_third_goes_to_round_one_winner():
    h = deal("Kd 4c 6h", "5s Ah 6c", "Qs")  # vira Q: manilhas are the Js
    play(h, "play_face_up Kd", "play_face_up 5s")  # p0 wins round 1
    play(h, "play_face_up 4c", "play_face_up Ah")  # p1 wins round 2, leads round 3
    play(h, "play_face_up 6c", "play_face_up 6h")  # tie
    assert [r["winner"] for r in h.public_state()["completed_rounds"]] == [0, 1, None]
    assert h.winner == 0


def test_split_then_tied_third_when_round_one_winner_is_player_1():
    h = deal("5s Ah 6c", "Kd 4c 6h", "Qs")
    play(h, "play_face_up 5s", "play_face_up Kd")  # p1 wins round 1
    play(h, "play_face_up 4c", "play_face_up Ah")  # p0 wins round 2
    play(h, "play_face_up 6c", "play_face_up 6h")  # tie
    assert [r["winner"] for r in h.public_state()["completed_rounds"]] == [1, 0, None]
    assert h.winner == 1


@pytest.mark.parametrize("dealer", [0, 1])
def test_all_three_rounds_tied_go_to_the_leader(dealer):
    leader = 1 - dealer
    h = deal("7d 6c 3h", "7c 6s 3d", "4s", dealer=dealer)
    pairs = (("7d", "7c"), ("6c", "6s"), ("3h", "3d"))  # (player 0's, player 1's)
    for a, b in pairs:
        first, second = (a, b) if leader == 0 else (b, a)
        play(h, f"play_face_up {first}", f"play_face_up {second}")
    assert [r["winner"] for r in h.public_state()["completed_rounds"]] == [None, None, None]
    assert h.winner == leader and h.points == 1


def test_one_one_then_tie_goes_to_first_round_winner_by_table():
    import numpy as np

    from truco_lab.rules.engine import TIE, hand_result

    assert hand_result(np.array([1, 0, TIE], np.int32), 3, 0, 0) == 1
    assert hand_result(np.array([0, 1, TIE], np.int32), 3, 1, 0) == 0
    assert hand_result(np.array([TIE, TIE, TIE], np.int32), 3, 1, 0) == 1
    assert hand_result(np.array([TIE, TIE, 0], np.int32), 3, 1, 0) == 0
    assert hand_result(np.array([0, TIE, 0], np.int32), 2, 1, 0) == 0  # fixed after round 2
    assert hand_result(np.array([TIE, 0, 0], np.int32), 1, 1, 0) == -1


# -- Face-down plays ----------------------------------------------------------
def test_face_down_is_never_legal_in_round_one():
    h = deal("3d 7c 4h", "Kc 6s 5d", "As")
    assert not any(a.startswith("play_face_down") for a in h.legal_action_strings())
    with pytest.raises(TrucoError) as e:
        h.apply("play_face_down 3d")
    assert e.value.code == "HIDE_NOT_ALLOWED_IN_FIRST_ROUND"


def test_face_down_the_strong_3d_loses_to_the_weak_4s():
    h = deal("Kd 3d 7c", "5s 4s 6h", "Qc")  # vira Q: manilhas are the Js, 3d is the top plain card
    play(h, "play_face_up Kd", "play_face_up 5s")  # p0 wins round 1, leads round 2
    play(h, "play_face_down 3d", "play_face_up 4s")
    assert h.public_state()["completed_rounds"][1]["winner"] == 1


def test_two_face_down_cards_tie():
    h = deal("Kd 3d 7c", "5s 4s 6h", "Qc")
    play(h, "play_face_up Kd", "play_face_up 5s", "play_face_down 3d", "play_face_down 6h")
    assert h.public_state()["completed_rounds"][1]["winner"] is None
    assert h.winner == 0  # win + tie


def test_face_down_identity_is_never_revealed_publicly():
    h = deal("Kd 3d 7c", "5s 4s 6h", "Qc")
    play(h, "play_face_up Kd", "play_face_up 5s", "play_face_down 3d")
    plays = h.public_state()["current_round"]["plays"]
    assert plays == [{"player": 0, "visibility": "down"}]


# -- Truco and the raise ladder -------------------------------------------------
def test_hand_starts_at_1_point():
    h = deal("3d 3s 2c", "4d 5d 6d", "7c")
    assert h.hand_value == 1
    play(h, "play_face_up 3d", "play_face_up 4d", "play_face_up 3s", "play_face_up 5d")
    assert h.score == (1, 0) and h.points == 1


def test_ladder_climbs_one_rung_at_a_time():
    h = deal("3d 3s 2c", "4d 5d 6d", "7c")
    seen = []
    for _ in range(4):
        raises = [a for a in h.legal_action_strings() if a.startswith("raise")]
        assert len(raises) == 1
        seen.append(raises[0])
        h.apply(raises[0])
    assert seen == ["raise 3", "raise 6", "raise 9", "raise 12"]
    assert not any(a.startswith("raise") for a in h.legal_action_strings())


def test_skipping_a_rung_is_an_invalid_target():
    h = deal("3d 3s 2c", "4d 5d 6d", "7c")
    assert h.check("raise 6") == "INVALID_RAISE_TARGET"


def test_a_raise_pauses_the_cards():
    h = play(deal("3d 3s 2c", "4d 5d 6d", "7c"), "raise 3")
    assert set(h.legal_action_strings(with_concede=False)) == {"accept_raise", "fold", "raise 6"}
    assert h.check("play_face_up 4d") == "RAISE_PENDING"


def test_accept_continues_at_the_new_value():
    h = play(deal("3d 3s 2c", "4d 5d 6d", "7c"), "raise 3", "accept_raise")
    assert h.hand_value == 3 and h.actor == 0
    play(h, "play_face_up 3d", "play_face_up 4d", "play_face_up 3s", "play_face_up 5d")
    assert h.score == (3, 0)


@pytest.mark.parametrize("n_raises,paid", [(1, 1), (2, 3), (3, 6), (4, 9)])
def test_decline_pays_the_raiser_the_previous_value(n_raises, paid):
    h = deal("4d 5d 6d", "3d 3s 2c", "7c")
    for _ in range(n_raises):
        h.apply(next(a for a in h.legal_action_strings() if a.startswith("raise")))
    raiser = 1 - h.actor
    h.apply("fold")
    assert h.winner == raiser and h.points == paid


def test_a_re_raise_accepts_the_pending_offer():
    h = play(deal("4d 5d 6d", "3d 3s 2c", "7c"), "raise 3", "raise 6")
    assert h.public_state()["pending_raise"] == {"raised_by": 1, "to": 6, "previous_value": 3}


def test_the_last_raiser_cannot_raise_again():
    h = play(deal("3d 3s 2c", "4d 5d 6d", "7c"), "raise 3", "accept_raise")
    assert h.check("raise 6") == "RAISE_NOT_ALLOWED"  # p0 raised last, and acts now
    play(h, "play_face_up 3d")
    assert "raise 6" in h.legal_action_strings()  # the opponent may escalate later
    play(h, "raise 6", "accept_raise", "play_face_up 4d")
    assert h.actor == 0 and "raise 9" in h.legal_action_strings()


def test_concede_pays_what_a_decline_would():
    h = play(deal("4d 5d 6d", "3d 3s 2c", "7c"), "raise 3", "raise 6", "concede_hand")
    assert h.winner == 1 and h.points == 3
    h = play(deal("4d 5d 6d", "3d 3s 2c", "7c"), "raise 3", "accept_raise", "play_face_up 4d", "concede_hand")
    assert h.winner == 0 and h.points == 3
    h = play(deal("4d 5d 6d", "3d 3s 2c", "7c"), "concede_hand")
    assert h.winner == 1 and h.points == 1


def test_concede_is_legal_on_any_turn_but_the_eleven_decision():
    h = deal("4d 5d 6d", "3d 3s 2c", "7c")
    assert "concede_hand" in h.legal_action_strings()
    h = deal("4d 5d 6d", "3d 3s 2c", "7c", score=(11, 4))
    assert "concede_hand" not in h.legal_action_strings()
    assert h.check("concede_hand") == "DECISION_PENDING"


# -- The hand of eleven, and 11 x 11 ---------------------------------------------
def test_player_on_11_decides_even_when_the_other_seat_leads():
    h = deal("4d 5d 6d", "3d 3s 2c", "7c", dealer=0, score=(11, 4))  # player 1 leads
    assert h.actor == 0
    assert h.legal_action_strings() == ["accept_eleven", "fold_eleven"]
    assert h.check("play_face_up 3d", player=1) == "ACT_OUT_OF_TURN"
    h.apply("accept_eleven")
    assert h.actor == 1 and h.hand_value == 3


def test_mao_de_onze_fold_gives_the_opponent_1():
    h = play(deal("4d 5d 6d", "3d 3s 2c", "7c", score=(3, 11)), "fold_eleven")
    assert h.winner == 0 and h.score == (4, 11)


def test_mao_de_onze_accept_plays_for_3_and_can_end_the_match():
    h = play(deal("3d 3s 2c", "4d 5d 6d", "7c", score=(11, 0)), "accept_eleven")
    play(h, "play_face_up 3d", "play_face_up 4d", "play_face_up 3s", "play_face_up 5d")
    assert h.score == (12, 0) and h.points == 1  # capped at 12
    assert h.public_state()["match_winner"] == 0


def test_mao_de_onze_locks_the_ladder_for_both_players():
    h = play(deal("3d 3s 2c", "4d 5d 6d", "7c", score=(11, 5)), "accept_eleven")
    assert h.check("raise 3") == "RAISE_NOT_ALLOWED"
    play(h, "play_face_up 3d")
    assert h.check("raise 3") == "RAISE_NOT_ALLOWED"


def test_eleven_eleven_is_worth_3_locked_and_played_normally():
    h = deal("3d 3s 2c", "4d 5d 6d", "7c", score=(11, 11))
    assert h.hand_value == 3 and h.actor == 0
    assert set(h.legal_action_strings(with_concede=False)) == {"play_face_up 3d", "play_face_up 3s", "play_face_up 2c"}
    assert h.check("accept_eleven") == "NO_PENDING_ELEVEN_DECISION"
    assert h.check("raise 6") == "RAISE_NOT_ALLOWED"
    play(h, "play_face_up 3d")
    assert h.check("raise 6", player=1) == "RAISE_NOT_ALLOWED"  # locked for both players


# -- The match ------------------------------------------------------------------
def test_scores_cap_at_12():
    h = play(deal("3d 3s 2c", "4d 5d 6d", "7c", score=(10, 0)), "raise 3", "accept_raise")
    play(h, "play_face_up 3d", "play_face_up 4d", "play_face_up 3s", "play_face_up 5d")
    assert h.score == (12, 0) and h.points == 2 and h.returns() == [2.0, -2.0]


def test_a_hand_ends_the_moment_its_outcome_is_fixed():
    h = play(deal("3d 3s 2c", "4d 5d 6d", "7c"), "play_face_up 3d", "play_face_up 4d", "play_face_up 3s", "play_face_up 5d")
    assert h.is_over and h.actor is None and h.hand(0) == [h.hand(0)[0]]  # 2c never played
    with pytest.raises(TrucoError) as e:
        h.apply("play_face_up 2c")
    assert e.value.code == "HAND_ALREADY_DECIDED"


def test_out_of_turn_and_foreign_cards_are_rejected_with_codes():
    h = deal("3d 3s 2c", "4d 5d 6d", "7c")
    assert h.check("play_face_up 4d", player=1) == "ACT_OUT_OF_TURN"
    assert h.check("play_face_up 4d") == "CARD_NOT_IN_HAND"
    assert h.check("accept_raise") == "NO_PENDING_RAISE"
    assert h.check("fold") == "NO_PENDING_RAISE"
    assert h.check("fold_eleven") == "NO_PENDING_ELEVEN_DECISION"


def test_bad_python_inputs_get_clear_errors():
    h = HandState.new(hands=("3d Qs 5c", "4s 7h Ac"), vira="4c", dealer=1, score=(0, 0))
    with pytest.raises(ValueError, match="action must be"):
        h.apply(None)
    with pytest.raises(ValueError, match="score must be two integers"):
        HandState.new(hands=("3d Qs 5c", "4s 7h Ac"), vira="4c", dealer=1, score=(1, 2, 3))
    with pytest.raises(ValueError, match="score1 must be an integer"):
        HandState.new(hands=("3d Qs 5c", "4s 7h Ac"), vira="4c", dealer=1, score=(1, 12))
