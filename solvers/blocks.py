"""Element-major solver state for :class:`solvers.tree.VectorTree`: a slot *is* the element it creates.

Every element below the root hands is created by exactly one slot (``entry_child`` is a bijection), and
the builders lay a decision node's new elements out as one contiguous **block**: the concatenation of its
children's lists for the actor, in action order. Indexing regrets, strategy sums and the working
strategy by element rather than by slot makes the children implicit:

* forward: ``reach[d] = reach[parent[d]] * strat[d]`` for every element in order (elements are numbered
  parents first), no ``entry_child`` gather;
* a **forced** slot (the only legal action of its information set: 58-93% of the slots of a real-deck
  cell) is marked by storing its parent's index bit-inverted (negative), so every pass handles it in one
  step (its reach and value pass through) without counting its siblings or touching its regrets;
* regret matching and the decision nodes of the backward pass scan a node's block contiguously, twice
  (sums per parent element into a small per-thread scratch, then the per-slot work), instead of
  gathering each information set's children from several child lists;
* the kernels read no per-slot or per-information-set index arrays at all: ``parent`` (4 bytes per
  element) replaces ``entry_child`` and ``slot_parent`` (8), and ``infoset_offset`` / ``infoset_nact``
  (5 bytes per information set) are needed only to translate to slot order at the boundary.

The arithmetic is the slot kernels' (:mod:`solvers.vector`, :mod:`solvers.flat`): the same products and
the same sums in the same order (an information set's actions are its children's order), so iterates
are bit-identical, tested against :class:`solvers.vector.VectorSolver`.
"""

from __future__ import annotations

from typing import NamedTuple

import numba as nb
import numpy as np

from solvers.cfr import _RULE_ID, PREDICTIVE, _rule
from solvers.tree import VectorTree, file_backed

MODE_UPDATE = 0
MODE_EVAL = 1
MODE_BR = 2
# An update pass that leaves every element it consumed at 0.0 (a decision node's block, once its values are used), so
# the next update pass starts from a cleared value array without a memset of it (8 bytes per element, ~5% of an
# iteration at 10x10). Values are the same bit for bit: each sum still starts at 0.0. The caller clears the root lists
# (nothing consumes them) and keeps track of when the array is clean (any other pass leaves values behind).
MODE_UPDATE_ZERO = 3
# The same for a best response whose caller reads only the root lists (a certificate's value): each element is left at
# 0.0 once its node took the max over it, so neither this pass nor the next update pass clears the array (three
# memsets per check before: ~0.1 s of a ~0.5 s check at 10x10).
MODE_BR_ZERO = 4
_PREDICTIVE_IDS = tuple(sorted({_RULE_ID[a] for a in PREDICTIVE}))  # update rules that keep a prediction


@nb.njit(cache=True, inline="always")
def _predictive(alg):
    for a in _PREDICTIVE_IDS:
        if alg == a:
            return True
    return False


@nb.njit(cache=True, inline="always")
def _ix(x):
    """``x`` (never negative) as an unsigned index. Numba lets a signed index be negative, counting from the end,
    so every access through one costs a test and a select and keeps LLVM from simplifying the loop around it; an
    unsigned one is read as it is. At 10x10 the terminal sums ran 20-23% faster with every index unsigned (stop
    60, in-process, bit-identical). Mixed arithmetic would turn to float64 in numba: convert, then add."""
    return np.uint64(x)


OFFLOAD_BYTES = 64 << 20  # choice-slot maps this large go to a file-backed mapping


class PlayerSweep(NamedTuple):
    """One player's decision nodes with a block, in block order: each one's list start and length (the player's),
    block bounds and first choice rank (see :meth:`BlockLayout.player_sweep`)."""

    ls: np.ndarray
    length: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    cb: np.ndarray


