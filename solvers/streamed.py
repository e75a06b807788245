"""Vector-form trees too big for memory: a trunk in memory, its subtrees streamed from disk.

A :class:`SplitTree` is a :class:`~solvers.tree.VectorTree` cut at a depth: the *trunk* holds the
nodes above the cut, and each node on the cut (a *frontier* node, a terminal of the trunk with
no payoff) roots a *part*, a complete VectorTree of its own whose first elements are copies of the
frontier node's two lists (player 0's, then player 1's). Parts live in a :class:`PartStore` on
disk. Slots are numbered globally, the trunk's first and then each part's in order, so the solver
state (regrets, strategy sums: 8 bytes per slot) is one array in memory while the trees, the
working strategy, reaches and values (the other ~35 bytes per slot) exist for one part at a time.

:class:`StreamedSolver` runs exactly the iterations of :class:`solvers.vector.VectorSolver`
(same kernels, same update rule, same order of updates): per pass, the trunk's forward pass
gives every frontier list its reach; each part is loaded, passed forward and backward, and its
root values are added into the frontier lists; then the trunk's backward pass. Best responses
(the certificate) stream the same way, so the exploitability it reports is the whole
profile's, exact. Nothing here knows the game: a game supplies the parts.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from solvers.cfr import _RULE_ID, PREDICTIVE, SolverState, _discounts, _normalize, _strategy_from
from solvers.storage import atomic_write
from solvers.tree import VectorTree
from solvers.vector import MODE_BR, MODE_EVAL, MODE_UPDATE, NO_PAIRS, _back_range, _fwd_range, slot_values_of

PART_ARRAYS = ("node_actor", "node_outcome", "node_list", "node_len", "node_infoset", "infoset_offset",
               "infoset_nact", "entry_child", "elem_hand")
"""What a part keeps on disk: the arrays the kernels read, payoffs as outcome codes."""


_LAYOUT = (("node_actor", np.int8, 0), ("node_outcome", np.int16, 0), ("node_list", np.int32, 0),
           ("node_len", np.int32, 0), ("node_infoset", np.int32, 0), ("infoset_offset", np.int32, 1),
           ("infoset_nact", np.int8, 1), ("entry_child", np.int32, 2), ("elem_hand", np.int16, 3))
"""A part file: four int64 counts (nodes, information sets, slots, elements), then each array in
this order and dtype (node lists and lengths are two columns), each padded to 8 bytes. One read
per part and views into it: numpy's ``.npz`` cost 6x the kernels' time in zip and header parsing."""


def _sizes(counts: np.ndarray) -> list[int]:
    return [int(counts[k]) * np.dtype(dt).itemsize * (2 if name in ("node_list", "node_len") else 1)
            for name, dt, k in _LAYOUT]


class PartStore:
    """Parts as one raw file each in ``folder`` (written atomically, so a part on disk is whole; an
    interrupted build resumes at the first missing part). Other records (the trunk) are ``.npz``."""

    def __init__(self, folder: str | Path) -> None:
        self.folder = Path(folder)
        self.folder.mkdir(parents=True, exist_ok=True)

    def path(self, i: int | str) -> Path:
        return self.folder / (f"part-{i:06d}.bin" if isinstance(i, int) else f"{i}.npz")

    def has(self, i: int | str) -> bool:
        return self.path(i).exists()

    def save(self, i: int | str, arrays: dict[str, np.ndarray]) -> None:
        if not isinstance(i, int):
            atomic_write(self.path(i), lambda p: np.savez(p, **arrays), suffix=".npz")
            return
        counts = np.array([arrays["node_actor"].shape[0], arrays["infoset_offset"].shape[0],
                           arrays["entry_child"].shape[0], arrays["elem_hand"].shape[0]], np.int64)

        def write(p: Path) -> None:
            with open(p, "wb") as f:
                f.write(counts.tobytes())
                for (name, dt, _), size in zip(_LAYOUT, _sizes(counts), strict=True):
                    b = np.ascontiguousarray(arrays[name], dtype=dt).tobytes()
                    assert len(b) == size, name
                    f.write(b + bytes(-size % 8))

        atomic_write(self.path(i), write)

    def load(self, i: int | str) -> dict[str, np.ndarray]:
        p = self.path(i)
        if not isinstance(i, int):
            with np.load(p) as z:
                return {k: z[k] for k in z.files}
        with open(p, "rb") as f:
            buf = bytearray(p.stat().st_size)
            if f.readinto(buf) != len(buf):
                raise ValueError(f"{p}: truncated part file")
        counts = np.frombuffer(buf, np.int64, 4) if len(buf) >= 32 else np.zeros(4, np.int64)
        want = 32 + sum(n + (-n % 8) for n in _sizes(counts))
        if len(buf) < 32 or want != len(buf):
            raise ValueError(f"{p}: part file of {len(buf)} bytes, its counts say {want} (truncated or not a part)")
        out, pos = {}, 32
        for (name, dt, _), size in zip(_LAYOUT, _sizes(counts), strict=True):
            a = np.frombuffer(buf, dt, size // np.dtype(dt).itemsize, pos)
            out[name] = a.reshape(-1, 2) if name in ("node_list", "node_len") else a
            pos += size + (-size % 8)
        return out

    def nbytes(self) -> int:
        return sum(p.stat().st_size for p in self.folder.glob("part-*.bin"))


def part_arrays(tree: VectorTree) -> dict[str, np.ndarray]:
    """The arrays of ``tree`` a part stores (:data:`PART_ARRAYS`)."""
    return {k: np.asarray(getattr(tree, k)) for k in PART_ARRAYS}


@dataclass
class SplitTree:
    """A trunk (frontier nodes are payoff-free terminals) and its parts on disk.

    ``slot_start[i]`` / ``infoset_start[i]`` is part ``i``'s first global slot / information set
    (``slot_start[0]`` = the trunk's slot count; the last entry is the total). ``utility`` is
    player 0's payoff per outcome code, applied to parts as they load."""

    trunk: VectorTree
    frontier: np.ndarray  # int32 [P]: the trunk node rooting each part
    slot_start: np.ndarray  # int64 [P + 1]
    infoset_start: np.ndarray  # int64 [P + 1]
    node_count: np.ndarray  # int64 [P]
    element_count: np.ndarray  # int64 [P]
    store: PartStore
    utility: np.ndarray

    @property
    def num_parts(self) -> int:
        return int(self.frontier.shape[0])

    @property
    def num_nodes(self) -> int:
        return self.trunk.num_nodes + int(self.node_count.sum())

    @property
    def num_infosets(self) -> int:
        return int(self.infoset_start[-1])

    @property
    def num_slots(self) -> int:
        return int(self.slot_start[-1])

    @property
    def num_elements(self) -> int:
        return self.trunk.num_elements + int(self.element_count.sum())

    @property
    def num_hands(self) -> int:
        return self.trunk.num_hands

    def part(self, i: int) -> VectorTree:
        """Part ``i`` loaded from disk, with its payoffs."""
        a = self.store.load(i)
        outc = a.pop("node_outcome")
        util = np.zeros(outc.shape[0])
        term = outc >= 0
        util[term] = self.utility[outc[term]]
        return VectorTree(node_util=util, node_outcome=outc, deal_weight=self.trunk.deal_weight,
                          num_hands=self.trunk.num_hands, **a)

    def part_nbytes(self, i: int) -> int:
        """Bytes part ``i`` and its working buffers occupy while loaded (~ its file plus buffers)."""
        n, e, s = int(self.node_count[i]), int(self.element_count[i]), int(self.slot_start[i + 1] - self.slot_start[i])
        return 35 * n + 14 * e + 9 * s + 5 * int(self.infoset_start[i + 1] - self.infoset_start[i])

    def save_index(self, extra: dict | None = None) -> None:
        """The trunk and the part index, so a later process opens the split without rebuilding it."""
        self.store.save("trunk", {**part_arrays(self.trunk), "deal_weight": self.trunk.deal_weight,
                                  "frontier": self.frontier, "slot_start": self.slot_start,
                                  "infoset_start": self.infoset_start, "node_count": self.node_count,
                                  "element_count": self.element_count, "utility": self.utility,
                                  "num_hands": np.int64(self.trunk.num_hands)})
        text = json.dumps({"parts": self.num_parts, "slots": self.num_slots, **(extra or {})}, indent=2)
        atomic_write(self.store.folder / "split.json", lambda p: p.write_text(text + "\n"))

    @classmethod
    def open(cls, folder: str | Path) -> SplitTree:
        """A split saved by :meth:`save_index`."""
        store = PartStore(folder)
        a = store.load("trunk")
        outc = a["node_outcome"]
        util = np.zeros(outc.shape[0])
        term = outc >= 0
        util[term] = a["utility"][outc[term]]
        trunk = VectorTree(node_util=util, deal_weight=a["deal_weight"], num_hands=int(a["num_hands"]),
                           **{k: a[k] for k in PART_ARRAYS})
        return cls(trunk, a["frontier"], a["slot_start"], a["infoset_start"], a["node_count"],
                   a["element_count"], store, a["utility"])


class StreamedSolver(SolverState):
    """CFR-family solver over a :class:`SplitTree` (the iterates of :class:`VectorSolver` on the whole
    tree, to rounding). ``resident_bytes``: parts kept loaded between passes while their estimated size
    fits (the rest are read from disk on every pass)."""

    def __init__(self, split: SplitTree, algorithm: str = "dcfr", alternating: bool = True, *,
                 alpha: float | None = None, beta: float | None = None, gamma: float | None = None,
                 resident_bytes: int = 0, threads: int = 1) -> None:
        super().__init__(split, algorithm, alternating, alpha, beta, gamma)
        self.threads = int(threads)  # parts worked on at once (results are the same for any number)
        self.split = split
        s = split.num_slots
        self.regrets = np.zeros(s, np.float32)
        self.ssum = np.zeros(s, np.float32)
        self.pred = np.zeros(s if algorithm in PREDICTIVE else 1, np.float32)
        self.resident_bytes = int(resident_bytes)
        self._resident: dict[int, VectorTree] = {}
        self._resident_used = 0
        self.parts_read = 0  # parts read from disk so far (a measure of the streaming's cost)

    # ---- parts ------------------------------------------------------------
    def _parts(self, load=None):
        """Parts in order; the next one is read by a helper thread while the kernels work on this
        one (file reads release the interpreter lock, so reading overlaps computing). ``load(i)``,
        if given, supplies part ``i`` instead (a tree with the same kernel arrays)."""
        from concurrent.futures import ThreadPoolExecutor

        n = self.split.num_parts

        def get(i):
            if load is not None:
                return load(i)
            t = self._resident.get(i)
            return t if t is not None else self.split.part(i)

        with ThreadPoolExecutor(1) as pool:
            nxt = pool.submit(get, 0) if n else None
            for i in range(n):
                t = nxt.result()
                nxt = pool.submit(get, i + 1) if i + 1 < n else None
                if load is None and i not in self._resident:
                    self.parts_read += 1
                    need = self.split.part_nbytes(i)
                    if self._resident_used + need <= self.resident_bytes:
                        self._resident[i] = t
                        self._resident_used += need
                yield i, t

    def _worked(self, load, work):
        """``(i, part, work(i, part))`` in part order. One thread: parts come from :meth:`_parts`
        (the next read meanwhile). More: ``threads`` parts are loaded and worked on at once (the
        kernels release the interpreter lock; each part owns its slots' regrets and sums), at most
        ``threads + 1`` in memory (as with one thread: the part worked on and the next)."""
        if self.threads <= 1:
            for i, t in self._parts(load):
                yield i, t, work(i, t)
            return
        from concurrent.futures import ThreadPoolExecutor

        n = self.split.num_parts

        def job(i):
            t = load(i) if load is not None else self._resident.get(i)
            fresh = t is None
            if fresh:
                t = self.split.part(i)
            return t, fresh, work(i, t)

        with ThreadPoolExecutor(self.threads) as pool:
            window = [pool.submit(job, i) for i in range(min(n, self.threads))]
            for i in range(n):
                t, fresh, out = window.pop(0).result()
                if i + len(window) + 1 < n:
                    window.append(pool.submit(job, i + len(window) + 1))
                if load is None and fresh:
                    self.parts_read += 1
                    need = self.split.part_nbytes(i)
                    if self._resident_used + need <= self.resident_bytes:
                        self._resident[i] = t
                        self._resident_used += need
                yield i, t, out

    def _slots(self, i: int) -> slice:
        """Global slots of part ``i`` (``-1``: the trunk)."""
        st = self.split.slot_start
        return slice(0, int(st[0])) if i < 0 else slice(int(st[i]), int(st[i + 1]))

    def _strategy(self, t: VectorTree, sl: slice, average: bool) -> np.ndarray:
        out = np.zeros(t.num_slots, np.float32)
        if average:
            _normalize(self.ssum[sl], t.infoset_offset, t.infoset_nact, out)
        else:
            pred = self.pred[sl] if self.algorithm in PREDICTIVE else self.pred
            _strategy_from(self.regrets[sl], pred, self.algorithm in PREDICTIVE, t.infoset_offset, t.infoset_nact,
                           out)
        return out

    # ---- one pass ---------------------------------------------------------
    def _pass(self, mode: int, who: int, average: bool, load=None, visit=None) -> np.ndarray:
        """Forward and backward over the trunk and every part; returns the trunk's values.
        ``load``: see :meth:`_parts`; ``visit(i, tree, slots, reach, value)`` is called after each
        part's backward pass and last with ``i = -1`` for the trunk."""
        sp = self.split
        tr = sp.trunk
        it = float(self.iteration)
        pos, neg, sdisc = _discounts(it, self.alpha, self.beta, self.gamma, self.scheduled)
        alg = _RULE_ID[self.algorithm]
        pcfr = self.algorithm in PREDICTIVE
        tb = np.zeros(1)

        def back(t: VectorTree, sl: slice, strat, reach, value) -> None:
            _back_range(0, t.num_nodes, -1, -1, 0, 0, tb, t.node_actor, t.node_util, t.node_list, t.node_len,
                        t.node_infoset, t.infoset_offset, t.infoset_nact, t.entry_child, t.elem_hand,
                        t.deal_weight, NO_PAIRS, strat, reach, value, mode, who, alg, it, pos, neg, sdisc,
                        self.regrets[sl], self.ssum[sl], self.pred[sl] if pcfr else self.pred)

        def fwd(t: VectorTree, strat, reach) -> None:
            _fwd_range(0, t.num_nodes, t.node_actor, t.node_list, t.node_len, t.node_infoset, t.infoset_offset,
                       t.infoset_nact, t.entry_child, strat, reach)

        tsl = self._slots(-1)
        tstrat = self._strategy(tr, tsl, average)
        treach = np.zeros(tr.num_elements, np.float32)
        treach[: 2 * tr.num_hands] = 1.0
        fwd(tr, tstrat, treach)
        tvalue = np.zeros(tr.num_elements)
        def work(i: int, t: VectorTree):
            sl = self._slots(i)
            f = int(sp.frontier[i])
            l0, n0 = int(tr.node_list[f, 0]), int(tr.node_len[f, 0])
            l1, n1 = int(tr.node_list[f, 1]), int(tr.node_len[f, 1])
            reach = np.zeros(t.num_elements, np.float32)
            reach[:n0] = treach[l0:l0 + n0]
            reach[n0:n0 + n1] = treach[l1:l1 + n1]
            strat = self._strategy(t, sl, average)
            fwd(t, strat, reach)
            value = np.zeros(t.num_elements)
            back(t, sl, strat, reach, value)
            return sl, reach, value

        for i, t, (sl, reach, value) in self._worked(load, work):
            # in part order whatever the threads: the trunk's sums are the same every run
            f = int(sp.frontier[i])
            l0, n0 = int(tr.node_list[f, 0]), int(tr.node_len[f, 0])
            l1, n1 = int(tr.node_list[f, 1]), int(tr.node_len[f, 1])
            tvalue[l0:l0 + n0] += value[:n0]
            tvalue[l1:l1 + n1] += value[n0:n0 + n1]
            if visit is not None:
                visit(i, t, sl, reach, value)
            del t, reach, value
        back(tr, tsl, tstrat, treach, tvalue)
        if visit is not None:
            visit(-1, tr, tsl, treach, tvalue)
        return tvalue

    def iterate(self, n: int = 1) -> None:
        """Run ``n`` iterations."""
        for _ in range(n):
            self.iteration += 1
            if self.alternating:
                self._pass(MODE_UPDATE, 0, False)
                self._pass(MODE_UPDATE, 1, False)
            else:
                self._pass(MODE_UPDATE, 2, False)

    def _root(self, v: np.ndarray, p: int) -> float:
        H = self.split.num_hands
        return float(v[p * H:(p + 1) * H].sum())

    def game_value(self) -> float:
        """Player 0's expected payoff under the average profile."""
        return self._root(self._pass(MODE_EVAL, 2, True), 0)

    def best_response_values(self) -> tuple[float, float]:
        return (self._root(self._pass(MODE_BR, 0, True), 0), self._root(self._pass(MODE_BR, 1, True), 1))

    def best_response_value(self, player: int, strategy=None, utilities: np.ndarray | None = None) -> float:
        """``player``'s best-response value against the average profile, optionally with other terminal
        utilities per outcome code (player 0's); the split's utilities are restored afterwards."""
        if strategy is not None:
            raise ValueError("a streamed solver certifies its own average profile only (strategy=None)")
        sp = self.split
        saved = sp.utility
        try:
            if utilities is not None:
                sp.utility = np.asarray(utilities, np.float64)
                sp.trunk.set_payoff(sp.utility)
                self._resident.clear()  # loaded parts carry the old payoffs
                self._resident_used = 0
            return self._root(self._pass(MODE_BR, player, True), player)
        finally:
            if utilities is not None:
                sp.utility = saved
                sp.trunk.set_payoff(saved)
                self._resident.clear()
                self._resident_used = 0

    def evaluate_parts(self, visit, load=None) -> None:
        """One evaluation pass of the average profile calling ``visit(i, tree, average strategy,
        action values, information-set reaches, regrets)`` for each part in order (``tree`` from
        ``load(i)`` if given), then for the trunk (``i = -1``, the split's trunk): what a strategy
        table needs, one part in memory at a time."""
        def each(i, t, sl, reach, value):
            av, ireach = slot_values_of(t, reach, value)
            visit(i, t, self._strategy(t, sl, True), av, ireach, self.regrets[sl])

        self._pass(MODE_EVAL, 2, True, load, each)

    def exploitability(self) -> float:
        """NashConv / 2 of the average profile, exact, in the game's units."""
        b0, b1 = self.best_response_values()
        return (b0 + b1) / 2.0

    def nbytes(self) -> int:
        """Bytes of solver state held for the whole tree (parts' working buffers come and go)."""
        return self.regrets.nbytes + self.ssum.nbytes + self.pred.nbytes + self._resident_used


def memory_of(split: SplitTree, threads: int = 1) -> dict[str, int]:
    """Bytes a streamed solve holds: solver state for every slot, the trunk, the largest part (times
    the parts worked on at once)."""
    largest = max((split.part_nbytes(i) for i in range(split.num_parts)), default=0)
    return {"state": 8 * split.num_slots, "trunk": split.trunk.nbytes() + 12 * split.trunk.num_elements,
            "largest_part": largest * max(1, int(threads))}


def remove(folder: str | Path) -> None:
    """Delete a split's files (parts, trunk, index)."""
    f = Path(folder)
    for p in list(f.glob("part-*.bin")) + [f / "trunk.npz", f / "split.json"]:
        if p.exists():
            os.unlink(p)
