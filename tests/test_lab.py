"""The lab for people: bots, arena, explain and the play table (issue 8)."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pyspiel
import pytest
from open_spiel.python.algorithms import exploitability as os_expl

import truco_lab  # noqa: F401  registers the games
from solvers.tables import StrategyTable
from truco_lab.cli import main
from truco_lab.lab.policy import MatchStrategy
from truco_lab.people.advice import ExplainError, explain
from truco_lab.people.arena import load_match_game, play_match, run_pair
from truco_lab.people.bots import HeuristicBot, RandomBot, SolvedBot, view_of
from truco_lab.people.play import Table
from truco_lab.people.responses import bot_exploitability
from truco_lab.people.roster import make_bot
from truco_lab.rules.cards import A_ACCEPT_ELEVEN, A_FOLD_ELEVEN, parse_cards
from truco_lab.rules.ruleset import PAULISTA

TINY = PAULISTA.with_deck("7QJKA23", "c")
SMALL_ARGS = ["--ranks", "7QJKA23", "--suits", "c", "--max-stake", "3"]


def _hand_game(rules, **kw):
    params = {"ranks": rules.ranks, "suits": rules.suits, "max_stake": max(rules.ladder), "score0": 0, "score1": 0,
              "dealer": 1}
    params.update(kw)
    return pyspiel.load_game("truco_paulista", params)


@pytest.mark.slow
@pytest.mark.parametrize("bot", [RandomBot(), HeuristicBot("low"), HeuristicBot("high")], ids=lambda b: b.name)
def test_bot_exploitability_equals_openspiel_nash_conv(bot):
    """Our exact per-cell exploitability of a bot (its strategy read at every information set of the
    native tree, best response on that tree) equals OpenSpiel's NashConv/2 of the bot as a policy."""
    rules = TINY.with_max_stake(1)
    ours = bot_exploitability(bot, rules, (0, 0), 1)
    game = _hand_game(rules)
    theirs = os_expl.nash_conv(game, bot.as_policy(game)) / 2
    assert ours == pytest.approx(theirs, abs=1e-6)


@pytest.mark.slow
def test_heuristic_exploitability_with_raises_equals_openspiel():
    rules = TINY.with_max_stake(3)
    bot = HeuristicBot("high")
    game = _hand_game(rules)
    assert bot_exploitability(bot, rules, (0, 0), 1) == pytest.approx(
        os_expl.nash_conv(game, bot.as_policy(game)) / 2, abs=1e-6)


