"""Engine speed measurements (printed figures; never asserted)."""

from __future__ import annotations

import time

import numba
import numpy as np

from truco_lab.rules import simulate
from truco_lab.rules.ruleset import PAULISTA, RuleSet


def numba_rate(hands: int, seed: int = 0, threads: int | None = None, rules: RuleSet = PAULISTA) -> tuple[float, np.ndarray]:
    """Random hands per second through the numba batch path (after a warm-up)."""
    r = rules.to_array()
    deck = rules.deck
    old = numba.get_num_threads()
    if threads:
        numba.set_num_threads(threads)
    try:
        warm = np.zeros((1000, 5), np.int32)
        simulate.random_hands(r, deck, 1000, seed, 1, 0, 0, True, warm)
        out = np.zeros((hands, 5), np.int32)
        t = time.perf_counter()
        simulate.random_hands(r, deck, hands, seed, 1, 0, 0, True, out)
        dt = time.perf_counter() - t
    finally:
        numba.set_num_threads(old)
    return hands / dt, out


def openspiel_rate(game_name: str, seconds: float = 1.0, seed: int = 0, params: dict | None = None) -> tuple[float, float]:
    """(games/s, steps/s) of uniform random play through an OpenSpiel game."""
    import pyspiel

    import truco_lab  # noqa: F401  registers the games

    if game_name.startswith("python_"):
        import open_spiel.python.games  # noqa: F401  registers python_kuhn_poker

    game = pyspiel.load_game(game_name, params or {})
    rng = np.random.default_rng(seed)

    def one_game() -> int:
        s = game.new_initial_state()
        n = 0
        while not s.is_terminal():
            if s.is_chance_node():
                outs = s.chance_outcomes()
                a = outs[int(rng.integers(len(outs)))][0]
            else:
                la = s.legal_actions()
                a = la[int(rng.integers(len(la)))]
            s.apply_action(a)
            n += 1
        return n

    # warm up first (numba dispatch, imports, caches): without it the figure swings 17-85 us/step
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < min(0.5, seconds):
        one_game()
    games = steps = 0
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        steps += one_game()
        games += 1
    dt = time.perf_counter() - t0
    return games / dt, steps / dt