class BlockLayout:
    """The element-major view of a tree: ``parent`` per element (``~parent`` for a forced slot's element; -1
    at the root hands, never read), each decision
    node's block ``[block_lo[n], block_hi[n])`` (empty elsewhere), and where each node's **choices** (the
    elements of slots that are not forced) start in the kernels' state arrays, which hold choices only."""

    def __init__(self, parent: np.ndarray, block_lo: np.ndarray, block_hi: np.ndarray, choice_base: np.ndarray,
                 num_choices: int, max_list: int, pairs: tuple[np.ndarray, np.ndarray], node_len: np.ndarray,
                 weights_t: np.ndarray | None) -> None:
        # each one-against-one terminal's deal weight as a code into the matrix's distinct values (a real
        # deck's matrix holds a few dozen): 1-2 bytes per node where a float64 per node took 8
        self.pairs = pairs
        self.node_len = node_len  # the tree's list lengths, uint16 where they fit (4 bytes per node, not 8)
        # the deal weights' transpose, so a terminal reads both players' sums along rows (the tree's own
        # array, None here, when it is symmetric: every rule set whose two hands are dealt alike)
        self.weights_t = weights_t
        self.choice_base = choice_base  # per decision node: the choice rank of its block's first choice
        self.num_choices = num_choices
        self.parent = parent
        self.block_lo = block_lo
        self.block_hi = block_hi
        self.max_list = max_list
        self._choice_slot: np.ndarray | None = None
        self._sweeps: list[PlayerSweep] | None = None

    @classmethod
    def make(cls, tree: VectorTree, roots: int | None = None) -> BlockLayout | None:
        """The layout, or ``None`` when the tree's elements are not in blocks (then the slot kernels stay).
        ``roots``: how many elements no slot creates (default both players' hands; a streamed part's root
        lists are shorter)."""
        n_el = tree.num_elements
        itype = np.int32 if n_el < 2**31 else np.int64
        parent = np.full(n_el, -1, itype)
        lo = np.zeros(tree.num_nodes, itype)
        hi = np.zeros(tree.num_nodes, itype)
        ok = _make_blocks(tree.node_actor, tree.node_list, tree.node_len, tree.node_infoset, tree.infoset_offset,
                          tree.infoset_nact, tree.entry_child, 2 * tree.num_hands if roots is None else roots, parent,
                          lo, hi)
        if not ok:
            return None
        cbase = np.zeros(tree.num_nodes, itype)
        num_choices = _choice_bases(tree.node_actor, lo, hi, parent, cbase)
        W = tree.deal_weight
        wvals, inverse = np.unique(W, return_inverse=True)
        wcode = inverse.reshape(W.shape).astype(_code_type(wvals.shape[0]))
        pcode = np.zeros(tree.num_nodes, wcode.dtype)
        _pair_codes(tree.node_actor, tree.node_list, tree.node_len, tree.elem_hand, wcode, pcode)
        nlen = np.asarray(tree.node_len)
        max_list = int(nlen.max(initial=1))
        nlen = nlen.astype(np.uint16) if max_list < 2**16 else np.ascontiguousarray(nlen)
        wt = None if np.array_equal(W, W.T) else np.ascontiguousarray(W.T)
        lay = cls(parent, lo, hi, cbase, int(num_choices), max_list, (pcode, wvals), nlen, wt)
        if tree.num_slots * 4 >= OFFLOAD_BYTES:
            lay.choice_slots(tree)  # now, while the slot index is in memory (see choice_slots)
        return lay

    def player_sweep(self, actor: np.ndarray, nlist: np.ndarray, q: int) -> PlayerSweep:
        """Player ``q``'s decision nodes with a block, in block (element) order, the order :func:`block_refresh`
        sweeps them, as what a sweep reads of each node: made once, 18 bytes per decision node. Read through
        node ids, those five values jumped about the node arrays (block order is not node order): a 10x10
        refresh took 0.26-0.30 s on one thread, 0.155-0.17 read in order (stop 52, bit-identical)."""
        if self._sweeps is None:
            out = []
            for p in (0, 1):
                nodes = np.flatnonzero((actor == p) & (self.block_hi > self.block_lo))
                nodes = nodes[np.argsort(self.block_lo[nodes], kind="stable")]
                out.append(PlayerSweep(np.ascontiguousarray(nlist[nodes, p]), self.node_len[nodes, p].copy(),
                                       self.block_lo[nodes], self.block_hi[nodes], self.choice_base[nodes]))
            self._sweeps = out
        return self._sweeps[q]

    def player_segments(self, actor: np.ndarray, nlist: np.ndarray, q: int, elo: np.ndarray,
                        ehi: np.ndarray) -> np.ndarray:
        """For each parallel task's element range ``[elo, ehi)``, the rows of :meth:`player_sweep` whose
        blocks lie in it (``[start, stop)``)."""
        starts = self.player_sweep(actor, nlist, q).lo
        return np.stack([np.searchsorted(starts, elo), np.searchsorted(starts, ehi)], axis=1).astype(np.int64)

    def weights(self, tree: VectorTree) -> tuple[np.ndarray, np.ndarray]:
        """The kernels' deal-weight pair: ``tree``'s matrix and its transpose."""
        return tree.deal_weight, tree.deal_weight if self.weights_t is None else self.weights_t

    def choice_slots(self, tree: VectorTree) -> np.ndarray:
        """The slot of each choice, in choice order: what the boundary needs to speak slots. Made once, when
        the layout is (the slot index is in memory then), and on big trees kept in a file-backed mapping:
        translating later reads 4 bytes per choice, not the slot index (measured at 4x4: a slot-order
        strategy paged 5.3 GB of it back in, the process's peak)."""
        if self._choice_slot is None:
            out = np.empty(self.num_choices, np.int32 if tree.num_slots < 2**31 else np.int64)
            _choice_slots(tree.node_actor, tree.node_list, tree.node_len, tree.node_infoset, tree.infoset_offset,
                          tree.infoset_nact, tree.entry_child, self.block_lo, self.block_hi, self.choice_base,
                          self.parent, out)
            self._choice_slot = file_backed(out, "choice-slots") if out.nbytes >= OFFLOAD_BYTES else out
        return self._choice_slot

    def to_choices(self, tree: VectorTree, by_slot: np.ndarray) -> np.ndarray:
        """A per-slot array as the kernels store it: its choice slots only, in choice order."""
        return np.ascontiguousarray(np.asarray(by_slot)[self.choice_slots(tree)])

    def to_slots(self, tree: VectorTree, by_choice: np.ndarray, fill: float = 0.0) -> np.ndarray:
        """A per-choice array in slot order, forced slots ``fill`` (0 for regrets and sums, which a forced
        slot never accumulates; 1 for a strategy)."""
        out = np.full(tree.num_slots, fill, by_choice.dtype)
        out[self.choice_slots(tree)] = by_choice
        return out

    def nbytes(self) -> int:
        wt = 0 if self.weights_t is None else self.weights_t.nbytes
        wt += sum(a.nbytes for sw in self._sweeps or () for a in sw)
        return (self.parent.nbytes + self.block_lo.nbytes + self.block_hi.nbytes + self.choice_base.nbytes
                + self.pairs[0].nbytes + self.pairs[1].nbytes + self.node_len.nbytes + wt)


