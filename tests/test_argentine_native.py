"""Native Argentine trees (issue 20 §2) against OpenSpiel's walk of the same hand."""

from __future__ import annotations

import numpy as np
import pyspiel
import pytest
from open_spiel.python.algorithms import exploitability as os_expl

import truco_lab  # noqa: F401  registers the games and the native builder
from solvers.api import solve
from solvers.cfr import CFRSolver
from solvers.tree import build_openspiel_tree
from solvers.vector import VectorSolver
from truco_lab.abstraction.argentine_tree import REVEAL, argentine_hands, build_argentine_cell
from truco_lab.lab.argentine_match import match_rules, solve_cell
from truco_lab.openspiel.games import openspiel_hand
from truco_lab.rules.ruleset import RuleSet

TOY = {"ranks": "1 7 12", "suits": "eb"}  # six cards: all dealt
HIDDEN = {"ranks": "1 3 7 12", "suits": "eb"}  # eight cards: two stay unseen


def _rules(deck: dict, flor: bool = False, max_stake: int = 1) -> RuleSet:
    return RuleSet.from_options("argentino", **deck, max_stake=max_stake, flor=flor)


def _game(rules: RuleSet, dealer: int = 1):
    return pyspiel.load_game(*openspiel_hand(rules, 0, 0, dealer))


@pytest.mark.slow
@pytest.mark.parametrize("flor", [False, True])
def test_native_value_equals_openspiels_walk(flor):
    g = _game(_rules(TOY, flor))
    native = solve(g, "dcfr", iterations=600, tree="native")
    walked = solve(g, "dcfr", iterations=600, tree="openspiel")
    assert native.exploitability < 1e-6 and walked.exploitability < 1e-6
    assert native.game_value == pytest.approx(walked.game_value, abs=2e-6)


def _routed_strategy(tree, avg, g):
    """Our native strategy, asked state by state through the tree's route, as slots of OpenSpiel's walk."""
    def hook(state, p):
        route = tree.source.route(tree, state)
        return {a: (avg[s] if s >= 0 else 0.0) for a, s in route.items()}

    gt = build_openspiel_tree(g, max_nodes=None, infoset_hook=hook)
    strat = np.zeros(gt.num_slots)
    for i, acts in enumerate(gt.infoset_actions):
        for k, a in enumerate(acts):
            strat[gt.infoset_offset[i] + k] = gt.infoset_extra[i][a]
    return gt, strat


@pytest.mark.slow
def test_an_unconverged_native_strategy_is_as_exploitable_in_openspiels_tree():
    """After 15 iterations (far from equilibrium) the same strategy, played state by state in OpenSpiel's
    tree, has the native tree's exploitability and value: the two trees are one game, information included."""
    rules = _rules(TOY, flor=True)
    tree = build_argentine_cell(rules, 0, 0, 0)
    vs = VectorSolver(tree, "dcfr")
    vs.iterate(15)
    avg = vs.average_strategy()
    gt, strat = _routed_strategy(tree, avg, _game(rules, 0))
    cs = CFRSolver(gt, "dcfr")
    assert vs.exploitability() > 1e-3
    # to float32's precision (the native solver's strategies are float32 and need not sum to 1 in float64)
    assert cs.exploitability(strat) == pytest.approx(vs.exploitability(), rel=1e-5)
    assert cs.game_value(strat) == pytest.approx(vs.game_value(), abs=1e-6)


def test_accepted_envidos_are_shown_and_flor_is_revealed_first():
    rules = _rules(HIDDEN, flor=True)
    tree = build_argentine_cell(rules, 0, 0, 1)
    hands = argentine_hands(rules)
    act = np.asarray(tree.node_action)
    # the root reveals player 0's flor, its children player 1's: both kinds occur on this deck
    assert tree.node_actor[0] == 0 and sorted(act[tree.node_child[0]:tree.node_child[0] + tree.node_nchild[0]]) \
        == [REVEAL, REVEAL + 1]
    shown = act[(act >= REVEAL) & (np.asarray(tree.node_parent) > tree.node_nchild[0])] - REVEAL
    assert set(shown.tolist()) <= set(hands.envido.tolist()) and len(set(shown.tolist())) > 3
    # every reveal slot is forced, and no flor hand ever shows envido points (a dealt flor closes the envido)
    inact = tree.infoset_nact
    reveal_sets = np.flatnonzero(np.asarray(tree.entry_action)[tree.infoset_offset[inact > 0]] >= REVEAL)
    assert (inact[inact > 0][reveal_sets] == 1).all()
    df = solve(_game(rules), "dcfr", iterations=30, tree="native").table().to_pandas()
    assert df.history.astype(str).str.contains("shows").any()
    assert df.history.astype(str).str.startswith("0:has flor, 1:has flor, 0:flor, 1:flor").any()
    sums = df.groupby(["player", "hand", "history"], observed=True).probability.sum()
    assert np.allclose(sums, 1.0, atol=1e-5)


