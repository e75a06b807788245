"""The MCCFR traversals (:mod:`solvers.mccfr`), written once over a game's functions as **module globals**.

This file is a template: :func:`solvers.mccfr.game_kernels` copies it once per game into a generated module
whose globals ``deal``, ``player``, ``legal``, ``apply``, ``utility``, ``key`` and ``check`` are that game's
jitted functions. Passed as arguments instead, the functions made the kernels' signature hold first-class
function types, which never match numba's on-disk cache across processes: every process compiled the
traversal anew (~30 s). As globals of a file that stays put, each game's kernels compile once and are cached.

The traversals are loops over an explicit stack of frames, not recursive functions: numba segfaults loading a
cached recursive function (its issue 6061). Each visits nodes, draws random numbers and sums in the recursive
version's order, so iterates are bit-identical to it (tested against a stored run).
"""

import numba as nb
import numpy as np

from solvers.mccfr import _lookup, _match
from solvers.rng import rng_uniform as _uniform

if "deal" not in globals():  # the template itself (never compiled); a game's copy has them bound
    deal = player = legal = apply = utility = key = check = None


FRAME_INTS = 3  # per depth: the row's first slot, its action count, the action taken (or next to take)
FRAME_FLOATS = 6  # per depth: the node's running value, reach of p, of the others, of the sample; sig and smp there


@nb.njit(cache=True, inline="always")
def _child(g, S, H, A, d, i) -> None:
    """Depth ``d + 1`` becomes depth ``d``'s state with its ``i``-th legal action played."""
    S[d + 1, :] = S[d]
    H[d + 1, :] = H[d]
    apply(g, S[d + 1], H[d + 1], A[d, i])


@nb.njit(cache=True, inline="always")
def _enter(g, S, H, A, P, d, p, keys, checks, index, ioff, inact, regrets, cnt, J):
    """Depth ``d``'s node: (the acting player, its value if it ends the traversal here). A terminal gives -1 and
    ``p``'s utility; a full table or a key collision -2 and 0.0 (with the error in ``cnt[3]``); a decision gets
    its row's first slot and action count in ``J[d]`` and its current strategy in ``P[d]``."""
    s = S[d]
    h = H[d]
    q = player(g, s)
    if q < 0:
        return -1, utility(g, s, p)
    n = legal(g, s, A[d])
    row = _lookup(keys, checks, index, ioff, inact, cnt, key(g, s, h, q), check(g, s, h, q), n)
    if row < 0:
        cnt[3] = row
        return -2, 0.0
    J[d, 0] = ioff[row]
    J[d, 1] = n
    _match(regrets, J[d, 0], n, P[d])
    return q, 0.0


@nb.njit(cache=True, inline="always")
def _sample(rng, probs, n) -> int:
    x = _uniform(rng)
    i = 0
    acc = probs[0]
    while acc <= x and i < n - 1:
        i += 1
        acc += probs[i]
    return i


@nb.njit(cache=True)
def external(g, S, H, A, P, V, p, w, keys, checks, index, ioff, inact, regrets, ssum, cnt, rng, J, F) -> float:
    """External sampling from the root in ``S[0]``: every action of ``p``, one sampled action of the others.
    Returns the root's value for ``p``."""
    d = 0
    while True:  # descend: each decision of p opens its first action, the others' one sampled action
        q, ret = _enter(g, S, H, A, P, d, p, keys, checks, index, ioff, inact, regrets, cnt, J)
        if q >= 0:
            off = J[d, 0]
            n = J[d, 1]
            if q == p:
                F[d, 0] = 0.0
                J[d, 2] = 0
                _child(g, S, H, A, d, 0)
            else:  # the others' average strategy is accumulated where it is sampled
                for i in range(n):
                    ssum[off + i] += w * P[d, i]
                J[d, 2] = -1  # passes its child's value up
                _child(g, S, H, A, d, _sample(rng, P[d], n))
            d += 1
            continue
        while True:  # ascend with ret, the value of depth d's node
            d -= 1
            if d < 0:
                return ret
            i = J[d, 2]
            if i < 0:
                continue
            V[d, i] = ret
            F[d, 0] += P[d, i] * ret
            if i + 1 < J[d, 1]:
                J[d, 2] = i + 1
                _child(g, S, H, A, d, i + 1)
                d += 1
                break
            off = J[d, 0]
            for a in range(J[d, 1]):
                regrets[off + a] += V[d, a] - F[d, 0]
            ret = F[d, 0]


@nb.njit(cache=True)
def outcome_sampling(g, S, H, A, P, V, p, w, eps, keys, checks, index, ioff, inact, regrets, ssum, cnt, rng, J,
                     F) -> float:
    """Outcome sampling from the root in ``S[0]``: one trajectory, ``p`` explores with probability ``eps``.
    Returns the root's sampled value estimate for ``p`` (importance-weighted by the trajectory's probability)."""
    d = 0
    my = opp = samp = 1.0
    while True:
        q, ret = _enter(g, S, H, A, P, d, p, keys, checks, index, ioff, inact, regrets, cnt, J)
        if q < 0:
            break
        n = J[d, 1]
        smp = V[d]  # the sampling policy
        for i in range(n):
            smp[i] = eps / n + (1.0 - eps) * P[d, i] if q == p else P[d, i]
        i = _sample(rng, smp, n)
        J[d, 2] = i if q == p else -1 - i
        F[d, 1] = my
        F[d, 2] = opp
        F[d, 3] = samp
        F[d, 4] = P[d, i]
        F[d, 5] = smp[i]
        if q == p:
            my *= P[d, i]
        else:
            opp *= P[d, i]
        samp *= smp[i]
        _child(g, S, H, A, d, i)
        d += 1
    for k in range(d - 1, -1, -1):
        cv = ret / F[k, 5]  # the sampled child's value estimate; the others' are 0
        ret = F[k, 4] * cv
        i = J[k, 2]
        if i >= 0:
            off = J[k, 0]
            n = J[k, 1]
            sig = P[k]
            _match(regrets, off, n, sig)  # recomputed after the descent, as the recursive version did
            my, opp, samp = F[k, 1], F[k, 2], F[k, 3]
            for a in range(n):
                ca = cv if a == i else 0.0
                regrets[off + a] += (ca - ret) * opp / samp
            for a in range(n):
                ssum[off + a] += w * my * sig[a] / samp
    return ret


@nb.njit(cache=True)
def iterate(g, S, H, A, P, V, t0, iters, outcome, eps, linear, keys, checks, index, ioff, inact, regrets, ssum, cnt,
            rng, nplayers):
    """Iterations ``t0 .. t0 + iters - 1`` (a traversal per player each); returns the next iteration, or the one
    a table error (``cnt[3]``) stopped."""
    J = np.zeros((S.shape[0], FRAME_INTS), np.int64)
    F = np.zeros((S.shape[0], FRAME_FLOATS), np.float64)
    for t in range(t0, t0 + iters):
        w = float(t + 1) if linear else 1.0
        for p in range(nplayers):
            deal(g, S[0], H[0], rng)
            if outcome:
                outcome_sampling(g, S, H, A, P, V, p, w, eps, keys, checks, index, ioff, inact, regrets, ssum, cnt,
                                 rng, J, F)
            else:
                external(g, S, H, A, P, V, p, w, keys, checks, index, ioff, inact, regrets, ssum, cnt, rng, J, F)
            if cnt[3] != 0:
                return t
    return t0 + iters
