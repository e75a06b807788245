"""One or more tests per rule sentence of seed 004 (two-player Argentine truco, rule set ``argentino``) and
of seed 003's Argentine options (flor, going to the deck), with explicit deals derived from the seed text.

Players: 0 and 1; ``dealer=1`` makes player 0 mano ("the non-dealer is mano and leads first").
"""

from __future__ import annotations

import random
from dataclasses import replace

import numpy as np
import pyspiel
import pytest
from playouts import play, play_randomly

import truco_lab  # noqa: F401  registers the games
from truco_lab import HandState, TrucoError, envido_points
from truco_lab.rules import engine as E
from truco_lab.rules import simulate
from truco_lab.rules.ruleset import ARGENTINO, PAULISTA, rule_set

FLOR = replace(ARGENTINO, flor=True)
DECK1 = replace(ARGENTINO, deck_extra=1)


def deal(p0, p1, dealer=1, score=(0, 0), rules=ARGENTINO):
    return HandState.new(hands=(p0, p1), dealer=dealer, score=score, rules=rules)


def trick(c0, c1):
    """Winner of one trick (0, 1 or E.TIE): mano (player 0) plays ``c0``, player 1 answers ``c1``."""
    rest = [c for c in ("4e", "4b", "5o", "5c", "6e", "6b") if c not in (c0, c1)]
    h = play(deal(f"{c0} {rest[0]} {rest[1]}", f"{c1} {rest[2]} {rest[3]}"), f"play {c0}", f"play {c1}")
    return int(E.round_winner(h.s, 0))


# ---- §1 objective, §2 setup --------------------------------------------------
def test_rule_set_by_name_and_data():
    assert rule_set("argentino") is ARGENTINO
    assert ARGENTINO.target == 30 and ARGENTINO.ladder == (1, 2, 3, 4) and not ARGENTINO.mao_de_onze
    assert ARGENTINO.envido and not ARGENTINO.flor and not ARGENTINO.vira


def test_forty_card_spanish_pack_without_8s_and_9s():
    """§2: 1-7, Sota (10), Caballo (11) and Rey (12) in each suit, no 8s, 9s or jokers."""
    names = sorted(ARGENTINO.card_str(c) for c in ARGENTINO.deck)
    assert len(names) == 40 and not any(n[:-1] in ("8", "9") for n in names)
    assert {n[:-1] for n in names} == {"1", "2", "3", "4", "5", "6", "7", "10", "11", "12"}
    assert ARGENTINO.parse_card("12c") == 4 * 9 + 3 and ARGENTINO.card_str(ARGENTINO.parse_card("7o")) == "7o"
    with pytest.raises(ValueError, match="unknown card '8e'"):
        ARGENTINO.parse_card("8e")


def test_three_cards_each_and_mano_leads_first():
    """§2: deal three cards each; the non-dealer is mano and leads first."""
    for dealer in (0, 1):
        h = deal("1e 2e 3e", "4b 5b 6b", dealer=dealer)
        assert h.actor == 1 - dealer and len(h.hand(0)) == len(h.hand(1)) == 3


def test_match_to_30_and_the_dealer_alternates():
    """§1-2: race to 30; the dealer alternates each deal (match game: player 1 deals first)."""
    g = pyspiel.load_game("truco_argentino_match")
    rng = random.Random(4)
    for _ in range(5):
        dealers = []

        def note(st, chance, dealers=dealers):
            if chance and not st.deal:
                dealers.append(st.dealer)

        st = play_randomly(g.new_initial_state(), rng, note)
        assert all(a != b for a, b in zip(dealers, dealers[1:], strict=False)) and dealers[0] == 1
        assert max(E.score(st.s, 0), E.score(st.s, 1)) == 30 and sorted(map(abs, st.returns())) == [1.0, 1.0]


def test_malas_and_buenas_are_shown():
    """§1: the first 15 points are malas, the next 15 buenas."""
    from truco_lab.rules.spanish import score_str

    assert score_str(0) == "0 malas" and score_str(15) == "15 malas"
    assert score_str(16) == "1 buena" and score_str(17) == "2 buenas" and score_str(30) == "15 buenas"
    st = pyspiel.load_game("truco_argentino", {"score0": 17, "score1": 3}).new_initial_state()
    assert "2 buenas - 3 malas" in str(st)