def _code_type(n: int) -> type:
    return np.uint8 if n <= 2**8 else np.uint16 if n <= 2**16 else np.int32


@nb.njit(cache=True, nogil=True)
def _pair_codes(actor, nlist, nlen, ehand, wcode, out):
    """The deal-weight code of each terminal holding one hand per player (0 elsewhere: never read)."""
    for n in range(actor.shape[0]):
        if actor[n] < 0 and nlen[n, 0] == 1 and nlen[n, 1] == 1:
            out[n] = wcode[ehand[nlist[n, 0]], ehand[nlist[n, 1]]]


@nb.njit(cache=True, nogil=True)
def _make_blocks(actor, nlist, nlen, ninfo, ioff, inact, echild, roots, parent, lo, hi):
    """Parents and blocks; false unless every decision node's slots create one contiguous element range in
    which each information set's actions come in slot order and every element follows its parent."""
    for n in range(actor.shape[0]):
        p = actor[n]
        if p < 0:
            continue
        ls = nlist[n, p]
        i0 = ninfo[n]
        b_lo = np.int64(roots) + np.int64(parent.shape[0])
        b_hi = np.int64(-1)
        count = 0
        for k in range(nlen[n, p]):
            o = ioff[i0 + k]
            last = -1
            for a in range(inact[i0 + k]):
                d = echild[o + a]
                if d <= last or d < roots or d <= ls + k:
                    return False
                last = d
                parent[d] = ls + k if inact[i0 + k] > 1 else ~(ls + k)  # forced: the parent's bits inverted
                b_lo = min(b_lo, d)
                b_hi = max(b_hi, d + 1)
                count += 1
        if count == 0:
            lo[n] = 0
            hi[n] = 0
        elif b_hi - b_lo != count:
            return False
        else:
            lo[n] = b_lo
            hi[n] = b_hi
    return True


@nb.njit(cache=True, nogil=True)
def _choice_bases(actor, lo, hi, parent, cbase):
    """Each decision node's first choice rank (choices are numbered in element order); the count."""
    c = 0
    # blocks in element order: the nodes with a block sorted by its start (blocks are disjoint, so the order is
    # unique); sorting every node, terminals too, was 2.1 s of a 7x7 cell's layout
    m = 0
    for n in range(actor.shape[0]):
        if actor[n] >= 0 and hi[n] > lo[n]:
            m += 1
    nodes = np.empty(m, np.int64)
    m = 0
    for n in range(actor.shape[0]):
        if actor[n] >= 0 and hi[n] > lo[n]:
            nodes[m] = n
            m += 1
    order = nodes[np.argsort(lo[nodes])]
    for j in range(order.shape[0]):
        n = order[j]
        cbase[n] = c
        for d in range(lo[n], hi[n]):
            if parent[d] >= 0:
                c += 1
    return c


@nb.njit(cache=True, nogil=True)
def _choice_slots(actor, nlist, nlen, ninfo, ioff, inact, echild, lo, hi, cbase, parent, out):
    """``out[c]``: the slot creating choice ``c``, block by block (a block-sized scratch, no per-element one)."""
    width = 1
    for n in range(actor.shape[0]):
        width = max(width, hi[n] - lo[n])
    local = np.empty(width, np.int64)
    for n in range(actor.shape[0]):
        p = actor[n]
        if p < 0 or hi[n] <= lo[n]:
            continue
        r = 0
        for d in range(lo[n], hi[n]):
            local[d - lo[n]] = r if parent[d] >= 0 else -1
            r += parent[d] >= 0
        i0 = ninfo[n]
        for k in range(nlen[n, p]):
            o = ioff[i0 + k]
            for a in range(inact[i0 + k]):
                x = local[echild[o + a] - lo[n]]
                if x >= 0:
                    out[cbase[n] + x] = o + a


@nb.njit(cache=True, nogil=True, inline="always")
def opponent_reach(W, ehand, reach, p, h, lq, nq):
    """Player ``p``'s hand ``h`` against the opponent's list ``lq .. lq+nq-1``: the opponent's reach times the deal
    weight, summed in list order (an information set's counterfactual reach)."""
    s = 0.0
    for j in range(nq):
        w = W[h, ehand[lq + j]] if p == 0 else W[ehand[lq + j], h]
        s += w * reach[lq + j]
    return s