def test_bots_play_legal_complete_matches_and_are_policies(small_grid):
    out, cfg, _, _ = small_grid
    game = load_match_game(cfg.rules)
    strat = MatchStrategy(out)
    bots = [make_bot(n, 1, strat) for n in ("solved", "heuristic-low", "heuristic-high", "random", "br-solved")]
    rng = np.random.default_rng(0)
    for m in range(10):
        pair = (bots[m % 5], bots[(m + 1 + m // 5) % 5])
        winner, hands, pts = play_match(game, pair, np.random.default_rng(m))  # an illegal action would raise
        assert winner in (0, 1) and max(pts) >= cfg.rules.target and hands >= 1
    # every bot's probabilities form a distribution over the legal actions (OpenSpiel policy contract)
    st = game.new_initial_state()
    for _ in range(200):
        if st.is_terminal():
            st = game.new_initial_state()
        if st.is_chance_node():
            acts, ps = zip(*st.chance_outcomes(), strict=True)
            st.apply_action(int(rng.choice(acts, p=ps)))
            continue
        for b in bots:
            probs = b.as_policy(game).action_probabilities(st)
            assert set(probs) <= set(st.legal_actions())
            assert sum(probs.values()) == pytest.approx(1.0)
        st.apply_action(int(rng.choice(st.legal_actions())))


def test_heuristic_eleven_decision_follows_hand_strength():
    game = _hand_game(PAULISTA, score0=11, score1=3, dealer=1)

    def decide(cards, vira, level):
        st = game.new_initial_state()
        mine = sorted(parse_cards(cards))
        rest = [c for c in range(40) if c not in mine and c != parse_cards(vira)[0]][:3]
        for c in [*mine, *rest, parse_cards(vira)[0]]:
            st.apply_action(c)
        return max(HeuristicBot(level).probabilities(st).items(), key=lambda kv: kv[1])[0]

    for level in ("low", "high"):
        assert decide("5c 5h 3d", "4s", level) == A_ACCEPT_ELEVEN  # two manilhas and a 3
        assert decide("4d 6s 7h", "3c", level) == A_FOLD_ELEVEN  # the weakest cards
    st = game.new_initial_state()
    for c in (0, 1, 2, 3, 5, 6, 39):
        st.apply_action(c)
    v = view_of(st.s, st._g.deck_list, st.legal_actions())
    assert v.eleven and v.player == 0 and sorted(v.dealt) == [0, 1, 2] and v.vira == 39


def test_solved_bot_announces_unsolved_cells_and_falls_back(small_grid, tmp_path):
    out, cfg, _, _ = small_grid
    from truco_lab.lab.match import MatchConfig
    from truco_lab.lab.match_run import run_match

    part = tmp_path / "row"
    run_match(MatchConfig(cfg.rules, target=1e-3, table=False), [(11, 11)], part, workers=1, progress=False)
    notes = []
    bot = SolvedBot(MatchStrategy(part), notify=notes.append)
    game = load_match_game(cfg.rules)
    play_match(game, (bot, RandomBot(1)), np.random.default_rng(3))
    assert bot.fallback_decisions > 0 and notes
    assert re.match(r"solved bot: cell \d+x\d+ dealer \d is not solved in .*; playing heuristic-high there "
                    r"\(solve it: truco-lab match --cells \d+,\d+ ", notes[0])
    assert len(notes) == len(bot.missing)  # once per cell


def test_arena_pairs_lines_parquet_and_reproducibility(small_grid, tmp_path, capsys):
    out, cfg, _, _ = small_grid
    args = ["arena", "--bots", "solved,heuristic-high,random", "--matches", "30", "--seed", "1",
            "--solved", str(out), "--cell", "11,11", "--out", str(tmp_path / "a"), "-q", *SMALL_ARGS]
    assert main(args) == 0
    text = capsys.readouterr().out
    lines = [x for x in text.splitlines() if " vs " in x]
    assert [x.split(":")[0] for x in lines] == ["solved vs heuristic-high", "solved vs random",
                                                 "heuristic-high vs random"]
    for x in lines:
        assert re.match(r"^\S+ vs \S+: \S+ wins [01]\.\d{3} ± \d\.\d{3} \(95%\), points per hand [+-]\d\.\d{3}, "
                        r"30 matches, \d+ hands$", x)
    assert re.search(r"^solved: exploitability \d\.\d{4} \(match-win probability\) in cell 11x11 dealer 1$", text,
                     re.M)
    assert re.search(r"^random: exploitability \d\.\d{4}", text, re.M)
    import pandas as pd

    df = pd.read_parquet(tmp_path / "a" / "arena.parquet")
    assert list(df.columns) == ["bot_a", "bot_b", "match", "seat_a", "winner_is_a", "hands", "points_a", "points_b"]
    assert len(df) == 90 and set(df.seat_a) == {0, 1}
    assert (np.maximum(df.points_a, df.points_b) >= 12).all()
    # same seed, same matches
    assert main([*args[:-7], "--out", str(tmp_path / "b"), "-q", *SMALL_ARGS]) == 0
    capsys.readouterr()
    assert pd.read_parquet(tmp_path / "b" / "arena.parquet").equals(df)


def test_arena_solved_beats_random_and_duplicate_deals(small_grid):
    out, cfg, _, _ = small_grid
    game = load_match_game(cfg.rules)
    strat = MatchStrategy(out)
    res, rows = run_pair(game, lambda n, s: make_bot(n, s, strat), "solved", "random", 60, seed=5)
    assert res.win_rate > 0.8
    # matches 2k and 2k+1 share their deals with the seats swapped
    assert [r["seat_a"] for r in rows[:4]] == [0, 1, 0, 1]


def test_arena_cli_errors(capsys):
    with pytest.raises(SystemExit) as e:
        main(["arena", "--bots", "solved,alphago", "--matches", "2"])
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "unknown bot 'alphago'" in err
    with pytest.raises(SystemExit) as e:
        main(["arena", "--bots", "random", "--matches", "2"])
    assert e.value.code == 2


def _reached_lead(strat, rules) -> tuple[str, str]:
    """An opening lead by the opponent (who holds Q J 3 beside our 7 A 2 and the vira K) that the solution plays,
    as a history and the card: which one it prefers is the equilibrium's business, not these tests' (it moved
    when the check schedule changed where cells stop)."""
    for card in ("3c", "Qc", "Jc"):
        if explain((3, 5), 0, "Kc", "7c Ac 2c", f"play_face_up {card}", solved=strat, rules=rules).reached:
            return f"play_face_up {card}", card[:-1]
    raise AssertionError("the solution plays none of the opponent's three leads")


def test_explain_strategy_values_and_range(small_grid):
    out, cfg, _, _ = small_grid
    strat = MatchStrategy(out)
    adv = explain((3, 5), 0, "Kc", "7c Ac 2c", "", solved=strat, rules=cfg.rules)
    assert adv.actions.probability.sum() == pytest.approx(1.0)
    assert ((adv.actions.value >= -1e-9) & (adv.actions.value <= 1 + 1e-9)).all()
    assert adv.opponent_range.probability.sum() == pytest.approx(1.0)
    # card removal: the opponent's range never holds our cards or the vira (one card per level here)
    for hand in adv.opponent_range.hand:
        assert not {"7", "A"} & set(hand.split())
    # after a history, the probabilities are the strategy's at that OpenSpiel state (a lead the opponent, holding
    # Q J 3 here, plays)
    lead, card = _reached_lead(strat, cfg.rules)
    adv2 = explain((3, 5), 0, "Kc", "7c Ac 2c", lead, solved=strat, rules=cfg.rules)
    assert adv2.player == 0 and adv2.history == [lead]
    for hand in adv2.opponent_range.hand:
        assert card in hand.split()  # the card the opponent showed is in every hand of their range
    text = str(adv2)
    assert "opponent's range" in text and "play_face_up" in text


def test_cells_sharing_a_tree_each_see_their_own_cell(small_grid):
    """On a 1-3 ladder every start below 11 has one tree per dealer and class: the solved strategy reads it once,
    but each cell's part carries its own score and payoffs."""
    out, cfg, _, _ = small_grid
    strat = MatchStrategy(out)
    a, b = strat._part((3, 5, 0), 0), strat._part((6, 9, 0), 0)
    assert a.spec.structure_key() == b.spec.structure_key()
    assert (a.tree.source.score0, a.tree.source.score1) == (3, 5) and (b.tree.source.score0, b.tree.source.score1) == (6, 9)
    assert a.tree.entry_child is b.tree.entry_child  # one tree's arrays
    assert not np.array_equal(a.tree.payoff, b.tree.payoff)


def test_explain_agrees_with_the_strategy_table(small_grid):
    """explain routes an OpenSpiel state to the tree; the Parquet table was written by the solver's table
    writer and is read by key: the two must give the same probabilities and action values."""
    out, cfg, _, _ = small_grid
    strat = MatchStrategy(out)
    lead, _ = _reached_lead(strat, cfg.rules)
    adv = explain((3, 5), 0, "Kc", "7c Ac 2c", lead, solved=strat, rules=cfg.rules)
    assert adv.reached
    table = StrategyTable.load(out / "cells" / "s3-5_d0")
    rows = table.lookup("Kc", "7c Ac 2c", lead, score=(3, 5), dealer=0)
    by_action = {r.action: r for r in rows.itertuples()}
    assert set(by_action) == set(adv.actions.action)
    for r in adv.actions.itertuples():
        assert r.probability == pytest.approx(by_action[r.action].probability, abs=1e-6)
        assert r.value == pytest.approx(by_action[r.action].action_value, abs=1e-5)


def test_explain_says_when_the_solution_never_reaches_a_decision(small_grid, capsys):
    """At 3x5 on this deck player 0 never accepts a raise to 3 there: no nan values, no empty range."""
    out, cfg, _, _ = small_grid
    adv = explain((3, 5), 0, "Kc", "7c Ac 2c", "raise 3, accept_raise", solved=MatchStrategy(out), rules=cfg.rules)
    assert not adv.reached
    assert main(["explain", "--score", "3,5", "--dealer", "0", "--vira", "Kc", "--hand", "7c Ac 2c", "--history",
                 "raise 3, accept_raise", "--solved", str(out), *SMALL_ARGS]) == 1
    text = capsys.readouterr().out
    assert "never reaches this decision" in text and "nan" not in text


@pytest.mark.parametrize("hand,history,vira,message", [
    ("7c 7c 2c", "", "Kc", "dealt twice"),
    ("7c Ac 2c", "play_face_up Ac", "Kc", "is in your hand"),
    ("7c Ac 2c", "raise 3, raise 3", "Kc", "impossible history"),
    ("7c Ac 2c", "", "7c", "both the vira and in the hand"),
    ("7c Ac 9c", "", "Kc", "unknown card"),
    ("7c Ac 4d", "", "Kc", "not in this deck"),
    ("7c Ac 2c", "play_face_up Jc, play_face_up Jc", "Kc", "played twice"),
])
def test_explain_errors_name_the_problem(small_grid, hand, history, vira, message):
    out, cfg, _, _ = small_grid
    with pytest.raises(ExplainError, match=message):
        explain((3, 5), 0, vira, hand, history, solved=MatchStrategy(out), rules=cfg.rules)


def test_explain_cli_and_unsolved_cell(small_grid, tmp_path, capsys):
    out, cfg, _, _ = small_grid
    lead, _ = _reached_lead(MatchStrategy(out), cfg.rules)
    assert main(["explain", "--score", "3,5", "--dealer", "0", "--vira", "Kc", "--hand", "7c Ac 2c", "--history",
                 lead, "--solved", str(out), *SMALL_ARGS]) == 0
    assert "opponent's range" in capsys.readouterr().out
    from truco_lab.lab.match import MatchConfig
    from truco_lab.lab.match_run import run_match

    part = tmp_path / "row"
    run_match(MatchConfig(cfg.rules, target=1e-3, table=False), [(11, 11)], part, workers=1, progress=False)
    assert main(["explain", "--score", "3,5", "--dealer", "0", "--vira", "Kc", "--hand", "7c Ac 2c",
                 "--solved", str(part), *SMALL_ARGS]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "is not solved" in err and "truco-lab match --cells 3,5" in err
    # the suggested command carries the run's deck and ladder, and its cost
    assert "--ranks" in err and "--suits" in err and "--max-stake 3" in err and "(by --plan: " in err


class _Script:
    """Scripted terminal input; raises KeyboardInterrupt when told to."""

    def __init__(self, lines):
        self.lines = list(lines)

    def __call__(self, prompt=""):
        if not self.lines:
            raise EOFError
        x = self.lines.pop(0)
        if x is KeyboardInterrupt:
            raise KeyboardInterrupt
        return x


def _table(rules, bot, lines, **kw):
    out = []
    t = Table(rules, bot, read=_Script(lines), write=out.append, **kw)
    return t.run(), "\n".join(out)


def test_play_scripted_bad_keys_help_and_quit():
    rules = TINY.with_max_stake(3)
    code, text = _table(rules, RandomBot(1), ["xyz", "99", "?", "play_face_up 9z", "q"], seed=4)
    assert code == 0
    assert "'xyz' is not a move" in text and "'99' is not one of the choices" in text
    assert "type 1-" in text and "unknown card '9z'" in text and "you left the table" in text
    assert "vira " in text and "your cards:" in text and "stake 1" in text and "Traceback" not in text
    assert any(s in text for s in "♣♥♠♦")


def test_play_ctrl_c_leaves_cleanly():
    code, text = _table(TINY.with_max_stake(3), RandomBot(1), ["1", KeyboardInterrupt], seed=4)
    assert code == 0 and "you left the table" in text


def test_play_whole_match_and_seed_reproducible():
    rules = TINY.with_max_stake(3)
    a = _table(rules, HeuristicBot("high", 2), ["1"] * 400, seed=9)
    b = _table(rules, HeuristicBot("high", 2), ["1"] * 400, seed=9)
    assert a == b
    assert a[1].count("hand over.") >= 2 and re.search(r"(you win the match!|the bot wins\.)$", a[1])


def test_play_hints_and_value_lost(small_grid):
    out, cfg, _, _ = small_grid
    strat = MatchStrategy(out)
    code, text = _table(cfg.rules, make_bot("solved", 2, strat), ["1"] * 40, seed=3, hints=strat)
    assert code == 0
    assert "hint: " in text and "[worth: your match-win probability]" in text
    assert "value lost" in text or "you lost no value" in text


def test_play_cli_one_hand(monkeypatch, capsys):
    lines = iter(["1"] * 20)
    monkeypatch.setattr("builtins.input", lambda prompt="": next(lines))
    assert main(["play", "--bot", "random", "--seed", "1", "--hand", "--score", "11,3", *SMALL_ARGS]) == 0
    text = capsys.readouterr().out
    assert "accept the hand of eleven" in text and "hand over." in text


def test_rough_edges_one_line_errors(capsys):
    """Issue 8 §5: a card id reused across both hands, NumPy scalars in messages, --version, --vira ALL,
    negative scores, infinite targets, check_every=0 and NaN discount parameters."""
    import json

    from solvers.api import solve
    from truco_lab import HandState, TrucoError
    from truco_lab.abstraction.tree import build_cell

    h = HandState.new(("3d Qs 5c", "4d 4s 4h"), "7c")
    d = json.loads(json.dumps(h.to_json()))
    d["hands"]["1"][0] = dict(d["hands"]["0"][0])
    with pytest.raises(TrucoError, match="held by both players"):
        HandState.load(d)
    with pytest.raises(ValueError, match=r"got 12$"):
        build_cell(score0=np.int64(12))
    with pytest.raises(SystemExit) as e:
        main(["--version"])
    assert e.value.code == 0 and capsys.readouterr().out.startswith("truco-lab ")
    for argv, msg in [(["--score", "-1,0", "--vira", "all", "--iterations", "1"], "got '-1,0'"),
                      (["--score", "11,11", "--vira", "all", "--target-exploitability", "inf"], "got 'inf'"),
                      (["--score", "11,11", "--vira", "all", "--target-exploitability", "nan"], "got 'nan'")]:
        try:  # argparse's own checks exit; the score's range is checked once the rules are known
            code = main(["solve", "--dealer", "0", "--out", "/nonexistent/x", *argv])
        except SystemExit as e:
            code = e.code
        assert code == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and msg in err
    game = pyspiel.load_game("kuhn_poker")
    with pytest.raises(ValueError, match="check_every must be a positive integer"):
        solve(game, iterations=5, check_every=0)
    with pytest.raises(ValueError, match="alpha must be a finite number"):
        solve(game, iterations=5, alpha=float("nan"))


def test_vira_all_any_case(tmp_path, capsys):
    assert main(["solve", "--score", "11,11", "--dealer", "0", "--vira", "ALL", "--iterations", "2", "--out",
                 str(tmp_path / "s"), "-q", "--no-table", *SMALL_ARGS]) == 0
    assert "game value" in capsys.readouterr().out


@pytest.mark.slow
def test_generic_and_native_tables_are_one_type():
    from solvers.api import solve
    from solvers.tables import StrategyTable

    t = solve(pyspiel.load_game("kuhn_poker"), iterations=50).table()
    assert isinstance(t, StrategyTable)
    df = t.to_pandas()
    assert {"infoset", "player", "action", "probability"} <= set(df.columns)
    assert np.allclose(df.groupby("infoset").probability.sum(), 1.0, atol=1e-6)
    assert t.metadata["algorithm"] == "dcfr"


@pytest.mark.slow
def test_player_notebooks_run_on_small_solves(small_grid, tmp_path, monkeypatch):
    """Notebooks 02-06 and 08 execute on results written by the CLI for a 7-card deck (the tiny grid with tables,
    a one-cell solve with the ladder to 6, and an arena), and each draws a figure."""
    nbformat = pytest.importorskip("nbformat")
    from pathlib import Path

    from nbclient import NotebookClient

    out, _, _, _ = small_grid
    ladder = tmp_path / "ladder6"
    assert main(["solve", "--score", "0,0", "--dealer", "1", "--vira", "all", "--iterations", "30", "--out",
                 str(ladder), "-q", "--ranks", "7QJKA23", "--suits", "c", "--max-stake", "6"]) == 0
    arena = tmp_path / "arena"
    assert main(["arena", "--bots", "solved,heuristic-high,random", "--matches", "10", "--solved", str(out),
                 "--cell", "11,11", "--out", str(arena), "-q", *SMALL_ARGS]) == 0
    for k, v in {"TRUCO_GRID": out, "TRUCO_ENDGAME": out, "TRUCO_ELEVEN": out, "TRUCO_LADDER": ladder,
                 "TRUCO_ARENA": arena, "TRUCO_LOSS_MATCHES": "2"}.items():
        monkeypatch.setenv(k, str(v))
    root = Path(__file__).resolve().parents[1] / "notebooks"
    for name in ("02_when_to_truco", "03_mao_de_onze", "04_match_equity", "05_bots", "06_seed001_tips", "08_explore"):
        nb = nbformat.read(root / f"{name}.ipynb", as_version=4)
        NotebookClient(nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(root)}}).execute()
        images = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])
                  if "image/png" in o.get("data", {})]
        assert images, f"{name} should draw at least one figure"