def test_native_match_cell_equals_the_walked_one():
    rules = match_rules(_rules(TOY), 3)
    equity = {(a, b, d): 0.3 + 0.1 * a - 0.05 * b for a in range(3) for b in range(3) for d in (0, 1)}
    nat = solve_cell(rules, 1, 1, 0, equity, 1e-6)
    walked = solve_cell(rules, 1, 1, 0, equity, 1e-6, tree="openspiel")
    assert nat.equity == pytest.approx(walked.equity, abs=3e-6)


@pytest.mark.slow
def test_the_native_strategy_played_through_openspiel_with_hidden_cards_and_flor_scores_its_value():
    """Eight cards, two unseen, with flor: the native average strategy, asked at every OpenSpiel state
    through the tree's route (own cards and public actions only), plays 2,000 hands against itself and
    scores the native value within 4 standard errors. (Walking this game for an exact comparison takes
    ~15 minutes here; six cards are compared exactly above.)"""
    g = _game(_rules(HIDDEN, flor=True))
    r = solve(g, "dcfr", iterations=100, tree="native")
    tree, avg = r.solver.trees[0], r.solver.solvers[0].average_strategy()
    rng = np.random.default_rng(3)
    returns = []
    for _ in range(2000):
        st = g.new_initial_state()
        while not st.is_terminal():
            if st.is_chance_node():
                acts, probs = zip(*st.chance_outcomes(), strict=True)
                st.apply_action(int(rng.choice(acts, p=probs)))
                continue
            route = tree.source.route(tree, st)
            acts = list(route)
            p = np.array([max(float(avg[route[a]]), 0.0) if route[a] >= 0 else 0.0 for a in acts])
            st.apply_action(int(acts[rng.choice(len(acts), p=p / p.sum())]))
        returns.append(st.returns()[0])
    mean, se = float(np.mean(returns)), float(np.std(returns) / np.sqrt(len(returns)))
    assert abs(mean - r.game_value) < 4 * se, (mean, se, r.game_value)


@pytest.mark.slow
def test_openspiel_exploitability_of_the_exported_policy_equals_ours():
    g = _game(_rules(TOY, flor=True))
    r = solve(g, "dcfr", iterations=10, tree="native")
    assert r.exploitability > 1e-3
    assert os_expl.nash_conv(g, r.to_openspiel_policy()) / 2 == pytest.approx(r.exploitability, rel=1e-5)


# ---- the solved match at the table, in hints and in explain -------------------------------------------------
@pytest.fixture(scope="module")
def solved_toy(tmp_path_factory):
    """The toy deck's match to 3, solved by the experiment script (and interrupted once, then resumed)."""
    import json

    from experiments.argentine_match import main

    out = tmp_path_factory.mktemp("arg") / "match3"
    args = ["--match-target", "3", "--out", str(out)]
    assert main(args) == 0
    import pandas as pd

    first = pd.read_csv(out / "equity.csv").drop(columns="seconds")
    # an interrupted run: the summary and table not written, four cells on disk, the last line cut short
    lines = (out / "cells.jsonl").read_text().splitlines()
    (out / "summary.json").unlink()
    (out / "equity.csv").unlink()
    (out / "cells.jsonl").write_text("\n".join(lines[:5]) + "\n" + lines[5][:20])
    assert json.loads(lines[0])["key"]
    assert main(args) == 0
    again = pd.read_csv(out / "equity.csv").drop(columns="seconds")
    pd.testing.assert_frame_equal(again, first)  # the resumed run's cells: the same values (solves are deterministic)
    return out


def test_a_resumed_argentine_match_reuses_the_solved_cells(solved_toy, capsys):
    from experiments.argentine_match import main

    assert main(["--match-target", "3", "--out", str(solved_toy)]) == 0
    assert "already solved" in capsys.readouterr().out


