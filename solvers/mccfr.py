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

import hashlib
import importlib.util
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numba as nb
import numpy as np

from solvers.cfr import normalize_block, regret_match

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


GAME_FUNCTIONS = ("deal", "player", "legal", "apply", "utility", "key", "check")
_KERNELS: dict = {}  # generated module per game, once per process


def _source_files(fn) -> list[Path]:
    """The files ``fn``'s compiled code may depend on: every ``.py`` file of its top-level package (a game's
    functions call its engine in other modules), or its own file outside a package. numba does not notice a
    change in a callee's file; a copy keyed on these does."""
    top = sys.modules.get(fn.py_func.__module__.split(".")[0])
    roots = getattr(top, "__path__", None)
    if not roots:
        return [Path(fn.py_func.__code__.co_filename)]
    return sorted(f for f in Path(list(roots)[0]).rglob("*.py") if "__pycache__" not in f.parts)


def _kernels_key(game: SampledGame, template: Path) -> str:
    h = hashlib.sha256(template.read_bytes())
    files = set()
    for name in GAME_FUNCTIONS:
        fn = getattr(game, name)
        h.update(f"{name}={fn.py_func.__module__}:{fn.py_func.__qualname__};".encode())
        files.update(_source_files(fn))
    for f in sorted(files):
        h.update(str(f).encode() + f.read_bytes())
    return h.hexdigest()[:16]


def _kernels_folder() -> Path:
    """Where generated kernel modules go (numba caches beside them): this package's ``__pycache__`` when
    writable (``make clean`` removes it), else the user's cache folder."""
    for d in (Path(__file__).parent / "__pycache__" / "mccfr_games", Path.home() / ".cache" / "solvers-mccfr"):
        try:
            d.mkdir(parents=True, exist_ok=True)
            if os.access(d, os.W_OK):
                return d
        except OSError:
            continue
    raise OSError("no writable folder for MCCFR's generated kernels")


def game_kernels(game: SampledGame):
    """The module of ``game``'s MCCFR kernels (``iterate``, ``external``, ``outcome_sampling``): the template
    :mod:`solvers.mccfr_kernels` with the game's functions bound as its globals, written to a file named by
    a hash of the template, the functions' names and their package's sources, so numba's on-disk cache
    serves every later process (see that module)."""
    from solvers.storage import atomic_write

    template = Path(importlib.util.find_spec("solvers.mccfr_kernels").origin)
    tag = _kernels_key(game, template)
    if tag in _KERNELS:
        return _KERNELS[tag]
    path = _kernels_folder() / f"mccfr_game_{tag}.py"
    if not path.exists():  # written once: a rewrite would change its stamp and void numba's cache of it
        atomic_write(path, lambda tmp: tmp.write_bytes(template.read_bytes()))
    spec = importlib.util.spec_from_file_location(f"solvers._mccfr_game_{tag}", path)
    module = importlib.util.module_from_spec(spec)
    for name in GAME_FUNCTIONS:  # bound before the code runs: the template keeps them (see its guard)
        setattr(module, name, getattr(game, name))
    sys.modules[spec.name] = module  # numba's cache re-imports a cached function's module by name
    spec.loader.exec_module(module)
    _KERNELS[tag] = module
    return module


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
        self._kernels = None  # the game's generated kernel module (game_kernels), found on the first iterate

    @property
    def num_infosets(self) -> int:
        return int(self.cnt[0])

    def iterate(self, n: int = 1) -> None:
        """Run ``n`` iterations (one traversal per player each).

        Interrupted (Ctrl-C) between calls, nothing is half-updated: keep ``n`` modest and loop."""
        gm = self.game
        t = time.perf_counter()
        args = (gm.g, self.S, self.H, self.A,
                self.P, self.V, self.iteration, int(n), self.sampling == "outcome", self.epsilon, self.linear,
                self.keys, self.checks, self.index, self.ioff, self.inact, self.regrets, self.ssum, self.cnt, self.rng,
                gm.num_players)
        if self._kernels is None:
            self._kernels = game_kernels(gm)
        done = self._kernels.iterate(*args)
        self.seconds += time.perf_counter() - t
        self.iteration = int(done)
        if self.cnt[3] == -1:
            raise MemoryError(f"the MCCFR table is full ({self.num_infosets:,} information sets, "
                              f"{int(self.cnt[1]):,} slots): create the solver with a larger capacity")
        if self.cnt[3] == -2:
            raise RuntimeError("two information states share a 64-bit key (their check hashes or action counts "
                               "differ: a hash collision, refused rather than merged); use another key function")

    def compile(self) -> None:
        """Compile (or load from numba's cache) the jitted loop for this game; no iteration, no time counted."""
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
