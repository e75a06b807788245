"""One or more tests per rule sentence of seed 003 that applies to Mineiro (rule set ``mineiro``), with
explicit deals derived from the seed text.

Players: 0 and 1; ``dealer=1`` makes player 0 mano (the player after the dealer plays first). Seed 000's
paulista is checked beside a rule where the two differ, so a switch leaking into the default would fail.
"""

from __future__ import annotations

import random

import numpy as np
import pyspiel
import pytest
from playouts import play

import truco_lab  # noqa: F401  registers the games
from truco_lab import HandState, TrucoError
from truco_lab.cli import main
from truco_lab.rules import engine as E
from truco_lab.rules.cards import A_RAISE, action_str, parse_action
from truco_lab.rules.ruleset import MINEIRO, PAULISTA, RuleSet, rule_set


def deal(p0, p1, dealer=1, score=(0, 0), rules=MINEIRO):
    return HandState.new(hands=(p0, p1), dealer=dealer, score=score, rules=rules)


def trick(c0, c1):
    """Winner of one trick: player 0 (mano) plays ``c0``, player 1 answers ``c1`` (filler cards kept weak)."""
    rest = [c for c in ("Jd", "Js", "Kd", "Kh", "Qd", "Qh") if c not in (c0, c1)]
    h = play(deal(f"{c0} {rest[0]} {rest[1]}", f"{c1} {rest[2]} {rest[3]}"), f"play_face_up {c0}",
             f"play_face_up {c1}")
    return int(E.round_winner(h.s, 0))


def test_rule_set_by_name_and_data():
    assert rule_set("Mineiro") is MINEIRO
    assert MINEIRO.ladder == (2, 4, 8, 10, 12) and MINEIRO.target == 12 and not MINEIRO.vira
    with pytest.raises(ValueError, match="either a vira or fixed manilhas"):
        RuleSet(vira=True, fixed_manilhas="4c")
    with pytest.raises(ValueError, match="ladder must start"):
        RuleSet(ladder=(0, 3))


def test_a_pack_of_forty_and_no_vira():
    """Seed 003: "a pack of forty: ace to seven and the three court cards of each suit"; Mineiro's manilhas are
    fixed, so no card is turned: the deal takes six cards and nobody sees a seventh."""
    assert len(MINEIRO.deck) == 40 and MINEIRO.deal_size == 6
    g = pyspiel.load_game("truco_paulista", {"rules": "mineiro"})
    st = g.new_initial_state()
    for _ in range(6):
        assert st.is_chance_node()
        st.apply_action(st.chance_outcomes()[0][0])
    assert not st.is_chance_node() and "vira:none" in st.information_state_string(0)
    with pytest.raises(ValueError, match="turns no vira"):
        HandState.new(hands=("4c 3d 2s", "7h As 7d"), vira="5c", rules=MINEIRO)
    assert deal("4c 3d 2s", "7h As 7d").to_json()["turnup"] is None


def test_mano_after_the_dealer_plays_first():
    """Seed 003: "The player after the dealer is mano and plays first"."""
    assert deal("4d 5d 6d", "4s 5s 6s", dealer=1).actor == 0
    assert deal("4d 5d 6d", "4s 5s 6s", dealer=0).actor == 1


def test_plain_order_and_suits_equal():
    """Seed 003: "from the top 3, 2, ace, king, jack, queen, 7, 6, 5, 4, the suits equal" (Mineiro: "the same")."""
    order = ["4s", "5s", "6s", "7s", "Qs", "Js", "Ks", "Ah", "2s", "3s"]
    for lo, hi in zip(order, order[1:], strict=False):
        assert trick(hi, lo) == 0 and trick(lo, hi) == 1
    # suits equal: two plain cards of one rank tie (7s and 7c are plain in Mineiro)
    assert trick("3d", "3c") == 2 and trick("7s", "7c") == 2 and trick("Ah", "Ac") == 2


def test_fixed_manilhas_4c_7h_As_7d_above_everything():
    """Seed 003: "Mineiro: the same, with the manilhas always the 4 of clubs, the 7 of hearts, the ace of spades
    and the 7 of diamonds" (in that order, strongest first)."""
    man = ["7d", "As", "7h", "4c"]
    for lo, hi in zip(man, man[1:], strict=False):
        assert trick(hi, lo) == 0 and trick(lo, hi) == 1
    for m in man:
        assert trick(m, "3h") == 0  # above the 3s
    assert trick("4c", "4d") == 0 and trick("4d", "4s") == 2  # only the 4 of clubs is a manilha
    # seed 000's paulista under a 3 turn-up makes every 4 a manilha, clubs strongest: a different ranking
    h = play(HandState.new(hands=("4d 5d 6d", "3h 5s 6s"), vira="3c"), "play_face_up 4d", "play_face_up 3h")
    assert int(E.round_winner(h.s, 0)) == 0


