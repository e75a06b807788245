"""The match solver on a small variant: backward induction, symmetry, certificate, Monte-Carlo play."""

import ast
import json
import math
import random
from pathlib import Path

import numpy as np
import pyspiel
import pytest

import truco_lab  # noqa: F401  registers the games
from truco_lab.abstraction.tree import ALL_PRUNES, CAP_OWN_RAISES, CAP_RAISES, DROP_DOMINATED_HIDE, build_cell
from truco_lab.lab.cell import CellJob, CellSpec, Stop, run_cell
from truco_lab.lab.executors import InlineExecutor
from truco_lab.lab.match import MatchConfig, canonical, plan, select_cells, successors, worst_path_bound
from truco_lab.lab.match_run import run_match
from truco_lab.lab.policy import MatchStrategy
from truco_lab.rules.ruleset import MINEIRO, PAULISTA

ROOT = Path(__file__).resolve().parents[1]
SMALL = PAULISTA.with_deck("7QJKA23", "c").with_max_stake(3)
PARAMS = {"ranks": "7QJKA23", "suits": "c", "max_stake": 3}


def test_solvers_never_import_truco_lab():
    for f in (ROOT / "solvers").glob("*.py"):
        tree = ast.parse(f.read_text())
        for node in ast.walk(tree):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                names = [node.module or ""]
            assert not any(n.split(".")[0] == "truco_lab" for n in names), f"{f.name} imports {names}"


def test_cell_spec_hash_is_stable_and_sees_every_field():
    base = CellSpec.make(SMALL, 3, 5, 0, 0)
    assert base.key() == CellSpec.make(SMALL, 3, 5, 0, 0).key()
    # the hashes existing results folders are keyed by: computed before issue 17's re-layout, kept since
    assert base.key() == "4751cae60666a07c"
    assert CellSpec.make(PAULISTA, 11, 11, 0, 4).key() == "a065a998846f2068"
    assert CellSpec.make(MINEIRO, 11, 5, 1, 0).key() == "b861af9be94a3b4a"
    # the per-tier default (auto) solves small decks as DCFR did, so it keeps their key; on the real deck it
    # chooses DCFR+ where the ladder reaches 9, so a new key there, and DCFR's old key stays DCFR's
    assert MatchConfig(SMALL).key() == "4b3e68981391788d" == MatchConfig(SMALL, algorithm="dcfr").key()
    before = ALL_PRUNES & ~CAP_OWN_RAISES
    assert MatchConfig(PAULISTA, prunes=before, algorithm="dcfr").key() == "9efc5f1c55a8446f"
    assert MatchConfig(PAULISTA, prunes=before, auto_rungs=4).key() == "5df42b7a652aa894"
    # cap_own_raises (stop 44) gives the real deck's lopsided cells smaller trees, so its runs new keys
    assert MatchConfig(PAULISTA, auto_rungs=4).key() == "d19e6f2cb4a39667" != MatchConfig(PAULISTA, algorithm="dcfr").key()
    # auto's DCFR+ from three rungs (stop 45) solves the 1-3-6 cells otherwise: a new key again
    assert MatchConfig(PAULISTA).key() == "9660a19207a2dcb7"
    assert MatchConfig(PAULISTA.with_max_stake(6), auto_rungs=4).key() == MatchConfig(
        PAULISTA.with_max_stake(6), algorithm="dcfr").key() != MatchConfig(PAULISTA.with_max_stake(6)).key()
    others = [CellSpec.make(SMALL, 3, 6, 0, 0), CellSpec.make(SMALL, 3, 5, 1, 0), CellSpec.make(SMALL, 5, 3, 0, 0),
              CellSpec.make(SMALL, 3, 5, 0, 0, prunes=0), CellSpec.make(SMALL, 3, 5, 0, 0, algorithm="cfr+"),
              CellSpec.make(PAULISTA.with_deck("7QJKA23", "c"), 3, 5, 0, 0)]
    assert len({base.key(), *(o.key() for o in others)}) == len(others) + 1


@pytest.mark.parametrize(("a", "b"), [((11, 0), (11, 7)), ((3, 5), (3, 9)), ((0, 11), (10, 11)), ((4, 4), (9, 4)),
                                      ((3, 5), (10, 10))])
