"""The forward passes of a :class:`solvers.tree.VectorTree` as flat loops over slots.

Walking nodes cost the forward pass most of its time (measured at 10x10, one thread: 10.8 ns per entry by
nodes, 1.3 by slots, the same reaches bit for bit): 90% of the nodes are terminals holding ~2 private
states each, and every node paid two-dimensional list lookups and a branch. The tree numbers information
sets (so slots) in the order its builder expanded the nodes, parents before children, so one loop in slot
order, ``reach[entry_child[s]] = reach[slot_parent[s]] * strat[s]``, computes every reach after its
parent's: the same products in the same order as the node walk, so iterates stay bit-identical.

The backward pass keeps the node walk: a flat version (packed terminals, decision nodes only) measured the
same speed (its cost is the terminals' card-removal sums and the per-slot updates, not the walk), so it
was not kept. What it reads from here is ``pair_weight``: the deal weight of each terminal where each
player holds one hand (81% of a 10x10 tree's terminals), which saves two dependent hand lookups and a
gather from the weight matrix. Extra memory: 4 bytes per slot, 1 per information set, 8 per node.
"""

from __future__ import annotations

import numba as nb
import numpy as np

from solvers.cfr import regret_match
from solvers.tree import VectorTree


class FlatSchedule:
    """``slot_parent`` (the element each slot's reach comes from) and ``iplayer`` (each information set's
    player); with a parallel plan, each subtree task's slot range (``task_slo``, ``task_shi``) and the
    slots above the frontier (``top_slo``, ``top_shi``, in node order)."""

    def __init__(self, **arrays) -> None:
        self.__dict__.update(arrays)

    @classmethod
    def make(cls, tree: VectorTree) -> FlatSchedule | None:
        """The schedule, or ``None`` when the tree's slots are not in a parents-first order."""
        act = np.asarray(tree.node_actor)
        dnode = np.flatnonzero(act >= 0)
        dact = act[dnode]
        dinfo = np.asarray(tree.node_infoset)[dnode].astype(np.int64)
        dlen = np.asarray(tree.node_len)[dnode, dact].astype(np.int64)
        dls = np.asarray(tree.node_list)[dnode, dact].astype(np.int64)
        itype = np.int32 if tree.num_elements < 2**31 else np.int64
        slot_parent = np.empty(tree.num_slots, itype)
        iplayer = np.zeros(tree.num_infosets, np.int8)
        _fill(dact, dinfo, dlen, dls, np.asarray(tree.infoset_offset), np.asarray(tree.infoset_nact), slot_parent,
              iplayer)
        # parents first: every slot's parent element is written by an earlier slot (or is a root hand)
        if not _parents_first(slot_parent, np.asarray(tree.entry_child), tree.num_elements, 2 * tree.num_hands):
            return None
        pair_weight = np.empty(tree.num_nodes)
        _pair_weights(act, np.asarray(tree.node_list), np.asarray(tree.node_len), np.asarray(tree.elem_hand),
                      np.asarray(tree.deal_weight), pair_weight)
        return cls(slot_parent=slot_parent, iplayer=iplayer, pair_weight=pair_weight, _dnode=dnode, _dinfo=dinfo,
                   _dlen=dlen)

    def add_plan(self, tree: VectorTree, top: np.ndarray, task_f: np.ndarray, task_lo: np.ndarray,
                 task_hi: np.ndarray) -> bool:
        """Slot ranges for a parallel plan's tasks (frontier node ``task_f`` and its descendants
        ``task_lo .. task_hi-1``); false when a task's slots are not one contiguous range."""
        ioff = np.asarray(tree.infoset_offset)
        nact = np.asarray(tree.infoset_nact)
        d, di, dl = self._dnode, self._dinfo, self._dlen

        def span(ks: np.ndarray) -> tuple[int, int, int]:
            """(first slot, end slot, slot count) of decision nodes ``ks``' blocks."""
            ks = ks[dl[ks] > 0]
            if not len(ks):
                return 0, 0, 0
            lo = ioff[di[ks]].astype(np.int64)
            last = di[ks] + dl[ks] - 1
            hi = ioff[last].astype(np.int64) + nact[last]
            return int(lo.min()), int(hi.max()), int((hi - lo).sum())

        slo, shi = np.zeros(len(task_f), np.int64), np.zeros(len(task_f), np.int64)
        for t, (f, lo, hi) in enumerate(zip(task_f, task_lo, task_hi, strict=True)):
            ks = np.arange(np.searchsorted(d, lo), np.searchsorted(d, hi))
            kf = np.searchsorted(d, f)
            if kf < len(d) and d[kf] == f:
                ks = np.append(ks, kf)
            a, b, n = span(ks)
            if b - a != n:
                return False
            slo[t], shi[t] = a, b
        tl, th = [], []
        for n in top:  # above the frontier, in node order (parents first)
            k = np.searchsorted(d, n)
            if k < len(d) and d[k] == n:
                a, b, _ = span(np.array([k]))
                if b > a:
                    tl.append(a)
                    th.append(b)
        self.task_slo, self.task_shi = slo, shi
        self.top_slo, self.top_shi = np.array(tl, np.int64), np.array(th, np.int64)
        return True

    def nbytes(self) -> int:
        return self.slot_parent.nbytes + self.iplayer.nbytes + self.pair_weight.nbytes


