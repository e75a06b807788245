"""The one random-number generator of the jitted loops: splitmix64 over a one-element uint64 array, so a
stream is plain data (seeded per hand or per run, independent of threads) and costs no Python object."""

from __future__ import annotations

import numba as nb
import numpy as np


@nb.njit(cache=True, inline="always")
def rng_next(state) -> np.uint64:
    """Advance ``state`` (uint64[1]) and return 64 random bits (splitmix64)."""
    state[0] = state[0] + np.uint64(0x9E3779B97F4A7C15)
    z = state[0]
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


@nb.njit(cache=True, inline="always")
def rng_below(state, n) -> int:
    """A uniform integer in ``0 .. n-1``."""
    return int(rng_next(state) % np.uint64(n))


@nb.njit(cache=True, inline="always")
def rng_uniform(state) -> float:
    """A uniform float in [0, 1) (53 random bits)."""
    return (rng_next(state) >> np.uint64(11)) * (1.0 / 9007199254740992.0)