def test_two_tricks_take_the_hand_worth_2():
    """Seed 003: "The side that takes two tricks takes the hand" and "A hand is worth 1 point (2 in Mineiro)"."""
    h = play(deal("3d 2d 4d", "Qs 5s 6s"), "play_face_up 3d", "play_face_up Qs", "play_face_up 2d", "play_face_up 5s")
    assert h.is_over and h.winner == 0 and h.points == 2 and h.score == (2, 0)


def test_a_tied_first_trick_goes_to_whoever_takes_the_second():
    """Seed 003: "A tied first trick goes to whoever takes the second"."""
    h = play(deal("3d 5d 6d", "3s 2s 6s"), "play_face_up 3d", "play_face_up 3s", "play_face_up 5d",
             "play_face_up 2s")
    assert h.is_over and h.winner == 1 and h.score == (0, 2)


def test_a_tied_second_or_third_goes_to_whoever_took_the_first():
    """Seed 003: "a tied second or third goes to whoever took the first"."""
    second = play(deal("3d 5d 6d", "Qs 5s 2s"), "play_face_up 3d", "play_face_up Qs", "play_face_up 5d",
                  "play_face_up 5s")
    assert second.is_over and second.winner == 0
    third = play(deal("3d 5d 6d", "Qs 2s 6s"), "play_face_up 3d", "play_face_up Qs", "play_face_up 5d",
                 "play_face_up 2s", "play_face_up 6s", "play_face_up 6d")
    assert third.is_over and third.winner == 0


def test_all_three_tied_goes_to_mano():
    """Seed 003 is silent on three tied tricks; like seed 000 (the round-1 leader) and seed 004 (mano), the
    hand goes to mano (documented in the README's Mineiro table)."""
    h = play(deal("4d 5d 6d", "4s 5s 6s", dealer=0), "play_face_up 4s", "play_face_up 4d", "play_face_up 5s",
             "play_face_up 5d", "play_face_up 6s", "play_face_up 6d")
    assert h.is_over and h.winner == 1 and h.score == (0, 2)


def test_raises_climb_2_4_8_10_12_and_print_in_mineiro_terms():
    """Seed 003: "Mineiro 2, 4, 8, 10, 12"; the next player on the other side accepts, turns it down, or raises."""
    h = deal("4d 5d 6d", "4s 5s 6s")
    assert "raise 4" in h.legal_action_strings() and h.hand_value == 2
    play(h, "raise 4")
    assert set(h.legal_action_strings()) >= {"raise 8", "accept_raise", "fold"}
    play(h, "raise 8", "raise 10", "raise 12")
    assert not any(a.startswith("raise") for a in h.legal_action_strings())  # the ladder's top
    assert action_str(A_RAISE, MINEIRO.raise_targets) == "raise 4" and action_str(A_RAISE) == "raise 3"
    assert parse_action("raise 10", MINEIRO.raise_targets) == A_RAISE + 2
    with pytest.raises(ValueError, match="raise takes a target in 4, 8, 10, 12"):
        parse_action("raise 3", MINEIRO.raise_targets)
    with pytest.raises(ValueError, match="raise takes a target"):
        h.apply("raise 3")


def test_turned_down_the_callers_take_what_the_hand_was_worth_before():
    """Seed 003: "Turned down, the callers take what the hand was worth before"."""
    first = play(deal("4d 5d 6d", "4s 5s 6s"), "raise 4", "fold")
    assert first.is_over and first.winner == 0 and first.score == (2, 0)
    later = play(deal("4d 5d 6d", "4s 5s 6s"), "raise 4", "raise 8", "fold")
    assert later.winner == 1 and later.score == (0, 4)


def test_only_the_side_that_accepted_may_raise_next():
    """Seed 003: "Accepted, the hand is worth more, and only the side that accepted may raise it next"."""
    h = play(deal("4d 5d 6d", "4s 5s 6s"), "raise 4", "accept_raise")
    assert h.hand_value == 4
    with pytest.raises(TrucoError) as e:
        h.apply("raise 8")  # player 0 raised last
    assert e.value.code == "RAISE_NOT_ALLOWED"
    play(h, "play_face_up 4d")
    assert "raise 8" in h.legal_action_strings()  # player 1 accepted: theirs to raise