# ---- §3 trick order ----------------------------------------------------------
@pytest.mark.parametrize("hi,lo", [("1e", "1b"), ("1b", "7e"), ("7e", "7o"), ("7o", "3c"), ("3e", "2b"),
                                   ("2o", "1c"), ("1o", "12e"), ("12b", "11c"), ("11o", "10e"), ("10c", "7c"),
                                   ("7b", "6e"), ("6o", "5b"), ("5c", "4e")])
def test_trick_order_high_to_low(hi, lo):
    """§3: Swords 1, Batons 1, Swords 7, Coins 7, 3s, 2s, Cups 1 and Coins 1, 12s, 11s, 10s, Cups 7 and
    Batons 7, 6s, 5s, 4s; following suit is unnecessary."""
    assert trick(hi, lo) == 0 and trick(lo, hi) == 1


@pytest.mark.parametrize("a,b", [("3e", "3c"), ("1c", "1o"), ("7c", "7b"), ("12e", "12o"), ("4b", "4c")])
def test_equal_ranks_tie_across_suits_except_the_top_four(a, b):
    assert trick(a, b) == E.TIE


# ---- §4 tricks and ties --------------------------------------------------------
def test_the_higher_card_wins_the_trick_and_leads_next():
    h = play(deal("4e 5e 6e", "1e 5b 6b"), "play 4e", "play 1e")
    assert int(E.round_winner(h.s, 0)) == 1 and h.actor == 1


def test_a_parda_and_the_previous_leader_leads_again():
    h = play(deal("3e 5e 6e", "3b 4b 4o"), "play 3e", "play 3b")
    assert int(E.round_winner(h.s, 0)) == E.TIE and h.actor == 0


def test_two_wins_take_the_deal():
    h = play(deal("1e 1b 4e", "3e 3b 3o"), "play 1e", "play 3e", "play 1b", "play 3b")
    assert h.is_over and h.winner == 0 and h.score == (1, 0)


def test_a_tied_first_trick_then_a_decisive_one_ends_the_deal():
    """§4: one tie and one decisive trick in the first two ends the deal immediately (either order)."""
    h = play(deal("3e 5e 6e", "3b 1e 4o"), "play 3e", "play 3b", "play 5e", "play 1e")
    assert h.is_over and h.winner == 1 and E.nrounds(h.s) == 2
    h = play(deal("1e 5e 6e", "3b 5b 4o"), "play 1e", "play 3b", "play 5e", "play 5b")
    assert h.is_over and h.winner == 0 and E.nrounds(h.s) == 2


def test_after_one_trick_each_a_tie_goes_to_the_earlier_decisive_trick():
    """§4: when a trick ties, the earlier decisive trick takes priority."""
    h = play(deal("1e 4e 6e", "3b 1b 6b"), "play 1e", "play 3b", "play 4e", "play 1b", "play 6b", "play 6e")
    assert h.is_over and h.winner == 0


def test_three_tied_tricks_give_the_deal_to_mano():
    for dealer, mano in ((1, 0), (0, 1)):
        h = deal("3e 2e 12e", "3b 2b 12b", dealer=dealer)
        lead = mano
        for a, b in (("3e", "3b"), ("2e", "2b"), ("12e", "12b")):
            mine, theirs = (a, b) if lead == 0 else (b, a)
            play(h, f"play {mine}", f"play {theirs}")
        assert h.is_over and h.winner == mano


# ---- §5 envido betting and points ---------------------------------------------
@pytest.mark.parametrize("cards,points", [("7e 6e 1b", 33), ("10c 11c 4e", 20), ("12o 7o 5b", 27),
                                          ("7e 5b 12o", 7), ("10e 11b 12o", 0), ("7e 6e 5e", 33),
                                          ("1c 12c 3c", 24), ("4b 4e 4o", 4)])
def test_envido_points(cards, points):
    """§5: two same-suit cards score their sum plus 20, 10-12 worth zero; without a pair the highest single
    value; three same-suit cards use the best two."""
    assert envido_points(cards) == points
    h = deal(cards, " ".join(c for c in ("2e", "2b", "2o", "2c", "3e", "3b") if c not in cards.split())[:8])
    assert h.envido(0) == points


