"""Two-player zero-sum game trees as flat arrays (the solvers' only view of a game).

Two forms share one storage convention (an information set owns a contiguous
block of action *slots* from ``infoset_offset``; regrets and strategy sums are
arrays over slots), so every algorithm's update rule is the same code:

* :class:`GameTree`, explicit: one node per history (generic OpenSpiel builder);
* :class:`VectorTree`, public: one node per public history, each holding the
  players' private states as vectors (native builders of card games).

GameTree nodes are numbered breadth-first from the root (0), so every parent precedes
its children and a node's children are contiguous: child ``a`` of node ``n``
is node ``child_start[n] + a``. Numba kernels walk these arrays forwards
(reach probabilities) and backwards (values) without recursion or Python
objects. Information sets own a contiguous block of action slots starting at
``infoset_offset[I]``; regrets and strategy sums are arrays over slots.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

import numba as nb
import numpy as np

TERMINAL = 0
CHANCE = 1
DECISION = 2
FORCED = -2
"""A route's slot for the one action a source's extension of the solution plays with probability 1 at a state
off the solved tree (e.g. accepting a raise the tree prunes as one no player gains by)."""


@dataclass
class GameTree:
    """A flat game tree. ``utility`` is player 0's payoff at terminals."""

    node_type: np.ndarray  # int8 [N]
    node_player: np.ndarray  # int8 [N], -1 for chance/terminal
    node_infoset: np.ndarray  # int32 [N], -1 for chance/terminal
    child_start: np.ndarray  # int32 [N]
    num_children: np.ndarray  # int32 [N]
    chance_prob: np.ndarray  # float64 [N]: probability of the edge into the node (1 below decisions)
    utility: np.ndarray  # float64 [N]
    infoset_player: np.ndarray  # int8 [M]
    infoset_offset: np.ndarray  # int32 [M]
    infoset_nact: np.ndarray  # int32 [M]
    # Python-side metadata (not used by kernels)
    infoset_keys: list = field(default_factory=list)
    infoset_actions: list = field(default_factory=list)
    source: str = ""
    infoset_extra: list = field(default_factory=list)  # build_openspiel_tree's infoset_hook results

    @property
    def num_nodes(self) -> int:
        return int(self.node_type.shape[0])

    @property
    def num_infosets(self) -> int:
        return int(self.infoset_player.shape[0])

    @property
    def num_slots(self) -> int:
        """Information-set actions (table entries)."""
        return int(self.infoset_nact.sum())

    def nbytes(self) -> int:
        return sum(
            a.nbytes
            for a in (
                self.node_type, self.node_player, self.node_infoset, self.child_start, self.num_children,
                self.chance_prob, self.utility, self.infoset_player, self.infoset_offset, self.infoset_nact,
            )
        )


def estimate_tree_size(game, probes: int = 200, seed: int = 0) -> float:
    """Knuth's estimator of the number of nodes: the mean, over random root-to-leaf paths, of the
    sum of the products of branching factors along the path (unbiased; cheap for any game)."""
    import random

    rng = random.Random(seed)
    total = 0.0
    for _ in range(probes):
        st = game.new_initial_state()
        weight, nodes = 1.0, 1.0
        while not st.is_terminal():
            acts = [a for a, _ in st.chance_outcomes()] if st.is_chance_node() else st.legal_actions()
            weight *= len(acts)
            nodes += weight
            st.apply_action(rng.choice(acts))
        total += nodes
    return total / probes


