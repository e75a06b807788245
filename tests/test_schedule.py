"""The plan's critical path and simulated cluster schedule (truco_lab.lab.schedule)."""

from __future__ import annotations

import pytest

from truco_lab.lab.match import canonical, levels, plan, select_cells, successors
from truco_lab.lab.schedule import critical_path, simulate, task_hours
from truco_lab.rules.ruleset import RuleSet, rule_set

FULL = rule_set("paulista")


def _rows(rules, which):
    return plan(rules, select_cells(rules, which))


def test_one_core_runs_every_task_in_turn():
    rows = _rows(FULL, "endgame")
    sim = simulate(rows, nodes=1, cores=1, node_memory_gb=64)
    assert sim.wall_hours == pytest.approx(sum(r.hours for r in rows))
    assert sim.utilisation == pytest.approx(1.0)


def test_unlimited_machines_wait_only_for_each_level_longest_task():
    rows = _rows(FULL, "endgame")
    sim = simulate(rows, nodes=1000, cores=16, node_memory_gb=64)
    by = {r.cell: r for r in rows}
    assert sim.wall_hours == pytest.approx(sum(max(task_hours(by[c], False) for c in lv)
                                               for lv in levels(list(by))))


def test_critical_path_is_a_chain_of_successors_and_bounds_every_schedule():
    small = RuleSet.from_options("paulista", ranks="4567QJKA23", suits="c", max_stake=3)
    rows = _rows(small, "all")
    chain = critical_path(small, rows)
    for a, b in zip(chain.cells, chain.cells[1:], strict=False):
        assert b in {canonical(s)[0] for s in successors(small, a)}
    by = {r.cell: r for r in rows}
    assert chain.hours == pytest.approx(sum(task_hours(by[c], False) for c in chain.cells))
    for nodes in (1, 4, 1000):
        assert simulate(rows, nodes, 2, 24).wall_hours >= chain.hours * (1 - 1e-9)


def test_a_task_bigger_than_a_node_is_refused():
    rows = _rows(FULL, "endgame")
    with pytest.raises(ValueError, match="GB"):
        simulate(rows, nodes=4, cores=16, node_memory_gb=2)


def test_cli_plan_prints_the_critical_path_and_the_simulation(capsys, tmp_path):
    from truco_lab.cli import main

    assert main(["match", "--cells", "endgame", "--plan", "--out", str(tmp_path / "x"), "--nodes", "2", "--cores",
                 "4", "--node-memory", "32"]) == 0
    out = capsys.readouterr().out
    assert "critical path:" in out and "simulated on 2 nodes x 4 cores, 32 GB each" in out
    assert main(["match", "--cells", "endgame", "--out", str(tmp_path / "y"), "--nodes", "2"]) == 2
    assert "only with --plan" in capsys.readouterr().err
    assert not (tmp_path / "y").exists()


def test_threads_per_task_shorten_each_task_by_the_measured_speedup_and_take_their_cores():
    from truco_lab.lab.schedule import TWO_THREAD_SPEEDUP, thread_speedup

    assert thread_speedup(1) == 1.0 and thread_speedup(2) == pytest.approx(TWO_THREAD_SPEEDUP)
    sp = [thread_speedup(t) for t in (1, 2, 4, 8, 16)]
    assert all(a < b < t for a, b, t in zip(sp[:-1], sp[1:], (2, 4, 8, 16), strict=True))
    rows = _rows(FULL, "endgame")
    total = sum(r.hours for r in rows)
    # one node whose cores all go to one task at a time: every task in turn, each sooner by the speedup
    sim = simulate(rows, nodes=1, cores=4, node_memory_gb=64, threads=4)
    assert sim.wall_hours == pytest.approx(total / thread_speedup(4))
    assert sim.utilisation == pytest.approx(1.0)
    # two-core tasks on a two-core node never overlap, one-core tasks do
    assert simulate(rows, 1, 2, 64, threads=2).wall_hours > simulate(rows, 1, 2, 64).wall_hours / TWO_THREAD_SPEEDUP
    chain1, chain2 = critical_path(FULL, rows), critical_path(FULL, rows, threads=2)
    assert chain2.cells == chain1.cells and chain2.hours == pytest.approx(chain1.hours / TWO_THREAD_SPEEDUP)
    with pytest.raises(ValueError, match="cores"):
        simulate(rows, nodes=4, cores=2, node_memory_gb=64, threads=4)


def test_cli_plan_with_threads_says_how_much_sooner_and_whether_that_is_measured(capsys, tmp_path):
    from truco_lab.cli import main

    base = ["match", "--cells", "endgame", "--plan", "--out", str(tmp_path / "x"), "--nodes", "2", "--cores", "4",
            "--node-memory", "32"]
    assert main(base + ["--threads", "2"]) == 0
    out = capsys.readouterr().out
    assert "2 threads per task: each finishes 1.80x sooner than on one core (measured)" in out
    assert "(2 cores and its predicted peak per task" in out
    assert main(base + ["--threads", "4"]) == 0
    assert "Amdahl's law, not measured" in capsys.readouterr().out
    assert main(base + ["--threads", "8"]) == 2  # more threads than a node's cores
    assert "8 threads per task: a node has 4 cores" in capsys.readouterr().err