@nb.njit(cache=True, nogil=True)
def block_table_rows(order, actor, nlist, nlen, ninfo, ioff, inact, entry_action, blo, bhi, parent, cbase, ehand, W,
                     reach, value, strat, regrets, min_actions, info, own, action, prob, av, reg, start, cnt, q):
    """A strategy table's numbers for the information sets of at least ``min_actions`` actions, straight from
    the element-major state after an evaluation pass (``strat`` the profile, ``reach`` and ``value`` its
    pass): per set (in number order, ``order`` from :meth:`solvers.tree.VectorTree.decision_order`) its id and
    reach (own times the opponent's, as :func:`solvers.vector.slot_values_of`); per row (its slots in order)
    the action code, probability, action value and regret. The same numbers as the slot-order arrays gathered
    at those slots, but nothing per slot or per set of the whole tree is made (forced sets: probability 1,
    regret 0). ``start``, ``cnt``, ``q``: scratch of the longest list. Returns (sets, rows) written."""
    j = 0
    r = 0
    for x in range(order.shape[0]):
        n = order[x]
        p = actor[n]
        ls = nlist[n, p]
        lq = nlist[n, 1 - p]
        nq = nlen[n, 1 - p]
        i0 = ninfo[n]
        for k in range(nlen[n, p]):
            i = i0 + k
            m = inact[i]
            if m < min_actions:
                start[k] = -1
                continue
            start[k] = r
            cnt[k] = 0
            s = opponent_reach(W, ehand, reach, p, ehand[ls + k], lq, nq)
            q[k] = s
            info[j] = i
            own[j] = reach[ls + k] * s
            o = ioff[i]
            for a in range(m):
                action[r + a] = entry_action[o + a]
            j += 1
            r += m
        # a set's slots create its elements in slot order within the block (solvers.blocks._make_blocks)
        c = cbase[n]
        for d in range(blo[n], bhi[n]):
            k = parent[d]
            forced = k < 0
            if forced:
                k = ~k
            k -= ls
            if start[k] >= 0:
                row = start[k] + cnt[k]
                cnt[k] += 1
                av[row] = value[d] / q[k] if q[k] > 0 else np.nan
                prob[row] = 1.0 if forced else strat[c]
                reg[row] = 0.0 if forced else regrets[c]
            if not forced:
                c += 1
    return j, r


@nb.njit(cache=True, nogil=True)
def block_forward(lo, hi, c0, parent, strat, reach):
    """Own reach of elements ``lo .. hi-1`` (each after its parent); ``c0``: the choice rank at ``lo``."""
    c = _ix(c0)
    one = _ix(1)
    for d in range(_ix(lo), _ix(hi)):
        q = parent[d]
        if q < 0:
            reach[d] = reach[_ix(~q)]  # forced: probability 1, the product's bits
        else:
            reach[d] = reach[_ix(q)] * strat[c]
            c += one


@nb.njit(cache=True, nogil=True)
def block_forward_all(parent, strat, reach, H):
    for i in range(2 * H):
        reach[i] = 1.0
    block_forward(2 * H, parent.shape[0], 0, parent, strat, reach)


@nb.njit(cache=True, nogil=True, inline="always")
def _match_block(a0, a1, ls, L, c0, parent, regrets, pred, use_pred, strat, reach, fwd, tot, cnt):
    """Regret matching of one decision node's block ``[a0, a1)`` (its player's list starts at ``ls``, ``L``
    long; its first choice is ``c0``): the same sums in the same order as :func:`solvers.cfr.regret_match` (a
    parent's children come in action order). Forced slots have no state: their probability is 1 wherever it is
    read. With ``fwd``, the block's own reaches too, in the same sweep (the forward pass's products, bit for
    bit)."""
    if a1 <= a0:
        return
    z = _ix(0)
    one = _ix(1)
    u0 = _ix(a0)
    u1 = _ix(a1)
    uls = _ix(ls)
    for k in range(z, _ix(L)):
        tot[k] = 0.0
        cnt[k] = 0
    c = _ix(c0)
    for d in range(u0, u1):
        q = parent[d]
        if q < 0:
            continue
        k = _ix(q) - uls
        x = regrets[c] + (pred[c] if use_pred else 0.0)
        x = x if x > 0.0 else 0.0
        strat[c] = x
        tot[k] += x
        cnt[k] += 1
        c += one
    c = _ix(c0)
    for d in range(u0, u1):
        q = parent[d]
        if q >= 0:
            k = _ix(q) - uls
            t = tot[k]
            strat[c] = strat[c] / t if t > 0.0 else 1.0 / cnt[k]
            if fwd:
                reach[d] = reach[_ix(q)] * strat[c]
            c += one
        elif fwd:
            reach[d] = reach[_ix(~q)]


@nb.njit(cache=True, nogil=True, inline="always")
def _match_node(n, q, nlist, nlen, blo, bhi, parent, cbase, regrets, pred, use_pred, strat, reach, fwd, tot, cnt):
    """:func:`_match_block` of player ``q``'s decision node ``n``."""
    _match_block(blo[n], bhi[n], nlist[n, q], nlen[n, q], cbase[n], parent, regrets, pred, use_pred, strat, reach,
                 fwd, tot, cnt)


@nb.njit(cache=True, nogil=True)
def block_refresh(i0, i1, ls, ln, lo, hi, cb, parent, regrets, pred, use_pred, strat, reach, tot, cnt, match=True):
    """A player's new strategy and own reaches, one sweep over rows ``i0 .. i1-1`` of its
    :class:`PlayerSweep` (``ls, ln, lo, hi, cb``): its decision nodes in block (element) order, so every parent's
    reach is computed before its children's, and the other player's blocks, whose reaches did not change, are
    not touched. Measured at 10x10 on one thread: a refresh 0.27 -> 0.15 s against regret matching in node order
    then the whole forward pass (node order visits the blocks out of order, and the forward pass redid the other
    player's half). Without ``match`` the strategy is already in ``strat`` (an update pass matched each block as
    it finished with it) and only the reaches are made."""
    for i in range(_ix(i0), _ix(i1)):
        if match:
            _match_block(lo[i], hi[i], ls[i], ln[i], cb[i], parent, regrets, pred, use_pred, strat, reach, True, tot,
                         cnt)
        else:
            block_forward(lo[i], hi[i], cb[i], parent, strat, reach)


