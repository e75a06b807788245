"""MCCFR (solvers.mccfr) against things we did not write: OpenSpiel's exploitability and Kuhn poker's
value -1/18, on a Kuhn poker written here as jitted functions (the SampledGame protocol)."""

from __future__ import annotations

import numba as nb
import numpy as np
import pyspiel
import pytest
from open_spiel.python import policy as os_policy
from open_spiel.python.algorithms import exploitability

from solvers.mccfr import MCCFRSolver, SampledGame
from solvers.rng import rng_next as _rnd


# Kuhn state: s[0], s[1] the cards; s[2] the number of actions; s[3..5] the actions (0 pass, 1 bet)
@nb.njit(cache=True)
def k_deal(g, s, h, rng):
    c0 = int(_rnd(rng) % np.uint64(3))
    c1 = (c0 + 1 + int(_rnd(rng) % np.uint64(2))) % 3
    s[0] = c0
    s[1] = c1
    s[2] = 0
    h[0] = 0


@nb.njit(cache=True)
def k_player(g, s):
    n = s[2]
    if n == 0 or n == 1:
        return n
    if n == 2 and s[3] == 0 and s[4] == 1:
        return 0
    return -1


@nb.njit(cache=True)
def k_legal(g, s, out):
    out[0] = 0
    out[1] = 1
    return 2


@nb.njit(cache=True)
def k_apply(g, s, h, a):
    s[3 + s[2]] = a
    s[2] += 1


@nb.njit(cache=True)
def k_utility(g, s, p):
    n = s[2]
    a0, a1 = s[3], s[4]
    hi = 0 if s[0] > s[1] else 1
    if n == 2 and a0 == 0 and a1 == 0:
        u0 = 1.0 if hi == 0 else -1.0
    elif n == 2 and a0 == 1 and a1 == 0:
        u0 = 1.0
    elif n == 2 and a0 == 1 and a1 == 1:
        u0 = 2.0 if hi == 0 else -2.0
    elif s[5] == 0:  # pass, bet, pass
        u0 = -1.0
    else:
        u0 = 2.0 if hi == 0 else -2.0
    return u0 if p == 0 else -u0


@nb.njit(cache=True)
def k_key(g, s, h, p):
    k = np.uint64(1 + s[p])
    for i in range(s[2]):
        k = k * np.uint64(7) + np.uint64(1 + s[3 + i])
    return k * np.uint64(0x9E3779B97F4A7C15)


KUHN = SampledGame(np.zeros(1, np.int32), 6, 2, k_deal, k_player, k_legal, k_apply, k_utility, k_key, "kuhn")


def _os_policy(solver):
    """The MCCFR average as an OpenSpiel TabularPolicy of kuhn_poker (info strings like '2pb')."""
    game = pyspiel.load_game("kuhn_poker")
    pol = os_policy.TabularPolicy(game)
    s = np.zeros(6, np.int32)
    for key, row in pol.state_lookup.items():
        s[:] = 0
        card = int(key[0])
        p = len(key[1:]) % 2
        s[p] = card
        s[2] = len(key) - 1
        for i, ch in enumerate(key[1:]):
            s[3 + i] = 1 if ch == "b" else 0
        pol.action_probability_array[row] = solver.average(int(k_key(KUHN.g, s, s, p)), 2)
    return game, pol


@pytest.mark.slow
@pytest.mark.parametrize("sampling,iters,tol", [("external", 20000, 1e-2), ("outcome", 200000, 1e-2)])
def test_mccfr_converges_on_kuhn_poker_by_openspiels_measure(sampling, iters, tol):
    solver = MCCFRSolver(KUHN, sampling=sampling, capacity=64, seed=3, linear=False)
    solver.iterate(iters)
    assert solver.num_infosets == 12
    game, pol = _os_policy(solver)
    assert exploitability.exploitability(game, pol) < tol
    from open_spiel.python.algorithms import expected_game_score

    v0 = expected_game_score.policy_value(game.new_initial_state(), [pol, pol])[0]
    assert v0 == pytest.approx(-1 / 18, abs=4 * tol)


