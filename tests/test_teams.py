"""Two against two (seed 003) at the table: four-seat bots, the MCCFR bot, the team arena, the terminal table
and explain for team games."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pyspiel
import pytest

import truco_lab.openspiel.games  # noqa: F401  (registers the games)
from solvers.mccfr import MCCFRSolver
from truco_lab.openspiel.games import random_deal
from truco_lab.openspiel.sampled import state_key
from truco_lab.people.arena import load_match_game, run_pair
from truco_lab.people.bots import BotBase, HeuristicBot, RandomBot, view_of
from truco_lab.people.mccfr_bot import MCCFRBot, load_runs, strategic_legal, team_hand_state
from truco_lab.people.roster import make_bot
from truco_lab.people.team_table import TeamTable
from truco_lab.rules import engine as E
from truco_lab.rules.cards import A_DOWN, card_str
from truco_lab.rules.ruleset import RuleSet, rule_set, sees_partner

SMALL = ["--rules", "mineiro_2v2", "--ranks", "KA23", "--max-stake", "4"]
SMALL_RULES = RuleSet.from_options("mineiro_2v2", ranks="KA23", max_stake=4)
PAULISTA_2V2 = rule_set("paulista_2v2")


def cli(*argv, input_text=None, timeout=300):
    return subprocess.run([sys.executable, "-m", "truco_lab.cli", *argv], capture_output=True, text=True,
                          timeout=timeout, input=input_text)


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Small MCCFR runs of the K-A-2-3 Mineiro 2v2 hand, one per dealer (a match rotates the deal)."""
    from truco_lab.cli import main

    root = tmp_path_factory.mktemp("mccfr2v2")
    for d in range(4):  # in this process: MCCFR's kernels compile once (they are not cached on disk)
        assert main(["mccfr", *SMALL, "--score", "0,0", "--dealer", str(d), "--iterations", "2000", "--capacity",
                     "1048576", "--out", str(root / f"d{d}"), "-q"]) == 0
    return root


def _random_decision(rng, game, depth):
    st = game.new_initial_state()
    deal = random_deal(rng, st.deck_list, st.deal_size)
    for c in deal:
        st.apply_action(c)
    acts = []
    for _ in range(depth):
        if st.is_terminal():
            break
        la = strategic_legal(st)
        a = la[int(rng.integers(len(la)))]
        st.apply_action(a)
        acts.append(a)
    return deal, acts, st


def _replay(game, deal, acts):
    st = game.new_initial_state()
    for c in deal:
        st.apply_action(c)
    for a in acts:
        if a not in st.legal_actions():
            return None
        st.apply_action(a)
    return st


@pytest.mark.parametrize("score", [(0, 0), (11, 4), (4, 11)])
def test_four_seat_heuristics_see_only_their_cards_the_table_and_a_partner_on_eleven(score):
    """Re-dealing every card the actor may not see (the others' unplayed cards; the partner's only when the
    side is not on eleven) changes no decision of either level; re-dealing the partner's cards on eleven may."""
    game = pyspiel.load_game("truco_paulista_2v2", {"score0": score[0], "score1": score[1], "dealer": 3})
    rng = np.random.default_rng(11)
    checked = 0
    for _ in range(200):
        deal, acts, st = _random_decision(rng, game, int(rng.integers(0, 10)))
        if st.is_terminal():
            continue
        p = st.current_player()
        see_mate = sees_partner(PAULISTA_2V2, score, p)
        keep = set(deal[3 * p:3 * p + 3]) | {deal[12]}
        if see_mate:
            keep |= set(deal[3 * ((p + 2) % 4):3 * ((p + 2) % 4) + 3])
        played = {int(E.play_card(st.s, x)) for x in range(int(E.nplays(st.s)))}
        fixed = keep | played
        movable = [i for i in range(12) if deal[i] not in fixed]
        if not movable:
            continue
        free = [c for c in st.deck_list if c not in fixed]
        other = list(deal)
        for i, c in zip(movable, rng.choice(free, len(movable), replace=False), strict=True):
            other[i] = int(c)
        for q in range(4):  # each seat's cards are dealt in increasing order
            other[3 * q:3 * q + 3] = sorted(other[3 * q:3 * q + 3])
        alt = _replay(game, other, acts)
        if alt is None or alt.is_terminal() or alt.current_player() != p:
            continue
        v0 = view_of(st.s, st.deck_list, st.legal_actions(), st.rules)
        v1 = view_of(alt.s, alt.deck_list, alt.legal_actions(), alt.rules)
        assert v0 == v1
        for level in ("low", "high"):
            assert HeuristicBot(level).probabilities(alt) == HeuristicBot(level).probabilities(st)
        assert state_key(alt, p) == state_key(st, p)  # the MCCFR bot's key too
        checked += 1
    assert checked > 60