def test_equal_structure_keys_build_identical_trees(a, b):
    sa, sb = CellSpec.make(SMALL, *a, 0, 0), CellSpec.make(SMALL, *b, 0, 0)
    assert sa.structure_key() == sb.structure_key()
    ta, tb = sa.build(), sb.build()
    for name in ("node_actor", "node_list", "node_len", "infoset_nact", "entry_child", "entry_action", "node_outcome"):
        assert np.array_equal(getattr(ta, name), getattr(tb, name)), name
    # on a ladder of 1-3 nobody's raise is ever capped, so every start off the eleven row shares one tree
    assert CellSpec.make(SMALL, 3, 5, 0, 0).structure_key() != CellSpec.make(SMALL, 3, 11, 0, 0).structure_key()


def test_the_whole_grid_is_ordered_so_successors_come_first():
    cells = select_cells(SMALL, "all")
    assert len(cells) == 144  # half of 12 x 12 x 2
    pos = {c: i for i, c in enumerate(cells)}
    for c in cells:
        for s in successors(SMALL, c):
            assert pos[canonical(s)[0]] < pos[c]
    eleven = select_cells(SMALL, "eleven")
    assert len(eleven) == 23 and all(11 in c[:2] for c in eleven)


@pytest.fixture(scope="module")
def grid(small_grid):
    """The whole small-variant grid (shared with the lab tests: tests/conftest.py)."""
    assert small_grid[1].rules == SMALL
    return small_grid


def test_grid_equities_rise_with_each_players_own_score(grid):
    """What cap_own_raises needs to keep a cell's value in match equity: more points never hurt their winner."""
    _, _, state, _ = grid
    for d in (0, 1):
        for b in range(12):
            row = [state.equity.value(a, b, d) for a in range(12)] + [1.0]
            assert all(x <= y + 1e-6 for x, y in zip(row[:-1], row[1:], strict=True)), (b, d, row)


def test_grid_equities_are_probabilities_with_seat_symmetry(grid):
    _, _, state, summary = grid
    v = state.equity.values
    assert not np.isnan(v).any() and (v >= 0).all() and (v <= 1).all()
    for a in range(12):
        for b in range(12):
            for d in (0, 1):
                assert v[d, a, b] + v[1 - d, b, a] == pytest.approx(1.0, abs=1e-12)
    # more points, more equity (rows increase in player 0's score, for both dealers)
    assert (np.diff(v, axis=1) > -1e-3).all() and (np.diff(v, axis=2) < 1e-3).all()
    assert summary["cells_solved"] == 144 and summary["target_met"]


def test_symmetry_holds_for_a_pair_solved_both_ways(grid):
    _, cfg, state, _ = grid
    for (a, b, d) in [(5, 3, 0), (9, 2, 1), (11, 4, 0)]:
        assert canonical((a, b, d))[1]  # a mirror: the grid never solved it directly
        vals, expl = 0.0, 0.0
        from truco_lab.abstraction.levels import vira_classes

        for vc in vira_classes(SMALL):
            spec = CellSpec.make(SMALL, a, b, d, vc.index, payoff="equity", equity=state.equity)
            r = run_cell(CellJob(spec, Stop(target=1e-5, check_every=5)))
            vals += vc.weight * r.game_value
            expl += vc.weight * r.exploitability
        mirror = 1.0 - state.equity.value(b, a, 1 - d)
        tol = 2 * (expl + state.cells[canonical((a, b, d))[0]]["exploitability"])
        assert abs(vals - mirror) <= tol, (a, b, d, vals, mirror, tol)


def test_match_exploitability_is_nonnegative_and_bounded_by_the_worst_path(grid):
    _, _, state, summary = grid
    for c, s in state.cells.items():
        me = s["match_exploitability"]
        assert me >= -1e-9, c
        assert me <= worst_path_bound(SMALL, state, c) + 1e-9, c
        # and a best response can only gain: V_p >= the equilibrium's value for p
        assert s["br0"] >= s["equity"] - 1e-9 and s["br1"] >= 1 - s["equity"] - 1e-9
    assert summary["match_exploitability"] == pytest.approx(state.match_exploitability((0, 0, 1)))
    assert summary["match_exploitability"] > 0