def test_mccfr_is_reproducible_and_resumable_in_steps():
    a = MCCFRSolver(KUHN, seed=9)
    a.iterate(300)
    b = MCCFRSolver(KUHN, seed=9)
    b.iterate(100)
    b.iterate(200)
    assert np.array_equal(a.ssum, b.ssum) and a.iteration == b.iteration == 300


@pytest.mark.slow  # ~11 s on a cold numba cache (Kuhn's kernels compile once; 0.5 s once cached)
def test_mccfr_table_full_is_a_clear_error():
    s = MCCFRSolver(KUHN, capacity=4)
    with pytest.raises(MemoryError, match="table is full"):
        s.iterate(100)
    with pytest.raises(ValueError, match="sampling must be"):
        MCCFRSolver(KUHN, sampling="chance")


# ---- MCCFR driving the numba truco engine ----------------------------------------------------------
@pytest.mark.slow
def test_mccfr_drives_the_engine_and_converges_on_a_small_argentine_hand():
    """External sampling on the engine (no OpenSpiel in its loop); the exact exploitability of its average,
    measured by a best response on the walked OpenSpiel tree, falls; its keys are one-to-one with OpenSpiel's
    information states."""
    from dataclasses import replace

    from solvers.tree import build_openspiel_tree
    from truco_lab.openspiel.sampled import exploitability as mccfr_exploitability
    from truco_lab.openspiel.sampled import sampled_game, state_key
    from truco_lab.rules.ruleset import ARGENTINO

    og = pyspiel.load_game("truco_argentino", {"ranks": "1 7 12", "suits": "eb", "max_stake": 1, "target": 3})
    tree = build_openspiel_tree(og, infoset_hook=state_key)
    assert len(set(tree.infoset_extra)) == tree.num_infosets
    rules = replace(ARGENTINO, target=3).with_deck("1 7 12", "eb").with_max_stake(1)
    s = MCCFRSolver(sampled_game(rules, (0, 0), 1), capacity=1 << 16, seed=1)
    s.iterate(1000)
    e1 = mccfr_exploitability(s, og)
    s.iterate(19000)
    e2 = mccfr_exploitability(s, og)
    assert e2 < 0.05 and e2 < e1 / 5
    assert s.num_infosets <= tree.num_infosets


@pytest.mark.slow
def test_mccfr_plays_two_against_two_and_beats_random_head_to_head():
    """Team game: four traversers; no exploitability to certify, so head to head against uniform random play,
    seats swapped to cancel mano's edge (random against random is measured too)."""
    from dataclasses import replace

    from truco_lab.openspiel.sampled import head_to_head, sampled_game
    from truco_lab.rules.ruleset import MINEIRO

    rules = replace(MINEIRO, name="mineiro_2v2", seats=4).with_deck("KA23", "dshc").with_max_stake(4)
    game = sampled_game(rules, (0, 0), 3)
    assert game.num_players == 4
    s = MCCFRSolver(game, capacity=1 << 22, seed=0)
    s.iterate(3000)
    a, ea = head_to_head(game, s, None, 3000, 1)
    b, eb = head_to_head(game, None, s, 3000, 2)
    edge, se = (a - b) / 2, (ea**2 + eb**2) ** 0.5 / 2
    assert edge > 3 * se  # points per hand, averaged over both sides