@nb.njit(cache=True)
def _fill(dact, dinfo, dlen, dls, ioff, inact, slot_parent, iplayer):
    """Each slot's parent element (its information set's element) and each information set's player."""
    for j in range(dact.shape[0]):
        for k in range(dlen[j]):
            i = dinfo[j] + k
            iplayer[i] = dact[j]
            for a in range(inact[i]):
                slot_parent[ioff[i] + a] = dls[j] + k


@nb.njit(cache=True)
def _pair_weights(actor, nlist, nlen, ehand, W, out):
    """The deal weight of each terminal holding one hand per player (0 elsewhere: never read)."""
    for n in range(actor.shape[0]):
        out[n] = 0.0
        if actor[n] < 0 and nlen[n, 0] == 1 and nlen[n, 1] == 1:
            out[n] = W[ehand[nlist[n, 0]], ehand[nlist[n, 1]]]


@nb.njit(cache=True)
def _parents_first(slot_parent, echild, num_elements, roots):
    written = np.zeros(num_elements, np.bool_)
    written[:roots] = True
    for s in range(slot_parent.shape[0]):
        if not written[slot_parent[s]]:
            return False
        written[echild[s]] = True
    return True


def _ranks(cnt: np.ndarray) -> np.ndarray:
    """0 .. c-1 for each count c, concatenated."""
    return np.arange(int(cnt.sum()), dtype=np.int64) - np.repeat(np.cumsum(cnt) - cnt, cnt)


@nb.njit(cache=True, nogil=True)
def flat_forward(lo, hi, slot_parent, echild, strat, reach):
    """Own reach through slots ``lo .. hi-1`` (in order)."""
    for s in range(lo, hi):
        reach[echild[s]] = reach[slot_parent[s]] * strat[s]


@nb.njit(cache=True, nogil=True)
def flat_forward_all(slot_parent, echild, strat, reach, H):
    """The whole forward pass: root hands' reach 1, then every slot in order."""
    for i in range(2 * H):
        reach[i] = 1.0
    flat_forward(0, slot_parent.shape[0], slot_parent, echild, strat, reach)


@nb.njit(cache=True, parallel=True)
def flat_forward_par(top_slo, top_shi, task_slo, task_shi, bin_start, slot_parent, echild, strat, reach, H):
    """The forward pass with the frontier's subtrees in parallel: the slots above it first (in node
    order), then each bin's subtrees; every reach is the same product as in :func:`flat_forward_all`."""
    for i in range(2 * H):
        reach[i] = 1.0
    for j in range(top_slo.shape[0]):
        flat_forward(top_slo[j], top_shi[j], slot_parent, echild, strat, reach)
    for b in nb.prange(bin_start.shape[0] - 1):
        for ti in range(bin_start[b], bin_start[b + 1]):
            flat_forward(task_slo[ti], task_shi[ti], slot_parent, echild, strat, reach)


@nb.njit(cache=True, nogil=True)
def flat_match(ilo, ihi, q, iplayer, ioff, inact, regrets, pred, use_pred, strat):
    """Regret matching of player ``q``'s information sets among ``ilo .. ihi-1``."""
    for i in range(ilo, ihi):
        if iplayer[i] == q:
            regret_match(regrets, pred, use_pred, ioff[i], inact[i], strat, ioff[i])


@nb.njit(cache=True, parallel=True)
def flat_match_par(chunks, q, iplayer, ioff, inact, regrets, pred, use_pred, strat):
    """:func:`flat_match` over all information sets in ``chunks`` parallel pieces (each set is independent)."""
    m = iplayer.shape[0]
    for c in nb.prange(chunks):
        flat_match(c * m // chunks, (c + 1) * m // chunks, q, iplayer, ioff, inact, regrets, pred, use_pred,
                   strat)