def test_a_view_never_takes_our_own_card_for_the_one_to_beat():
    """Answering a raise after playing in the round: the card on the table is ours (``on_table``), and the one to
    beat is an opponent's or none (the bug the four-seat view fixed heads-up too)."""
    game = pyspiel.load_game("truco_paulista_match")
    rng = np.random.default_rng(3)
    seen = 0
    for _ in range(400):
        deal, acts, st = _random_decision(rng, pyspiel.load_game("truco_paulista"), int(rng.integers(1, 8)))
        if st.is_terminal():
            continue
        v = view_of(st.s, st.deck_list, st.legal_actions(), st.rules)
        ns = int(E.seats(st.s))
        first = ns * int(E.nrounds(st.s))
        own_now = [-2 if E.play_down(st.s, x) else int(E.play_card(st.s, x))
                   for x in range(first, int(E.nplays(st.s))) if int(E.play_owner(st.s, x)) == v.player]
        if own_now:
            seen += 1
            assert v.on_table == own_now[0] and v.led == -1
        assert v.led not in v.dealt
    assert seen > 5 and game is not None


class FirstLegal(BotBase):
    """Deterministic: always the first legal action."""

    name = "first"

    def probabilities(self, state):
        return {strategic_legal(state)[0]: 1.0}


def test_team_arena_deals_each_pair_of_matches_alike_with_the_sides_swapped():
    """The same deterministic bot on both sides: every duplicate pair has one win each, so a wins exactly half."""
    game = load_match_game(SMALL_RULES)
    res, rows = run_pair(game, lambda n, s: FirstLegal(s), "x", "y", 20, 5)
    assert [r["seat_a"] for r in rows] == [0, 1] * 10
    for k in range(10):
        a, b = rows[2 * k], rows[2 * k + 1]
        assert a["winner_is_a"] != b["winner_is_a"] and a["hands"] == b["hands"]
        assert (a["points_a"], a["points_b"]) == (b["points_b"], b["points_a"])
    assert res.wins_a == 10


@pytest.mark.slow
def test_the_mccfr_bot_plays_its_runs_average_and_counts_its_fallback(runs):
    loaded = load_runs([runs])
    assert sorted(r.dealer for r in loaded) == [0, 1, 2, 3] and all(r.iterations == 2000 for r in loaded)
    notes = []
    bot = MCCFRBot(loaded[:1], seed=0, notify=notes.append)  # a run for one dealer only
    d = loaded[0].dealer
    game = pyspiel.load_game("truco_mineiro_2v2", {"ranks": "KA23", "max_stake": 4, "dealer": d})
    rng = np.random.default_rng(0)
    found = 0
    for _ in range(50):
        _, _, st = _random_decision(rng, game, int(rng.integers(0, 4)))
        if st.is_terminal():
            continue
        p = st.current_player()
        want, visits = loaded[0].solver.lookup(state_key(st, p), len(strategic_legal(st)))
        got = bot.probabilities(st)
        if visits:
            found += 1
            assert list(got) == strategic_legal(st) and np.allclose(list(got.values()), want)
        else:
            assert got == HeuristicBot("high").probabilities(st)
    assert found > 20
    other = pyspiel.load_game("truco_mineiro_2v2", {"ranks": "KA23", "max_stake": 4, "dealer": (d + 1) % 4})
    _, _, st = _random_decision(rng, other, 0)
    bot.probabilities(st)
    bot.probabilities(st)
    assert bot.fallback_decisions >= 2 and len(notes) == 1 and f"dealer {(d + 1) % 4}" in notes[0]