def test_going_to_the_deck_gives_the_hand_up():
    """Seed 003: "A player may also go to the deck, giving the hand up" (the opponent takes the hand's worth)."""
    h = play(deal("4d 5d 6d", "4s 5s 6s"), "concede_hand")
    assert h.is_over and h.winner == 1 and h.score == (0, 2)


def test_no_face_down_plays():
    """Seed 003 describes no face-down play, so Mineiro has none (seed 000's paulista has them from round 2)."""
    moves = ("play_face_up 3d", "play_face_up 4s")
    h = play(deal("3d 5d 6d", "4s 5s 6s"), *moves)
    assert not any(a.startswith("play_face_down") for a in h.legal_action_strings())
    with pytest.raises(TrucoError) as e:
        h.apply("play_face_down 5d")
    assert e.value.code == "HIDE_NOT_ALLOWED_IN_FIRST_ROUND"
    p = play(HandState.new(hands=("3d 5d 6d", "4s 5s 6s"), vira="Kc"), *moves)
    assert "play_face_down 5d" in p.legal_action_strings()


@pytest.mark.parametrize("answer,score", [("accept_eleven", (11, 9)), ("fold_eleven", (11, 7))])
def test_hand_of_eleven_for_4_with_no_raising_or_run_and_the_others_take_2(answer, score):
    """Seed 003: "a side one point from the game plays its hand of eleven only if it wants to, after seeing its
    cards: for 3 (4 in Mineiro), with no raising, or it runs and the others take 1 (2)"."""
    h = play(deal("4d 5d 6d", "3s 2s Ks", score=(11, 5)), answer)
    if answer == "accept_eleven":
        assert h.hand_value == 4
        while not h.is_over:
            acts = h.legal_action_strings()
            assert not any(a.startswith("raise") for a in acts)
            h.apply(next(a for a in acts if a.startswith("play_face_up")))
    assert h.is_over and h.score == score


def test_both_on_eleven_nobody_may_raise_and_the_game_is_to_12():
    """Seed 003: "With both sides on eleven nobody may raise. The game is to 12 in Brazil"."""
    h = deal("3d 2d 4d", "Qs 5s 6s", score=(11, 11))
    assert h.actor == 0 and not any(a.startswith(("raise", "accept_eleven")) for a in h.legal_action_strings())
    play(h, "play_face_up 3d", "play_face_up Qs", "play_face_up 2d", "play_face_up 5s")
    assert h.winner == 0 and h.score == (12, 11)  # the score caps at the target


def test_json_round_trip_without_a_turnup():
    h = play(deal("3d 2d 4c", "Qs 7h 6s"), "raise 4", "accept_raise", "play_face_up 3d")
    j = h.to_json()
    assert j["turnup"] is None and j["hand_value"] == 4
    back = HandState.load(j, MINEIRO)
    assert back.to_json() == j and back.legal_action_strings() == h.legal_action_strings()
    with pytest.raises(TrucoError, match="turnup must be null"):
        HandState.load({**j, "turnup": {"rank": "4", "suit": "CLUBS"}}, MINEIRO)


@pytest.mark.parametrize("name", ["truco_paulista", "truco_paulista_match"])
def test_mineiro_games_pass_openspiel_checks_and_playouts(name):
    params = {"rules": "mineiro"}
    if name == "truco_paulista":
        params |= {"score0": 10, "score1": 4, "dealer": 0}
    g = pyspiel.load_game(name, params)
    pyspiel.random_sim_test(g, num_sims=30, serialize=True, verbose=False)
    rng = random.Random(0)
    for _ in range(30):
        st = g.new_initial_state()
        last = (0, 0)
        while not st.is_terminal():
            if st.is_chance_node():
                st.apply_action(rng.choice([a for a, _ in st.chance_outcomes()]))
            else:
                for a in st.legal_actions():
                    assert not st.action_to_string(st.current_player(), a).startswith(("raise 3", "raise 6", "raise 9"))
                st.apply_action(rng.choice(st.legal_actions()))
            if name == "truco_paulista_match":
                now = tuple(st.start_score)
                assert now[0] >= last[0] and now[1] >= last[1]  # scores only grow
                last = now
        r = st.returns()
        assert r[0] == -r[1]
        if name == "truco_paulista_match":
            assert abs(r[0]) == 1.0  # the match ends on the target
        else:
            assert abs(r[0]) in (0.0, 1.0, 2.0, 4.0, 8.0)  # capped at 12 from 10 and 4


