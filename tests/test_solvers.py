"""Solver core checked against things we did not write: known values and OpenSpiel."""

import numpy as np
import pyspiel
import pytest
from open_spiel.python.algorithms import exploitability as os_expl

import truco_lab  # noqa: F401
from solvers import ALGORITHMS, CFRSolver, build_openspiel_tree, solve


def test_kuhn_game_value_is_minus_one_eighteenth():
    r = solve(pyspiel.load_game("kuhn_poker"), algorithm="dcfr", iterations=400)
    assert abs(r.game_value - (-1 / 18)) < 1e-3
    assert r.exploitability < 1e-3


@pytest.mark.parametrize("name", ["kuhn_poker", "leduc_poker"])
@pytest.mark.parametrize("alg", ALGORITHMS)
def test_our_exploitability_equals_openspiels(name, alg):
    g = pyspiel.load_game(name)
    r = solve(g, algorithm=alg, iterations=30)
    pol = r.to_openspiel_policy()
    theirs = os_expl.exploitability(g, pol)
    assert abs(theirs - r.exploitability) < 1e-6
    assert abs(os_expl.nash_conv(g, pol) / 2 - r.exploitability) < 1e-6


@pytest.mark.parametrize("alg", ALGORITHMS)
def test_every_algorithm_converges_on_leduc(alg):
    r = solve(pyspiel.load_game("leduc_poker"), algorithm=alg, iterations=300)
    assert r.exploitability < 0.05
    assert abs(r.game_value - (-0.0856)) < 0.01


def test_simultaneous_updates_also_converge():
    r = solve(pyspiel.load_game("kuhn_poker"), algorithm="cfr+", iterations=500, alternating=False)
    assert r.exploitability < 5e-3


def test_target_exploitability_stops_early():
    r = solve(pyspiel.load_game("leduc_poker"), algorithm="dcfr", iterations=None, target_exploitability=5e-3, check_every=10)
    assert r.exploitability <= 5e-3 and r.history[-1][0] == r.iterations  # stopped at the check that met it
    assert all(e > 5e-3 for _, e, _ in r.history[:-1])  # and at the first such check
    # the schedule (solvers.api.next_check): 10 and 20, then where the measured power law meets the target
    its = [i for i, _, _ in r.history]
    assert its[:2] == [10, 20] and len(its) < r.iterations // 10  # fewer checks than one every 10 iterations
    assert abs(os_expl.exploitability(r.game, r.to_openspiel_policy()) - r.exploitability) < 1e-6  # OpenSpiel's


def test_a_resumed_target_run_checks_and_stops_where_an_uninterrupted_one_does(tmp_path):
    """The check schedule depends on the exploitabilities measured so far; checkpoints carry them."""
    g = pyspiel.load_game("leduc_poker")
    full = solve(g, algorithm="dcfr", iterations=None, target_exploitability=2e-3, check_every=5)
    ck = tmp_path / "ck.npz"
    cut = full.history[3][0] + 1  # stopped between two checks, as by Ctrl-C
    part = solve(g, algorithm="dcfr", iterations=cut, target_exploitability=2e-3, check_every=5, checkpoint=ck,
                 checkpoint_every=10 ** 6)
    assert part.iterations < full.iterations
    again = solve(g, algorithm="dcfr", iterations=None, target_exploitability=2e-3, check_every=5, checkpoint=ck,
                  resume=True)
    assert again.iterations == full.iterations and again.exploitability == full.exploitability
    assert [h[0] for h in again.history[1:]] == [h[0] for h in full.history if h[0] > part.iterations]


