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
import queue
import threading
from dataclasses import dataclass
from pathlib import Path

import numba as nb
import numpy as np

from solvers.blocks import block_backward, block_sweep
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


_BLOCK_LAYOUT = (("node_actor", np.int8, 0), ("node_outcome", np.int16, 0), ("node_list", np.int32, 0),
                 ("node_len", np.uint16, 0), ("pair_code", np.uint8, 0), ("dec_lo", np.int32, 8),
                 ("dec_hi", np.int32, 8), ("dec_base", np.int32, 8), ("parent", np.int32, 1),
                 ("elem_hand", np.int16, 1), ("nodes", np.int32, 2))
"""A part in the element-major layout (:mod:`solvers.blocks`), ``part-NNNNNN.blk``: ten int64 counts
(nodes, elements, decision nodes with a block, choices, the longest list, the pair codes' byte width, the
slot part's slots and information sets, decision nodes, :data:`BLOCK_FORMAT`), then these arrays
(``pair_code`` is uint16 when the counts say 2 bytes; ``dec_*``: each decision node's block and first choice,
in node order, expanded per node only while the part is worked on, since ~90% of the nodes are terminals
without a block; ``nodes``: the decision nodes with a block, in block order). ~17 bytes per node and 6 per
element, against the slot part's 19 and 6 plus 5 per slot: what the kernels read, nothing else."""

_NAV_LAYOUT = (("node_parent", np.int32, 0), ("node_action", np.int16, 0), ("node_child", np.int32, 0),
               ("node_nchild", np.int16, 0), ("entry_action", np.int16, 1), ("elem_entry", np.int32, 2))
"""A part's navigation file, ``part-NNNNNN.nav``: three int64 counts (nodes, slots, elements), then these."""

BLOCK_FORMAT = 2  # 1: block_lo / block_hi / choice_base per node (stop 31); such files are remade
_BLOCK_COUNTS = 10

_TWO_COLUMNS = ("node_list", "node_len")


def _sizes(counts: np.ndarray, layout=_LAYOUT) -> list[int]:
    return [int(counts[k]) * np.dtype(dt).itemsize * (2 if name in _TWO_COLUMNS else 1)
            for name, dt, k in layout]


def _block_layout(code_bytes: int):
    return tuple((n, np.uint16 if n == "pair_code" and code_bytes == 2 else dt, k) for n, dt, k in _BLOCK_LAYOUT)


def _write_raw(path: Path, counts: np.ndarray, layout, arrays: dict) -> None:
    """``counts`` then each array of ``layout`` padded to 8 bytes, written atomically."""
    def write(p: Path) -> None:
        with open(p, "wb") as f:
            f.write(counts.tobytes())
            for (name, dt, _), size in zip(layout, _sizes(counts, layout), strict=True):
                b = np.ascontiguousarray(arrays[name], dtype=dt).tobytes()
                assert len(b) == size, name
                f.write(b + bytes(-size % 8))

    atomic_write(path, write)