def _certify(deck: dict, iterations: int, value: bool = True):
    from open_spiel.python.algorithms import expected_game_score
    from open_spiel.python.algorithms import exploitability as os_expl

    from solvers import solve

    g = pyspiel.load_game("truco_paulista", {"rules": "mineiro", "max_stake": 4, "dealer": 0, **deck})
    r = solve(g, algorithm="dcfr", iterations=iterations, native_options={"prunes": 0})
    pol = r.to_openspiel_policy()
    assert os_expl.nash_conv(g, pol) / 2 == pytest.approx(r.exploitability, abs=1e-6)
    if value:  # the value is policy-independent of the suit split; the fast test checks it
        v = expected_game_score.policy_value(g.new_initial_state(), [pol, pol])[0]
        assert v == pytest.approx(r.game_value, abs=1e-6)
    return r


@pytest.mark.slow
def test_mineiro_native_solve_is_certified_by_openspiel():
    """A small Mineiro variant (with the 7 of hearts, a fixed manilha) solved on the native tree (no prunes):
    OpenSpiel's exploitability and value of the exported policy equal ours."""
    assert _certify({"ranks": "7A2", "suits": "hc"}, 60).exploitability < 0.01


@pytest.mark.slow
def test_certified_on_a_deck_with_equivalent_cards_and_cards_left_over():
    """Two suits and two undealt cards: a player holding two cards of one level must choose between them
    evenly, or the suit shown tells the opponent which copy they lack (the level quotient assumes it tells
    nothing). The exported policy splits them; OpenSpiel's best response finds nothing more than ours."""
    assert _certify({"ranks": "KA23", "suits": "hc"}, 150, value=False).exploitability < 0.02


def test_cli_solves_mineiro(tmp_path, capsys):
    assert main(["solve", "--rules", "mineiro", "--score", "0,0", "--dealer", "0", "--iterations", "30",
                 "--out", str(tmp_path / "m"), "-q", "--ranks", "7A23", "--suits", "hc", "--max-stake", "4"]) == 0
    out = capsys.readouterr().out
    assert "vira none" in out and "game value" in out
    assert main(["solve", "--rules", "mineiro", "--score", "0,0", "--dealer", "0", "--vira", "7c", "--iterations",
                 "1", "--out", str(tmp_path / "x"), "-q", "--ranks", "7A23", "--suits", "hc"]) == 2
    assert "turns no vira" in capsys.readouterr().err
    assert main(["solve", "--score", "0,0", "--dealer", "0", "--iterations", "1", "--out", str(tmp_path / "y"),
                 "-q", "--ranks", "7A23", "--suits", "hc"]) == 2
    assert "turns a vira" in capsys.readouterr().err


def test_full_deck_cell_that_does_not_fit_is_refused_before_building(tmp_path, capsys):
    """The full-ladder 0x0 cell needs more memory than a 24 GB machine: a one-line error, not an OOM kill."""
    from solvers.storage import available_memory_gb

    if available_memory_gb() > 60:
        pytest.skip("this machine could hold the cell")
    assert main(["solve", "--score", "0,0", "--dealer", "0", "--vira", "all", "--iterations", "1",
                 "--out", str(tmp_path / "big"), "-q", "--split-depth", "0"]) == 2
    err = capsys.readouterr().err
    assert "needs ~" in err and "--ignore-memory-check" in err and len(err.strip().splitlines()) == 1