@nb.njit(cache=True, parallel=True)
def block_refresh_par(top, seg, bin_start, q, actor, nlist, nlen, blo, bhi, cbase, ls, ln, lo, hi, cb, parent,
                      regrets, pred, use_pred, strat, reach, max_list, match=True):
    """:func:`block_refresh` with a parallel plan: the top nodes of ``q`` first (node order), then each bin's
    subtrees, each task's rows ``seg[ti, 0] .. seg[ti, 1]-1`` of the sweep (its element range's blocks in
    order)."""
    tot = np.empty(max_list)
    cnt = np.empty(max_list, np.int32)
    for j in range(top.shape[0]):
        n = top[j]
        if actor[n] == q:
            if match:
                _match_node(n, q, nlist, nlen, blo, bhi, parent, cbase, regrets, pred, use_pred, strat, reach, True,
                            tot, cnt)
            elif bhi[n] > blo[n]:
                block_forward(blo[n], bhi[n], cbase[n], parent, strat, reach)
    for b in nb.prange(bin_start.shape[0] - 1):
        tb = np.empty(max_list)
        cb2 = np.empty(max_list, np.int32)
        for ti in range(bin_start[b], bin_start[b + 1]):
            block_refresh(seg[ti, 0], seg[ti, 1], ls, ln, lo, hi, cb, parent, regrets, pred, use_pred, strat,
                          reach, tb, cb2, match)


@nb.njit(cache=True, nogil=True, inline="always")
def _normalize_block(a0, a1, ls, L, c0, parent, ssum, out, tot, cnt):
    """The average strategy of one decision node's block (as :func:`solvers.cfr.normalize_block`; arguments as
    :func:`_match_block`)."""
    z = _ix(0)
    one = _ix(1)
    uls = _ix(ls)
    for k in range(z, _ix(L)):
        tot[k] = 0.0
        cnt[k] = 0
    c = _ix(c0)
    for d in range(_ix(a0), _ix(a1)):
        q = parent[d]
        if q >= 0:
            k = _ix(q) - uls
            tot[k] += ssum[c]
            cnt[k] += 1
            c += one
    c = _ix(c0)
    for d in range(_ix(a0), _ix(a1)):
        q = parent[d]
        if q >= 0:
            k = _ix(q) - uls
            t = tot[k]
            out[c] = ssum[c] / t if t > 0.0 else 1.0 / cnt[k]
            c += one


@nb.njit(cache=True, nogil=True, inline="always")
def _normalize_node(n, p, nlist, nlen, blo, bhi, parent, cbase, ssum, out, tot, cnt):
    """:func:`_normalize_block` of player ``p``'s decision node ``n``."""
    _normalize_block(blo[n], bhi[n], nlist[n, p], nlen[n, p], cbase[n], parent, ssum, out, tot, cnt)


@nb.njit(cache=True, nogil=True)
def block_strategies(i0, i1, ls, ln, lo, hi, cb, parent, regrets, pred, use_pred, ssum, out, average, tot, cnt):
    """A player's current (regret matching) or ``average`` strategy at rows ``i0 .. i1-1`` of its
    :class:`PlayerSweep` into ``out``."""
    for i in range(i0, i1):
        if average:
            _normalize_block(lo[i], hi[i], ls[i], ln[i], cb[i], parent, ssum, out, tot, cnt)
        else:
            _match_block(lo[i], hi[i], ls[i], ln[i], cb[i], parent, regrets, pred, use_pred, out, out, False, tot,
                         cnt)


@nb.njit(cache=True, parallel=True)
def block_strategies_par(chunks, ls, ln, lo, hi, cb, parent, regrets, pred, use_pred, ssum, out, average, max_list):
    """:func:`block_strategies` in ``chunks`` parallel pieces (nodes are independent)."""
    m = ls.shape[0]
    for c in nb.prange(chunks):
        block_strategies(c * m // chunks, (c + 1) * m // chunks, ls, ln, lo, hi, cb, parent, regrets, pred, use_pred,
                         ssum, out, average, np.empty(max_list), np.empty(max_list, np.int32))


@nb.njit(cache=True, nogil=True)
def block_sweep(nodes, actor, nlist, nlen, blo, bhi, parent, cbase, regrets, pred, use_pred, ssum, average, strat,
                reach, max_list):
    """Both players' current (regret matching) or ``average`` strategy and every element's own reach, one
    sweep over ``nodes``: every decision node with a block, in block (element) order, so each parent's
    reach is ready before its block's (what a streamed part needs each pass: it keeps no working buffers
    between passes). The products and sums of :func:`_match_node` / :func:`_normalize_node` and
    :func:`block_forward`, bit for bit."""
    tot = np.empty(max_list)
    cnt = np.empty(max_list, np.int32)
    for i in range(nodes.shape[0]):
        n = nodes[i]
        if not average:
            _match_node(n, actor[n], nlist, nlen, blo, bhi, parent, cbase, regrets, pred, use_pred, strat, reach,
                        True, tot, cnt)
            continue
        _normalize_node(n, actor[n], nlist, nlen, blo, bhi, parent, cbase, ssum, strat, tot, cnt)
        block_forward(blo[n], bhi[n], cbase[n], parent, strat, reach)


