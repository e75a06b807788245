"""Monte-Carlo CFR: external sampling and outcome sampling (Lanctot et al. 2009), for games whose full tree
does not fit in memory. Knows no particular game.

A game reaches this module as a :class:`SampledGame`: numba-jitted functions over small integer arrays,
all taking the game's parameter array ``g`` (int32) first, so the traversal runs in one jitted loop with
no Python in it:

- ``deal(g, s, h, rng)``: a fresh root with chance sampled (the deal), written into state ``s`` and
  history ``h`` (``h[0]`` is the history length; the game owns the rest of ``h``);
- ``player(g, s) -> int``: the player to act, -1 at a terminal (chance is sampled inside ``deal``/``apply``);
- ``legal(g, s, out) -> int``: the legal actions, written to ``out``;
- ``apply(g, s, h, action)``: play ``action`` in place;
- ``utility(g, s, p) -> float``: player ``p``'s payoff at a terminal;
- ``key(g, s, h, p) -> uint64``: a hash of player ``p``'s information state;
- ``check(g, s, h, p) -> uint64`` (optional): a second hash of it, independent of ``key``.

Information sets live in an open-addressing hash table (uint64 keys) over flat regret and strategy-sum
arrays, sized once from ``capacity``. Each row also keeps the state's ``check`` hash and action count, compared
on every visit: two information states with equal 64-bit keys are refused (an error), never merged; an
undetected merge needs both 64-bit hashes to collide at once.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numba as nb
import numpy as np

from solvers.cfr import normalize_block, regret_match
from solvers.rng import rng_uniform as _uniform

MAX_DEPTH = 64
MAX_ACTIONS = 16
EMPTY = np.uint64(0)


@dataclass(frozen=True)
class SampledGame:
    """A game as jitted functions plus its parameter array (see the module docstring)."""

    g: np.ndarray
    state_size: int
    history_size: int
    deal: object
    player: object
    legal: object
    apply: object
    utility: object
    key: object
    name: str = ""
    num_players: int = 2  # more than two (a team game): CFR's average carries no equilibrium guarantee
    check: object = None  # a second hash of the information state, independent of ``key`` (same signature)

    def __post_init__(self) -> None:
        if self.check is None:  # without one, a collision is caught only when the action counts differ
            object.__setattr__(self, "check", self.key)


@nb.njit(cache=True)
def _lookup(keys, checks, index, ioff, inact, cnt, k, c, n) -> int:
    """Row of information-set key ``k`` (second, independent hash ``c``) with ``n`` actions, created on first
    sight; -1 when full, -2 when a row with this key has another check hash or action count (two information
    states collided on the key: refused, never merged). A visit is counted in ``cnt[4 + row]``."""
    if k == EMPTY:
        k = np.uint64(1)
    mask = keys.shape[0] - 1
    j = np.int64(k & np.uint64(mask))
    while True:
        kk = keys[j]
        if kk == k:
            row = index[j]
            if inact[row] != n or checks[row] != c:
                return -2
            cnt[4 + row] += 1
            return row
        if kk == EMPTY:
            row = cnt[0]
            if row >= ioff.shape[0] - 1 or cnt[1] + n > cnt[2]:
                return -1
            keys[j] = k
            checks[row] = c
            index[j] = row
            ioff[row] = cnt[1]
            inact[row] = n
            cnt[0] = row + 1
            cnt[1] += n
            cnt[4 + row] = 1
            return row
        j = (j + 1) & mask


@nb.njit(cache=True, inline="always")
def _match(regrets, off, n, out):
    regret_match(regrets, regrets, False, off, n, out, 0)


@nb.njit(cache=False)  # see _iterate
def _external(deal, player, legal, apply, utility, key, check, g, S, H, A, P, V, d, p, w, keys, checks, index, ioff, inact,
              regrets, ssum, cnt, rng) -> float:
    """External sampling: every action of ``p``, one sampled action of the opponent."""
    s = S[d]
    h = H[d]
    q = player(g, s)
    if q < 0:
        return utility(g, s, p)
    n = legal(g, s, A[d])
    row = _lookup(keys, checks, index, ioff, inact, cnt, key(g, s, h, q), check(g, s, h, q), n)
    if row < 0:
        cnt[3] = row
        return 0.0
    off = ioff[row]
    sig = P[d]
    _match(regrets, off, n, sig)
    if q == p:
        vals = V[d]
        node = 0.0
        for i in range(n):
            S[d + 1, :] = s
            H[d + 1, :] = h
            apply(g, S[d + 1], H[d + 1], A[d, i])
            v = _external(deal, player, legal, apply, utility, key, check, g, S, H, A, P, V, d + 1, p, w, keys, checks, index,
                          ioff, inact, regrets, ssum, cnt, rng)
            vals[i] = v
            node += sig[i] * v
        for i in range(n):
            regrets[off + i] += vals[i] - node
        return node
    for i in range(n):  # the opponent's average strategy is accumulated where it is sampled
        ssum[off + i] += w * sig[i]
    x = _uniform(rng)
    i = 0
    acc = sig[0]
    while acc <= x and i < n - 1:
        i += 1
        acc += sig[i]
    S[d + 1, :] = s
    H[d + 1, :] = h
    apply(g, S[d + 1], H[d + 1], A[d, i])
    return _external(deal, player, legal, apply, utility, key, check, g, S, H, A, P, V, d + 1, p, w, keys, checks, index, ioff,
                     inact, regrets, ssum, cnt, rng)


@nb.njit(cache=False)  # see _iterate
def _outcome(deal, player, legal, apply, utility, key, check, g, S, H, A, P, V, d, p, w, eps, my, opp, samp, keys, checks,
             index, ioff, inact, regrets, ssum, cnt, rng) -> float:
    """Outcome sampling: one trajectory, ``p`` explores with probability ``eps``; returns the sampled
    value estimate of this node for ``p`` (importance-weighted by the trajectory's sampling probability)."""
    s = S[d]
    h = H[d]
    q = player(g, s)
    if q < 0:
        return utility(g, s, p)
    n = legal(g, s, A[d])
    row = _lookup(keys, checks, index, ioff, inact, cnt, key(g, s, h, q), check(g, s, h, q), n)
    if row < 0:
        cnt[3] = row
        return 0.0
    off = ioff[row]
    sig = P[d]
    _match(regrets, off, n, sig)
    smp = V[d]  # the sampling policy
    for i in range(n):
        smp[i] = eps / n + (1.0 - eps) * sig[i] if q == p else sig[i]
    x = _uniform(rng)
    i = 0
    acc = smp[0]
    while acc <= x and i < n - 1:
        i += 1
        acc += smp[i]
    si = sig[i]
    qi = smp[i]
    S[d + 1, :] = s
    H[d + 1, :] = h
    apply(g, S[d + 1], H[d + 1], A[d, i])
    child = _outcome(deal, player, legal, apply, utility, key, check, g, S, H, A, P, V, d + 1, p, w, eps,
                     my * si if q == p else my, opp if q == p else opp * si, samp * qi, keys, checks, index, ioff, inact,
                     regrets, ssum, cnt, rng)
    cv = child / qi  # the sampled child's value estimate; the others' are 0
    value = si * cv
    if q == p:
        _match(regrets, off, n, sig)  # P[d] may have been reused below: recompute
        for a in range(n):
            ca = cv if a == i else 0.0
            regrets[off + a] += (ca - value) * opp / samp
        for a in range(n):
            ssum[off + a] += w * my * sig[a] / samp
    return value


# Not cached on disk: a signature holding the game's functions (first-class function types) never matches
# across processes, so every process compiled anew anyway (~30 s) and appended an entry to the cache index, and
# saving an index whose old entries refer to dead dispatchers fails with numba's "underlying object has
# vanished" (its issue 9348): the MCCFR failures once blamed on a stale cache. The game's own functions and the
# engine they call stay cached.
@nb.njit(cache=False)
def _iterate(deal, player, legal, apply, utility, key, check, g, S, H, A, P, V, t0, iters, outcome, eps, linear, keys, checks,
             index, ioff, inact, regrets, ssum, cnt, rng, nplayers):
    for t in range(t0, t0 + iters):
        w = float(t + 1) if linear else 1.0
        for p in range(nplayers):
            deal(g, S[0], H[0], rng)
            if outcome:
                _outcome(deal, player, legal, apply, utility, key, check, g, S, H, A, P, V, 0, p, w, eps, 1.0, 1.0, 1.0,
                         keys, checks, index, ioff, inact, regrets, ssum, cnt, rng)
            else:
                _external(deal, player, legal, apply, utility, key, check, g, S, H, A, P, V, 0, p, w, keys, checks, index, ioff,
                          inact, regrets, ssum, cnt, rng)
            if cnt[3] != 0:
                return t
    return t0 + iters


@nb.njit(cache=True)
def _average_of(keys, index, ioff, inact, ssum, k, n, out) -> int:
    """The row of key ``k`` with its average strategy in ``out``; -1 (and uniform) when the table has no
    such set with ``n`` actions."""
    if k == EMPTY:
        k = np.uint64(1)
    mask = keys.shape[0] - 1
    j = np.int64(k & np.uint64(mask))
    while keys[j] != EMPTY:
        if keys[j] == k:
            row = index[j]
            if inact[row] != n:
                break
            normalize_block(ssum, ioff[row], n, out, 0)
            return row
        j = (j + 1) & mask
    for a in range(n):
        out[a] = 1.0 / n
    return -1


class MCCFRSolver:
    """External-sampling (``"external"``) or outcome-sampling (``"outcome"``) MCCFR on a :class:`SampledGame`.

    ``capacity``: information sets the table holds (its memory: ~(8 + 4) x 2 capacity bytes of hash table,
    21 bytes per set (its visit count included) and 16 bytes per action slot, ``slots_per_set`` slots reserved
    per set). ``linear``
    weights iteration t's average-strategy contribution by t. ``seed`` makes runs reproducible.
    """

    def __init__(self, game: SampledGame, sampling: str = "external", capacity: int = 1 << 20,
                 slots_per_set: float = 4.0, epsilon: float = 0.6, linear: bool = False, seed: int = 0) -> None:
        if sampling not in ("external", "outcome"):
            raise ValueError(f"sampling must be 'external' or 'outcome', got {sampling!r}")
        if not 0 < epsilon <= 1:
            raise ValueError(f"epsilon must be in (0, 1], got {epsilon!r}")
        self.game = game
        self.sampling = sampling
        self.epsilon = float(epsilon)
        self.linear = bool(linear)
        size = 1 << int(np.ceil(np.log2(max(16, 2 * capacity))))
        self.keys = np.zeros(size, np.uint64)
        self.index = np.zeros(size, np.int32)
        self.ioff = np.zeros(capacity + 1, np.int64)
        self.inact = np.zeros(capacity + 1, np.int8)
        self.checks = np.zeros(capacity + 1, np.uint64)
        nslots = int(capacity * slots_per_set)
        self.regrets = np.zeros(nslots, np.float64)
        self.ssum = np.zeros(nslots, np.float64)
        # sets, slots used, slot capacity, error; then each set's visits (the traversals that met it)
        self.cnt = np.zeros(4 + capacity + 1, np.int64)
        self.cnt[2] = nslots
        self.rng = np.array([np.uint64(seed) * np.uint64(0x100000001B3) + np.uint64(1)], np.uint64)
        self.S = np.zeros((MAX_DEPTH, game.state_size), np.int32)
        self.H = np.zeros((MAX_DEPTH, game.history_size), np.int32)
        self.A = np.zeros((MAX_DEPTH, MAX_ACTIONS), np.int32)
        self.P = np.zeros((MAX_DEPTH, MAX_ACTIONS), np.float64)
        self.V = np.zeros((MAX_DEPTH, MAX_ACTIONS), np.float64)
        self.iteration = 0
        self.seconds = 0.0

    @property
    def num_infosets(self) -> int:
        return int(self.cnt[0])

    def iterate(self, n: int = 1) -> None:
        """Run ``n`` iterations (one traversal per player each).

        Interrupted (Ctrl-C) between calls, nothing is half-updated: keep ``n`` modest and loop."""
        gm = self.game
        t = time.perf_counter()
        args = (gm.deal, gm.player, gm.legal, gm.apply, gm.utility, gm.key, gm.check, gm.g, self.S, self.H, self.A,
                self.P, self.V, self.iteration, int(n), self.sampling == "outcome", self.epsilon, self.linear,
                self.keys, self.checks, self.index, self.ioff, self.inact, self.regrets, self.ssum, self.cnt, self.rng,
                gm.num_players)
        done = _iterate(*args)
        self.seconds += time.perf_counter() - t
        self.iteration = int(done)
        if self.cnt[3] == -1:
            raise MemoryError(f"the MCCFR table is full ({self.num_infosets:,} information sets, "
                              f"{int(self.cnt[1]):,} slots): create the solver with a larger capacity")
        if self.cnt[3] == -2:
            raise RuntimeError("two information states share a 64-bit key (their check hashes or action counts "
                               "differ: a hash collision, refused rather than merged); use another key function")

    def compile(self) -> None:
        """Compile the jitted loop for this game (the first call takes seconds); no iteration, no time counted."""
        s, it = self.seconds, self.iteration
        self.iterate(0)
        self.seconds, self.iteration = s, it

    def average(self, key: int, n: int) -> np.ndarray:
        """The average strategy at information-set ``key`` with ``n`` actions (uniform if never visited)."""
        return self.lookup(key, n)[0]

    def lookup(self, key: int, n: int) -> tuple[np.ndarray, int]:
        """(the average strategy at ``key`` with ``n`` actions, how many traversals visited it); uniform and 0
        when the table has no such set."""
        out = np.empty(n, np.float64)
        row = _average_of(self.keys, self.index, self.ioff, self.inact, self.ssum, np.uint64(key), n, out)
        return out, (int(self.cnt[4 + row]) if row >= 0 else 0)

    def nbytes(self) -> int:
        return sum(a.nbytes for a in (self.keys, self.checks, self.index, self.ioff, self.inact, self.regrets,
                                      self.ssum, self.cnt))

    _ARRAYS = ("keys", "checks", "index", "ioff", "inact", "regrets", "ssum", "cnt", "rng")

    def save(self, path, key: str = "") -> None:
        """Atomic checkpoint of whole iterations (``iterate`` never returns half-way), tagged with ``key``
        (a hash of what produced it)."""
        from solvers.storage import atomic_write

        arrays = {k: getattr(self, k) for k in self._ARRAYS}
        meta = np.array([self.iteration, self.seconds], np.float64)

        def write(tmp):
            with open(tmp, "wb") as f:
                np.savez(f, meta=meta, key=np.array(key), sampling=np.array(self.sampling), **arrays)

        atomic_write(path, write)

    def load(self, path, key: str = "") -> None:
        """Continue from a checkpoint of :meth:`save`; ``ValueError`` naming the file when it is unreadable,
        of another run (``key``), or of another table size."""
        try:
            with np.load(path) as z:
                data = {k: z[k] for k in (*self._ARRAYS, "meta", "key", "sampling")}
        except (OSError, ValueError, KeyError, EOFError) as e:
            raise ValueError(f"checkpoint {path} is unreadable ({type(e).__name__}); delete it or start --fresh") from None
        if str(data["key"]) != key or str(data["sampling"]) != self.sampling:
            raise ValueError(f"checkpoint {path} belongs to another run (sampling {data['sampling']}); "
                             "start --fresh or use another --out")
        if data["cnt"].shape == (4,):  # a checkpoint from before visits were counted: they start at 0
            data["cnt"] = np.concatenate([data["cnt"], np.zeros(self.cnt.shape[0] - 4, np.int64)])
        for k in self._ARRAYS:
            if data[k].shape != getattr(self, k).shape:
                raise ValueError(f"checkpoint {path} holds a table of another size; give the same --capacity")
            getattr(self, k)[...] = data[k]
        self.iteration = int(data["meta"][0])
        self.seconds = float(data["meta"][1])