def test_envido_sung_in_the_first_trick_before_your_first_card():
    h = deal("7e 6e 1b", "1e 3c 12o")
    assert {"envido", "real_envido", "falta_envido"} <= set(h.legal_action_strings())
    play(h, "play 1b")  # mano has played: only the pie may still sing, before its own card
    assert "envido" in h.legal_action_strings() and h.actor == 1
    play(h, "play 3c")
    assert h.check("envido") == "ENVIDO_NOT_ALLOWED"  # second trick: too late
    h = play(deal("7e 6e 1b", "1e 3c 12o"), "play 1b")
    play(h, "play 1e")
    assert h.actor == 1 and "envido" not in h.legal_action_strings()


def test_falta_envido_is_the_points_the_leader_still_needs():
    """Issue 9: falta envido at 25-12 is worth 5."""
    h = play(deal("7e 6e 1b", "1e 3c 12o", score=(25, 12)), "falta_envido", "quiero")
    assert h.gains == (5, 0) and h.is_over and h.score == (30, 12)  # 30: the match is over
    h = play(deal("7e 6e 1b", "1e 3c 12o", score=(12, 25)), "falta_envido", "quiero")
    assert h.gains == (5, 0) and not h.is_over and h.score == (12, 25)


# ---- §6 answering envido -------------------------------------------------------
def test_quiero_compares_the_dealt_hands_and_mano_wins_a_tie():
    h = play(deal("7e 6e 1b", "1e 3c 12o"), "play 1b", "envido", "quiero")  # the pie sings after mano's card
    assert h.gains == (2, 0) and int(E.envido_winner(h.s)) == 0  # 33 (from the dealt hand) beats 3
    h = play(deal("7e 5b 12o", "7b 4c 11e", dealer=1), "envido", "quiero")  # 7 - 7: mano (player 0)
    assert h.gains == (2, 0)
    h = play(deal("7e 5b 12o", "7b 4c 11e", dealer=0), "envido", "quiero")  # dealer 0: player 1 is mano
    assert h.gains == (0, 2)


@pytest.mark.parametrize("calls,stake", [(["envido"], 2), (["envido", "envido"], 4), (["real_envido"], 3),
                                         (["envido", "real_envido"], 5), (["envido", "envido", "real_envido"], 7),
                                         (["envido", "falta_envido"], 30), (["real_envido", "falta_envido"], 30)])
def test_raising_envido_adds_2_or_3_and_falta_replaces_the_stake(calls, stake):
    h = play(deal("7e 6e 1b", "1e 3c 12o"), *calls, "quiero")
    assert h.gains[0] == stake


@pytest.mark.parametrize("calls,paid", [(["envido"], 1), (["real_envido"], 1), (["falta_envido"], 1),
                                        (["envido", "envido"], 2), (["envido", "real_envido"], 2),
                                        (["envido", "envido", "real_envido"], 4),
                                        (["envido", "real_envido", "falta_envido"], 5)])
def test_no_quiero_pays_1_for_an_opening_bid_else_the_previously_accepted_amount(calls, paid):
    h = play(deal("7e 6e 1b", "1e 3c 12o"), *calls, "no_quiero")
    caller = (len(calls) - 1) % 2  # mano opens, the answers alternate
    assert h.gains[caller] == paid and h.gains[1 - caller] == 0


def test_envido_cannot_follow_real_envido_and_falta_cannot_be_raised():
    h = play(deal("7e 6e 1b", "1e 3c 12o"), "real_envido")
    assert set(h.legal_action_strings()) == {"quiero", "no_quiero", "falta_envido"}
    assert h.check("envido") == "ENVIDO_NOT_ALLOWED"
    play(h, "falta_envido")
    assert set(h.legal_action_strings()) == {"quiero", "no_quiero"}


def test_accepting_or_declining_closes_envido():
    for answer in ("quiero", "no_quiero"):
        h = play(deal("7e 6e 1b", "1e 3c 12o"), "envido", answer)
        assert h.actor == 0 and h.check("envido") == "ENVIDO_NOT_ALLOWED"
        play(h, "play 1b")
        assert h.check("envido") == "ENVIDO_NOT_ALLOWED"


def test_envido_points_are_compared_in_the_open_once_accepted():
    g = pyspiel.load_game("truco_argentino")
    st = g.new_initial_state()
    for hand in ("7e 6e 1b", "1e 3c 12o"):  # each player's cards are dealt in increasing id
        for c in sorted(ARGENTINO.parse_cards(hand)):
            st.apply_action(c)
    st.apply_action(ARGENTINO.parse_action("envido"))
    assert "envidos" not in st.information_state_string(1)
    st.apply_action(ARGENTINO.parse_action("quiero"))
    for p in (0, 1):
        assert "envidos:p0=33 p1=3" in st.information_state_string(p)
        assert "envidos:p0=33 p1=3" in st.observation_string(p)