def test_a_prior_schedule_jumps_on_the_neighbours_slope():
    """next_check with a warm start's prior: the first check at PRIOR_SHARE of the neighbour's count, within
    check_every and twice that, the second where it meets the target on the neighbour's last slope (capped at PRIOR_SLOPE_CAP, and at where the neighbour met the
    target); past the prior's log, the prior's reach is where its own power law meets the target."""
    from solvers.api import PRIOR_SLOPE_CAP, next_check, prior_reach

    prior = [(5, 4e-2), (10, 1.2e-2), (20, 4e-3), (40, 8e-4)]
    assert prior_reach(prior, 1e-3) == 40 and prior_reach(prior, 1e-1) == 5
    assert prior_reach(prior[:3], 1e-3) == 40  # (20, 4e-3) at slope log2(3): 20 * 4^(1/1.585) = 47.6, capped at 2 x 20
    assert next_check([], 5, 1e-3, prior) == 10
    assert next_check([], 5, 1e-3, [(5, 9e-4)]) == 5  # a quick neighbour: check as early as without a prior
    assert next_check([], 5, 1e-3, [(5, 2e-3), (10, 9e-4), (30, 1e-4)]) == 5  # 0.3 x 10 is under check_every
    assert next_check([], 5, 1e-3) == 5 and next_check([], 5, None, prior) == 5  # no prior, or no target
    k = min(np.log(4e-3 / 8e-4) / np.log(2), PRIOR_SLOPE_CAP)  # the prior's last slope, capped
    assert next_check([(10, 5e-3)], 5, 1e-3, prior) == int(np.ceil(10 * 5 ** (1 / k))) == 23
    assert next_check([(10, 5e-2)], 5, 1e-3, prior) == 40  # no later than where the neighbour got there
    assert next_check([(10, 1.1e-3)], 5, 1e-3, prior) == 11  # at least one iteration on
    assert next_check([(10, 5e-3)], 5, 1e-3) == 15  # without it: check_every on
    two = [(10, 5e-3), (23, 1.2e-3)]
    assert next_check(two, 5, 1e-3, prior) == next_check(two, 5, 1e-3)  # from two own checks on, the prior is unused


def test_a_stall_between_two_close_checks_is_not_extrapolated_alone():
    """The real 8x10 class 1's logged checks: a flat last interval (49 -> 58) alone put the next check at 84,
    where its siblings met 1e-3 at 60-62; the last three checks' end-to-end slope puts it at 67. A steady power
    law schedules as before, and a last interval without progress still falls back to the plain interval."""
    from solvers.api import check_interval, next_check

    stall = [(33, 3.16e-3), (49, 1.39e-3), (58, 1.25e-3)]
    k3 = np.log(3.16 / 1.25) / np.log(58 / 33)
    assert next_check(stall, 5, 1e-3) == 58 + int(np.ceil(58 * 1.25 ** (1 / k3) - 58)) == 67
    k2 = np.log(1.39 / 1.25) / np.log(58 / 49)
    assert next_check(stall[1:], 5, 1e-3) == int(np.ceil(58 * 1.25 ** (1 / k2))) == 83  # two checks: the last slope
    law = [(t, 2.0 * t ** -1.8) for t in (20, 30, 45)]  # one exponent throughout: the last slope's answer
    assert next_check(law, 5, 1.5e-3) == next_check(law[1:], 5, 1.5e-3) == 45 + int(np.ceil(45 * (law[-1][1] / 1.5e-3) ** (1 / 1.8) - 45))
    assert next_check([(33, 3e-3), (49, 1.4e-3), (58, 1.5e-3)], 5, 1e-3) == 58 + check_interval(58, 5)


def test_a_warm_started_run_checks_from_its_prior_and_resumes_on_the_same_schedule(tmp_path):
    """run(prior=...) on Leduc: fewer checks than a cold schedule, the target met; the prior is kept in the
    checkpoints, so a resumed run checks exactly where the uninterrupted one does."""
    from solvers.api import run

    g = pyspiel.load_game("leduc_poker")
    cold = solve(g, algorithm="dcfr", iterations=None, target_exploitability=2e-3, check_every=5)
    prior = [(i, e) for i, e, _ in cold.history]
    fresh = lambda: CFRSolver(build_openspiel_tree(g), "dcfr")  # noqa: E731
    expl, hist = run(fresh(), None, 2e-3, check_every=5, prior=prior)
    assert expl <= 2e-3 and hist[0][0] == 10 and hist[1][0] > 20  # the second check jumps
    assert len(hist) < len(cold.history) and hist[-1][0] <= cold.iterations + 5
    ck = tmp_path / "ck.npz"
    cut = hist[0][0] + 1
    run(fresh(), cut, 2e-3, check_every=5, prior=prior, checkpoint=ck, checkpoint_every=10 ** 6)
    _, again = run(fresh(), None, 2e-3, check_every=5, checkpoint=ck, resume=True)  # the prior from the file
    assert [h[0] for h in again[1:]] == [h[0] for h in hist if h[0] > cut]