@nb.njit(cache=True, inline="always")
def _live(reach, ehand, s, n, hands, reaches):
    """The elements ``s .. s+n-1`` (unsigned) with nonzero reach, in order: their hands into ``hands`` (uint64)
    and reaches into ``reaches`` (so a pair sum reads two contiguous buffers, not three arrays through an index);
    their count."""
    m = _ix(0)
    for k in range(s, s + n):
        r = reach[k]
        if r != 0.0:
            hands[m] = ehand[k]
            reaches[m] = r
            m += _ix(1)
    return m


@nb.njit(cache=True, inline="always")
def _block_body(lo, hi, l0, l1, b0, b1, tb, actor, util, nlist, nlen, blo, bhi, parent, cbase, ehand, weights, pairs,
                strat, reach, value, mode, who, alg, t, disc, regrets, ssum, pred, scratch):
    """Counterfactual values of nodes ``hi-1 .. lo`` (as ``solvers.vector._back_body``); a decision
    node's block is scanned twice: each parent's value (children in action order), then the updates.
    Indices are unsigned (:func:`_ix`)."""
    pos, neg, sdisc = disc  # tuples: numba inlines functions of at most ~31 arguments
    ucode, uvals = util  # (codes, table): VectorTree.utility_codes
    W, Wt = weights  # the deal weights and their transpose (the same array when symmetric)
    vi, cnt, nz = scratch
    want0 = mode == MODE_EVAL or who == 0 or who == 2
    want1 = mode == MODE_EVAL or who == 1 or who == 2
    pcode, wvals = pairs
    npw = pcode.shape[0] > 0
    br_init = -np.inf
    upd = mode == MODE_UPDATE or mode == MODE_UPDATE_ZERO
    zero = mode == MODE_UPDATE_ZERO or mode == MODE_BR_ZERO
    z = _ix(0)
    one = _ix(1)
    for n_ in range(hi - 1, lo - 1, -1):
        n = _ix(n_)
        p = actor[n]
        if p < 0:  # a terminal: the slot kernel's arithmetic (solvers.vector._back_body)
            u = uvals[_ix(ucode[n])]  # the node's outcome code into the payoff table
            if u == 0.0:
                continue
            sh0 = nlist[n, 0] == l0  # the root lists of a parallel task's subtree: into its bins
            sh1 = nlist[n, 1] == l1
            s0 = _ix(nlist[n, 0])
            n0 = _ix(nlen[n, 0])
            s1 = _ix(nlist[n, 1])
            n1 = _ix(nlen[n, 1])
            # an opponent hand at zero reach (a line its owner never plays: ~50-60% of a 10x10 tree's hand pairs
            # by iteration 20) adds exactly 0.0 to every sum it enters, and x + 0.0 is x: such hands are left
            # out, bit for bit the same values
            if npw and n0 == 1 and n1 == 1:
                # no zero-reach test here: one multiply-add costs less than the branch, which half the
                # terminals take at random (and adding 0.0 is what the slot kernels do)
                w = wvals[_ix(pcode[n])]
                if want0:
                    x = u * (w * reach[s1])
                    if sh0:
                        tb[_ix(b0)] += x
                    else:
                        value[s0] += x
                if want1:
                    x = u * (w * reach[s0])
                    if sh1:
                        tb[_ix(b1)] -= x
                    else:
                        value[s1] -= x
                continue
            if want0:  # rows of W: each own hand against the opponent's list
                dst, off = (tb, _ix(b0)) if sh0 else (value, s0)
                if n1 == 1:  # one opponent hand: each sum has one term (0.0 + x is x: W, reach >= 0)
                    col = _ix(ehand[s1])
                    r = reach[s1]
                    if r != 0.0:
                        for i in range(z, n0):
                            dst[off + i] += u * (Wt[col, _ix(ehand[s0 + i])] * r)
                else:
                    m = _live(reach, ehand, s1, n1, nz, vi)  # vi: free at terminals
                    if m > 0:
                        for i in range(z, n0):
                            row = _ix(ehand[s0 + i])
                            acc = 0.0
                            for x in range(z, m):
                                acc += W[row, nz[x]] * vi[x]
                            dst[off + i] += u * acc
            if want1:  # columns of W, read as rows of its transpose
                dst, off = (tb, _ix(b1)) if sh1 else (value, s1)
                if n0 == 1:
                    row = _ix(ehand[s0])
                    r = reach[s0]
                    if r != 0.0:
                        for j in range(z, n1):
                            dst[off + j] -= u * (W[row, _ix(ehand[s1 + j])] * r)
                else:
                    m = _live(reach, ehand, s0, n0, nz, vi)
                    if m > 0:
                        for j in range(z, n1):
                            col = _ix(ehand[s1 + j])
                            acc = 0.0
                            for x in range(z, m):
                                acc += Wt[col, nz[x]] * vi[x]
                            dst[off + j] -= u * acc
            continue
        if (p == 0 and not want0) or (p == 1 and not want1):
            continue
        a0 = _ix(blo[n])
        a1 = _ix(bhi[n])
        if a1 <= a0:
            continue
        pu = _ix(p)
        ls = _ix(nlist[n, pu])
        L = _ix(nlen[n, pu])
        shared = nlist[n, pu] == (l0 if p == 0 else l1)
        bo = _ix(b0 if p == 0 else b1)
        br = (mode == MODE_BR or mode == MODE_BR_ZERO) and p == who
        for k in range(z, L):
            vi[k] = br_init if br else 0.0
            cnt[k] = 0
        choice = False
        c = _ix(cbase[n])
        for d in range(a0, a1):
            q = parent[d]
            if q < 0:  # forced: the value passes through, as in the slot kernel
                if shared:
                    tb[bo + _ix(~q) - ls] += value[d]
                else:
                    value[_ix(~q)] += value[d]
                if zero:
                    value[d] = 0.0
                continue
            k = _ix(q) - ls
            cnt[k] = 1
            choice = True
            if br:
                x = value[d]
                if x > vi[k]:
                    vi[k] = x
                if zero:
                    value[d] = 0.0
            else:
                vi[k] += strat[c] * value[d]
            c += one
        if not choice:
            continue
        if shared:
            for k in range(z, L):
                if cnt[k]:
                    tb[bo + k] += vi[k]
        else:
            for k in range(z, L):
                if cnt[k]:
                    value[ls + k] += vi[k]
        if upd:
            c = _ix(cbase[n])
            for d in range(a0, a1):
                q = parent[d]
                if q >= 0:
                    _rule(alg, t, pos, neg, sdisc, regrets, ssum, pred, c, value[d] - vi[_ix(q) - ls],
                          reach[_ix(q)] * strat[c])
                    if zero:
                        value[d] = 0.0
                    c += one
            if zero:
                # the block's next strategy while its regrets are in cache: the player's refresh before the next
                # pass then makes only the reaches (no node reads this block's strategy again in this pass)
                _match_block(blo[n], bhi[n], nlist[n, pu], nlen[n, pu], cbase[n], parent, regrets, pred,
                             _predictive(alg), strat, reach, False, vi, cnt)