# ---- §7 truco betting and folding ---------------------------------------------
def test_a_deal_pays_1_and_truco_retruco_vale_cuatro_go_2_3_4():
    h = deal("1e 1b 7e", "4e 4b 5o")
    assert h.hand_value == 1 and "truco" in h.legal_action_strings()
    play(h, "truco", "quiero")
    assert h.hand_value == 2 and "retruco" not in h.legal_action_strings()  # mano called: its right is spent
    play(h, "play 1e")
    assert "retruco" in h.legal_action_strings()  # the accepter may raise later
    play(h, "retruco", "quiero", "play 4e")
    assert h.hand_value == 3 and "vale_cuatro" in h.legal_action_strings()
    play(h, "vale_cuatro", "quiero", "play 1b", "play 4b")
    assert h.is_over and h.score == (4, 0)


def test_a_truco_is_answered_by_quiero_or_no_quiero_only():
    """§7: explicit acceptance grants the next raise, so there is no raising in place of an answer."""
    h = play(deal("1e 1b 7e", "4e 4b 5o"), "play 1e", "truco")
    assert set(h.legal_action_strings()) == {"quiero", "no_quiero"}  # mano has played: no envido either
    assert h.check("retruco") == "RAISE_NOT_ALLOWED" and h.check("go_to_deck") == "RAISE_PENDING"
    assert PAULISTA.reraise and not ARGENTINO.reraise


def test_declining_awards_the_caller_the_previously_accepted_stake():
    h = play(deal("1e 1b 7e", "4e 4b 5o"), "truco", "no_quiero")
    assert h.is_over and h.gains == (1, 0)
    h = play(deal("1e 1b 7e", "4e 4b 5o"), "truco", "quiero", "play 1e", "retruco", "no_quiero")
    assert h.gains == (0, 2)


def test_going_to_the_deck_awards_the_opponent_the_current_stake():
    h = play(deal("1e 1b 7e", "4e 4b 5o"), "play 1e", "envido", "no_quiero", "go_to_deck")
    assert h.gains == (1, 1) and h.winner == 0  # envido's 1 to player 1, the deal's 1 to player 0
    h = play(deal("1e 1b 7e", "4e 4b 5o"), "truco", "quiero", "play 1e", "play 4e", "play 1b", "go_to_deck")
    assert h.gains == (2, 0)


# ---- §8 scoring and ending ------------------------------------------------------
def test_envido_first_over_a_pending_truco_which_resumes_after():
    h = play(deal("7e 6e 1b", "1e 3c 12o"), "truco", "envido")
    assert h.actor == 0 and set(h.legal_action_strings()) >= {"quiero", "no_quiero", "real_envido"}
    play(h, "quiero")  # the envido: 33 against 3
    assert h.gains == (2, 0) and h.actor == 1 and set(h.legal_action_strings()) == {"quiero", "no_quiero"}
    play(h, "quiero")
    assert h.hand_value == 2


def test_accepting_truco_closes_envido():
    h = play(deal("7e 6e 1b", "1e 3c 12o"), "truco", "quiero")
    assert h.check("envido") == "ENVIDO_NOT_ALLOWED" and "envido" not in h.legal_action_strings()


def test_envido_is_scored_first_and_reaching_30_ends_the_match_without_the_truco():
    # at 28-28 player 0 wins an envido of 2 while a truco is pending: the match ends, the truco is never played
    h = play(deal("7e 6e 4b", "1e 1b 3c", score=(28, 28)), "truco", "envido", "quiero")
    assert h.is_over and h.score == (30, 28) and h.gains == (2, 0) and h.legal_actions() == []
    # below 30 both are scored: envido to player 0, the deal to player 1
    h = play(deal("7e 6e 4b", "1e 1b 3c", score=(10, 10)), "truco", "envido", "quiero", "quiero",
             "play 4b", "play 1e", "play 1b", "play 7e")
    assert h.is_over and h.score == (12, 12) and h.winner == 1