@pytest.mark.slow  # ~12 s on a cold numba cache, nearly all the compile of Kuhn's MCCFR kernels (0.1 s once cached)
def test_mccfr_visits_survive_a_checkpoint_and_old_checkpoints_load(tmp_path):
    from test_mccfr import KUHN  # (a game test_mccfr compiles anyway: MCCFR's kernels compile once per game)

    game = KUHN
    s = MCCFRSolver(game, capacity=1 << 16, seed=1)
    s.iterate(200)
    s.save(tmp_path / "a.npz", "k")
    t = MCCFRSolver(game, capacity=1 << 16, seed=1)
    t.load(tmp_path / "a.npz", "k")
    assert np.array_equal(s.cnt, t.cnt) and int(s.cnt[4:4 + s.num_infosets].min()) >= 1
    assert int(s.cnt[4:4 + s.num_infosets].sum()) > s.num_infosets  # sets near the root are visited often
    with np.load(tmp_path / "a.npz") as z:  # a checkpoint written before visits were counted
        arrays = {k: z[k] for k in z.files}
    arrays["cnt"] = arrays["cnt"][:4]
    with open(tmp_path / "old.npz", "wb") as f:
        np.savez(f, **arrays)
    u = MCCFRSolver(game, capacity=1 << 16, seed=1)
    u.load(tmp_path / "old.npz", "k")
    assert u.num_infosets == s.num_infosets and int(u.cnt[4:].sum()) == 0
    key = next(iter(k for k in s.keys if k))
    probs, visits = u.lookup(int(key), int(u.inact[u.index[np.flatnonzero(u.keys == key)[0]]]))
    assert visits == 0 and abs(probs.sum() - 1) < 1e-12


def test_the_team_table_shows_the_partners_played_cards_and_nothing_else_of_theirs():
    for seed in range(6):
        out: list[str] = []
        answers = iter(["1"] * 300)
        t = TeamTable(PAULISTA_2V2, HeuristicBot("high", 1), (HeuristicBot("low", 2), RandomBot(3)), match=False,
                      seed=seed, dealer=3, read=lambda _p, it=answers: next(it), write=out.append)
        assert t.run() == 0
        text = "\n".join(out)
        assert "two against two: you (seat 0) and your partner (seat 2" in text
        # every card named at the table is ours, the vira, or one played face up (the partner's too)
        st = t.state
        up = {int(E.play_card(st.s, x)) for x in range(int(E.nplays(st.s))) if not E.play_down(st.s, x)}
        hidden = set(st.deal[3:12]) - up
        named = set(text.replace(",", " ").split())
        for c in hidden:
            assert t.w.card(int(c)) not in named, (seed, t.w.card(int(c)))
        assert any(line.startswith(("partner: play", "partner: ")) for line in out)
        assert text.strip().splitlines()[-1].startswith(("your side wins", "the other side wins", "the hand is"))


def test_the_team_table_shows_a_partner_on_eleven_his_cards():
    out: list[str] = []
    answers = iter(["1"] * 300)
    t = TeamTable(PAULISTA_2V2, HeuristicBot("high", 1), (RandomBot(2), RandomBot(3)), match=False, seed=2,
                  score=(11, 3), dealer=3, read=lambda _p, it=answers: next(it), write=out.append)
    assert t.run() == 0
    text = "\n".join(out)
    mate = " ".join(t.w.card(int(c)) for c in t.state.deal[6:9])
    assert f"your partner's cards (a side on eleven sees them): {mate}" in text


@pytest.mark.slow
def test_four_seat_levels_are_ordered_in_whole_team_matches():
    """Full deck, paulista two against two: high beats low beats random (duplicate deals, sides swapped)."""
    game = load_match_game(PAULISTA_2V2)
    rates = {}
    for a, b in (("heuristic-high", "heuristic-low"), ("heuristic-low", "random"), ("heuristic-high", "random")):
        res, _ = run_pair(game, lambda n, s: make_bot(n, s), a, b, 160, 4)
        rates[(a, b)] = res.win_rate
        assert res.interval[0] > 0.5, (a, b, res.line())
    assert rates[("heuristic-high", "random")] > rates[("heuristic-low", "random")]


@pytest.mark.slow
def test_team_cli_arena_table_and_explain(runs, tmp_path):
    r = cli("arena", *SMALL, "--bots", "mccfr,random", "--mccfr", str(runs), "--matches", "20", "--out",
            str(tmp_path / "ar"), "-q")
    assert r.returncode == 0, r.stderr
    assert "mccfr vs random: mccfr wins" in r.stdout and "played by its fallback" in r.stderr
    assert "a team game has no exploitability" in r.stderr
    r = cli("play", *SMALL, "--hand", "--seed", "3", "--bot", "random", "--partner", "mccfr", "--mccfr", str(runs),
            input_text="1\n" * 40)
    assert r.returncode == 0, r.stderr
    assert "your partner (seat 2, mccfr)" in r.stdout and "seats 1 (random) and 3 (random)" in r.stdout
    r = cli("explain", *SMALL, "--score", "0,0", "--dealer", "3", "--hand", "Kd 2c Ah", "--mccfr", str(runs))
    assert r.returncode == 0, r.stderr
    assert "seat 0 to act" in r.stdout and "of this information set" in r.stdout
    lines = [x.split() for x in r.stdout.splitlines() if x.startswith("  ")]
    assert abs(sum(float(x[-1]) for x in lines) - 1) < 2e-3


