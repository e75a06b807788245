"""Batch simulation on the engine: random hands and matches on numba's threads, and the one partial
shuffle that deals a hand (used by the MCCFR game too). Apart from the engine so the rules import no RNG."""

from __future__ import annotations

import numba as nb
import numpy as np

from solvers.rng import rng_below, rng_next
from truco_lab.rules.engine import (
    MAX_LEGAL,
    STATE_SIZE,
    apply_unchecked,
    awarded,
    legal_actions,
    new_hand,
    nrounds,
    points,
    rule_seats,
    rule_target,
    rule_turns_vira,
    score,
    winner,
)


# Random play uses solvers.rng (splitmix64): one independent stream per hand, so results do not depend on
# how hands are split over threads.
@nb.njit(cache=True)
def deal_hand(s, r, deck, nd, size, rng, cards, dealer, score0, score1) -> None:
    """Start a hand in ``s`` from a random deal: a partial Fisher-Yates shuffle of ``deck[:nd]`` (in place)
    draws ``size`` cards into ``cards``: three per seat, then the vira where the rules turn one."""
    for i in range(size):
        j = i + rng_below(rng, nd - i)
        t = deck[i]
        deck[i] = deck[j]
        deck[j] = t
        cards[i] = deck[i]
    m = 3 * rule_seats(r)
    new_hand(s, r, dealer, score0, score1, cards[:m], cards[m] if rule_turns_vira(r) and size > m else -1)


@nb.njit(cache=True)
def _play_one(s, r, src, deck, cards, buf, rng, dealer, score0, score1, with_concede):
    nd = deck.shape[0]
    deck[:] = src  # same start every hand: results independent of thread split
    deal_hand(s, r, deck, nd, min(3 * rule_seats(r) + 1, nd), rng, cards, dealer, score0, score1)
    steps = 0
    while winner(s) < 0:
        n = legal_actions(s, r, buf, with_concede)
        apply_unchecked(s, r, buf[rng_below(rng, n)])
        steps += 1
    return steps


@nb.njit(cache=True, parallel=True)
def _random_hands(r, deck, n, seed, dealer, score0, score1, with_concede, out, nthreads):
    chunk = (n + nthreads - 1) // nthreads
    for t in nb.prange(nthreads):
        s = np.empty(STATE_SIZE, np.int32)
        d = deck.copy()
        cards = np.empty(13, np.int32)
        buf = np.empty(MAX_LEGAL, np.int32)
        rng = np.empty(1, np.uint64)
        lo = t * chunk
        hi = min(n, lo + chunk)
        for i in range(lo, hi):
            rng[0] = np.uint64(seed) * np.uint64(0x100000001B3) + np.uint64(i)
            rng_next(rng)
            steps = _play_one(s, r, deck, d, cards, buf, rng, dealer, score0, score1, with_concede)
            out[i, 0] = winner(s)
            out[i, 1] = points(s)
            out[i, 2] = awarded(s)
            out[i, 3] = steps
            out[i, 4] = nrounds(s)


def random_hands(r, deck, n, seed, dealer, score0, score1, with_concede, out) -> None:
    """Play ``n`` hands uniformly at random over legal actions, on numba's threads.

    ``out[i]`` receives (winner, points, awarded, steps, rounds). Deterministic
    for a given ``seed`` whatever the number of threads.
    """
    _random_hands(r, deck, n, seed, dealer, score0, score1, with_concede, out, nb.get_num_threads())


@nb.njit(cache=True)
def random_matches(r, deck, n, seed, with_concede, out):
    """Play ``n`` whole matches at random; ``out[i]`` = (winner, score0, score1, hands)."""
    s = np.empty(STATE_SIZE, np.int32)
    cards = np.empty(13, np.int32)
    buf = np.empty(MAX_LEGAL, np.int32)
    rng = np.empty(1, np.uint64)
    d = deck.copy()
    target = rule_target(r)
    for i in range(n):
        rng[0] = np.uint64(seed) * np.uint64(0x100000001B3) + np.uint64(i)
        rng_next(rng)
        sc0 = 0
        sc1 = 0
        dealer = 1
        hands = 0
        while sc0 < target and sc1 < target:
            _play_one(s, r, deck, d, cards, buf, rng, dealer, sc0, sc1, with_concede)
            sc0 = score(s, 0)
            sc1 = score(s, 1)
            dealer = 1 - dealer
            hands += 1
        out[i, 0] = 0 if sc0 >= target else 1
        out[i, 1] = sc0
        out[i, 2] = sc1
        out[i, 3] = hands