def test_eleven_eleven_equity_is_one_plus_points_value_over_two(grid):
    _, _, state, _ = grid
    from truco_lab.abstraction.levels import vira_classes

    pts = 0.0
    for vc in vira_classes(SMALL):
        r = run_cell(CellJob(CellSpec.make(SMALL, 11, 11, 1, vc.index, payoff="points"), Stop(target=1e-6)))
        pts += vc.weight * r.game_value
    assert state.equity.value(11, 11, 1) == pytest.approx((1 + pts) / 2, abs=2e-4)


@pytest.mark.parametrize("flag", [CAP_RAISES, DROP_DOMINATED_HIDE, 1])
def test_each_prune_preserves_the_equity_value(grid, flag):
    _, _, state, _ = grid
    for cell in [(9, 10, 0), (2, 8, 1)]:
        vals = []
        for prunes in (ALL_PRUNES, ALL_PRUNES & ~flag):
            spec = CellSpec.make(SMALL, *cell, 0, prunes=prunes, payoff="equity", equity=state.equity)
            vals.append(run_cell(CellJob(spec, Stop(target=2e-6, check_every=10))).game_value)
        assert vals[0] == pytest.approx(vals[1], abs=1e-5), (cell, flag, vals)


def _play(game, choose, n: int, seed: int) -> np.ndarray:
    """Player 0's wins over ``n`` matches; ``choose(state, rng)`` picks every decision."""
    rng = random.Random(seed)
    wins = np.zeros(n)
    for i in range(n):
        st = game.new_initial_state()
        while not st.is_terminal():
            if st.is_chance_node():
                outs = st.chance_outcomes()
                st.apply_action(rng.choices([a for a, _ in outs], [p for _, p in outs])[0])
            else:
                st.apply_action(choose(st, rng))
        wins[i] = st.returns()[0] > 0
    return wins


@pytest.mark.slow
def test_monte_carlo_self_play_agrees_with_the_starting_equity(grid):
    out, _, state, _ = grid
    strat = MatchStrategy(out)
    game = pyspiel.load_game("truco_paulista_match", PARAMS)

    def choose(st, rng):
        probs = strat.action_probabilities(st)
        acts = list(probs)
        return rng.choices(acts, [probs[a] for a in acts])[0]

    wins = _play(game, choose, 2000, seed=7)
    se = math.sqrt(wins.var() / len(wins))
    assert abs(wins.mean() - state.equity.value(0, 0, 1)) < 3 * se, (wins.mean(), state.equity.value(0, 0, 1), se)


@pytest.mark.slow
@pytest.mark.parametrize("br_player", [0, 1])
def test_best_response_bot_wins_at_the_certified_rate(grid, br_player):
    out, _, state, _ = grid
    strat = MatchStrategy(out)
    game = pyspiel.load_game("truco_paulista_match", PARAMS)

    def choose(st, rng):
        if st.current_player() == br_player:
            return strat.best_response_action(st)
        probs = strat.action_probabilities(st)
        acts = list(probs)
        return rng.choices(acts, [probs[a] for a in acts])[0]

    wins = _play(game, choose, 2000, seed=11 + br_player)
    rate = wins.mean() if br_player == 0 else 1 - wins.mean()
    want = state.br_value(br_player, 0, 0, 1)
    se = math.sqrt(rate * (1 - rate) / len(wins))
    assert abs(rate - want) < 3 * se, (rate, want, se)
    # the best response gains what the certificate says over the equilibrium, not more
    eq = state.equity.value(0, 0, 1) if br_player == 0 else 1 - state.equity.value(0, 0, 1)
    assert want >= eq


def test_equity_payoff_tree_pays_successor_equity(grid):
    _, _, state, _ = grid
    t = build_cell(SMALL, 10, 10, 0, 0, payoff="equity", equity=state.equity)
    term = t.node_outcome >= 0
    vals = set(np.round(t.utilities()[term], 12))
    # player 0 reaching 12 pays 1; player 1 reaching 12 pays 0; 11x10 / 10x11 (a 1-point hand) pay their equity
    assert 1.0 in vals and 0.0 in vals
    assert round(state.equity.value(11, 10, 1), 12) in vals and round(state.equity.value(10, 11, 1), 12) in vals
    with pytest.raises(ValueError, match="equity"):
        build_cell(SMALL, 10, 10, 0, 0, payoff="equity")