def test_resume_gives_the_same_regrets_as_an_uninterrupted_run(tmp_path):
    g = pyspiel.load_game("leduc_poker")
    full = solve(g, algorithm="pcfr+", iterations=60)
    ck = tmp_path / "ck.npz"
    solve(g, algorithm="pcfr+", iterations=25, checkpoint=ck)
    resumed = solve(g, algorithm="pcfr+", iterations=60, checkpoint=ck, resume=True)
    assert resumed.iterations == 60
    assert np.array_equal(full.solver.regrets, resumed.solver.regrets)
    assert np.array_equal(full.solver.ssum, resumed.solver.ssum)


def test_bad_arguments_are_named():
    g = pyspiel.load_game("kuhn_poker")
    with pytest.raises(ValueError, match="algorithm"):
        solve(g, algorithm="cfr++")
    with pytest.raises(ValueError, match="tree"):
        solve(g, tree="magic")
    with pytest.raises(ValueError, match="two-player zero-sum"):
        solve(pyspiel.load_game("kuhn_poker", {"players": 3}))


def test_best_response_of_a_pure_deviation_is_exact():
    # In Kuhn, always-bet vs always-bet: best responses are known closed-form values
    tree = build_openspiel_tree(pyspiel.load_game("kuhn_poker"))
    s = CFRSolver(tree)
    strat = s.current_strategy()  # uniform
    b0, b1 = s.best_response_values(strat)
    g = pyspiel.load_game("kuhn_poker")
    from open_spiel.python import policy

    uni = policy.UniformRandomPolicy(g)
    assert abs((b0 + b1) - os_expl.nash_conv(g, uni)) < 1e-9


def test_parallel_passes_equal_the_sequential_ones(monkeypatch):
    """Subtrees below the frontier in parallel, shared lists through per-bin buffers: same numbers."""
    import solvers.vector as V
    from truco_lab.abstraction.tree import build_cell
    from truco_lab.rules.ruleset import PAULISTA

    monkeypatch.setattr(V, "PARALLEL_SLOTS", 0)
    tree = build_cell(PAULISTA.with_deck("KA23", "hc").with_max_stake(6), 0, 0, 1, 0)
    plan = V.ParallelPlan.make(tree)
    assert plan is not None and len(plan.task_f) > 2 and plan.sh_start.size > 0
    a, b = V.VectorSolver(tree, "dcfr", threads=1), V.VectorSolver(tree, "dcfr", threads=2)
    a.iterate(20)
    b.iterate(20)
    assert np.allclose(a.regrets, b.regrets, rtol=1e-5, atol=1e-7) and np.allclose(a.ssum, b.ssum, rtol=1e-5)
    assert abs(a.exploitability() - b.exploitability()) < 1e-9
    assert abs(a.game_value() - b.game_value()) < 1e-9


def test_generic_walk_of_a_huge_game_is_refused_up_front():
    import time

    g = pyspiel.load_game("truco_paulista")
    t = time.perf_counter()
    with pytest.raises(ValueError, match="native"):
        solve(g, tree="openspiel", iterations=1)
    assert time.perf_counter() - t < 30


def test_a_flat_schedule_is_the_unscheduled_rule():
    """hs-dcfr with gamma 1 never ramps: it must be DCFR with gamma 1, bit for bit."""
    g = pyspiel.load_game("leduc_poker")
    a = solve(g, algorithm="hs-dcfr", iterations=40, gamma=1.0).solver
    b = solve(g, algorithm="dcfr", iterations=40, gamma=1.0).solver
    assert np.array_equal(a.regrets, b.regrets) and np.array_equal(a.ssum, b.ssum)