@pytest.mark.parametrize("argv, words", [
    (["play", "--rules", "paulista_2v2", "--bot", "solved"], "team game"),
    (["play", "--rules", "paulista_2v2", "--hints"], "team game"),
    (["play", "--rules", "paulista_2v2", "--browser", "--bot", "mccfr"], "needs --mccfr"),
    (["play", "--rules", "paulista_2v2", "--bot", "mccfr"], "needs --mccfr"),
    (["play", "--partner", "random"], "heads-up"),
    (["play", "--seat", "2"], "heads-up"),
    (["play", "--bot", "mccfr"], "needs --mccfr"),  # heads-up at the terminal too, with runs
    (["play", "--rules", "argentino", "--browser", "--bot", "mccfr"], "drop --browser"),
    (["arena", "--rules", "paulista_2v2", "--bots", "solved,random"], "no solved strategy"),
    (["arena", "--rules", "paulista_2v2", "--bots", "mccfr,random"], "needs --mccfr"),
    (["arena", "--rules", "paulista_2v2", "--bots", "mccfr,random", "--mccfr", "/nonexistent"], "--mccfr"),
    (["explain", "--rules", "paulista_2v2", "--score", "0,0", "--dealer", "3", "--vira", "4c", "--hand", "5c 3d Qs"],
     "needs --mccfr"),
    (["explain", "--score", "0,0", "--dealer", "3", "--vira", "4c", "--hand", "5c 3d Qs"], "heads-up"),
])
def test_team_cli_refusals_are_one_line(argv, words, capsys):
    from truco_lab.cli import main

    assert main(argv) == 2
    err = capsys.readouterr().err
    assert words in err and len(err.strip().splitlines()) == 1, err


def test_explain_builds_a_consistent_team_hand_from_a_history():
    st = team_hand_state(SMALL_RULES, (0, 0), 3, None, "Kd 2c Ah", "play_face_up 3s, play_face_up Ac")
    assert st.current_player() == 2
    assert {card_str(c) for c in st.deal[6:9]} == {"Kd", "2c", "Ah"}
    assert [(q, card_str(a % 40)) for q, a in st.hand_actions] == [(0, "3s"), (1, "Ac")]
    assert all(A_DOWN > a for _, a in st.hand_actions)
    with pytest.raises(ValueError, match="played twice|not in the hand"):
        team_hand_state(SMALL_RULES, (0, 0), 3, None, "Kd 2c Ah", "play_face_up 3s, play_face_up 3s")
    with pytest.raises(ValueError, match="not the holder|not in the hand"):
        team_hand_state(SMALL_RULES, (0, 0), 3, None, "Kd 2c Ah", "play_face_up Kd")


def test_play_browser_serves_a_team_table_on_loopback():
    """`truco-lab play --rules mineiro_2v2 --browser --port 0`: one line with the table's URL (loopback, the
    partner in its settings), a table that answers as the team table, and Ctrl-C stops it."""
    import json
    import signal
    import urllib.parse
    import urllib.request

    p = subprocess.Popen([sys.executable, "-m", "truco_lab.cli", "play", *SMALL, "--browser", "--port", "0",
                          "--partner", "random", "--seed", "3", "--seat", "1"], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    try:
        line = p.stdout.readline()
        assert line.startswith("truco-lab play: the table is at http://127.0.0.1:"), (line, p.stderr.read())
        url = line.split()[6]
        base, frag = url.split("#")
        q = dict(urllib.parse.parse_qsl(frag))
        assert q["partner"] == "random" and q["seat"] == "1" and q["bot"] == "heuristic-high"
        with urllib.request.urlopen(base + "api/table/new?" + urllib.parse.urlencode(q), timeout=60) as r:
            v = json.loads(r.read())["view"]
        assert v["rules"] == "mineiro_2v2" and v["sides"]["you"] == "us" and v["seat"] == 1
        assert "heuristic-high rivals, with a random partner" in v["against"]
    finally:
        p.send_signal(signal.SIGINT)
        out, _ = p.communicate(timeout=30)
    assert p.returncode == 0 and "stopped" in out