def test_executors_agree_exactly(tmp_path):
    cfg = MatchConfig(SMALL, target=1e-4, table=False)
    cells = [(8, 11)]  # 7 cells over four levels, warm starts between them
    s1, _ = run_match(cfg, cells, tmp_path / "inline", workers=1, progress=False)
    s2, _ = run_match(cfg, cells, tmp_path / "pool", workers=2, progress=False)
    assert np.array_equal(s1.equity.values, s2.equity.values, equal_nan=True)
    assert np.array_equal(s1.v0, s2.v0, equal_nan=True)


@pytest.mark.slow
def test_ray_executor_equals_the_local_one(tmp_path):
    ray = pytest.importorskip("ray", reason="Ray is the optional extra 'ray' (make test installs it)")
    cfg = MatchConfig(SMALL, target=1e-4, table=False)
    local, _ = run_match(cfg, "eleven", tmp_path / "local", workers=2, progress=False)
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        remote, _ = run_match(cfg, "eleven", tmp_path / "ray", executor="ray", progress=False)
    finally:
        ray.shutdown()
    assert np.array_equal(local.equity.values, remote.equity.values, equal_nan=True)


def test_inline_executor_reuses_trees_between_equal_structures(tmp_path):
    ex = InlineExecutor()
    cfg = MatchConfig(SMALL, target=1e-3, table=False)
    from truco_lab.lab.match import solve_match

    solve_match(cfg, select_cells(SMALL, "eleven"), ex, tmp_path)
    # the eleven row has two structures per dealer and vira class (one player on 11, both on 11)
    assert 0 < len(ex.cache.trees) <= 2 * 2 * 7


@pytest.mark.slow
def test_streamed_cells_give_the_in_memory_match(tmp_path, capsys):
    """--stream-over routes cells through the streamed solver (cut at depth 3, parts on disk): with cold
    starts on both sides the iterates are the same, so the equities and the match certificate agree."""
    from solvers.tables import StrategyTable, read_metadata
    from truco_lab.cli import main

    cells = [(10, 11)]
    mem = MatchConfig(SMALL, target=1e-4, table=False, warm_start=False)
    st = MatchConfig(SMALL, target=1e-4, table=True, warm_start=False, stream_over_gb=1e-6)
    a, sa = run_match(mem, cells, tmp_path / "mem", workers=1, progress=False)
    b, sb = run_match(st, cells, tmp_path / "st", workers=1, progress=False)
    assert not list((tmp_path / "st" / "cells").glob("*/parts"))  # deleted once each cell was solved
    streamed = [json.loads(f.read_text()) for f in (tmp_path / "st" / "cells").glob("*/results/*.json")]
    assert streamed and all(r["split_depth"] == 3 for r in streamed if "split_depth" in r)
    assert sum("split_depth" in r for r in streamed) >= 3
    # streamed cells write their strategy tables too, one per task with its rows counted
    tables = list((tmp_path / "st" / "cells").glob("**/*.parquet"))
    assert len(tables) == 3  # 10x11 (d1), its 11x11 successor (d1) and 11x11 (d0): one vira class each
    for f in tables:
        assert read_metadata(f)["rows"] == len(StrategyTable.load(f)) > 0
    assert not list((tmp_path / "mem" / "cells").glob("*/parts"))
    ok = ~np.isnan(a.equity.values)
    assert np.allclose(a.equity.values[ok], b.equity.values[ok], atol=1e-8)
    assert sb["match_exploitability"] == pytest.approx(sa["match_exploitability"], abs=1e-8)
    assert main(["match", "--out", str(tmp_path / "p"), "--plan", "--cells", "0,0", "--stream-over", "20"]) == 0
    last = capsys.readouterr().out.strip().splitlines()
    totals = next(x for x in last if "CPU-hours" in x)
    assert "streamed from disk" in totals and any(x.endswith("streamed") and "0x0" in x for x in last)