def build_openspiel_tree(game, progress: bool = False, max_nodes: float | None = 50e6,
                         infoset_hook=None, utility_hook=None) -> GameTree:
    """Walk an OpenSpiel game once, breadth-first, into a :class:`GameTree`.

    ``infoset_hook(state, player)``, if given, is called at the first state of every information set;
    its results are kept in ``tree.infoset_extra`` (e.g. another solver's key for that set).
    ``utility_hook(state)``, if given, is player 0's payoff at each terminal instead of ``returns()[0]``
    (e.g. a match's equity of the score the hand ends at; player 1 receives its negation).

    For validation and for users' own games; large games belong to native builders. The size
    is estimated first (:func:`estimate_tree_size`): above ``max_nodes`` (default 50 M, hours of
    walking through a Python game) a ``ValueError`` says so instead of running for hours.
    """
    import pyspiel

    if max_nodes is not None:
        est = estimate_tree_size(game)
        if est > max_nodes:
            raise ValueError(f"{game} has about {est:.2g} nodes (estimated from random paths): walking it would "
                             f"take ~{est * 20e-6 / 3600:.1f} h and more memory than a tree of {max_nodes:.0e}; "
                             "use a native builder (tree='native') or pass max_nodes=None to walk anyway")

    gt = game.get_type()
    if game.num_players() != 2 or gt.utility not in (pyspiel.GameType.Utility.ZERO_SUM, pyspiel.GameType.Utility.CONSTANT_SUM):
        raise ValueError(f"solvers need a two-player zero-sum game, got {gt.short_name} ({game.num_players()} players, {gt.utility})")
    rows: list[tuple] = []  # (type, player, infoset, child_start, num_children, chance_prob, utility)
    info_index: dict[str, int] = {}
    keys: list[str] = []
    actions: list[list[int]] = []
    iplayer: list[int] = []
    extra: list = []
    queue = deque([(game.new_initial_state(), 1.0)])
    push = queue.append
    next_id = 1
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(desc="walking tree", unit=" nodes")
    terminal, chance = int(pyspiel.PlayerId.TERMINAL), int(pyspiel.PlayerId.CHANCE)
    while queue:
        state, p = queue.popleft()
        pl = state.current_player()  # one call classifies the node
        if pl == terminal:
            u = state.returns()[0] if utility_hook is None else float(utility_hook(state))
            rows.append((TERMINAL, -1, -1, 0, 0, p, u))
        elif pl == chance:
            outs = state.chance_outcomes()
            rows.append((CHANCE, -1, -1, next_id, len(outs), p, 0.0))
            next_id += len(outs)
            for a, q in outs:
                push((state.child(a), q))
        else:
            key = state.information_state_string(pl)
            legal = state.legal_actions()
            i = info_index.get(key)
            if i is None:
                i = info_index[key] = len(keys)
                keys.append(key)
                actions.append(legal)
                iplayer.append(pl)
                if infoset_hook is not None:
                    extra.append(infoset_hook(state, pl))
            elif actions[i] != legal:
                raise ValueError(f"information set {key!r} has different legal actions in different states")
            rows.append((DECISION, pl, i, next_id, len(legal), p, 0.0))
            next_id += len(legal)
            for a in legal:
                push((state.child(a), 1.0))
        if bar is not None:
            bar.update(1)
    if bar is not None:
        bar.close()
    cols = list(zip(*rows, strict=True))
    ntype, nplayer, ninfo, cstart, nchild, cprob, util = cols
    nact = np.array([len(a) for a in actions], np.int32)
    offset = np.zeros(len(actions), np.int32)
    if len(actions):
        offset[1:] = np.cumsum(nact)[:-1]
    return GameTree(
        node_type=np.array(ntype, np.int8),
        node_player=np.array(nplayer, np.int8),
        node_infoset=np.array(ninfo, np.int32),
        child_start=np.array(cstart, np.int32),
        num_children=np.array(nchild, np.int32),
        chance_prob=np.array(cprob, np.float64),
        utility=np.array(util, np.float64),
        infoset_player=np.array(iplayer, np.int8),
        infoset_offset=offset,
        infoset_nact=nact,
        infoset_keys=keys,
        infoset_actions=actions,
        source=str(game),
        infoset_extra=extra,
    )