def _read_raw(path: Path, ncounts: int, layout_of) -> tuple[np.ndarray, dict]:
    """What :func:`_write_raw` wrote (one read, views into it); ``layout_of(counts)`` the layout."""
    with open(path, "rb") as f:
        buf = bytearray(path.stat().st_size)
        if f.readinto(buf) != len(buf):
            raise ValueError(f"{path}: truncated part file")
    head = 8 * ncounts
    counts = np.frombuffer(buf, np.int64, ncounts) if len(buf) >= head else np.zeros(ncounts, np.int64)
    layout = layout_of(counts)
    want = head + sum(n + (-n % 8) for n in _sizes(counts, layout))
    if len(buf) < head or want != len(buf):
        raise ValueError(f"{path}: part file of {len(buf)} bytes, its counts say {want} (truncated or not a part)")
    out, pos = {}, head
    for (name, dt, _), size in zip(layout, _sizes(counts, layout), strict=True):
        a = np.frombuffer(buf, dt, size // np.dtype(dt).itemsize, pos)
        out[name] = a.reshape(-1, 2) if name in _TWO_COLUMNS else a
        pos += size + (-size % 8)
    return counts, out


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
        _write_raw(self.path(i), counts, _LAYOUT, arrays)

    def load(self, i: int | str) -> dict[str, np.ndarray]:
        p = self.path(i)
        if not isinstance(i, int):
            with np.load(p) as z:
                return {k: z[k] for k in z.files}
        return _read_raw(p, 4, lambda counts: _LAYOUT)[1]

    def block_path(self, i: int) -> Path:
        return self.folder / f"part-{i:06d}.blk"

    def choice_path(self, i: int) -> Path:
        return self.folder / f"part-{i:06d}.choices.npy"

    def save_blocks(self, i: int, part: BlockPart, choice_slot: np.ndarray, slots: int, infosets: int) -> None:
        """Part ``i`` in the element-major layout, and its choices' slots (what the boundary reads)."""
        counts = np.array([part.num_nodes, part.num_elements, part.nodes.shape[0], part.num_choices,
                           part.max_list, part.pair_code.dtype.itemsize, slots, infosets, part.dec_lo.shape[0],
                           BLOCK_FORMAT], np.int64)
        atomic_write(self.choice_path(i), lambda p: np.save(p, np.asarray(choice_slot, np.int32)), suffix=".npy")
        _write_raw(self.block_path(i), counts, _block_layout(int(counts[5])), part.arrays())

    def block_counts(self, i: int) -> np.ndarray | None:
        """The counts of part ``i``'s block file (``None`` if there is none, or one of another format)."""
        p = self.block_path(i)
        if not p.exists() or not self.choice_path(i).exists():
            return None
        with open(p, "rb") as f:
            head = f.read(8 * _BLOCK_COUNTS)
        if len(head) < 8 * _BLOCK_COUNTS:
            return None
        c = np.frombuffer(head, np.int64)
        return c if c[-1] == BLOCK_FORMAT else None

    def load_blocks(self, i: int) -> BlockPart:
        counts, a = _read_raw(self.block_path(i), _BLOCK_COUNTS, lambda c: _block_layout(int(c[5])))
        return BlockPart(max_list=int(counts[4]), num_choices=int(counts[3]), **a)

    def nav_path(self, i: int) -> Path:
        return self.folder / f"part-{i:06d}.nav"

    def save_navigation(self, i: int, tree: VectorTree) -> None:
        """Part ``i``'s navigation arrays (what labels read, never the kernels), so a strategy table need not
        rebuild the part (a third of a streamed table pass): ~16 bytes per node and 6 per slot on disk."""
        counts = np.array([tree.num_nodes, tree.num_slots, tree.num_elements], np.int64)
        _write_raw(self.nav_path(i), counts, _NAV_LAYOUT, {k: getattr(tree, k) for k in VectorTree.NAVIGATION})

    def load_navigation(self, i: int) -> dict[str, np.ndarray] | None:
        """What :meth:`save_navigation` wrote for part ``i``, or ``None`` (a split built before it did)."""
        p = self.nav_path(i)
        return _read_raw(p, 3, lambda counts: _NAV_LAYOUT)[1] if p.exists() else None

    def load_choice_slots(self, i: int) -> np.ndarray:
        return np.load(self.choice_path(i))

    def nbytes(self) -> int:
        return sum(p.stat().st_size for p in self.folder.glob("part-*.bin"))


@dataclass
class BlockPart:
    """A part as the element-major kernels read it (:data:`_BLOCK_LAYOUT`): payoffs as outcome codes,
    the deal weights' pair codes into the split's distinct weights, every index part-local."""

    node_actor: np.ndarray
    node_outcome: np.ndarray
    node_list: np.ndarray
    node_len: np.ndarray
    pair_code: np.ndarray
    dec_lo: np.ndarray
    dec_hi: np.ndarray
    dec_base: np.ndarray
    parent: np.ndarray
    elem_hand: np.ndarray
    nodes: np.ndarray
    max_list: int
    num_choices: int

    @property
    def num_nodes(self) -> int:
        return int(self.node_actor.shape[0])

    @property
    def num_elements(self) -> int:
        return int(self.parent.shape[0])

    def arrays(self) -> dict[str, np.ndarray]:
        return {name: getattr(self, name) for name, _, _ in _BLOCK_LAYOUT}

    def nbytes(self) -> int:
        return sum(a.nbytes for a in self.arrays().values())

    @classmethod
    def of(cls, t: VectorTree, roots: int) -> tuple[BlockPart, np.ndarray]:
        """Part tree ``t`` (its first ``roots`` elements are the frontier's lists) in the element-major
        layout, and each choice's slot."""
        from solvers.blocks import BlockLayout

        lay = BlockLayout.make(t, roots=roots)
        if lay is None:
            raise ValueError("a part whose elements are not in blocks: stream it with layout='slots'")
        if lay.max_list >= 2**16 or t.num_elements >= 2**31:
            raise ValueError(f"a part too large for the block files ({t.num_elements} elements, lists of "
                             f"{lay.max_list}): cut the tree deeper")
        nodes = np.flatnonzero((t.node_actor >= 0) & (lay.block_hi > lay.block_lo))
        nodes = nodes[np.argsort(lay.block_lo[nodes], kind="stable")].astype(np.int32)
        code = lay.pairs[0]
        if code.dtype.itemsize > 2:
            raise ValueError(f"{lay.pairs[1].shape[0]} distinct deal weights: the block files code at most 65,536")
        dec = np.flatnonzero(np.asarray(t.node_actor) >= 0)
        part = cls(np.asarray(t.node_actor), np.asarray(t.node_outcome, np.int16), np.asarray(t.node_list, np.int32),
                   np.asarray(lay.node_len, np.uint16), code, lay.block_lo[dec].astype(np.int32),
                   lay.block_hi[dec].astype(np.int32), lay.choice_base[dec].astype(np.int32),
                   lay.parent.astype(np.int32), np.asarray(t.elem_hand, np.int16), nodes, lay.max_list,
                   lay.num_choices)
        return part, np.asarray(lay.choice_slots(t), np.int32)


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
        return VectorTree(node_util=None, node_outcome=outc, payoff=self.utility, deal_weight=self.trunk.deal_weight,
                          num_hands=self.trunk.num_hands, **a)

    def block_part(self, i: int) -> BlockPart:
        """Part ``i`` in the element-major layout (made by :meth:`block_choices`)."""
        return self.store.load_blocks(i)

    def block_choices(self, threads: int = 1, progress: bool = False) -> np.ndarray:
        """Each part's choice count, making its block file from its slot file where there is none (or one
        that does not match it): once per split, resumable (each part's file is written atomically),
        ``threads`` parts at a time."""
        from concurrent.futures import ThreadPoolExecutor

        P = self.num_parts
        choices = np.zeros(P, np.int64)
        todo = []
        for i in range(P):
            c = self.store.block_counts(i)
            slots = int(self.slot_start[i + 1] - self.slot_start[i])
            if c is None or (int(c[0]), int(c[1]), int(c[6])) != (int(self.node_count[i]),
                                                                 int(self.element_count[i]), slots):
                todo.append(i)
            else:
                choices[i] = c[3]
        if not todo:
            return choices
        tr = self.trunk

        def convert(i: int) -> int:
            t = self.part(i)
            f = int(self.frontier[i])
            part, cs = BlockPart.of(t, int(tr.node_len[f, 0]) + int(tr.node_len[f, 1]))
            self.store.save_blocks(i, part, cs, t.num_slots, t.num_infosets)
            return part.num_choices

        bar = None
        if progress:
            from tqdm import tqdm

            bar = tqdm(total=len(todo), desc="laying parts out in blocks", unit=" part")
        with ThreadPoolExecutor(max(1, int(threads))) as pool:
            for i, c in zip(todo, pool.map(convert, todo), strict=True):
                choices[i] = c
                if bar is not None:
                    bar.update(1)
        if bar is not None:
            bar.close()
        return choices

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
        trunk = VectorTree(node_util=None, payoff=a["utility"], deal_weight=a["deal_weight"], num_hands=int(a["num_hands"]),
                           **{k: a[k] for k in PART_ARRAYS})
        return cls(trunk, a["frontier"], a["slot_start"], a["infoset_start"], a["node_count"],
                   a["element_count"], store, a["utility"])


class _Scratch:
    """One thread's working buffers for block parts (reach, value, strategy, each node's block and
    first choice), grown to the largest part seen and handed out as views."""

    def __init__(self) -> None:
        self.reach = np.empty(0, np.float32)
        self.value = np.empty(0)
        self.strat = np.empty(0, np.float32)
        self.blocks = np.empty((3, 0), np.int32)

    def take(self, elements: int, choices: int, nodes: int):
        if self.reach.shape[0] < elements:
            self.reach, self.value = np.empty(elements, np.float32), np.empty(elements)
        if self.strat.shape[0] < choices:
            self.strat = np.empty(choices, np.float32)
        if self.blocks.shape[1] < nodes:
            self.blocks = np.empty((3, nodes), np.int32)
        return self.reach[:elements], self.value[:elements], self.strat[:choices], self.blocks[:, :nodes]


@nb.njit(cache=True, nogil=True)
def _fill_nodes(actor, dec_lo, dec_hi, dec_base, blocks):
    """Per node: a decision node's block and first choice from the part's decision-node arrays (empty blocks
    at terminals, never read there)."""
    r = 0
    for n in range(actor.shape[0]):
        if actor[n] >= 0:
            blocks[0, n] = dec_lo[r]
            blocks[1, n] = dec_hi[r]
            blocks[2, n] = dec_base[r]
            r += 1
        else:
            blocks[0, n] = 0
            blocks[1, n] = 0
            blocks[2, n] = 0


class StreamedSolver(SolverState):
    """CFR-family solver over a :class:`SplitTree` (the iterates of :class:`VectorSolver` on the whole
    tree, to rounding). ``resident_bytes``: parts kept loaded between passes while their size fits (the
    rest are read from disk on every pass). ``layout``: ``"blocks"`` (default) streams each part in the
    element-major layout (:mod:`solvers.blocks`; state for real choices only, ~17 bytes per node and 6
    per element on disk and in memory), ``"slots"`` the slot kernels on the parts as built; both give the
    same iterates bit for bit (regrets and sums in slot order, certificates, tables)."""

    def __init__(self, split: SplitTree, algorithm: str = "dcfr", alternating: bool = True, *,
                 alpha: float | None = None, beta: float | None = None, gamma: float | None = None,
                 resident_bytes: int = 0, threads: int = 1, layout: str = "blocks", progress: bool = False) -> None:
        if layout not in ("blocks", "slots"):
            raise ValueError(f"layout must be blocks or slots, got {layout!r}")
        super().__init__(split, algorithm, alternating, alpha, beta, gamma)
        self.threads = int(threads)  # parts worked on at once (results are the same for any number)
        self.split = split
        self.layout = layout
        s = split.num_slots
        if layout == "blocks":
            # the trunk keeps its slots (slot kernels, a few thousand nodes); each part's choices follow
            ch = split.block_choices(self.threads, progress)
            self.state_start = np.concatenate([[split.slot_start[0]], split.slot_start[0] + np.cumsum(ch)])
            self.state_start = self.state_start.astype(np.int64)
            W = split.trunk.deal_weight
            self._wvals = np.unique(W)
            self._weights = (W, W if np.array_equal(W, W.T) else np.ascontiguousarray(W.T))
            s = int(self.state_start[-1])
        else:
            self.state_start = split.slot_start
        self._r = np.zeros(s, np.float32)
        self._s = np.zeros(s, np.float32)
        self._p = np.zeros(s if algorithm in PREDICTIVE else 1, np.float32)
        self.resident_bytes = int(resident_bytes)
        self._resident: dict[int, object] = {}
        self._resident_used = 0
        self.parts_read = 0  # parts read from disk so far (a measure of the streaming's cost)
        self._scratch: queue.SimpleQueue | None = None  # the threads' working buffers (see _pass)

    # ---- solver state: kept per choice with blocks, spoken per slot -----------
    def _to_slots(self, a: np.ndarray, fill: float = 0.0, st: np.ndarray | None = None) -> np.ndarray:
        """A state array in choice order (``st``: its parts' starts, default this solver's) per slot."""
        if self.layout == "slots" and st is None:
            return a
        sp = self.split
        st = self.state_start if st is None else st
        out = np.full(sp.num_slots, fill, a.dtype)
        out[: st[0]] = a[: st[0]]
        for i in range(sp.num_parts):
            out[sp.slot_start[i] + sp.store.load_choice_slots(i)] = a[st[i]:st[i + 1]]
        return out

    def _to_choices(self, v) -> np.ndarray:
        v = np.asarray(v, np.float32)
        if self.layout == "slots":
            return v.copy()
        sp, st = self.split, self.state_start
        out = np.empty(int(st[-1]), np.float32)
        out[: st[0]] = v[: st[0]]
        for i in range(sp.num_parts):
            out[st[i]:st[i + 1]] = v[sp.slot_start[i] + sp.store.load_choice_slots(i)]
        return out

    @property
    def regrets(self) -> np.ndarray:
        """Regrets per slot (a copy with blocks: assign, do not write into it)."""
        return self._to_slots(self._r)

    @regrets.setter
    def regrets(self, v) -> None:
        self._r = self._to_choices(v)

    @property
    def ssum(self) -> np.ndarray:
        return self._to_slots(self._s)

    @ssum.setter
    def ssum(self, v) -> None:
        self._s = self._to_choices(v)

    @property
    def pred(self) -> np.ndarray:
        return self._to_slots(self._p) if self.predictive else self._p

    @pred.setter
    def pred(self, v) -> None:
        self._p = self._to_choices(v) if self.predictive else np.zeros(1, np.float32)

    def _state_arrays(self) -> dict:
        """With blocks a checkpoint keeps the kernels' order (no slot-order copy), marked
        ``order = "streamed-choices"``; either order loads into either layout."""
        if self.layout == "slots":
            return super()._state_arrays()
        return {"regrets": self._r, "ssum": self._s, "pred": self._p, "order": np.array("streamed-choices")}

    def _load_array(self, d, name: str) -> None:
        mine = {"regrets": "_r", "ssum": "_s", "pred": "_p"}[name]
        ours = "order" in d and str(d["order"]) == "streamed-choices"
        if name == "pred" and not self.predictive:
            setattr(self, mine, np.zeros(1, np.float32))
            return
        v = np.asarray(d[name], np.float32)
        st = self.state_start
        if ours and self.layout == "slots":  # the parts' choice counts, from their block files
            ch = self.split.block_choices(self.threads)
            st = np.concatenate([[self.split.slot_start[0]], self.split.slot_start[0] + np.cumsum(ch)])
        want = int(st[-1]) if ours else self.split.num_slots
        if v.shape != (want,):
            raise ValueError(f"checkpoint's {name} has shape {v.shape}, this solver's {(want,)}")
        if ours:
            v = v.copy() if self.layout == "blocks" else self._to_slots(v, 0.0, st)
        else:
            v = self._to_choices(v)
        setattr(self, mine, v)

    def reset_averages(self) -> None:
        self._s[:] = 0.0
        self._p[:] = 0.0

    # ---- parts ------------------------------------------------------------
    def _read(self, i: int):
        return self.split.part(i) if self.layout == "slots" else self.split.block_part(i)

    def _size(self, i: int, t) -> int:
        return self.split.part_nbytes(i) if self.layout == "slots" else t.nbytes()

    def _keep(self, i: int, t) -> None:
        """Count a read of part ``i`` and keep it loaded while the resident budget allows."""
        self.parts_read += 1
        need = self._size(i, t)
        if self._resident_used + need <= self.resident_bytes:
            self._resident[i] = t
            self._resident_used += need

    def _worked(self, load, work, threads: int | None = None):
        """``(i, part, work(i, part))`` in part order, ``threads`` parts loaded and worked on at once (the
        kernels release the interpreter lock; each part owns its slots' regrets and sums; file reads
        release it too, so with one thread the next part is read while this one is worked on). At most
        ``threads + 1`` parts in memory beyond the resident ones. ``load(i)``, if given, supplies part
        ``i`` instead (slots: a tree with the same kernel arrays)."""
        from concurrent.futures import ThreadPoolExecutor

        n = self.split.num_parts

        def get(i):
            if load is not None:
                return load(i), False
            t = self._resident.get(i)
            return (t, False) if t is not None else (self._read(i), True)

        def job(i):
            t, fresh = get(i)
            return t, fresh, work(i, t)

        threads = self.threads if threads is None else threads
        if threads <= 1:
            with ThreadPoolExecutor(1) as pool:
                nxt = pool.submit(get, 0) if n else None
                for i in range(n):
                    t, fresh = nxt.result()
                    nxt = pool.submit(get, i + 1) if i + 1 < n else None
                    if fresh:
                        self._keep(i, t)
                    yield i, t, work(i, t)
            return
        with ThreadPoolExecutor(threads) as pool:
            window = [pool.submit(job, i) for i in range(min(n, threads))]
            for i in range(n):
                t, fresh, out = window.pop(0).result()
                if i + len(window) + 1 < n:
                    window.append(pool.submit(job, i + len(window) + 1))
                if fresh:
                    self._keep(i, t)
                yield i, t, out

    def _unordered(self, work):
        """``work(i, part)`` for every part, ``threads`` at a time, largest parts first (so no big part is
        left to run alone at the end of a pass), each part read inside its task (file reads release the
        interpreter lock) and kept resident while the budget allows; returns the results by part. A
        result must be small (a part's root values): every one is held until the pass ends."""
        from concurrent.futures import ThreadPoolExecutor

        sp = self.split
        if getattr(self, "_lpt", None) is None:
            self._lpt = np.argsort(-(sp.node_count * 28 + sp.element_count * 6), kind="stable")
        lock = threading.Lock()

        def task(i):
            t = self._resident.get(i)
            fresh = t is None
            if fresh:
                t = self._read(i)
            out = work(i, t)
            if fresh:
                with lock:
                    self._keep(i, t)
            return out

        out = [None] * sp.num_parts
        with ThreadPoolExecutor(self.threads) as pool:
            for i, r in zip(self._lpt, pool.map(task, self._lpt), strict=True):
                out[i] = r
        return out

    def _slots(self, i: int) -> slice:
        """Part ``i``'s state (``-1``: the trunk): its slots, or its choices with blocks."""
        st = self.state_start
        return slice(0, int(st[0])) if i < 0 else slice(int(st[i]), int(st[i + 1]))

    def _strategy(self, t: VectorTree, sl: slice, average: bool) -> np.ndarray:
        out = np.zeros(t.num_slots, np.float32)
        if average:
            _normalize(self._s[sl], t.infoset_offset, t.infoset_nact, out)
        else:
            pred = self._p[sl] if self.algorithm in PREDICTIVE else self._p
            _strategy_from(self._r[sl], pred, self.algorithm in PREDICTIVE, t.infoset_offset, t.infoset_nact,
                           out)
        return out

    # ---- one pass ---------------------------------------------------------
    def _frontier(self, i: int, part: np.ndarray, trunk: np.ndarray, into_part: bool) -> np.ndarray:
        """Part ``i``'s root elements (its frontier node's two lists, player 0's then 1's) against the
        trunk's: copied into ``part`` (reaches down), or ``part``'s added into ``trunk`` (values up)."""
        tr = self.split.trunk
        f = int(self.split.frontier[i])
        l0, n0 = int(tr.node_list[f, 0]), int(tr.node_len[f, 0])
        l1, n1 = int(tr.node_list[f, 1]), int(tr.node_len[f, 1])
        if into_part:
            part[:n0] = trunk[l0:l0 + n0]
            part[n0:n0 + n1] = trunk[l1:l1 + n1]
        else:
            trunk[l0:l0 + n0] += part[:n0]
            trunk[l1:l1 + n1] += part[n0:n0 + n1]
        return part

    def _pass(self, mode: int, who: int, average: bool, load=None, visit=None, threads: int | None = None) -> np.ndarray:
        """Forward and backward over the trunk and every part; returns the trunk's values.
        ``load``: see :meth:`_worked` (with blocks, the slot tree handed to ``visit``); ``visit(i, tree,
        slots, reach, value, strat)`` is called after each part's backward pass (``strat``: the strategy
        it used, per choice with blocks, else per slot) and last with ``i = -1`` for the trunk."""
        sp = self.split
        tr = sp.trunk
        it = float(self.iteration)
        pos, neg, sdisc = _discounts(it, self.alpha, self.beta, self.gamma, self.scheduled)
        alg = _RULE_ID[self.algorithm]
        pcfr = self.algorithm in PREDICTIVE
        tb = np.zeros(1)
        utable = np.append(np.asarray(sp.utility, np.float64), 0.0)  # a code of -1 (decision nodes) reads 0.0

        def pred_of(sl):
            return self._p[sl] if pcfr else self._p

        def back(t: VectorTree, sl: slice, strat, reach, value) -> None:
            _back_range(0, t.num_nodes, -1, -1, 0, 0, tb, t.node_actor, t.utility_codes(), t.node_list, t.node_len,
                        t.node_infoset, t.infoset_offset, t.infoset_nact, t.entry_child, t.elem_hand,
                        t.deal_weight, NO_PAIRS, strat, reach, value, mode, who, alg, it, pos, neg, sdisc,
                        self._r[sl], self._s[sl], pred_of(sl))

        def fwd(t: VectorTree, strat, reach) -> None:
            _fwd_range(0, t.num_nodes, t.node_actor, t.node_list, t.node_len, t.node_infoset, t.infoset_offset,
                       t.infoset_nact, t.entry_child, strat, reach)

        tsl = self._slots(-1)
        tstrat = self._strategy(tr, tsl, average)
        treach = np.zeros(tr.num_elements, np.float32)
        treach[: 2 * tr.num_hands] = 1.0
        fwd(tr, tstrat, treach)
        tvalue = np.zeros(tr.num_elements)

        def roots(i: int, reach: np.ndarray) -> np.ndarray:
            return self._frontier(i, reach, treach, into_part=True)

        def work(i: int, t, scratch: _Scratch | None = None):
            sl = self._slots(i)
            if self.layout == "blocks":
                E, C, N = t.num_elements, t.num_choices, t.num_nodes
                reach, value, strat, blocks = (scratch or _Scratch()).take(E, C, N)
                _fill_nodes(t.node_actor, t.dec_lo, t.dec_hi, t.dec_base, blocks)
                blo, bhi, cb = blocks
                roots(i, reach)
                block_sweep(t.nodes, t.node_actor, t.node_list, t.node_len, blo, bhi, t.parent, cb, self._r[sl],
                            pred_of(sl), pcfr, self._s[sl], average, strat, reach, t.max_list)
                block_backward(t.node_actor, (t.node_outcome, utable), t.node_list, t.node_len, blo, bhi, t.parent, cb, t.elem_hand, self._weights, (t.pair_code, self._wvals), strat, reach,
                               value, mode, who, alg, it, pos, neg, sdisc, self._r[sl], self._s[sl], pred_of(sl),
                               t.max_list)
                return sl, reach, value, strat
            reach = roots(i, np.zeros(t.num_elements, np.float32))
            strat = self._strategy(t, sl, average)
            fwd(t, strat, reach)
            value = np.zeros(t.num_elements)
            back(t, sl, strat, reach, value)
            return sl, reach, value, strat

        if visit is None and load is None and self.threads > 1:
            # only the root values leave a task, so parts may finish in any order; the trunk's sums are
            # still taken in part order below (the same bits whatever the threads)
            # working buffers reused part after part and pass after pass, one set per thread (fresh ones
            # cost a page fault per 4 KB: ~12 bytes per entry of new pages every pass)
            if self._scratch is None:
                self._scratch = queue.SimpleQueue()
                for _ in range(self.threads):
                    self._scratch.put(_Scratch())

            def small(i, t):
                n = int(tr.node_len[sp.frontier[i], 0]) + int(tr.node_len[sp.frontier[i], 1])
                sc = self._scratch.get()
                try:
                    return work(i, t, sc)[2][:n].copy()
                finally:
                    self._scratch.put(sc)

            for i, v in enumerate(self._unordered(small)):
                self._frontier(i, v, tvalue, into_part=False)
            back(tr, tsl, tstrat, treach, tvalue)
            return tvalue
        for i, t, (sl, reach, value, strat) in self._worked(None if self.layout == "blocks" else load, work, threads):
            self._frontier(i, value, tvalue, into_part=False)  # in part order whatever the threads
            if visit is not None:
                visit(i, load(i) if load is not None and self.layout == "blocks" else t, sl, reach, value, strat)
            del t, reach, value, strat
        back(tr, tsl, tstrat, treach, tvalue)
        if visit is not None:
            visit(-1, tr, tsl, treach, tvalue, tstrat)
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
        # slot parts carry their payoffs; block parts carry outcome codes, read through the split's utility
        drop = self.layout == "slots"
        try:
            if utilities is not None:
                sp.utility = np.asarray(utilities, np.float64)
                sp.trunk.set_payoff(sp.utility)
                if drop:
                    self._resident.clear()
                    self._resident_used = 0
            return self._root(self._pass(MODE_BR, player, True), player)
        finally:
            if utilities is not None:
                sp.utility = saved
                sp.trunk.set_payoff(saved)
                if drop:
                    self._resident.clear()
                    self._resident_used = 0

    def evaluate_parts(self, visit, load=None, min_actions: int = 0) -> None:
        """One evaluation pass of the average profile calling ``visit(i, tree, average strategy,
        action values, information-set reaches, regrets)`` (per slot of ``tree``) for each part in order
        (``tree`` from ``load(i)`` if given), then for the trunk (``i = -1``, the split's trunk): what a
        strategy table needs, one part in memory at a time. Values and reaches of sets with fewer than
        ``min_actions`` actions are NaN (see :func:`solvers.vector.slot_values_of`)."""
        sp = self.split
        # a table's labelled trees and rows need the room the resident parts and the buffers hold
        self._resident.clear()
        self._resident_used = 0
        self._scratch = None

        def each(i, t, sl, reach, value, strat):
            if t is None or not hasattr(t, "infoset_offset"):
                t = sp.part(i)
            av, ireach = slot_values_of(t, reach, value, np.float32, min_actions)  # table columns
            if self.layout == "blocks" and i >= 0:
                cs = sp.store.load_choice_slots(i)
                avg = np.ones(t.num_slots, np.float32)
                avg[cs] = strat
                regrets = np.zeros(t.num_slots, np.float32)
                regrets[cs] = self._r[sl]
            else:
                avg, regrets = strat, self._r[sl]
            visit(i, t, avg, av, ireach, regrets)

        # one part at a time (the next one read meanwhile): a table's labelled tree and rows for the largest
        # part beside two parts' working buffers ran a 0x0 class out of memory (24 GB at its last parts); and
        # no part is kept on the way (with the budget in place the pass refilled it: out of memory again at
        # the 0x0 class's last parts, stop 32)
        budget, self.resident_bytes = self.resident_bytes, 0
        try:
            self._pass(MODE_EVAL, 2, True, load, each, threads=1)
        finally:
            self.resident_bytes = budget

    def exploitability(self) -> float:
        """NashConv / 2 of the average profile, exact, in the game's units."""
        b0, b1 = self.best_response_values()
        return (b0 + b1) / 2.0

    @property
    def resident_used(self) -> int:
        """Bytes of parts kept loaded between passes."""
        return self._resident_used

    def nbytes(self) -> int:
        """Bytes of solver state held for the whole tree (parts' working buffers come and go)."""
        return self._r.nbytes + self._s.nbytes + self._p.nbytes + self._resident_used


def memory_of(split: SplitTree, threads: int = 1, solver: StreamedSolver | None = None) -> dict[str, int]:
    """Bytes a streamed solve holds: solver state for every slot (every choice with blocks), the trunk,
    the largest part with its working buffers (times the parts worked on at once), and the parts the
    ``solver`` keeps resident."""
    trunk = split.trunk.nbytes() + 12 * split.trunk.num_elements
    k = max(1, int(threads))
    if solver is None or solver.layout == "slots":
        largest = max((split.part_nbytes(i) for i in range(split.num_parts)), default=0)
        out = {"state": 8 * split.num_slots, "trunk": trunk, "largest_part": largest * k}
    else:
        def working(i: int) -> int:  # the file's arrays, then reach, value, strategy, utility and block buffers
            c = split.store.block_counts(i)
            return 16 * int(c[0]) + 12 * int(c[8]) + 18 * int(c[1]) + 4 * int(c[2]) + 12 * int(c[3]) + 20 * int(c[0])

        largest = max((working(i) for i in range(split.num_parts)), default=0)
        out = {"state": 8 * int(solver.state_start[-1]), "trunk": trunk, "largest_part": largest * k}
    if solver is not None:
        out["resident"] = solver.resident_used
    return out


def remove(folder: str | Path) -> None:
    """Delete a split's files (parts, trunk, index)."""
    f = Path(folder)
    for p in list(f.glob("part-*.bin")) + [f / "trunk.npz", f / "split.json"]:
        if p.exists():
            os.unlink(p)