# ---- seed 003 options -------------------------------------------------------------
def test_flor_scores_3_as_soon_as_dealt_and_then_there_is_no_envido():
    h = deal("1e 7e 12e", "1b 3c 12o", rules=FLOR)
    assert h.legal_action_strings() == ["flor"] and h.actor == 0
    play(h, "flor")
    assert h.gains == (3, 0) and "envido" not in h.legal_action_strings()
    assert h.check("envido") == "ENVIDO_NOT_ALLOWED"
    h = deal("1e 7e 12e", "1b 3b 12b", rules=FLOR, dealer=1)  # both: mano announces first
    play(h, "flor")
    assert h.actor == 1 and h.legal_action_strings() == ["flor"]
    play(h, "flor")
    assert h.gains == (3, 3)
    h = deal("1e 7e 12e", "1b 3c 12o")  # without the option three of a suit are an envido of 28
    assert h.envido(0) == 28 and "envido" in h.legal_action_strings()


def test_going_to_the_deck_before_the_envido_costs_one_more():
    h = play(deal("1e 1b 7e", "4e 4b 5o", rules=DECK1), "go_to_deck")
    assert h.gains == (0, 2)
    h = play(deal("1e 1b 7e", "4e 4b 5o", rules=DECK1), "play 1e", "go_to_deck")  # the pie could still sing
    assert h.gains == (2, 0)
    h = play(deal("1e 1b 7e", "4e 4b 5o", rules=DECK1), "envido", "no_quiero", "go_to_deck")
    assert h.gains == (1, 1)  # the envido was sung: the usual 1
    h = play(deal("1e 1b 7e", "4e 4b 5o", rules=ARGENTINO), "go_to_deck")
    assert h.gains == (0, 1)  # seed 004 alone: the current stake


# ---- notation, errors ----------------------------------------------------------------
def test_actions_print_in_argentine_terms_and_parse_back():
    names = ["play 1e", "truco", "retruco", "vale_cuatro", "quiero", "no_quiero", "envido", "real_envido",
             "falta_envido", "flor", "go_to_deck"]
    for n in names:
        assert ARGENTINO.action_str(ARGENTINO.parse_action(n)) == n
    with pytest.raises(ValueError, match="malformed action 'raise 6'"):
        ARGENTINO.parse_action("raise 6")
    with pytest.raises(ValueError, match="not an action of rule set 'argentino'"):
        ARGENTINO.action_str(40)  # a face-down play


def test_bad_input_gets_one_line_errors_with_stable_codes():
    h = deal("1e 1b 7e", "4e 4b 5o")
    with pytest.raises(TrucoError) as e:
        h.apply("play 4e")
    assert e.value.code == "CARD_NOT_IN_HAND"
    play(h, "envido")
    assert h.check("play 1e") == "ENVIDO_PENDING" and h.check("truco") == "ENVIDO_PENDING"
    with pytest.raises(ValueError, match="ranks must be Spanish ranks"):
        ARGENTINO.with_deck(ranks="1,8")


def test_paulista_keeps_its_action_space_and_rejects_envido():
    assert pyspiel.load_game("truco_paulista").num_distinct_actions() == 89
    assert pyspiel.load_game("truco_argentino").num_distinct_actions() == 93
    h = HandState.new(hands=("3d Qs 5c", "4s 7h Ac"), vira="4c")
    from truco_lab.rules.cards import A_ENVIDO

    assert h.check(A_ENVIDO) == "ENVIDO_NOT_ALLOWED"


# ---- OpenSpiel checks, playouts ----------------------------------------------------------
@pytest.mark.parametrize("name,params", [
    ("truco_argentino", {}), ("truco_argentino", {"flor": True, "deck_penalty": True, "score0": 25, "score1": 12}),
    ("truco_argentino_match", {"target": 6}), ("truco_argentino_match", {"flor": True, "ranks": "1 7 12 3",
                                                                        "suits": "eb"}),
])
@pytest.mark.slow
def test_argentine_games_pass_openspiel_checks(name, params):
    g = pyspiel.load_game(name, params)
    pyspiel.random_sim_test(g, num_sims=20, serialize=True, verbose=False)
    assert pyspiel.load_game(str(g)).get_parameters() == g.get_parameters()


def test_random_playouts_are_zero_sum_scores_only_grow_and_the_match_ends_on_its_target():
    for flor in (False, True):
        g = pyspiel.load_game("truco_argentino_match", {"flor": flor, "target": 15})
        rng = random.Random(7 + flor)
        for _ in range(40):
            seen = [(0, 0)]

            def grows(st, chance, seen=seen):
                sc = (int(E.score(st.s, 0)), int(E.score(st.s, 1)))
                assert sc[0] >= seen[-1][0] and sc[1] >= seen[-1][1]
                seen.append(sc)

            st = play_randomly(g.new_initial_state(), rng, grows)
            assert max(E.score(st.s, 0), E.score(st.s, 1)) == 15 and sum(st.returns()) == 0