@runtime_checkable
class TreeSource(Protocol):
    """What a native builder attaches to its trees so solvers can label, route and
    describe them without knowing the game (solvers never import a game's package).

    Implementations must be picklable (plain dataclasses), so trees and results
    can cross process boundaries.
    """

    def labels(self, tree: VectorTree, min_actions: int = 0) -> dict:
        """Per information set ``player`` and key columns (object arrays), per slot ``action``,
        and ``constants`` (columns equal on every row). A source may honour ``min_actions``: its per-set
        arrays then hold only the sets of at least that many actions (in number order), it says so with
        ``"min_actions"`` in the dict, and ``action_names`` (codes, notation) replaces ``action``."""
        ...

    def route(self, tree: VectorTree, state: Any) -> dict[int, int] | None:
        """For an OpenSpiel state of this subgame: action id -> slot (-1: no slot; actions sharing a slot
        are equivalent and split its probability evenly; :data:`FORCED`: played with probability 1);
        ``None`` if the state belongs to another subgame; ``KeyError`` if it lies
        after an action the tree pruned."""
        ...

    def metadata(self) -> dict:
        """JSON-able description stored with tables (rules, cell, ``schema``: the registered table schema's name)."""
        ...


@dataclass
class TreeIndex:
    """Lookups derived from a :class:`VectorTree`'s arrays, computed on first use and kept with the tree
    (the kernels never read them): each information set's decision node, each slot's information set, and
    the source's labels of the tree (cells sharing a tree share its labels)."""

    infoset_node: np.ndarray | None = None
    slot_infoset: np.ndarray | None = None
    labels: dict | None = None


def file_backed(a: np.ndarray, name: str = "array", folder: str | None = None) -> np.ndarray:
    """``a`` moved out of memory: written to a file, mapped read-only and the file unlinked, so its pages
    are file-backed (the kernel may drop them under pressure and reads them back on use)."""
    import os
    import tempfile

    fd, path = tempfile.mkstemp(prefix=f"tree-{name}-", suffix=".npy", dir=folder or tempfile.gettempdir())
    os.close(fd)
    try:
        np.save(path, a)
        return np.load(path, mmap_mode="r")
    finally:
        os.unlink(path)  # the mapping stays valid; the disk space is freed when it is dropped