@pytest.mark.slow
def test_cell_best_response_bot_realises_its_value_in_openspiel():
    """The best response to a heuristic in one cell: OpenSpiel's exact policy value of the BR bot against
    the heuristic equals the best-response value computed on our tree, for each seat, and beats the
    heuristic's value against itself."""
    from open_spiel.python.algorithms import expected_game_score

    from truco_lab.people.responses import CellResponseBot

    rules = TINY.with_max_stake(3)
    h = HeuristicBot("high", 3)
    br = make_bot("br-heuristic-high", 3, rules=rules, cell=(0, 0, 1))
    assert isinstance(br, CellResponseBot)
    game = _hand_game(rules)
    v0 = expected_game_score.policy_value(game.new_initial_state(), [br.as_policy(game), h.as_policy(game)])[0]
    v1 = expected_game_score.policy_value(game.new_initial_state(), [h.as_policy(game), br.as_policy(game)])[1]
    assert v0 == pytest.approx(br.values[0], abs=1e-6) and v1 == pytest.approx(br.values[1], abs=1e-6)
    self0 = expected_game_score.policy_value(game.new_initial_state(), [h.as_policy(game), h.as_policy(game)])[0]
    assert v0 >= self0 - 1e-9 and v1 >= -self0 - 1e-9


def test_decisions_by_segments_equal_the_groupby(small_grid):
    """The fast path (an information set's rows are contiguous) gives exactly the groupby's frame, and a
    shuffled table (not contiguous) falls back to the groupby with the same sets."""
    from truco_lab.lab import insights

    out, cfg, _, _ = small_grid
    df = insights.load_tables(out, cells=[(9, 10, 1), (10, 10, 1)])
    fast = insights.decisions(cfg.rules, df)
    assert insights._runs(df) is not None
    shuffled = df.sample(frac=1.0, random_state=0).reset_index(drop=True)
    assert insights._runs(shuffled) is None
    slow = insights.decisions(cfg.rules, shuffled)
    key = insights.KEY
    a = fast.astype({c: str for c in key}).sort_values(key).reset_index(drop=True)
    b = slow.astype({c: str for c in key}).sort_values(key).reset_index(drop=True)
    pd.testing.assert_frame_equal(a, b, check_dtype=False, check_categorical=False, atol=1e-9)