@nb.njit(cache=True, nogil=True)
def block_range(lo, hi, l0, l1, b0, b1, tb, actor, util, nlist, nlen, blo, bhi, parent, cbase, ehand, weights, pairs, strat,
                reach, value, mode, who, alg, t, pos, neg, sdisc, regrets, ssum, pred, scratch):
    """``_block_body`` with a constant algorithm per call (the update rule's branches leave the loop)."""
    if alg == 0:
        _block_body(lo, hi, l0, l1, b0, b1, tb, actor, util, nlist, nlen, blo, bhi, parent, cbase, ehand, weights, pairs, strat,
                    reach, value, mode, who, 0, t, (pos, neg, sdisc), regrets, ssum, pred, scratch)
    elif alg == 1:
        _block_body(lo, hi, l0, l1, b0, b1, tb, actor, util, nlist, nlen, blo, bhi, parent, cbase, ehand, weights, pairs, strat,
                    reach, value, mode, who, 1, t, (pos, neg, sdisc), regrets, ssum, pred, scratch)
    elif alg == 2:
        _block_body(lo, hi, l0, l1, b0, b1, tb, actor, util, nlist, nlen, blo, bhi, parent, cbase, ehand, weights, pairs, strat,
                    reach, value, mode, who, 2, t, (pos, neg, sdisc), regrets, ssum, pred, scratch)
    elif alg == 3:
        _block_body(lo, hi, l0, l1, b0, b1, tb, actor, util, nlist, nlen, blo, bhi, parent, cbase, ehand, weights, pairs, strat,
                    reach, value, mode, who, 3, t, (pos, neg, sdisc), regrets, ssum, pred, scratch)
    elif alg == 4:
        _block_body(lo, hi, l0, l1, b0, b1, tb, actor, util, nlist, nlen, blo, bhi, parent, cbase, ehand, weights, pairs, strat,
                    reach, value, mode, who, 4, t, (pos, neg, sdisc), regrets, ssum, pred, scratch)
    elif alg == 6:
        # DCFR+, an application's default on its biggest trees (a real-deck card game's): measured at 10x10, one
        # player's backward pass 0.62 s through the copy below (the rule's branches inside the loop), 0.33 s here
        _block_body(lo, hi, l0, l1, b0, b1, tb, actor, util, nlist, nlen, blo, bhi, parent, cbase, ehand, weights, pairs, strat,
                    reach, value, mode, who, 6, t, (pos, neg, sdisc), regrets, ssum, pred, scratch)
    else:  # pdcfr+, hs-pcfr+ (studies): one copy with the rule's branch inside (each copy costs compile time)
        _block_body(lo, hi, l0, l1, b0, b1, tb, actor, util, nlist, nlen, blo, bhi, parent, cbase, ehand, weights, pairs, strat,
                    reach, value, mode, who, alg, t, (pos, neg, sdisc), regrets, ssum, pred, scratch)