def test_local_plan_runs_only_the_workers_whose_tasks_fit_together():
    """`--plan` without a cluster prices this machine as run_match runs it: 1-3-6-9 tasks (~19.7 GB) one at a
    time in 22 GB, so the wall time is the CPU time (the old line halved it 'if memory allows')."""
    from truco_lab.lab.match import MatchConfig
    from truco_lab.lab.match_run import local_schedule

    cfg = MatchConfig(FULL)
    rows = _rows(FULL, "min:4")
    big = max(r.peak_gb for r in rows)
    assert 11 < big < 22
    hours, line = local_schedule(rows, 2, cfg, available_gb=22)
    assert hours == pytest.approx(sum(r.hours for r in rows))
    assert "with 1 worker (of 2 asked" in line and "--threads 2:" in line
    roomy, line = local_schedule(rows, 2, cfg, available_gb=2.5 * big)
    assert roomy < 0.6 * hours and "with 2 workers in" in line
    assert roomy >= critical_path(FULL, rows).hours
    hours, line = local_schedule(rows, 2, cfg, available_gb=big / 2)
    assert hours is None and f"a {big:.1f} GB task does not fit the {big / 2:.1f} GB available now" in line


def test_the_plans_check_overhead_counts_the_checks_a_run_makes():
    """`--plan` prices the exploitability checks that solvers.api.run schedules: on a solver whose
    exploitability falls as the plan assumes (t^-1.8, reaching the target at iteration N), the run stops at
    N's check and makes exactly the checks the plan counts."""
    import math
    from types import SimpleNamespace

    from solvers.api import run
    from truco_lab.lab.match import CHECK_COST, check_overhead

    class Curve:
        tree = SimpleNamespace(num_slots=0)

        def __init__(self, n):
            self.n, self.iteration, self.checks = n, 0, 0

        def iterate(self, k):
            self.iteration += k

        def exploitability(self):
            self.checks += 1
            return 1e-3 * (self.n / self.iteration) ** 1.8

    for n in (40, 80, 170, 400):
        s = Curve(n)
        expl, history = run(s, None, 1e-3, check_every=5)
        assert expl <= 1e-3 and s.iteration >= n and s.iteration - n <= max(5, n // 2)
        assert math.isclose(check_overhead(n), 1 + CHECK_COST * s.checks / s.iteration)
        warm = Curve(n)  # a warm start converging alike, scheduled from this run's log: two checks, the target met
        expl, again = run(warm, None, 1e-3, check_every=5, prior=[(i, e) for i, e, _ in history])
        assert expl <= 1e-3 and warm.checks == 2 and warm.iteration <= s.iteration
    assert check_overhead(80) < 1 + CHECK_COST * 13 / 80  # the old schedule checked 13 times by 80
    assert check_overhead(80, prior=True) < check_overhead(80)  # priced from the 10-card grid's warm cells


def test_the_match_bar_counts_the_plans_hours_and_leaves_resumed_tasks_out_of_its_rate():
    """The bar's total is the plan's CPU-hours, a task advances it by its cell's share, and a task a resume
    reports again moves the bar but not the rate its ETA comes from."""
    from types import SimpleNamespace

    from truco_lab.lab.match_run import WorkBar

    rows = _rows(FULL, "endgame")
    nclass = rows[0].classes
    bar = WorkBar(rows, float("inf"), nclass)
    try:
        assert bar.bar.total == pytest.approx(sum(r.hours for r in rows))
        big = max(rows, key=lambda r: r.hours)
        small = min(rows, key=lambda r: r.hours)

        def job(r):
            return SimpleNamespace(spec=SimpleNamespace(score0=r.cell[0], score1=r.cell[1], dealer=r.cell[2],
                                                        cell_name=f"s{r.cell[0]}-{r.cell[1]}_d{r.cell[2]}"))

        bar.done(job(big), SimpleNamespace(reused=True, exploitability=1e-3, iterations=80))
        assert bar.bar.n == pytest.approx(big.hours / nclass)
        assert bar.bar.n - bar.bar.initial == 0.0  # nothing solved in this run yet: no rate
        bar.done(job(small), SimpleNamespace(reused=False, exploitability=1e-3, iterations=15))
        assert bar.bar.n - bar.bar.initial == pytest.approx(small.hours / nclass)
        assert bar.tasks == 2 and bar.ntasks == len(rows) * nclass
        assert big.hours > 10 * small.hours  # why tasks are the wrong unit
    finally:
        bar.close()


def test_the_plan_prices_each_tasks_closing_best_responses(monkeypatch):
    """Every match task ends with the match certificate's two best responses: the plan counts them per task, in
    iterations of the task's tier."""
    from truco_lab.lab import match

    cell = [(10, 10, 1)]
    with_it = match.plan(FULL, cell)[0]
    monkeypatch.setattr(match, "CLOSING_COST", 0.0)
    without = match.plan(FULL, cell)[0]
    spi = match.TIERS[2][1]
    assert with_it.hours - without.hours == pytest.approx(with_it.classes * spi * 0.68 / 3600)


def test_the_plan_scales_iterations_by_the_measured_kernel_ratio_and_nothing_else(monkeypatch):
    """Stop 52's kernels are priced by the paired ratio of an iteration's time: it scales the iterations of a tier,
    not its checks or closing best responses (priced at the seconds the tier was measured at), nor streamed cells
    (their parts keep their own kernels)."""
    from truco_lab.lab import match

    cell = [(10, 10, 1)]
    new = match.plan(FULL, cell)[0]
    monkeypatch.setitem(match.ITERATION_RATIO, 2, 1.0)
    old = match.plan(FULL, cell)[0]
    its = match.TIERS[2][3]  # 10x10 d1 is the first cell of its tree: cold, DCFR, to 1e-3
    assert old.hours - new.hours == pytest.approx(old.classes * match.TIERS[2][1] * its * (1 - 0.78) / 3600)
    assert old.streamed_hours == new.streamed_hours