def test_reduce_tables_adds_up_to_one_load(small_grid):
    """Sums read one table at a time, weighted by the vira class, equal the sums of all tables loaded at once."""
    from truco_lab.abstraction.levels import vira_classes
    from truco_lab.lab import insights

    out, cfg, _, _ = small_grid
    cells = [(9, 10, 1), (10, 10, 1)]
    got = insights.reduce_tables(cfg.rules, out, cells, lambda dec, t: {
        "accept": insights.weighted_sums(dec[dec.facing > 0], "p_accept", "player")}, progress=False)["accept"]
    dec = insights.decisions(cfg.rules, insights.load_tables(out, cells=cells))
    w = dec.vira_class.map({vc.index: vc.weight for vc in vira_classes(cfg.rules)}).to_numpy(float)
    dec = dec.assign(reach=dec.reach * w)
    want = insights.weighted_sums(dec[dec.facing > 0], "p_accept", ["score0", "score1", "dealer", "player"])
    assert len(got) == len(want) > 0
    np.testing.assert_allclose(got.sort_index().to_numpy(), want.sort_index().to_numpy(), rtol=1e-9)


def test_a_decision_lays_out_each_solved_tree_once_and_keeps_no_layout(small_grid, monkeypatch):
    """A decision needs the cell's average and its values, two solvers on one tree: they share one block layout
    (making one took ~3 s at the real deck's 9x10), and none is kept once the decision is answered. The answer is
    the one a solver with its own layout gives."""
    import solvers.blocks as B

    out, cfg, _, _ = small_grid
    made = []
    real = B.BlockLayout.make.__func__

    def counted(cls, tree, roots=None):
        made.append(tree.num_elements)
        return real(cls, tree, roots)

    strat = MatchStrategy(out)
    monkeypatch.setattr(B.BlockLayout, "make", classmethod(counted))
    adv = explain((3, 5), 0, "Kc", "7c Ac 2c", "", solved=strat, rules=cfg.rules)
    assert len(made) == 1 and strat._layout is None
    monkeypatch.undo()
    again = explain((3, 5), 0, "Kc", "7c Ac 2c", "", solved=MatchStrategy(out), rules=cfg.rules)
    assert adv.actions.equals(again.actions)