def test_full_deck_streamed_solve_that_does_not_fit_the_disk_is_refused(tmp_path, capsys, monkeypatch):
    """Left to choose, solve streams the 0x0 cell; one vira class's parts (~31 GB) are refused before anything
    is built when the disk cannot hold them (here a disk with 10 GB free), in one line after the notice."""
    import shutil
    from collections import namedtuple

    real = shutil.disk_usage
    usage = namedtuple("usage", "total used free")
    monkeypatch.setattr(shutil, "disk_usage", lambda p: usage(real(p).total, real(p).used, 10e9))
    assert main(["solve", "--score", "0,0", "--dealer", "0", "--vira", "all", "--iterations", "1",
                 "--out", str(tmp_path / "big"), "-q"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert "streaming it from disk" in err[0] and "GB of disk for one vira class's parts" in err[-1]
    assert "10 GB free" in err[-1] and len(err) == 2
    assert not (tmp_path / "big" / "parts").exists()


def test_paulista_is_unchanged_by_the_new_fields():
    """The new rule fields serialize only when they differ from seed 000, so paulista's hashes stay."""
    from truco_lab.rules import RuleSet

    assert "vira" not in PAULISTA.to_dict() and "fixed_manilhas" not in PAULISTA.to_dict()
    assert RuleSet.from_dict(MINEIRO.to_dict()) == MINEIRO
    assert np.array_equal(PAULISTA.to_array()[:26], RuleSet().to_array()[:26])


@pytest.mark.slow
def test_mineiro_match_solved_certified_and_played(tmp_path, capsys):
    """The match solver takes Mineiro: every cell of a small variant solved by backward induction; the
    composed strategy's self-play through ``truco_paulista_match`` agrees with the starting equity within 3
    standard errors, and the solved bot beats the random one."""
    import json
    import math

    from truco_lab.lab.policy import MatchStrategy

    out = tmp_path / "mineiro"
    small = ["--ranks", "7QJKA23", "--suits", "c", "--max-stake", "4"]
    assert main(["match", "--rules", "mineiro", "--out", str(out), "--target-exploitability", "1e-3", "-q",
                 *small]) == 0
    summary = json.loads((out / "summary.json").read_text())
    assert summary["max_cell_exploitability"] <= 1e-3 and 0 <= summary["match_exploitability"] < 0.02
    cells = {(c["score0"], c["score1"], c["dealer"]): c for c in summary["cells"]}
    start = cells[(0, 0, 1)]["equity"]
    strat = MatchStrategy(out)
    game = pyspiel.load_game("truco_paulista_match", {"rules": "mineiro", "ranks": "7QJKA23", "suits": "c",
                                                      "max_stake": 4})
    rng = random.Random(5)
    wins = []
    for _ in range(1500):
        st = game.new_initial_state()
        while not st.is_terminal():
            if st.is_chance_node():
                outs = st.chance_outcomes()
                st.apply_action(rng.choices([a for a, _ in outs], [p for _, p in outs])[0])
            else:
                probs = strat.action_probabilities(st)
                st.apply_action(rng.choices(list(probs), list(probs.values()))[0])
        wins.append(st.returns()[0] > 0)
    w = np.array(wins, float)
    se = math.sqrt(w.var() / len(w))
    assert abs(w.mean() - start) < 3 * se, (w.mean(), start, se)
    capsys.readouterr()
    assert main(["arena", "--rules", "mineiro", "--bots", "solved,random", "--matches", "40", "--solved", str(out),
                 "--out", str(tmp_path / "a"), "-q", *small]) == 0
    assert "solved vs random: solved wins" in capsys.readouterr().out
    # a raise by the opponent the solution makes (which one is the equilibrium's business, not this test's)
    from truco_lab.people.advice import explain

    rules = MINEIRO.with_deck("7QJKA23", "c").with_max_stake(4)
    raises = ["raise 4"] + [f"play_face_up {c}c, play_face_up {m}c, raise 4" for m in "73K" for c in "QJA2"]
    raised = next(h for h in raises if _reached(explain, (3, 5), 0, None, "3c Kc 7c", h, strat, rules))
    assert main(["explain", "--rules", "mineiro", "--score", "3,5", "--dealer", "0", "--hand", "3c Kc 7c",
                 "--history", raised, "--solved", str(out), *small]) == 0
    text = capsys.readouterr().out
    assert "vira none" in text and "accept_raise" in text and "raise 3" not in text


def test_plan_prices_mineiro_from_its_own_tree_sizes():
    """One class and smaller trees than paulista's: `--plan` scales the measured tiers (7x7 measured)."""
    from truco_lab.lab.match import plan

    m = plan(MINEIRO, [(0, 0, 1), (11, 11, 1)], table=False)  # the solve's own peak (the table's scales by entries)
    p = plan(PAULISTA, [(0, 0, 1), (11, 11, 1)], table=False)
    assert [r.classes for r in m] == [1, 1] and [r.classes for r in p] == [9, 9]
    assert m[0].ladder == (2, 4, 8, 10, 12) and m[1].ladder == (4,)
    assert m[0].peak_gb == pytest.approx(p[0].peak_gb * 5.49 / 7.1)


def _reached(explain, score, dealer, vira, hand, history, strat, rules) -> bool:
    """Whether the solution reaches ``history`` (False for a history these cards cannot have)."""
    from truco_lab.people.advice import ExplainError

    try:
        return explain(score, dealer, vira, hand, history, solved=strat, rules=rules).reached
    except ExplainError:
        return False