@pytest.mark.slow
def test_streamed_cells_warm_start_from_streamed_neighbours_as_in_memory_cells_do(tmp_path):
    """A streamed cell starts from its streamed neighbour's regrets (same structure key, same parts), so a
    warm-started streamed match iterates exactly as the warm-started in-memory one: same iterations, the
    same equities, and the tasks say which neighbour started them."""
    cells = [(9, 11)]  # 11x11, 10x11 and 9x11 for both dealers: 9x11 starts from 10x11's regrets
    mem = MatchConfig(SMALL, target=1e-4, table=False)
    st = MatchConfig(SMALL, target=1e-4, table=False, stream_over_gb=1e-6)
    a, _ = run_match(mem, cells, tmp_path / "mem", workers=1, progress=False)
    b, _ = run_match(st, cells, tmp_path / "st", workers=1, progress=False)

    def results(run):
        out = {}
        for f in (tmp_path / run / "cells").glob("*/results/*.json"):
            r = json.loads(f.read_text())
            out[r["name"]] = r
        return out

    ra, rb = results("mem"), results("st")
    assert ra.keys() == rb.keys() and all(r["split_depth"] == 3 for r in rb.values())
    warm = {k for k, r in rb.items() if r["warm_start"]}
    assert warm == {k for k, r in ra.items() if r["warm_start"]} and any(k.startswith("s9-11") for k in warm)
    assert all(rb[k]["warm_iterations"] == ra[k]["warm_iterations"] > 0 for k in warm)
    assert all(rb[k]["iterations"] == ra[k]["iterations"] for k in ra)
    ok = ~np.isnan(a.equity.values)
    assert np.allclose(a.equity.values[ok], b.equity.values[ok], atol=1e-8)


def test_warm_started_cells_schedule_their_checks_from_the_neighbours(tmp_path):
    """A cell warm-started from a neighbour checks first at twice check_every, then where the neighbour's slope
    says (solvers.api.next_check's prior), and keeps that prior in its checkpoint for a resume."""
    from solvers.api import checks_of, next_check

    cfg = MatchConfig(SMALL, target=1e-4, table=False)
    run_match(cfg, [(9, 10)], tmp_path, workers=1, progress=False)
    res = {r["name"]: r for r in (json.loads(f.read_text()) for f in tmp_path.glob("cells/*/results/*.json"))}
    ckpt = {f.name: f for f in tmp_path.glob("cells/*/checkpoints/*.npz")}
    warm = [r for r in res.values() if r["warm_start"] and r["history"][0][1] > 1e-4]
    assert warm  # 9x10 (dealer 1) starts from 10x10's regrets and is not done at its first check
    for r in warm:
        src = ckpt[r["warm_start"]]
        mine = ckpt[next(n for n in ckpt if n.startswith(r["name"] + "."))]
        prior = checks_of(src, None)
        assert len(prior) >= 5 and checks_of(mine, None, "run/prior") == prior  # the neighbour's log, kept
        first = [(i, e) for i, e, _ in r["history"][:1]]
        assert first[0][0] == 2 * cfg.check_every and r["exploitability"] <= 1e-4
        assert r["history"][1][0] == next_check(first, cfg.check_every, 1e-4, prior) > first[0][0] + cfg.check_every


def test_min_s_and_endgame_select_every_cell_with_both_scores_at_least_s():
    """`--cells min:S`: every canonical cell with both scores >= S, successors included (they are: scores only
    grow); `endgame` is min:9 in a match to 12 (the 1->3 tier and the eleven row)."""
    got = select_cells(PAULISTA, "min:9")
    want = {canonical((a, b, d))[0] for a in range(9, 12) for b in range(9, 12) for d in (0, 1)}
    assert set(got) == want and len(got) == 9  # 3 unequal pairs x 2 dealers + 3 equal ones (player 1 deals)
    assert select_cells(PAULISTA, "endgame") == got
    assert set(select_cells(PAULISTA, "min:11")) == {(11, 11, 1)}
    with pytest.raises(ValueError, match="min:S"):
        select_cells(PAULISTA, "min:x")


