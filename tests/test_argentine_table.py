"""Argentine truco at the table (seed 004): the two heuristic levels, the terminal and the arena."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pyspiel
import pytest

import truco_lab.openspiel.games  # noqa: F401  (registers the games)
from tests.conftest import cli_in_process
from truco_lab.openspiel.games import random_deal
from truco_lab.people.arena import load_match_game, run_pair
from truco_lab.people.argentine import arg_view
from truco_lab.people.bots import HeuristicBot, RandomBot
from truco_lab.people.play import Table
from truco_lab.people.roster import make_bot
from truco_lab.rules import engine as E
from truco_lab.rules.ruleset import rule_set
from truco_lab.rules.spanish import envido_points

ARG = rule_set("argentino")


def _play_to_a_decision(rng, game, bots):
    """A hand played by random bots to a random depth; returns (deal, the actions after it, the state)."""
    st = game.new_initial_state()
    deal = random_deal(rng, st.deck_list, st.deal_size)
    for c in deal:
        st.apply_action(c)
    actions = []
    for _ in range(int(rng.integers(0, 7))):
        if st.is_terminal():
            break
        a = bots[st.current_player()].act(st)
        st.apply_action(a)
        actions.append(a)
    return deal, actions, st


def _replay(game, deal, actions):
    st = game.new_initial_state()
    for c in deal:
        st.apply_action(c)
    for a in actions:
        if a not in st.legal_actions():
            return None
        st.apply_action(a)
    return st


def test_both_levels_see_only_their_own_cards_and_public_information():
    """Changing the cards the opponent still hides (keeping its announced envido when one was compared)
    changes no decision of either level."""
    game = pyspiel.load_game("truco_argentino")
    rng = np.random.default_rng(7)
    rand = (RandomBot(1), RandomBot(2))
    checked = 0
    for _ in range(300):
        deal, actions, st = _play_to_a_decision(rng, game, rand)
        if st.is_terminal():
            continue
        p = st.current_player()
        q = 1 - p
        played = {int(E.play_card(st.s, x)) for x in range(int(E.nplays(st.s))) if int(E.play_owner(st.s, x)) == q}
        mine = deal[3 * p:3 * p + 3]
        hidden = [c for c in deal[3 * q:3 * q + 3] if c not in played]
        if not hidden:
            continue
        free = [c for c in st.deck_list if c not in mine and c not in deal[3 * q:3 * q + 3]]
        for _ in range(20):
            new = list(rng.choice(free, len(hidden), replace=False))
            theirs = sorted([*played, *(int(c) for c in new)])
            if E.envido_seen(st.s) and envido_points(theirs) != envido_points(deal[3 * q:3 * q + 3]):
                continue
            other = list(deal)
            other[3 * q:3 * q + 3] = theirs
            alt = _replay(game, other, actions)
            if alt is None or alt.is_terminal() or alt.current_player() != p:
                continue
            for level in ("low", "high"):
                bot = HeuristicBot(level, 0)
                assert bot.probabilities(alt) == bot.probabilities(st), (level, deal, other, actions)
            assert arg_view(alt) == arg_view(st)
            checked += 1
            break
    assert checked > 100


@pytest.mark.slow
def test_the_levels_are_ordered_in_whole_matches():
    """high beats low beats random over whole 30-point matches (seats alternate, deals paired)."""
    game = load_match_game(ARG)
    rates = {}
    for a, b in (("heuristic-high", "heuristic-low"), ("heuristic-low", "random"), ("heuristic-high", "random")):
        res, _ = run_pair(game, lambda n, s: make_bot(n, s, rules=ARG), a, b, 120, 3)
        rates[(a, b)] = res.win_rate
        assert res.interval[0] > 0.5, (a, b, res.line())
    assert rates[("heuristic-high", "random")] > rates[("heuristic-low", "random")]


def test_a_terminal_hand_with_envido_is_announced_in_seed_004s_terms():
    out: list[str] = []
    for seed in range(20):  # a deal where the envido is offered on our first turn
        out.clear()
        answers = iter(["envido!", *["1"] * 40])
        t = Table(ARG, HeuristicBot("high", seed), match=False, seed=seed,
                  read=lambda _p, it=answers: next(it), write=out.append)
        assert t.run() == 0
        text = "\n".join(out)
        if "envido: " in text:
            break
    assert "malas" in text and " de " in text  # malas/buenas, Spanish cards ("7 de oros")
    assert "envido: quiero. announced:" in text or "envido: no quiero" in text
    assert "me voy al mazo" in text and "your envido:" in text
    if "announced:" in text:
        line = next(x for x in text.splitlines() if "announced:" in x)
        assert "(mano)" in line and ("you score" in line or "the bot scores" in line)
    assert any(x.startswith("you win the hand") or x.startswith("the bot wins the hand") or "draw" in x for x in out)


@pytest.mark.parametrize("argv, words", [
    (["play", "--rules", "argentino", "--bot", "solved"], "give --solved DIR"),
    (["play", "--rules", "argentino", "--hints"], "give --solved DIR"),
    (["explain", "--rules", "argentino", "--score", "0,0", "--dealer", "1", "--hand", "1e 1b 7b"], "give --solved DIR"),
    (["arena", "--rules", "argentino", "--bots", "solved,random"], "give --solved DIR"),
    (["arena", "--rules", "argentino", "--bots", "br-random,random"], "no exact best response to a heuristic"),
])
def test_cli_refuses_what_argentino_does_not_have_yet(argv, words):
    if argv[0] == "play":  # one case as a real process; the rest in this one (conftest.cli_in_process)
        r = subprocess.run([sys.executable, "-m", "truco_lab.cli", *argv], capture_output=True, text=True,
                           timeout=120, input="q\n")
        code, err = r.returncode, r.stderr
    else:
        code, err = cli_in_process(argv)
    assert code == 2 and words in err and len(err.strip().splitlines()) == 1, err


def test_argentine_match_cells_are_seat_symmetric_and_their_value_is_what_play_through_the_game_gives():
    """Target 2 from 1x1 (every hand ends the match): the two dealers' cells, solved independently, are each
    other's mirror (q(1,1,0) = 1 - q(1,1,1)), each certified to 1e-4; and playing the solved strategy through
    the OpenSpiel hand game gives the same match-win probability (Monte Carlo, 4 standard errors)."""
    from solvers.api import run
    from solvers.cfr import CFRSolver
    from solvers.tree import build_openspiel_tree
    from truco_lab.lab.argentine_match import match_rules, solve_cell
    from truco_lab.openspiel.games import openspiel_hand
    from truco_lab.rules.ruleset import RuleSet

    rules = match_rules(RuleSet.from_options("argentino", ranks="1 7 12", suits="eb", max_stake=1), 2)
    c0 = solve_cell(rules, 1, 1, 0, {})
    c1 = solve_cell(rules, 1, 1, 1, {})
    assert c0.exploitability <= 1e-4 and c1.exploitability <= 1e-4
    assert abs(c0.equity + c1.equity - 1) < 2e-4, (c0.equity, c1.equity)
    assert 0.5 < c1.equity < 1  # mano (player 0 when player 1 deals) is favoured

    name, params = openspiel_hand(rules, 1, 1, 1)
    game = pyspiel.load_game(name, params)
    tree = build_openspiel_tree(game, max_nodes=None)

    def win(state) -> float:
        return 1.0 if int(E.score(state.s, 0)) >= 2 else 0.0

    tree_u = build_openspiel_tree(game, max_nodes=None, utility_hook=lambda st: 2 * win(st) - 1)
    solver = CFRSolver(tree_u, "dcfr")
    run(solver, 4000, 2e-4, check_every=25)
    avg = solver.average_strategy()
    index = {k: i for i, k in enumerate(tree_u.infoset_keys)}
    rng = np.random.default_rng(5)
    wins = []
    for _ in range(3000):
        st = game.new_initial_state()
        while not st.is_terminal():
            if st.is_chance_node():
                outs = st.chance_outcomes()
                st.apply_action(outs[rng.choice(len(outs), p=[p for _, p in outs])][0])
                continue
            i = index[st.information_state_string(st.current_player())]
            o, n = int(tree_u.infoset_offset[i]), int(tree_u.infoset_nact[i])
            pr = np.asarray(avg[o:o + n], float)
            st.apply_action(tree_u.infoset_actions[i][rng.choice(n, p=pr / pr.sum())])
        wins.append(win(st))
    mc, se = float(np.mean(wins)), float(np.std(wins) / np.sqrt(len(wins)))
    assert abs(mc - c1.equity) < 4 * se + 2e-4, (mc, se, c1.equity)
    assert tree.num_nodes == tree_u.num_nodes  # the payoff changed, not the game