def test_hand_returns_are_the_difference_of_points_scored():
    g = pyspiel.load_game("truco_argentino")
    rng = random.Random(3)
    for _ in range(200):
        st = play_randomly(g.new_initial_state(), rng)
        r = st.returns()
        assert r[0] == -r[1] == E.gain(st.s, 0) - E.gain(st.s, 1)


def test_engine_random_hands_terminate():
    r = ARGENTINO.to_array()
    out = np.zeros((2000, 5), np.int32)
    simulate.random_hands(r, ARGENTINO.deck, 2000, 11, 1, 0, 0, False, out)
    assert (out[:, 0] >= 0).all() and out[:, 3].max() <= 23


# ---- solving -------------------------------------------------------------------------------
SMALL = {"ranks": "1 7 12", "suits": "eb", "max_stake": 1, "target": 3}


@pytest.mark.slow
@pytest.mark.parametrize("options", [{"flor": True}, {"deck_penalty": True, "score0": 2}])
def test_small_argentine_hands_solved_and_certified_by_openspiel(options):
    """Envido (or flor) and going to the deck on a six-card pack: our exact best response and OpenSpiel's
    exploitability of the exported policy agree, and the solve converges."""
    from open_spiel.python.algorithms import exploitability

    from solvers.api import solve

    g = pyspiel.load_game("truco_argentino", {**SMALL, **options})
    res = solve(g, iterations=150, tree="openspiel")
    assert res.exploitability < 1e-3
    assert exploitability.exploitability(g, res.to_openspiel_policy()) == pytest.approx(res.exploitability, abs=1e-9)


@pytest.mark.slow
def test_cli_solves_argentino(tmp_path, capsys):
    from solvers.storage import read_json
    from truco_lab.cli import main

    out = tmp_path / "arg"
    argv = ["solve", "--rules", "argentino", "--ranks", "1 7 12", "--suits", "eb", "--max-stake", "1",
            "--score", "0,0", "--dealer", "1", "--iterations", "20", "--out", str(out), "-q"]
    assert main(argv) == 0
    s = read_json(out / "summary.json")
    assert s["units"] == "points" and s["iterations"] == 20 and s["exploitability"] < 0.05 and s["target_met"]
    assert (out / "strategy.parquet").exists() and "game value" in capsys.readouterr().out
    assert main(argv[:-3] + ["--out", str(out), "--resume", "-q"]) == 0  # a finished run is reported again
    assert main(["solve", "--rules", "argentino", "--score", "0,0", "--dealer", "1", "--iterations", "3",
                 "--tree", "openspiel", "--out", str(tmp_path / "big")]) == 2
    assert "too many to walk" in capsys.readouterr().err and not (tmp_path / "big").exists()
    assert main(["match", "--rules", "argentino", "--out", str(tmp_path / "m")]) == 2
    assert "works with `truco-lab solve`" in capsys.readouterr().err


@pytest.mark.slow
def test_envido_notebook_runs_on_a_cli_solve(tmp_path, monkeypatch):
    """Notebook 07 (when to sing and accept envido) executes on a small solve written by the CLI, and draws."""
    nbformat = pytest.importorskip("nbformat")
    from pathlib import Path

    from nbclient import NotebookClient

    from truco_lab.cli import main

    out = tmp_path / "arg"
    assert main(["solve", "--rules", "argentino", "--ranks", "1 7 12", "--suits", "eb", "--max-stake", "1",
                 "--score", "0,0", "--dealer", "1", "--iterations", "40", "--out", str(out), "-q"]) == 0
    monkeypatch.setenv("TRUCO_ARGENTINO", str(out))
    root = Path(__file__).resolve().parents[1] / "notebooks"
    nb = nbformat.read(root / "07_envido.ipynb", as_version=4)
    NotebookClient(nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(root)}}).execute()
    images = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])
              if "image/png" in o.get("data", {})]
    assert len(images) == 2
    text = "".join(o.get("text", "") for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", []))
    assert "mano sings with 27+ points" in text and "-> with" in text  # conclusions computed, not written