def test_local_workers_are_cut_to_what_the_machine_holds():
    from truco_lab.lab.match_run import workers_that_fit

    said = []
    assert workers_that_fit(2, 12.0, available_gb=20.0, notify=said.append) == 1 and "running 1" in said[0]
    assert workers_that_fit(2, 2.1, available_gb=20.0, notify=said.append) == 2 and len(said) == 1
    assert workers_that_fit(2, 40.0, available_gb=20.0, notify=said.append) == 1  # one task: the guard's to refuse


def test_cores_memory_leaves_idle_go_inside_the_tasks(tmp_path, monkeypatch, capsys):
    """`match` without --threads: when memory holds fewer workers than asked, each task gets the idle cores
    (min:4 here: one 19.7 GB task of the 1-3-6-9 tier at a time); an explicit --threads 1 keeps one; equities as
    on one thread."""
    import truco_lab.lab.match_run as mr
    from truco_lab.lab.match_run import local_shape

    rows = plan(PAULISTA, select_cells(PAULISTA, "min:4"))
    cfg = MatchConfig(PAULISTA)
    assert local_shape(cfg, rows, 2, available_gb=22.0, auto_threads=True) == (1, 2)
    assert local_shape(cfg, rows, 2, available_gb=22.0) == (1, 1)
    assert local_shape(cfg, rows, 2, available_gb=64.0, auto_threads=True) == (2, 1)
    assert local_shape(MatchConfig(PAULISTA, threads=3), rows, 2, 22.0, auto_threads=True) == (1, 3)

    seen = []
    real = mr.solve_match
    monkeypatch.setattr(mr, "solve_match", lambda c, *a, **k: seen.append(c.threads) or real(c, *a, **k))
    small = MatchConfig(SMALL, target=1e-4, table=False)
    one, _ = run_match(small, [(9, 11)], tmp_path / "one", workers=2, progress=False, auto_threads=True)
    assert seen == [1]  # the machine holds both workers: nothing changes
    monkeypatch.setattr(mr, "available_memory_gb", lambda: 1e-4)
    two, _ = run_match(small, [(9, 11)], tmp_path / "two", workers=2, progress=False, auto_threads=True)
    assert seen == [1, 2] and "2 threads per task" in capsys.readouterr().err
    ok = ~np.isnan(one.equity.values)
    assert np.allclose(one.equity.values[ok], two.equity.values[ok], atol=1e-9)


def test_a_suggested_match_command_streams_what_this_machine_cannot_hold(monkeypatch):
    """Safe to copy as printed: a cell whose successors include the full ladder (a 47.6 GB task in memory) is
    suggested with --stream-over on a 24 GB machine, priced streamed; cells that fit are suggested as they are."""
    import truco_lab.lab.match_run as mr

    monkeypatch.setattr(mr, "total_memory_gb", lambda: 24.0)
    big = mr.match_command(PAULISTA, [(2, 5)], "results/x")
    assert "--stream-over 19 " in big and "CPU-hours" in big
    gb = float(big.split(" GB per task")[0].rsplit(" ", 1)[1])
    assert gb <= 0.9 * 24
    small = mr.match_command(PAULISTA, [(10, 10)], "results/y")
    assert "--stream-over" not in small and "2.4 GB per task" in small
    monkeypatch.setattr(mr, "total_memory_gb", lambda: 128.0)
    assert "--stream-over" not in mr.match_command(PAULISTA, [(2, 5)], "results/x")


def test_a_closed_pool_with_jobs_left_lets_the_process_exit(tmp_path):
    """An interrupted level leaves jobs in the workers' inboxes: at exit each queue's feeder thread waited to push
    them into a full pipe nobody read, and a real min:6 run hung after saying "interrupted". The pool's close()
    now drops them: a process that queues ~4 MB for a worker that is gone exits at once."""
    import subprocess
    import sys

    code = """
import numpy as np
from truco_lab.lab.executors import LocalExecutor
ex = LocalExecutor(1, cache_gb=0.1)
ex.procs[0].kill()
ex.procs[0].join()
for i in range(64):
    ex.inboxes[0].put((i, np.zeros(8192)))  # 64 KB each: far more than a pipe holds
ex.close()
print("closed")
"""
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0 and p.stdout.strip() == "closed", p.stderr[-500:]


class _Reversed(InlineExecutor):
    """Runs each level's tasks last first: as a cluster may, where every task of a level starts at once."""

    def map(self, jobs, on_result):
        super().map(list(reversed(jobs)), on_result)