def test_the_solved_bot_plays_every_state_of_a_match_with_probabilities_that_sum_to_one(solved_toy):
    from truco_lab.lab.argentine_match import ArgentineStrategy
    from truco_lab.people.bots import SolvedBot

    strat = ArgentineStrategy(solved_toy)
    game = pyspiel.load_game("truco_argentino_match", {"ranks": "1 7 12", "suits": "eb", "max_stake": 1,
                                                       "flor": False, "target": 3, "deck_penalty": False})
    bot = SolvedBot(strat, seed=0, notify=lambda m: pytest.fail(m))
    rng = np.random.default_rng(0)
    for _ in range(20):
        st = game.new_initial_state()
        while not st.is_terminal():
            if st.is_chance_node():
                acts, probs = zip(*st.chance_outcomes(), strict=True)
                st.apply_action(int(rng.choice(acts, p=probs)))
                continue
            assert strat.covers(st)
            probs = bot.probabilities(st)
            assert set(probs) == set(st.legal_actions()) and sum(probs.values()) == pytest.approx(1.0)
            st.apply_action(bot.act(st))
    assert bot.fallback_decisions == 0


def test_hints_and_explain_answer_from_the_solved_argentine_match(solved_toy, capsys):
    from truco_lab.cli import main

    opts = ["--rules", "argentino", "--ranks", "1 7 12", "--suits", "eb", "--max-stake", "1", "--target", "3",
            "--solved", str(solved_toy)]
    # six cards are all dealt: mano's 1e 1b 7b faces 7e 12e 12b, whose envido is 27
    code = main(["explain", *opts, "--score", "0,0", "--dealer", "1", "--hand", "1e 1b 7b", "--history",
                 "envido, quiero, shows 27"])
    out = capsys.readouterr().out
    assert code == 0 and "play 1e" in out and "7e 12e 12b" in out  # six cards: the opponent's hand is known
    assert main(["explain", *opts, "--score", "0,0", "--dealer", "1", "--hand", "1e 1b 7b", "--history",
                 "envido, quiero"]) == 2
    assert "add 'shows N'" in capsys.readouterr().err
    # the same folder refuses other rules, naming what it was solved under
    assert main(["explain", *opts[:-4], "--target", "5", "--solved", str(solved_toy), "--score", "0,0",
                 "--dealer", "1", "--hand", "1e 1b 7b"]) == 2
    assert "--target 3" in capsys.readouterr().err


def test_the_argentine_table_shows_the_solved_hint(solved_toy, monkeypatch):
    from truco_lab.lab.argentine_match import ArgentineStrategy
    from truco_lab.people.bots import SolvedBot
    from truco_lab.people.play import Table

    strat = ArgentineStrategy(solved_toy)
    out: list[str] = []
    answers = iter(["1"] * 60)
    t = Table(strat.rules, SolvedBot(strat, seed=1), match=False, seed=4, hints=strat,
              read=lambda _p: next(answers), write=out.append)
    assert t.run() == 0
    hints = [x for x in out if x.startswith("hint:")]
    assert hints and all("%" in h and "worth" in h for h in hints)


def test_knuths_estimate_of_a_tree_matches_the_built_tree():
    """The estimator behind --plan (for decks whose trees cannot be built) against a tree that can be."""
    from truco_lab.abstraction.argentine_tree import estimate_cell_size

    rules = _rules(HIDDEN)
    tree = build_argentine_cell(rules, 0, 0, 1)
    est = estimate_cell_size(rules, 0, 0, 1, probes=20000, seed=1)
    assert est.nodes == pytest.approx(tree.num_nodes, rel=0.1)
    assert est.infosets == pytest.approx(tree.num_infosets, rel=0.1)
    assert est.entries == pytest.approx(tree.num_slots, rel=0.1)
    assert abs(est.entries - tree.num_slots) < 4 * est.entries_se


def test_the_match_plan_prices_every_canonical_cell():
    from truco_lab.lab.argentine_match import cells_to_solve, plan_match

    rules = match_rules(_rules(TOY), 3)
    plan = plan_match(rules, probes=200, calibrate=rules)
    assert len(plan.cells) == cells_to_solve(rules) == 9
    assert (plan.cells.entries > 0).all() and plan.bytes_per_entry > 10 and plan.ns_per_entry_iteration > 0
    text = "\n".join(plan.lines())
    assert "CPU-hours" in text and "9 of 9" in text