def test_scheduled_pcfr_plus_keeps_pcfr_plus_regrets():
    """hs-pcfr+ changes only how the average is weighted: its regrets are PCFR+'s, bit for bit."""
    tree = build_openspiel_tree(pyspiel.load_game("leduc_poker"))
    a, b = CFRSolver(tree, "pcfr+"), CFRSolver(tree, "hs-pcfr+")
    a.iterate(50)
    b.iterate(50)
    assert np.array_equal(a.regrets, b.regrets) and np.array_equal(a.pred, b.pred)
    assert not np.array_equal(a.average_strategy(), b.average_strategy())


@pytest.mark.parametrize("handler", ["raises", "default"])
def test_a_signal_during_the_last_check_is_delivered_not_dropped(tmp_path, handler):
    """CI hung on an Argentine match's SIGTERM: a pool worker got the pool's terminate while its cell ran the
    closing exploitability check, the run then reached its target and the flagged signal was dropped, so the
    worker lived on and the driver waited for it forever. A signal flagged during the last check now reaches
    the handler before once the run ends (the checkpoint saved first); with the default handler, it kills."""
    import signal
    import subprocess
    import sys

    from solvers.api import load_checkpoint

    if handler == "default":  # SIG_DFL kills the process: run it in a child and read its exit status
        code = ("import os, signal, pyspiel; import truco_lab; from solvers import CFRSolver, build_openspiel_tree;"
                "from solvers.api import run\n"
                "s = CFRSolver(build_openspiel_tree(pyspiel.load_game('kuhn_poker')), 'dcfr')\n"
                "e = s.exploitability\n"
                "s.exploitability = lambda: (os.kill(os.getpid(), signal.SIGTERM), e())[1]\n"
                "run(s, None, 1.0, check_every=5)\nprint('lived on', flush=True)\n")
        p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
        assert p.returncode == -signal.SIGTERM and "lived on" not in p.stdout, (p.returncode, p.stdout, p.stderr)
        return
    # in a child that sets Python's own Ctrl-C handler first: a command started with `&` from a script (as CI was)
    # inherits SIGINT ignored, Python then installs no handler, and the run rightly leaves an ignored signal ignored
    ckpt = tmp_path / "c.npz"
    code = ("import os, signal, pyspiel; import truco_lab; from solvers import CFRSolver, build_openspiel_tree;"
            "from solvers.api import run\n"
            "signal.signal(signal.SIGINT, signal.default_int_handler)\n"
            "s = CFRSolver(build_openspiel_tree(pyspiel.load_game('kuhn_poker')), 'dcfr')\n"
            "e = s.exploitability\n"
            "s.exploitability = lambda: (os.kill(os.getpid(), signal.SIGINT), e())[1]\n"  # arrives mid-check
            "try:\n"
            f"    run(s, None, 1.0, check_every=5, checkpoint={str(ckpt)!r})\n"  # the first check reaches the target
            "    print('lived on', flush=True)\n"
            "except KeyboardInterrupt:\n"
            "    print('raised', signal.getsignal(signal.SIGINT) is signal.default_int_handler, s.iteration)\n")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0 and p.stdout.split() == ["raised", "True", "5"], (p.returncode, p.stdout, p.stderr)
    again = CFRSolver(build_openspiel_tree(pyspiel.load_game("kuhn_poker")), "dcfr")
    load_checkpoint(again, ckpt)
    assert again.iteration == 5  # the finished iterations were saved before it raised


def test_freed_memory_is_kept_for_the_next_allocation_then_released(monkeypatch):
    """keep_freed_memory: a big array freed stays in the process (the next one reuses it instead of touching new
    memory); release_freed_memory gives it back. Off with SOLVERS_KEEP_FREED=0."""
    from solvers.storage import keep_freed_memory, release_freed_memory

    def rss_mb() -> float:
        with open("/proc/self/status") as f:
            return next(int(x.split()[1]) for x in f if x.startswith("VmRSS:")) / 1024

    monkeypatch.setenv("SOLVERS_KEEP_FREED", "0")
    assert keep_freed_memory() is False
    monkeypatch.delenv("SOLVERS_KEEP_FREED")
    release_freed_memory()
    if not keep_freed_memory():
        pytest.skip("no glibc allocator here")
    before = rss_mb()
    a = np.ones(50_000_000)  # 400 MB
    del a
    assert rss_mb() - before > 300  # kept
    release_freed_memory()
    assert rss_mb() - before < 100  # returned