@pytest.mark.slow
def test_cli_mccfr_runs_resumes_and_reports(tmp_path, capsys):
    from solvers.storage import read_json
    from truco_lab.cli import main

    out = tmp_path / "mc"
    base = ["mccfr", "--rules", "argentino", "--ranks", "1 7 12", "--suits", "eb", "--max-stake", "1", "--score",
            "0,0", "--dealer", "1", "--out", str(out), "-q"]
    assert main(base + ["--iterations", "2000"]) == 0
    first = read_json(out / "summary.json")
    assert first["iterations"] == 2000 and first["players"] == 2
    assert main(base + ["--iterations", "4000", "--resume", "--exploitability"]) == 0
    s = read_json(out / "summary.json")
    assert s["iterations"] == 4000 and 0 < s["exploitability"] < 2 and s["units"] == "points"
    assert main(base + ["--iterations", "10"]) == 2  # the folder holds a run: --resume or --fresh
    assert "--resume" in capsys.readouterr().err
    team = ["mccfr", "--rules", "mineiro_2v2", "--ranks", "KA23", "--score", "0,0", "--dealer", "3", "-q"]
    assert main(team + ["--iterations", "200", "--head-to-head", "200", "--out", str(tmp_path / "t")]) == 0
    h = read_json(tmp_path / "t" / "summary.json")["head_to_head_vs_random"]
    assert h["hands"] == 200 and h["standard_error"] > 0
    assert main(team + ["--iterations", "10", "--exploitability", "--out", str(tmp_path / "x")]) == 2
    assert "team game" in capsys.readouterr().err and not (tmp_path / "x").exists()
    assert main(team + ["--iterations", "100000", "--capacity", "64", "--out", str(tmp_path / "full")]) == 2
    assert "--capacity" in capsys.readouterr().err


@nb.njit(cache=True)
def k_bad_key(g, s, h, p):
    return np.uint64(7)  # every information set on one key: each decision here has two actions


@pytest.mark.slow  # ~8 s on a cold numba cache (a game of its own: its kernels compile once; 0.02 s once cached)
def test_a_key_collision_is_refused_not_merged():
    """Kuhn's information sets all have two actions, so the action count cannot tell them apart: only the
    check hash (the real key) does. A collision must stop the run, never share a row silently."""
    bad = SampledGame(np.zeros(1, np.int32), 6, 2, k_deal, k_player, k_legal, k_apply, k_utility, k_bad_key,
                      "kuhn-colliding", check=k_key)
    s = MCCFRSolver(bad, sampling="external", capacity=64, seed=0)
    with pytest.raises(RuntimeError, match="collision"):
        s.iterate(10)


# sha256 (first 32 hex digits) of regrets, strategy sums, counters and rng after 40 linear iterations, seed 3, on a
# 20-card paulista hand at 0x0 (dealer 1), computed by the recursive traversals before they became loops over a
# stack of frames (so numba can cache them): the loops must visit, sample and sum in the same order
RECURSIVE_RUN = {"external": ("4fcc9a72529f17eab652a8cc2ee02c80", 11865),
                 "outcome": ("8bb53344f317eb430260d123cab92d5e", 437)}


@pytest.mark.parametrize("sampling", sorted(RECURSIVE_RUN))
def test_mccfr_iterates_are_bit_identical_to_the_recursive_traversals(sampling):
    import hashlib

    from truco_lab.openspiel.sampled import sampled_game
    from truco_lab.rules import RuleSet

    s = MCCFRSolver(sampled_game(RuleSet(ranks="4567QJKA23", suits="dc"), (0, 0), 1), sampling=sampling,
                    capacity=1 << 17, seed=3, linear=True)
    s.iterate(40)
    h = hashlib.sha256(b"".join(getattr(s, k).tobytes() for k in ("regrets", "ssum", "cnt", "rng")))
    assert (h.hexdigest()[:32], s.num_infosets) == RECURSIVE_RUN[sampling]


def test_mccfr_kernels_load_from_numbas_cache_in_a_new_process():
    """A game's generated kernels compile once: a second process loads them from disk (cache hits, no misses),
    where passing the game's functions as arguments compiled them in every process."""
    import subprocess
    import sys

    from truco_lab.openspiel.sampled import sampled_game
    from truco_lab.rules import RuleSet

    MCCFRSolver(sampled_game(RuleSet(ranks="4567", suits="dc"), (0, 0), 1), capacity=1 << 12).compile()
    code = ("from solvers.mccfr import MCCFRSolver, game_kernels\n"
            "from truco_lab.openspiel.sampled import sampled_game\n"
            "from truco_lab.rules import RuleSet\n"
            "s = MCCFRSolver(sampled_game(RuleSet(ranks='4567', suits='dc'), (0, 0), 1), capacity=1 << 12)\n"
            "s.iterate(2)\n"
            "st = game_kernels(s.game).iterate.stats\n"
            "print(sum(st.cache_hits.values()), sum(st.cache_misses.values()))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["1", "0"], out