@pytest.mark.slow
def test_solve_cli_builds_argentine_hands_natively(tmp_path, capsys):
    import pandas as pd

    from truco_lab.cli import main

    argv = ["solve", "--rules", "argentino", "--ranks", "1 7 12", "--suits", "eb", "--max-stake", "1", "--score",
            "0,0", "--dealer", "1", "--target-exploitability", "1e-5", "-q"]
    assert main([*argv, "--out", str(tmp_path / "n")]) == 0  # native: the default
    assert main([*argv, "--tree", "openspiel", "--out", str(tmp_path / "w")]) == 0
    import json

    n, w = (json.loads((tmp_path / x / "summary.json").read_text()) for x in "nw")
    assert (n["run"]["tree"], w["run"]["tree"]) == ("native", "openspiel")
    assert n["game_value"] == pytest.approx(w["game_value"], abs=2e-5)
    df = pd.read_parquet(tmp_path / "n" / "strategy.parquet")
    assert {"hand", "history", "action", "probability"} <= set(df.columns)
    assert main(["solve", "--rules", "argentino", "--score", "0,0", "--dealer", "1",
                 "--iterations", "3", "--out", str(tmp_path / "big")]) == 2
    assert "entries" in capsys.readouterr().err


def test_two_workers_solve_the_same_match():
    from truco_lab.lab.argentine_match import solve_match

    rules = match_rules(_rules(TOY), 3)
    one = solve_match(rules, 1e-4).drop(columns="seconds")
    two = solve_match(rules, 1e-4, workers=2).drop(columns="seconds")
    import pandas as pd

    pd.testing.assert_frame_equal(one, two)
    assert (one.exploitability <= 1e-4).all() and len(one) == 18


def test_the_browser_tables_hints_for_argentino_name_legal_moves(solved_toy):
    from truco_lab.lab.argentine_match import ArgentineStrategy
    from truco_lab.people.explorer.api import TableHost

    strat = ArgentineStrategy(solved_toy)
    host = TableHost(strat.rules, strat, "give --solved DIR")
    view = host.handle("/api/table/new", {"bot": "solved", "hints": "1", "seed": "3", "hand": "1"})["view"]
    legal = {a["code"] for a in view["legal"]}
    assert view["hints"] and {x["code"] for x in view["hints"]} <= legal
    assert sum(x["probability"] for x in view["hints"]) == pytest.approx(1.0, abs=1e-4)


def test_a_second_run_on_the_same_folder_is_refused(tmp_path, capsys):
    import subprocess
    import sys
    import time

    from experiments.argentine_match import main

    out = tmp_path / "busy"
    out.mkdir()
    holder = subprocess.Popen([sys.executable, "-c", "import sys, time; from pathlib import Path; "
                               "from truco_lab.lab.runs import lock_folder; lock_folder(Path(sys.argv[1])); "
                               "print('held', flush=True); time.sleep(60)", str(out)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        assert main(["--match-target", "3", "--out", str(out)]) == 2
        assert "in use by another running process" in capsys.readouterr().err
        assert not (out / "cells.jsonl").exists()
    finally:
        holder.kill()
        time.sleep(0.1)


@pytest.mark.slow
def test_sigterm_stops_the_match_and_its_workers_and_resume_finishes(tmp_path):
    """A preempted grid (SIGTERM, as Ctrl-C): one line, exit 130, no worker left solving, every solved cell on
    disk; the same command then finishes the match with what a run without workers gives."""
    import signal
    import subprocess
    import sys
    import time
    from pathlib import Path

    import pandas as pd

    from truco_lab.lab.argentine_match import solve_match

    out = tmp_path / "m"
    cmd = [sys.executable, str(Path(__file__).parents[1] / "experiments" / "argentine_match.py"), "--ranks",
           "1 3 7 12", "--suits", "eb", "--max-stake", "1", "--match-target", "4", "--target", "1e-4", "--workers",
           "2", "--out", str(out)]
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    log = out / "cells.jsonl"
    deadline = time.time() + 120
    while time.time() < deadline and (not log.exists() or len(log.read_text().splitlines()) < 3):
        time.sleep(0.2)
    p.send_signal(signal.SIGTERM)
    _, err = p.communicate(timeout=60)
    assert p.returncode == 130 and "interrupted" in err and "Traceback" not in err, err
    left = subprocess.run(["pgrep", "-f", str(out)], capture_output=True, text=True).stdout.split()
    assert left == [], left  # the pool's workers went with the driver
    solved_before = len(log.read_text().splitlines()) - 1
    assert 2 <= solved_before < 16
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    got = pd.read_csv(out / "equity.csv").sort_values(["score0", "score1", "dealer"]).reset_index(drop=True)
    ref = solve_match(match_rules(_rules({"ranks": "1 3 7 12", "suits": "eb"}), 4), 1e-4).sort_values(["score0", "score1", "dealer"])
    assert np.allclose(got.equity.to_numpy(), ref.equity.to_numpy(), atol=1e-9)