@nb.njit(cache=True, nogil=True)
def block_backward(actor, util, nlist, nlen, blo, bhi, parent, cbase, ehand, weights, pairs, strat, reach, value, mode, who, alg,
                   t, pos, neg, sdisc, regrets, ssum, pred, max_list):
    """The backward pass over the whole tree, single-threaded."""
    if mode != MODE_UPDATE_ZERO and mode != MODE_BR_ZERO:  # (their caller hands over a value array already clear)
        value[:] = 0.0
    tb = np.zeros(1)
    vi = np.empty(max_list)
    cnt = np.empty(max_list, np.int32)
    nz = np.empty(max_list, np.uint64)
    block_range(0, actor.shape[0], -1, -1, 0, 0, tb, actor, util, nlist, nlen, blo, bhi, parent, cbase, ehand, weights, pairs,
                strat, reach, value, mode, who, alg, t, pos, neg, sdisc, regrets, ssum, pred, (vi, cnt, nz))


@nb.njit(cache=True, parallel=True)
def block_backward_par(top, task_f, task_lo, task_hi, task_b0, task_b1, bin_start, sh_start, sh_off, sh_len, tbuf,
                       actor, util, nlist, nlen, blo, bhi, parent, cbase, ehand, weights, pairs, strat, reach, value, mode, who,
                       alg, t, pos, neg, sdisc, regrets, ssum, pred, max_list):
    """The backward pass with a :class:`solvers.vector.ParallelPlan`'s subtrees in parallel, summed in the
    same fixed order as ``solvers.vector._vbackward_par`` (bit-identical to it)."""
    if mode != MODE_UPDATE_ZERO and mode != MODE_BR_ZERO:  # (their caller hands over a value array already clear)
        value[:] = 0.0
    tbuf[:] = 0.0
    for b in nb.prange(bin_start.shape[0] - 1):
        tb = tbuf[b]
        vi = np.empty(max_list)
        cnt = np.empty(max_list, np.int32)
        nz = np.empty(max_list, np.uint64)
        for ti in range(bin_start[b], bin_start[b + 1]):
            f = task_f[ti]
            l0 = nlist[f, 0]
            l1 = nlist[f, 1]
            block_range(task_lo[ti], task_hi[ti], l0, l1, task_b0[ti], task_b1[ti], tb, actor, util, nlist, nlen,
                        blo, bhi, parent, cbase, ehand, weights, pairs, strat, reach, value, mode, who, alg, t, pos, neg, sdisc,
                        regrets, ssum, pred, (vi, cnt, nz))
            block_range(f, f + 1, l0, l1, task_b0[ti], task_b1[ti], tb, actor, util, nlist, nlen, blo, bhi, parent,
                        cbase, ehand, weights, pairs, strat, reach, value, mode, who, alg, t, pos, neg, sdisc, regrets, ssum, pred,
                        (vi, cnt, nz))
    for r in range(sh_start.shape[0]):
        st = sh_start[r]
        off = sh_off[r]
        for k in range(sh_len[r]):
            acc = 0.0
            for b in range(tbuf.shape[0]):
                acc += tbuf[b, off + k]
            value[st + k] += acc
    dummy = np.zeros(1)
    vi = np.empty(max_list)
    cnt = np.empty(max_list, np.int32)
    nz = np.empty(max_list, np.uint64)
    for j in range(top.shape[0] - 1, -1, -1):
        block_range(top[j], top[j] + 1, -1, -1, 0, 0, dummy, actor, util, nlist, nlen, blo, bhi, parent, cbase, ehand, weights,
                    pairs, strat, reach, value, mode, who, alg, t, pos, neg, sdisc, regrets, ssum, pred, (vi, cnt, nz))


@nb.njit(cache=True, parallel=True)
def block_forward_par(top_lo, top_hi, top_c, task_elo, task_ehi, task_c, bin_start, parent, strat, reach, H):
    """The forward pass with the subtrees in parallel: the blocks above the frontier first (node order),
    then each bin's subtrees' element ranges (each range with its first choice rank)."""
    for i in range(2 * H):
        reach[i] = 1.0
    for j in range(top_lo.shape[0]):
        block_forward(top_lo[j], top_hi[j], top_c[j], parent, strat, reach)
    for b in nb.prange(bin_start.shape[0] - 1):
        for ti in range(bin_start[b], bin_start[b + 1]):
            block_forward(task_elo[ti], task_ehi[ti], task_c[ti], parent, strat, reach)


def plan_ranges(layout: BlockLayout, top: np.ndarray, task_f: np.ndarray, task_lo: np.ndarray,
                task_hi: np.ndarray) -> tuple[np.ndarray, ...] | None:
    """Element ranges for a parallel plan, each with its first choice rank: each task's blocks as one range
    (``None`` if they are not contiguous) and the top nodes' blocks in node order."""
    lo, hi, cb = layout.block_lo, layout.block_hi, layout.choice_base
    size = hi - lo
    elo = np.zeros(len(task_f), np.int64)
    ehi = np.zeros(len(task_f), np.int64)
    ec = np.zeros(len(task_f), np.int64)
    for t, (f, a, b) in enumerate(zip(task_f, task_lo, task_hi, strict=True)):
        nodes = np.append(np.arange(a, b), f)
        nodes = nodes[size[nodes] > 0]
        if not len(nodes):
            continue
        first = nodes[np.argmin(lo[nodes])]
        x, y = lo[first], hi[nodes].max()
        if y - x != size[nodes].sum():
            return None
        elo[t], ehi[t], ec[t] = x, y, cb[first]
    keep = top[size[top] > 0]
    return lo[keep].astype(np.int64), hi[keep].astype(np.int64), cb[keep].astype(np.int64), elo, ehi, ec