def _results(run: Path) -> dict:
    return {r["name"]: r for r in (json.loads(f.read_text()) for f in run.glob("cells/*/results/*.json"))}


def test_warm_starts_come_from_earlier_levels_whatever_order_a_level_runs_in(tmp_path):
    """8x10 and 9x9 (dealer 1) share a tree and a score-sum level: neither may start from the other, whose
    checkpoint may not exist yet when a cluster starts both (run here last first, which failed before)."""
    from truco_lab.lab.match import levels, solve_match

    cells = select_cells(SMALL, "min:8")
    level_of = {c: i for i, lev in enumerate(levels(cells)) for c in lev}
    cfg = MatchConfig(SMALL, target=1e-3, table=False)
    solve_match(cfg, cells, _Reversed(), tmp_path)
    res = _results(tmp_path)
    cell = {r["name"]: (r["score"][0], r["score"][1], r["dealer"]) for r in res.values()}
    warm = {n: r["warm_start"].rsplit(".", 2)[0] for n, r in res.items() if r["warm_start"]}
    assert any(n.startswith("s9-9_d1") for n in warm)
    for n, src in warm.items():
        assert level_of[canonical(cell[src])[0]] < level_of[canonical(cell[n])[0]], (n, src)


def test_finished_cells_drop_their_checkpoints_and_are_played_from_their_tables(tmp_path):
    """By default a finished task's checkpoint goes once no later cell starts from it: the run ends with none,
    solves exactly what a run keeping them solves, and its match strategy (read from the tables) is the
    checkpoints' average strategy, bit for bit, in every class of every cell."""
    cells = "min:9"
    kept, _ = run_match(MatchConfig(SMALL, target=1e-3, keep_checkpoints=True), cells, tmp_path / "kept",
                        workers=1, progress=False)
    pruned, _ = run_match(MatchConfig(SMALL, target=1e-3), cells, tmp_path / "pruned", workers=1, progress=False)
    from truco_lab.abstraction.levels import vira_classes

    nclass = len(vira_classes(SMALL))
    assert len(list((tmp_path / "kept").glob("cells/*/checkpoints/*.npz"))) == nclass * len(kept.cells)
    assert not list((tmp_path / "pruned").glob("cells/*/checkpoints/*.npz"))
    a, b = _results(tmp_path / "kept"), _results(tmp_path / "pruned")
    assert a.keys() == b.keys() and any(r["warm_start"] for r in b.values())
    for n in a:
        assert (a[n]["warm_start"], a[n]["iterations"], a[n]["exploitability"]) == \
               (b[n]["warm_start"], b[n]["iterations"], b[n]["exploitability"]), n
    sa, sb = MatchStrategy(tmp_path / "kept"), MatchStrategy(tmp_path / "pruned")
    for cell in kept.cells:
        for vc in range(nclass):
            pa, pb = sa._part(cell, vc), sb._part(cell, vc)
            assert pa.checkpoint.exists() and not pb.checkpoint.exists() and pb.table.exists()
            assert pa.avg.dtype == pb.avg.dtype == np.float32 and np.array_equal(pa.avg, pb.avg), (cell, vc)


def test_closing_a_pool_whose_worker_is_busy_says_what_it_waits_for(capsys, monkeypatch):
    """After Ctrl-C a busy worker saves (or finishes the tree it builds) before it stops: the driver says so at
    once instead of sitting silent for up to a minute or two (seen on the real min:6 run)."""
    import time

    import truco_lab.lab.executors as E

    monkeypatch.setattr(E, "run_cell", lambda job, cache=None: time.sleep(3))  # forked workers inherit it
    ex = E.LocalExecutor(1, cache_gb=0.1)
    ex.inboxes[0].put((0, None))
    time.sleep(0.5)
    t0 = time.time()
    ex.close()
    err = capsys.readouterr().err
    assert "waiting for 1 worker to stop (each saves its checkpoint first" in err and not ex.procs[0].is_alive()
    assert time.time() - t0 < 30
    idle = E.LocalExecutor(1, cache_gb=0.1)
    idle.close()
    assert "waiting" not in capsys.readouterr().err  # an idle pool closes without a word