@dataclass
class VectorTree:
    """A public tree in vector form (DESIGN-NOTES §4), for games whose chance is one private deal at the root.

    * Node ``n`` (parents before children) has ``node_actor`` (-1 terminal) and,
      for terminals, a utility: player 0's payoff, which must not depend on
      private states (true of trick-taking games where who wins is public). A tree
      whose terminals carry outcome codes holds its utilities per outcome
      (``payoff``, set by :meth:`set_payoff`; ``node_util`` is then ``None``), so
      the kernels read a 2-byte code per node, not an 8-byte utility;
      :meth:`utilities` gives the per-node array either way.
    * Each player's private states live in one global array of *elements*;
      node ``n`` sees player ``p``'s elements ``node_list[n, p] .. + node_len[n, p]``.
      A player's list is shared by every node until that player acts again.
      Elements ``0..H-1`` are player 0's hands at the root, ``H..2H-1`` player 1's.
    * At a decision node the actor's ``k``-th element is information set
      ``node_infoset[n] + k``; its action slot ``e`` leads to element
      ``entry_child[e]`` (in the child's list). Only these per-slot links are
      stored: no per-history node exists.
    * ``deal_weight[h0, h1]`` is the probability of the deal (card removal
      included); ``elem_hand`` maps elements to hands.
    """

    node_actor: np.ndarray  # int8 [N]
    node_util: np.ndarray | None  # float64 [N]; None once payoffs are per outcome (see utilities())
    node_list: np.ndarray  # int32 [N, 2]
    node_len: np.ndarray  # int32 [N, 2]
    node_infoset: np.ndarray  # int32 [N], -1 at terminals
    infoset_offset: np.ndarray  # int32 [M] (int64 past 2**31 slots)
    infoset_nact: np.ndarray  # int8 [M]
    entry_child: np.ndarray  # int32 [S]
    elem_hand: np.ndarray  # int16 [E]
    deal_weight: np.ndarray  # float64 [H, H]
    num_hands: int
    # navigation and labels (kernels do not read these)
    node_parent: np.ndarray | None = None  # int32 [N]
    node_action: np.ndarray | None = None  # int16 [N]: public action code into the node
    node_child: np.ndarray | None = None  # int32 [N]: first child (children are contiguous)
    node_nchild: np.ndarray | None = None  # int16 [N]
    entry_action: np.ndarray | None = None  # int16 [S]: private action code of the slot
    elem_entry: np.ndarray | None = None  # int32 [E]: slot that created the element (-1 at the root)
    # payoffs: terminals carry an outcome code; an objective maps codes to utilities (set_payoff)
    node_outcome: np.ndarray | None = None  # int16 [N]: outcome code at terminals, -1 elsewhere
    payoff: np.ndarray | None = None  # float64 [outcomes]: player 0's utility per outcome code (set_payoff)
    source: TreeSource | None = None
    index: TreeIndex = field(default_factory=TreeIndex)

    NAVIGATION = ("node_parent", "node_action", "node_child", "node_nchild", "entry_action", "elem_entry")

    def offload_navigation(self, folder: str | None = None, names: tuple[str, ...] | None = None) -> int:
        """Move the navigation/label arrays (which the kernels never read) out of memory: each is
        written to a file, mapped read-only and the file unlinked, so its pages are file-backed and
        the kernel may drop them under pressure; labels and lookups still read them. Returns the
        bytes moved. ``names``: other arrays to move instead (e.g. the slot index arrays, which the
        element-major kernels of :mod:`solvers.blocks` never read)."""
        moved = 0
        for name in self.NAVIGATION if names is None else names:
            a = getattr(self, name)
            if a is None or isinstance(a, np.memmap) or a.nbytes < (1 << 20):
                continue
            setattr(self, name, file_backed(a, name, folder))
            moved += a.nbytes
        return moved

    def set_payoff(self, utility_by_outcome: np.ndarray) -> None:
        """Set every terminal's utility (player 0's) from its outcome code: one built tree
        serves any objective (points, match equity, best-response continuations)."""
        if self.node_outcome is None:
            raise ValueError("this tree records no terminal outcomes; its payoffs are fixed")
        u = np.asarray(utility_by_outcome, np.float64)
        term = self.node_outcome >= 0
        codes = self.node_outcome[term]
        if codes.size and int(codes.max()) >= u.shape[0]:
            raise ValueError(f"utility table has {u.shape[0]} outcomes, the tree uses code {int(codes.max())}")
        self.payoff = u.copy()
        self.node_util = None  # per outcome from now on: 8 bytes per node the kernels no longer read

    @contextmanager
    def payoff_set(self, utility_by_outcome: np.ndarray) -> Iterator[None]:
        """Within the block, the tree's terminals pay ``utility_by_outcome``; the payoffs before are
        restored after (a table per outcome, or the per-node array of a tree that had no table)."""
        saved = (self.node_util, self.payoff)
        try:
            self.set_payoff(utility_by_outcome)
            yield
        finally:
            self.node_util, self.payoff = saved

    def utilities(self) -> np.ndarray:
        """Player 0's utility per node (0 at decision nodes): the stored array, or one made from the
        outcome codes and :attr:`payoff`."""
        if self.node_util is not None:
            return self.node_util
        codes, table = self.utility_codes()
        return table[codes]

    def utility_codes(self) -> tuple[np.ndarray, np.ndarray]:
        """What the kernels read for a node's utility, ``table[codes[n]]``: the outcome codes and the payoff
        table with a 0.0 appended (a code of -1, at decision nodes, reads it), or, on a tree that stores a
        utility per node, codes into that array's distinct values."""
        if self.node_util is None:
            if self.node_outcome is None:
                raise ValueError("this tree has neither per-node utilities nor outcome codes")
            table = self.payoff
            if table is None:  # no payoff set yet: every terminal pays 0
                table = np.zeros(int(self.node_outcome.max(initial=-1)) + 1)
            return self.node_outcome, np.append(np.asarray(table, np.float64), 0.0)
        values, codes = np.unique(self.node_util, return_inverse=True)
        return codes.astype(np.int16 if values.shape[0] <= 2**15 else np.int32), values

    @property
    def num_nodes(self) -> int:
        return int(self.node_actor.shape[0])

    @property
    def num_infosets(self) -> int:
        return int(self.infoset_offset.shape[0])

    @property
    def num_slots(self) -> int:
        return int(self.entry_child.shape[0])

    @property
    def num_elements(self) -> int:
        return int(self.elem_hand.shape[0])

    @property
    def infoset_player(self) -> np.ndarray:
        """Player of each information set (computed from the nodes)."""
        return self.node_actor[self.infoset_node()].astype(np.int8)

    def infoset_nodes(self) -> np.ndarray:
        """Decision node of each information set (computed once, kept in :attr:`index`)."""
        if self.index.infoset_node is None:
            self.index.infoset_node = self.infoset_node()
        return self.index.infoset_node

    def slot_infosets(self) -> np.ndarray:
        """The information set of each slot (computed once, kept in :attr:`index`)."""
        if self.index.slot_infoset is None:
            self.index.slot_infoset = np.repeat(np.arange(self.num_infosets, dtype=np.int32),
                                                self.infoset_nact.astype(np.int64))
        return self.index.slot_infoset

    def drop_mapped_pages(self) -> None:
        """Take the pages of the arrays moved to files (:meth:`offload_navigation`) out of this process's resident
        set (``MADV_DONTNEED``; they stay in the page cache and come back on the next read). Clean file pages cost
        no memory the kernel cannot reclaim, but a process's peak counts them: a pass that reads the slot index in
        slices drops each slice's pages after it, so the peak holds one slice's."""
        import mmap

        for name in self.NAVIGATION + ("entry_child", "infoset_offset", "infoset_nact", "node_infoset", "node_len"):
            base = getattr(self, name, None)
            while base is not None and not isinstance(base, mmap.mmap):
                base = getattr(base, "base", None)
            if base is not None and hasattr(mmap, "MADV_DONTNEED"):
                base.madvise(mmap.MADV_DONTNEED)

    @staticmethod
    def slices(order: np.ndarray, size: int = 262_144) -> list[np.ndarray]:
        """``order`` cut into consecutive slices of about ``size`` nodes (see :meth:`drop_mapped_pages`)."""
        return np.array_split(order, max(1, -(-len(order) // size)))

    def decision_order(self) -> np.ndarray:
        """The decision nodes ordered by their first information set: a walk in this order meets information
        sets in number order (the builders number them as they expand nodes, not as they create them), so it
        can write per-set rows contiguously without a per-set index array."""
        dec = np.flatnonzero(self.node_actor >= 0)
        return dec[np.argsort(np.asarray(self.node_infoset)[dec], kind="stable")]

    def infoset_of_slot(self, slot: int) -> int:
        """The information set whose block holds ``slot``."""
        return int(np.searchsorted(self.infoset_offset, slot, side="right") - 1)

    def infoset_node(self) -> np.ndarray:
        """Decision node of each information set (one pass over the nodes: numpy's repeats and scatter took
        0.53 s at 10x10's 39 M information sets, a sixth of labelling a table)."""
        out = np.empty(self.num_infosets, np.int32)
        _infoset_nodes(self.node_actor, self.node_infoset, self.node_len, out)
        return out

    def resident_bytes(self) -> int:
        """Bytes this tree keeps in memory: the kernels' structure, the navigation arrays not offloaded to a
        mapping, and the lookups and labels kept in :attr:`index` (what holding the tree in a cache costs)."""
        total = self.nbytes()
        for name in self.NAVIGATION + (("node_outcome",) if self.node_util is not None else ()):
            a = getattr(self, name)
            if isinstance(a, np.ndarray) and not isinstance(a, np.memmap):
                total += a.nbytes
        for a in (self.index.infoset_node, self.index.slot_infoset):
            total += a.nbytes if a is not None else 0
        return total + _nested_nbytes(self.index.labels)

    def nbytes(self) -> int:
        """Bytes of the structure the kernels read, in memory (labels and offloaded arrays excluded)."""
        util = (self.node_util,) if self.node_util is not None else (self.node_outcome, self.payoff)
        return sum(0 if a is None or isinstance(a, np.memmap) else a.nbytes
                   for a in (self.node_actor, *util, self.node_list, self.node_len, self.node_infoset,
                             self.infoset_offset, self.infoset_nact, self.entry_child, self.elem_hand,
                             self.deal_weight))


def _nested_nbytes(x) -> int:
    """Bytes of the numpy arrays inside nested dicts, lists and tuples."""
    if isinstance(x, np.ndarray):
        return 0 if isinstance(x, np.memmap) else x.nbytes
    if isinstance(x, dict):
        return sum(_nested_nbytes(v) for v in x.values())
    if isinstance(x, (list, tuple)):
        return sum(_nested_nbytes(v) for v in x)
    return 0


NATIVE_BUILDERS: dict = {}
"""Game short name -> ``fn(game) -> list[(weight, VectorTree)]``: independent
subgames (e.g. one per class of a public chance card) whose weighted sum is the game. Games
register here; solvers never import a game's internals."""


def register_native_builder(short_name: str, fn) -> None:
    """Make ``solve(game)`` use ``fn`` for games named ``short_name``."""
    NATIVE_BUILDERS[short_name] = fn


STORED = ("node_actor", "node_util", "node_list", "node_len", "node_infoset", "infoset_offset", "infoset_nact",
          "entry_child", "elem_hand", "deal_weight", "node_outcome") + VectorTree.NAVIGATION


def save_tree(tree: VectorTree, folder, key: str) -> bool:
    """Write ``tree``'s arrays (not its payoff, source or lookups) to ``folder``, named by ``key`` (what built
    it). The folder appears whole or not at all (written beside it, then renamed), so several processes, or a
    cluster's nodes on shared storage, may fill one store: the first to finish wins and the others' copies are
    dropped. False when ``folder`` already held a tree."""
    import os
    import shutil
    from pathlib import Path

    from solvers.storage import _HOST, remove_stale_temporaries, temporary_tag, write_json

    folder = Path(folder)
    if (folder / "tree.json").exists():
        return False
    folder.parent.mkdir(parents=True, exist_ok=True)
    remove_stale_temporaries(folder)  # a copy whose writer was killed (SIGKILL, out of memory) on this host
    tmp = folder.with_name(f".{folder.name}.{_HOST}.{os.getpid()}.{temporary_tag()}")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir()
    try:
        names = []
        for name in STORED:
            a = getattr(tree, name)
            if a is not None:
                np.save(tmp / f"{name}.npy", np.ascontiguousarray(a))
                names.append(name)
        write_json(tmp / "tree.json", {"key": key, "num_hands": int(tree.num_hands), "arrays": names})
        try:
            tmp.rename(folder)
        except OSError:  # another writer's copy is already there
            return False
        return True
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def load_tree(folder, key: str) -> VectorTree | None:
    """The tree :func:`save_tree` wrote to ``folder`` for ``key``, read into memory (so the store may be
    cleared while it is in use), without payoff or source; ``None`` if there is none. ``ValueError`` if the
    folder holds another key's tree or cannot be read."""
    from pathlib import Path

    from solvers.storage import read_json

    folder = Path(folder)
    if not (folder / "tree.json").exists():
        return None
    meta = read_json(folder / "tree.json", "stored tree")
    if meta.get("key") != key:
        raise ValueError(f"{folder} holds the tree of {meta.get('key')!r}, not {key!r}")
    try:
        arrays = {name: np.load(folder / f"{name}.npy") for name in meta["arrays"]}
    except (OSError, ValueError) as e:
        raise ValueError(f"{folder}: unreadable stored tree ({e}); delete the folder to build it again") from None
    kw = {name: arrays.get(name) for name in STORED}
    return VectorTree(**kw, num_hands=int(meta["num_hands"]))


@nb.njit(cache=True, nogil=True)
def _infoset_nodes(actor, infoset, nlen, out):
    """:meth:`VectorTree.infoset_node`: node ``n``'s information sets are ``infoset[n] + k`` for the ``k``-th
    element of its actor's list."""
    for n in range(actor.shape[0]):
        p = actor[n]
        if p >= 0:
            i0 = infoset[n]
            for k in range(nlen[n, p]):
                out[i0 + k] = n
