"""The CFR family on vector-form public trees (:class:`solvers.tree.VectorTree`).

Same algorithms and update rule as :mod:`solvers.cfr` (``_rule``); only the
traversal differs. A forward pass writes each private state's own reach; a
backward pass in reverse node order accumulates counterfactual values into
the private states' lists. Terminals cost ``|L0| x |L1|`` multiply-adds with the
deal weights (card removal), decision nodes one pass over their slots, and
every information set is visited exactly once, so regrets are updated in
place: no per-slot scratch arrays. Regrets, strategy sums and the working
strategy are float32 (8 bytes of solver state per slot, 12 with PCFR+'s
prediction); values and reaches are float64.
"""

from __future__ import annotations

from contextlib import nullcontext
from typing import NamedTuple

import numba as nb
import numpy as np

from solvers.blocks import (
    MODE_BR_ZERO,
    MODE_UPDATE_ZERO,
    BlockLayout,
    block_backward,
    block_backward_par,
    block_forward_all,
    block_forward_par,
    block_refresh,
    block_refresh_par,
    block_strategies,
    block_strategies_par,
    block_table_rows,
    opponent_reach,
    plan_ranges,
)
from solvers.cfr import _RULE_ID, PREDICTIVE, SolverState, _discounts, _normalize, _rule, _strategy_from, regret_match
from solvers.flat import FlatSchedule, flat_forward_all, flat_forward_par, flat_match, flat_match_par
from solvers.tree import VectorTree


class TableRows(NamedTuple):
    """A strategy table's numbers: per information set of at least ``min_actions`` actions (ascending ids),
    its id and reach; per row (those sets' slots in order) the action code, the profile's probability, the
    action value given the set is reached (NaN where its counterfactual reach is 0) and the regret."""

    infosets: np.ndarray  # int32 per set (int64 past 2**31 sets)
    nact: np.ndarray  # int8 per set
    reach: np.ndarray  # per set
    action: np.ndarray  # the tree's entry_action code per row
    probability: np.ndarray  # float32 per row
    action_value: np.ndarray  # per row
    regret: np.ndarray  # float32 per row

PARALLEL_SLOTS = 1_000_000  # trees with fewer slots run single-threaded (dispatch costs more than it saves)
BR_THREAD_ELEMENTS = 60_000_000  # certificates use a second thread (and value buffer) below this many elements
NO_PAIRS = np.zeros(0)  # no per-node pair weights: terminals look every deal weight up
MODE_UPDATE = 0
MODE_EVAL = 1
MODE_BR = 2
LAYOUTS = ("blocks", "slots")
SLOT_INDEX = ("entry_child", "infoset_offset", "infoset_nact", "node_infoset")  # what the block kernels do not read


# Kernels loop over node *ranges*: a numba call per node would pass (and reference-count) a
# dozen arrays per node, several times slower than the loop itself.
@nb.njit(cache=True, nogil=True)  # nogil: streamed parts are worked on by several threads
def _fwd_range(lo, hi, actor, nlist, nlen, ninfo, ioff, inact, echild, strat, reach):
    """Own reach of the children's private states, nodes ``lo .. hi-1`` in order."""
    for n in range(lo, hi):
        p = actor[n]
        if p < 0:
            continue
        ls = nlist[n, p]
        i0 = ninfo[n]
        for k in range(nlen[n, p]):
            rk = reach[ls + k]
            o = ioff[i0 + k]
            m = inact[i0 + k]
            if m == 1:  # forced (most of a frozen-stake tree): reach passes through
                reach[echild[o]] = rk
                continue
            for a in range(m):
                reach[echild[o + a]] = rk * strat[o + a]


@nb.njit(cache=True)
def _refresh_range(lo, hi, q, actor, nlist, nlen, ninfo, ioff, inact, echild, regrets, pred, use_pred, strat, reach):
    """Regret matching and the forward pass for player ``q``'s nodes among ``lo .. hi-1``: in
    alternating updates only the player updated last has a new strategy, and a player's reach
    depends on their own strategy alone, so the other half of both is still current."""
    for n in range(lo, hi):
        if actor[n] != q:
            continue
        ls = nlist[n, q]
        i0 = ninfo[n]
        for k in range(nlen[n, q]):
            o = ioff[i0 + k]
            m = inact[i0 + k]
            rk = reach[ls + k]
            if m == 1:
                strat[o] = 1.0
                reach[echild[o]] = rk
                continue
            regret_match(regrets, pred, use_pred, o, m, strat, o)
            for a in range(m):
                reach[echild[o + a]] = rk * strat[o + a]  # the stored float32, as _fwd_range reads it


@nb.njit(cache=True)
def _refresh_player(q, actor, nlist, nlen, ninfo, ioff, inact, echild, regrets, pred, use_pred, strat, reach):
    """:func:`_refresh_range` over the whole tree."""
    _refresh_range(0, actor.shape[0], q, actor, nlist, nlen, ninfo, ioff, inact, echild, regrets, pred, use_pred,
                   strat, reach)


@nb.njit(cache=True, parallel=True)
def _refresh_par(top, task_f, task_lo, task_hi, bin_start, q, actor, nlist, nlen, ninfo, ioff, inact, echild,
                 regrets, pred, use_pred, strat, reach):
    """:func:`_refresh_player` with the subtrees below the frontier in parallel (see :class:`ParallelPlan`);
    every node is computed exactly as in the sequential pass, so the result is bit-identical."""
    for j in range(top.shape[0]):
        _refresh_range(top[j], top[j] + 1, q, actor, nlist, nlen, ninfo, ioff, inact, echild, regrets, pred,
                       use_pred, strat, reach)
    for b in nb.prange(bin_start.shape[0] - 1):
        for ti in range(bin_start[b], bin_start[b + 1]):
            f = task_f[ti]
            _refresh_range(f, f + 1, q, actor, nlist, nlen, ninfo, ioff, inact, echild, regrets, pred, use_pred,
                           strat, reach)
            _refresh_range(task_lo[ti], task_hi[ti], q, actor, nlist, nlen, ninfo, ioff, inact, echild, regrets,
                           pred, use_pred, strat, reach)


@nb.njit(cache=True)
def _vforward(actor, nlist, nlen, ninfo, ioff, inact, echild, strat, reach, H):
    for i in range(2 * H):
        reach[i] = 1.0
    _fwd_range(0, actor.shape[0], actor, nlist, nlen, ninfo, ioff, inact, echild, strat, reach)


@nb.njit(cache=True, parallel=True)
def _vforward_par(top, task_f, task_lo, task_hi, bin_start, actor, nlist, nlen, ninfo, ioff, inact, echild, strat,
                  reach, H):
    """The forward pass with the subtrees below the frontier in parallel (see :class:`ParallelPlan`)."""
    for i in range(2 * H):
        reach[i] = 1.0
    for j in range(top.shape[0]):
        _fwd_range(top[j], top[j] + 1, actor, nlist, nlen, ninfo, ioff, inact, echild, strat, reach)
    for b in nb.prange(bin_start.shape[0] - 1):
        for ti in range(bin_start[b], bin_start[b + 1]):
            f = task_f[ti]
            _fwd_range(f, f + 1, actor, nlist, nlen, ninfo, ioff, inact, echild, strat, reach)
            _fwd_range(task_lo[ti], task_hi[ti], actor, nlist, nlen, ninfo, ioff, inact, echild, strat, reach)


@nb.njit(cache=True, inline="always")
def _back_body(lo, hi, l0, l1, b0, b1, tb, actor, util, nlist, nlen, ninfo, ioff, inact, echild, ehand, W, pairw, strat,
               reach, value, mode, who, alg, t, disc, regrets, ssum, pred):
    """Counterfactual values of nodes ``hi-1 .. lo`` (reverse order). ``mode``: update ``who``
    (0, 1, 2 = both), evaluate both players, or best response for ``who``. A list starting at
    ``l0`` (player 0's) or ``l1`` is shared with other subtrees: it accumulates into ``tb`` at
    offset ``b0`` / ``b1`` instead of ``value`` (parallel passes; -1 for none)."""
    pos, neg, sdisc = disc  # one argument: numba inlines functions of at most ~31 arguments
    ucode, uvals = util  # (codes, table): VectorTree.utility_codes
    want0 = mode == MODE_EVAL or who == 0 or who == 2
    want1 = mode == MODE_EVAL or who == 1 or who == 2
    npw = pairw.shape[0] > 0  # per-node weights of one-against-one terminals (empty: look them up)
    for n in range(hi - 1, lo - 1, -1):
        p = actor[n]
        if p < 0:
            u = uvals[ucode[n]]  # the node's outcome code into the payoff table
            if u == 0.0:
                continue
            s0 = nlist[n, 0]
            n0 = nlen[n, 0]
            s1 = nlist[n, 1]
            n1 = nlen[n, 1]
            if npw and n0 == 1 and n1 == 1:
                # one hand against one (81% of a 10x10 tree's terminals): the deal weight read from the
                # node, not through two hand lookups; 0.0 + x is x, so the sums are the loop's bit for bit
                w = pairw[n]
                if want0:
                    if s0 == l0:
                        tb[b0] += u * (w * reach[s1])
                    else:
                        value[s0] += u * (w * reach[s1])
                if want1:
                    if s1 == l1:
                        tb[b1] -= u * (w * reach[s0])
                    else:
                        value[s1] -= u * (w * reach[s0])
                continue
            if want0:
                for i in range(n0):
                    row = ehand[s0 + i]
                    acc = 0.0
                    for j in range(n1):
                        acc += W[row, ehand[s1 + j]] * reach[s1 + j]
                    if s0 == l0:
                        tb[b0 + i] += u * acc
                    else:
                        value[s0 + i] += u * acc
            if want1:
                for j in range(n1):
                    col = ehand[s1 + j]
                    acc = 0.0
                    for i in range(n0):
                        acc += W[ehand[s0 + i], col] * reach[s0 + i]
                    if s1 == l1:
                        tb[b1 + j] -= u * acc
                    else:
                        value[s1 + j] -= u * acc
            continue
        if (p == 0 and not want0) or (p == 1 and not want1):
            continue
        ls = nlist[n, p]
        shared = ls == (l0 if p == 0 else l1)
        bo = b0 if p == 0 else b1
        i0 = ninfo[n]
        br = mode == MODE_BR and p == who
        upd = mode == MODE_UPDATE
        for k in range(nlen[n, p]):
            o = ioff[i0 + k]
            m = inact[i0 + k]
            if m <= 1:
                # forced: no regret, and the average strategy is 1 whatever the sums hold
                if m == 1:
                    if shared:
                        tb[bo + k] += value[echild[o]]
                    else:
                        value[ls + k] += value[echild[o]]
                continue
            if br:
                vi = -np.inf
                for a in range(m):
                    x = value[echild[o + a]]
                    if x > vi:
                        vi = x
            else:
                vi = 0.0
                for a in range(m):
                    vi += strat[o + a] * value[echild[o + a]]
            if shared:
                tb[bo + k] += vi
            else:
                value[ls + k] += vi
            if upd:
                own = reach[ls + k]
                for a in range(m):
                    _rule(alg, t, pos, neg, sdisc, regrets, ssum, pred, o + a,
                          value[echild[o + a]] - vi, own * strat[o + a])


@nb.njit(cache=True, nogil=True)
def _back_range(lo, hi, l0, l1, b0, b1, tb, actor, util, nlist, nlen, ninfo, ioff, inact, echild, ehand, W, pairw, strat,
                reach, value, mode, who, alg, t, pos, neg, sdisc, regrets, ssum, pred):
    """``_back_body`` with a constant algorithm per call, so the update rule's branches leave
    the inner loop."""
    if alg == 0:
        _back_body(lo, hi, l0, l1, b0, b1, tb, actor, util, nlist, nlen, ninfo, ioff, inact, echild, ehand, W,
                   pairw, strat, reach, value, mode, who, 0, t, (pos, neg, sdisc), regrets, ssum, pred)
    elif alg == 1:
        _back_body(lo, hi, l0, l1, b0, b1, tb, actor, util, nlist, nlen, ninfo, ioff, inact, echild, ehand, W,
                   pairw, strat, reach, value, mode, who, 1, t, (pos, neg, sdisc), regrets, ssum, pred)
    elif alg == 2:
        _back_body(lo, hi, l0, l1, b0, b1, tb, actor, util, nlist, nlen, ninfo, ioff, inact, echild, ehand, W,
                   pairw, strat, reach, value, mode, who, 2, t, (pos, neg, sdisc), regrets, ssum, pred)
    elif alg == 3:
        _back_body(lo, hi, l0, l1, b0, b1, tb, actor, util, nlist, nlen, ninfo, ioff, inact, echild, ehand, W,
                   pairw, strat, reach, value, mode, who, 3, t, (pos, neg, sdisc), regrets, ssum, pred)
    elif alg == 4:
        _back_body(lo, hi, l0, l1, b0, b1, tb, actor, util, nlist, nlen, ninfo, ioff, inact, echild, ehand, W,
                   pairw, strat, reach, value, mode, who, 4, t, (pos, neg, sdisc), regrets, ssum, pred)
    else:  # pdcfr+, dcfr+, hs-pcfr+: one copy with the rule's branch inside (each copy costs compile time)
        _back_body(lo, hi, l0, l1, b0, b1, tb, actor, util, nlist, nlen, ninfo, ioff, inact, echild, ehand, W,
                   pairw, strat, reach, value, mode, who, alg, t, (pos, neg, sdisc), regrets, ssum, pred)


@nb.njit(cache=True, nogil=True)  # nogil: the two best responses of a certificate run on two threads
def _vbackward(actor, util, nlist, nlen, ninfo, ioff, inact, echild, ehand, W, pairw, strat, reach, value,
               mode, who, alg, t, pos, neg, sdisc, regrets, ssum, pred):
    """The backward pass over the whole tree, single-threaded."""
    value[:] = 0.0
    tb = np.zeros(1)
    _back_range(0, actor.shape[0], -1, -1, 0, 0, tb, actor, util, nlist, nlen, ninfo, ioff, inact, echild, ehand,
                W, pairw, strat, reach, value, mode, who, alg, t, pos, neg, sdisc, regrets, ssum, pred)


@nb.njit(cache=True, parallel=True)
def _vbackward_par(top, task_f, task_lo, task_hi, task_b0, task_b1, bin_start, sh_start, sh_off, sh_len, tbuf,
                   actor, util, nlist, nlen, ninfo, ioff, inact, echild, ehand, W, pairw, strat, reach, value,
                   mode, who, alg, t, pos, neg, sdisc, regrets, ssum, pred):
    """The backward pass with the subtrees below the frontier in parallel: each bin of subtrees
    accumulates into its own buffer for the lists the subtrees share (exactly the frontier
    nodes' own lists: below a frontier node a list is either one of its two or created inside
    its subtree), the buffers are summed in a fixed order, then the nodes above the frontier run."""
    value[:] = 0.0
    tbuf[:] = 0.0
    for b in nb.prange(bin_start.shape[0] - 1):
        tb = tbuf[b]
        for ti in range(bin_start[b], bin_start[b + 1]):
            f = task_f[ti]
            l0 = nlist[f, 0]
            l1 = nlist[f, 1]
            _back_range(task_lo[ti], task_hi[ti], l0, l1, task_b0[ti], task_b1[ti], tb, actor, util, nlist, nlen,
                        ninfo, ioff, inact, echild, ehand, W, pairw, strat, reach, value, mode, who, alg, t, pos, neg,
                        sdisc, regrets, ssum, pred)
            _back_range(f, f + 1, l0, l1, task_b0[ti], task_b1[ti], tb, actor, util, nlist, nlen, ninfo, ioff,
                        inact, echild, ehand, W, pairw, strat, reach, value, mode, who, alg, t, pos, neg, sdisc, regrets,
                        ssum, pred)
    for r in range(sh_start.shape[0]):
        st = sh_start[r]
        off = sh_off[r]
        for k in range(sh_len[r]):
            acc = 0.0
            for b in range(tbuf.shape[0]):
                acc += tbuf[b, off + k]
            value[st + k] += acc
    dummy = np.zeros(1)
    for j in range(top.shape[0] - 1, -1, -1):
        _back_range(top[j], top[j] + 1, -1, -1, 0, 0, dummy, actor, util, nlist, nlen, ninfo, ioff, inact, echild,
                    ehand, W, pairw, strat, reach, value, mode, who, alg, t, pos, neg, sdisc, regrets, ssum, pred)


@nb.njit(cache=True)
def _plan_ranges(actor, nchild_start, nchild_count, depth_limit, depth, desc_end, ndesc):
    """Depth of every node, and the end and size of its descendants' (contiguous) node range."""
    n_nodes = actor.shape[0]
    depth[0] = 0
    for n in range(n_nodes):
        for c in range(nchild_start[n], nchild_start[n] + nchild_count[n]):
            depth[c] = depth[n] + 1
    for n in range(n_nodes - 1, -1, -1):
        e = n + 1
        cnt = 0
        for c in range(nchild_start[n], nchild_start[n] + nchild_count[n]):
            e = max(e, c + 1, desc_end[c])
            cnt += 1 + ndesc[c]
        desc_end[n] = e
        ndesc[n] = cnt


class ParallelPlan:
    """How to split a tree's passes over threads: nodes at ``depth`` (the frontier) root
    subtrees whose nodes form contiguous ranges (the builder expands depth first), packed
    greedily into ``bins`` by size; nodes above the frontier run before (forward) or after
    (backward) the parallel part. Only the frontier nodes' own lists are written by several
    subtrees; those go through per-bin buffers. ``None`` from :meth:`make` when the tree's
    numbering does not have contiguous subtrees (then the passes stay sequential)."""

    def __init__(self, **arrays) -> None:
        self.__dict__.update(arrays)

    @classmethod
    def make(cls, tree: VectorTree, depth: int = 2, bins: int = 2) -> ParallelPlan | None:
        if tree.node_child is None or tree.node_nchild is None:
            return None
        n = tree.num_nodes
        d = np.zeros(n, np.int32)
        end = np.zeros(n, np.int64)
        nd = np.zeros(n, np.int64)
        _plan_ranges(tree.node_actor, np.asarray(tree.node_child), np.asarray(tree.node_nchild), depth, d, end, nd)
        front = np.flatnonzero(d == depth).astype(np.int32)
        top = np.flatnonzero(d < depth).astype(np.int32)
        lo = np.where(nd[front] > 0, np.asarray(tree.node_child)[front], front + 1).astype(np.int64)
        hi = np.where(nd[front] > 0, end[front], front + 1).astype(np.int64)
        if len(front) < 2 or not np.array_equal(hi - lo, nd[front]) or len(top) + len(front) + nd[front].sum() != n:
            return None
        # greedy packing by size, deterministic
        order = np.lexsort((front, -nd[front]))
        load = np.zeros(bins, np.int64)
        owner = np.zeros(len(front), np.int64)
        for i in order:
            b = int(np.argmin(load))
            owner[i] = b
            load[b] += nd[front[i]] + 1
        by_bin = np.lexsort((front, owner))
        bin_start = np.searchsorted(owner[by_bin], np.arange(bins + 1)).astype(np.int64)
        f = front[by_bin]
        # shared lists: the frontier nodes' lists, one buffer slot range per distinct list
        starts, off, lens = [], [], []
        index: dict[int, int] = {}
        tb = np.zeros((len(f), 2), np.int64)
        total = 0
        for i, node in enumerate(f):
            for p in (0, 1):
                st = int(tree.node_list[node, p])
                if st not in index:
                    index[st] = total
                    starts.append(st)
                    off.append(total)
                    lens.append(int(tree.node_len[node, p]))
                    total += int(tree.node_len[node, p])
                tb[i, p] = index[st]
        return cls(top=top, task_f=f, task_lo=lo[by_bin], task_hi=hi[by_bin], task_b0=tb[:, 0].copy(),
                   task_b1=tb[:, 1].copy(), bin_start=bin_start, sh_start=np.array(starts, np.int64),
                   sh_off=np.array(off, np.int64), sh_len=np.array(lens, np.int64),
                   tbuf=np.zeros((bins, max(total, 1))), balance=float(load.max() / max(load.sum(), 1)))


@nb.njit(cache=True)
def _best_actions(actor, nlist, nlen, ninfo, ioff, inact, echild, value, who, best):
    """After a best-response pass: the argmax action of each of ``who``'s information sets."""
    for n in range(actor.shape[0]):
        if actor[n] != who:
            continue
        i0 = ninfo[n]
        for k in range(nlen[n, who]):
            o = ioff[i0 + k]
            b = 0
            for a in range(1, inact[i0 + k]):
                if value[echild[o + a]] > value[echild[o + b]]:
                    b = a
            best[i0 + k] = b


def slot_values_of(t: VectorTree, reach: np.ndarray, value: np.ndarray,
                   dtype: type = np.float64, min_actions: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """(action value per slot given its information set is reached, reach per information set) from
    an evaluation pass's own reaches and counterfactual values over ``t``, both as ``dtype`` (float32 for a
    table, which stores them so). Written in place, without per-slot or per-set temporaries: a table writer's
    peak holds every slot's value at once, and on this machine fresh memory costs ~0.5 ms per MB to touch.
    Information sets of fewer than ``min_actions`` actions are left NaN: a table leaves forced sets out (2),
    two thirds of a 10x10 cell's."""
    av = np.empty(t.num_slots, dtype)
    own = np.empty(t.num_infosets, dtype)
    _slot_values(t.node_actor, t.node_list, t.node_len, t.node_infoset, t.infoset_offset, t.infoset_nact,
                 min_actions, t.entry_child, t.elem_hand, t.deal_weight, reach, value, av, own)
    return av, own


@nb.njit(cache=True, nogil=True)
def _slot_values(actor, nlist, nlen, ninfo, ioff, inact, min_actions, echild, ehand, W, reach, value, av, own):
    """Per information set of at least ``min_actions`` actions: the opponent's reach times the deal weight (its
    counterfactual reach), its reach (own times that), and per slot the child's counterfactual value over the
    opponent's reach (NaN when that is 0). Smaller sets get NaN."""
    for n in range(actor.shape[0]):
        p = actor[n]
        if p < 0:
            continue
        ls = nlist[n, p]
        lq = nlist[n, 1 - p]
        nq = nlen[n, 1 - p]
        i0 = ninfo[n]
        for k in range(nlen[n, p]):
            i = i0 + k
            o = ioff[i]
            if inact[i] < min_actions:
                own[i] = np.nan
                for a in range(inact[i]):
                    av[o + a] = np.nan
                continue
            q = opponent_reach(W, ehand, reach, p, ehand[ls + k], lq, nq)
            for a in range(inact[i]):
                av[o + a] = value[echild[o + a]] / q if q > 0 else np.nan
            own[i] = reach[ls + k] * q


class VectorSolver(SolverState):
    """CFR-family solver state on a :class:`VectorTree` (same interface as :class:`solvers.cfr.CFRSolver`).

    With a ``builder`` (a picklable zero-argument callable returning the tree), :meth:`park`
    drops the tree and the working buffers and keeps only the solver state (regrets, strategy
    sums); the tree is rebuilt on next use. This is how many subgames are solved one at a time.
    """

    def __init__(self, tree: VectorTree, algorithm: str = "dcfr", alternating: bool = True, *,
                 alpha: float | None = None, beta: float | None = None, gamma: float | None = None, builder=None,
                 threads: int | None = None, layout: str | BlockLayout = "blocks") -> None:
        given = layout if isinstance(layout, BlockLayout) else None
        if given is not None:  # another solver's layout of this tree (making one costs ~0.1 us per element)
            if given.parent.shape[0] != tree.num_elements:
                raise ValueError(f"a block layout of {given.parent.shape[0]:,} elements given for a tree of "
                                 f"{tree.num_elements:,}")
            layout = "blocks"
        if layout not in LAYOUTS:
            raise ValueError(f"layout must be one of {', '.join(LAYOUTS)}, got {layout!r}")
        self._tree = tree
        self._builder = builder
        # bins = threads, fixed by the caller, never by the machine (the bins fix the summation order).
        # 1 by default (the process pool's workers already use the cores); 2 halves a 10x10 iteration
        # here once the per-player refresh runs in parallel too (benchmarks/threads.py)
        self.threads = 1 if threads is None else int(threads)
        self._par = None
        self._sched = None  # the flat forward schedule (solvers.flat), made on first use; False: none
        # element-major state (solvers.blocks) where the tree's elements come in blocks; the slot kernels
        # otherwise. Fixed for the solver's life: the state arrays are in its order
        self._blocks = given or (BlockLayout.make(tree) if layout == "blocks" else None)
        self._offloaded = False
        if self._blocks is not None:
            self._offload()
        self.layout = "blocks" if self._blocks is not None else "slots"
        super().__init__(tree, algorithm, alternating, alpha, beta, gamma)
        n = self._blocks.num_choices if self._blocks is not None else tree.num_slots
        self._r = np.zeros(n, np.float32)
        self._s = np.zeros(n, np.float32)
        self._p = np.zeros(n if algorithm in PREDICTIVE else 1, np.float32)
        self._buffers()

    # regrets, strategy sums and predictions in slot order (copies in the block layout: assign, do not
    # write into them)
    def _state_out(self, a: np.ndarray, fill: float = 0.0) -> np.ndarray:
        return a if self._blocks is None else self._layout().to_slots(self.tree, a, fill)

    def _state_in(self, v) -> np.ndarray:
        v = np.asarray(v, np.float32)
        return v.copy() if self._blocks is None else self._layout().to_choices(self.tree, v)

    @property
    def regrets(self) -> np.ndarray:
        return self._state_out(self._r)

    @regrets.setter
    def regrets(self, v) -> None:
        self._r = self._state_in(v)
        self._avg_ready = False
        self._stale, self._matched = {0, 1}, set()  # both current strategies follow the new regrets

    @property
    def ssum(self) -> np.ndarray:
        return self._state_out(self._s)

    @ssum.setter
    def ssum(self, v) -> None:
        self._s = self._state_in(v)
        self._avg_ready = False

    @property
    def pred(self) -> np.ndarray:
        """The prediction per slot (predictive rules; a one-element placeholder otherwise)."""
        return self._state_out(self._p) if self.predictive else self._p

    @pred.setter
    def pred(self, v) -> None:
        self._p = self._state_in(v) if self.predictive else np.zeros(1, np.float32)
        self._avg_ready = False
        self._stale, self._matched = {0, 1}, set()

    def _state_arrays(self) -> dict:
        """In the block layout a checkpoint keeps the kernels' order (choices only: no slot-order copy at
        the peak), marked ``order = "choices"``; either order loads into either layout."""
        if self._blocks is None:
            return super()._state_arrays()
        return {"regrets": self._r, "ssum": self._s, "pred": self._p, "order": np.array("choices")}

    def _load_array(self, d, name: str) -> None:
        if "order" not in d or str(d["order"]) != "choices" or (name == "pred" and not self.predictive):
            return super()._load_array(d, name)
        v = np.asarray(d[name], np.float32)
        lay = self._layout() if self._blocks is not None else BlockLayout.make(self.tree)
        if lay is None or v.shape != (lay.num_choices,):
            raise ValueError(f"checkpoint's {name} has {v.shape[0]} choices, this tree "
                             f"{'has no block layout' if lay is None else f'has {lay.num_choices}'}")
        if self._blocks is None:
            setattr(self, name, lay.to_slots(self.tree, v))
        else:
            setattr(self, {"regrets": "_r", "ssum": "_s", "pred": "_p"}[name], v.copy())

    def reset_averages(self) -> None:
        self._s[:] = 0.0
        self._p[:] = 0.0
        self._avg_ready = False
        self._stale, self._matched = {0, 1}, set()  # a predictive rule's strategy read the prediction

    def state_nbytes(self) -> int:
        """Bytes of solver state: regrets, strategy sums and (predictive rules) the prediction."""
        return self._r.nbytes + self._s.nbytes + (self._p.nbytes if self._p.size > 1 else 0)

    def _layout(self) -> BlockLayout:
        if self._blocks is None or self._blocks is True:
            self._blocks = BlockLayout.make(self.tree)
            if self._blocks is None:
                raise ValueError("the rebuilt tree's elements are not in blocks (a builder that is not deterministic?)")
        self._offload()
        return self._blocks

    def _offload(self) -> None:
        """The element-major kernels never read the slot index arrays (only the boundary does: tables,
        checkpoints, best actions), so on big trees their pages go to a file the kernel may drop; done
        before the working buffers are allocated, so they are not in memory at the same time."""
        if not self._offloaded and self._tree is not None and self._tree.num_slots >= PARALLEL_SLOTS:
            # the layout keeps its own narrow copy of the list lengths where they fit
            own_len = self._blocks is not None and self._blocks is not True and \
                self._blocks.node_len is not self._tree.node_len
            self._tree.offload_navigation(names=SLOT_INDEX + (("node_len",) if own_len else ()))
            self._offloaded = True

    def _strategy_in(self, strategy: np.ndarray) -> np.ndarray:
        """A caller's per-slot strategy in the kernels' order."""
        if self._blocks is None:
            return strategy
        return self._layout().to_choices(self.tree, np.asarray(strategy, np.float32))

    @property
    def tree(self) -> VectorTree:
        if self._tree is None:
            self._tree = self._builder()
            self._par = self._sched = None
            if self._blocks is not None:
                self._blocks = True  # remade from the rebuilt tree (and offloaded) before the buffers
                self._offloaded = False
                self._layout()
            self._buffers()
        elif self._strat is None:  # dropped (drop_buffers): made again on first use
            self._buffers()
        return self._tree

    @tree.setter
    def tree(self, value: VectorTree) -> None:
        self._tree = value

    def _buffers(self) -> None:
        self._stale = {0, 1}  # players whose working strategy and reach must be recomputed
        # players whose current strategy the last update pass left in the working buffer (see _refresh)
        self._matched: set[int] = set()
        self._avg_ready = False  # the working-strategy buffer holds the average strategy (_average_in_work)
        t = self._tree
        self._strat = np.zeros(self._r.shape[0] if self._blocks is not None else t.num_slots, np.float32)
        # own reach is a product of float32 probabilities: float32 loses nothing; values accumulate
        # many terms (and certify), so they stay float64
        self._reach = np.zeros(t.num_elements, np.float32)
        self._value = np.zeros(t.num_elements, np.float64)
        self._clean = True  # every element's value is 0.0 but the root lists' (see _backward)

    def drop_buffers(self) -> None:
        """Free the working strategy, reaches and values (16 bytes per element and 4 per choice); they are
        made again on next use. A table writer that has the rows it needs drops them before labelling."""
        if self._tree is not None:
            self._strat = self._reach = self._value = None

    def park(self, min_slots: int = 2_000_000) -> None:
        """Free the tree and working buffers (rebuilt on next use) if the tree has at least
        ``min_slots`` slots (small trees are cheaper to keep than to rebuild); needs a ``builder``."""
        if self._builder is not None and self._tree is not None and self._tree.num_slots >= min_slots:
            self._tree = None
            self._strat = self._reach = self._value = None
            self._par = self._sched = None
            if self._blocks is not None:
                self._blocks = True
                self._offloaded = False

    # ---- kernels ------------------------------------------------------
    def _tree_args(self):
        t = self.tree
        return t.node_actor, t.node_list, t.node_len, t.node_infoset, t.infoset_offset, t.infoset_nact, t.entry_child

    def _plan(self) -> ParallelPlan | None:
        """The parallel split, made once per tree when threads can pay (big trees, >1 thread)."""
        if self._par is None:
            t = self.tree
            ok = self.threads > 1 and t.num_slots >= PARALLEL_SLOTS
            self._par = (ParallelPlan.make(t, bins=self.threads) if ok else None) or False
            if self._par and self._blocks is not None:
                self._par.blocks = plan_ranges(self._layout(), self._par.top, self._par.task_f, self._par.task_lo,
                                               self._par.task_hi)
                self._par.flat = False
                self._par.segments = {}  # per player: each task's slice of its nodes in block order
            elif self._par:
                sc = self._schedule()
                self._par.blocks = None
                self._par.flat = sc is not None and sc.add_plan(t, self._par.top, self._par.task_f,
                                                                self._par.task_lo, self._par.task_hi)
        return self._par or None

    def _schedule(self) -> FlatSchedule | None:
        """The flat forward schedule, made once per tree (``None`` when its slots are not parents first)."""
        if self._sched is None:
            self._sched = FlatSchedule.make(self.tree) or False
        return self._sched or None

    def _pair_weight(self) -> np.ndarray:
        sc = self._schedule()
        return NO_PAIRS if sc is None else sc.pair_weight

    def _forward(self, strat: np.ndarray) -> None:
        self._stale = {0, 1}  # (a certificate's strategy, or a full refresh: _pass clears it)
        pl, t = self._plan(), self.tree
        if self._blocks is not None:
            lay = self._layout()
            if pl is None or pl.blocks is None:
                block_forward_all(lay.parent, strat, self._reach, t.num_hands)
            else:
                tl, th, tc, elo, ehi, ec = pl.blocks
                block_forward_par(tl, th, tc, elo, ehi, ec, pl.bin_start, lay.parent, strat, self._reach,
                                  t.num_hands)
            return
        sc = self._schedule()
        if sc is not None and (pl is None or pl.flat):
            if pl is None:
                flat_forward_all(sc.slot_parent, t.entry_child, strat, self._reach, t.num_hands)
            else:
                flat_forward_par(sc.top_slo, sc.top_shi, sc.task_slo, sc.task_shi, pl.bin_start, sc.slot_parent,
                                 t.entry_child, strat, self._reach, t.num_hands)
        elif pl is None:
            _vforward(*self._tree_args(), strat, self._reach, t.num_hands)
        else:
            _vforward_par(pl.top, pl.task_f, pl.task_lo, pl.task_hi, pl.bin_start, *self._tree_args(), strat,
                          self._reach, t.num_hands)

    def _refresh(self, q: int) -> None:
        """Player ``q``'s new strategy and the reaches after it (the other player's half is still current)."""
        pcfr = self.algorithm in PREDICTIVE
        t = self.tree
        if self._blocks is not None:
            # one sweep over q's blocks in element order: regret matching and their reaches (the other
            # player's reaches are current: only the player updated last has a new strategy)
            lay, pl = self._layout(), self._plan()
            sw = lay.player_sweep(t.node_actor, t.node_list, q)
            args = (*sw, lay.parent, self._r, self._p, pcfr, self._strat, self._reach)
            # q's update pass matched each of its blocks as it finished with it: only the reaches are left
            match = q not in self._matched
            if pl is None or pl.blocks is None:
                block_refresh(0, sw.ls.shape[0], *args, np.empty(lay.max_list), np.empty(lay.max_list, np.int32),
                              match)
            else:
                if q not in pl.segments:
                    pl.segments[q] = lay.player_segments(t.node_actor, t.node_list, q, pl.blocks[3], pl.blocks[4])
                block_refresh_par(pl.top, pl.segments[q], pl.bin_start, q, t.node_actor, t.node_list, lay.node_len,
                                  lay.block_lo, lay.block_hi, lay.choice_base, *args, lay.max_list, match)
            return
        sc = self._schedule()
        if sc is not None:
            # regret matching of q's sets, then the whole flat forward (the other player's reaches come out
            # the same): measured at 10x10, one thread, 9.7 -> ~3 ns per entry against the node walk
            if self._plan() is None:
                flat_match(0, t.num_infosets, q, sc.iplayer, t.infoset_offset, t.infoset_nact, self._r,
                           self._p, pcfr, self._strat)
            else:
                flat_match_par(4 * self.threads, q, sc.iplayer, t.infoset_offset, t.infoset_nact, self._r,
                               self._p, pcfr, self._strat)
            self._forward(self._strat)
            return
        pl = self._plan()
        if pl is None:
            _refresh_player(q, *self._tree_args()[:7], self._r, self._p, pcfr, self._strat, self._reach)
        else:
            _refresh_par(pl.top, pl.task_f, pl.task_lo, pl.task_hi, pl.bin_start, q, *self._tree_args()[:7],
                         self._r, self._p, pcfr, self._strat, self._reach)

    def _backward(self, strat: np.ndarray, mode: int, who: int, value: np.ndarray | None = None,
                  roots_only: bool = False) -> None:
        """A backward pass into ``value`` (default: the solver's own array). ``roots_only``: the caller of a best
        response reads only the root lists' values afterwards, so the pass may consume the rest (MODE_BR_ZERO)."""
        t = self.tree
        it = float(self.iteration)
        pos, neg, sdisc = _discounts(it, self.alpha, self.beta, self.gamma, self.scheduled)
        pl = self._plan()
        if self._blocks is not None:
            lay = self._layout()
            if value is None and (mode == MODE_UPDATE or (mode == MODE_BR and roots_only)):
                # an update pass (or a certificate's best response) consumes and clears every value it makes but
                # the root lists, so after one the array is clear again: the next such pass skips the memset
                if not self._clean:
                    self._value[:] = 0.0
                H = t.num_hands
                self._value[:2 * H] = 0.0
                mode = MODE_UPDATE_ZERO if mode == MODE_UPDATE else MODE_BR_ZERO
            elif value is None:
                self._clean = False  # a certificate's or an evaluation's values stay behind
            args = (t.node_actor, t.utility_codes(), t.node_list, lay.node_len, lay.block_lo, lay.block_hi, lay.parent,
                    lay.choice_base, t.elem_hand, lay.weights(t), lay.pairs, strat, self._reach,
                    self._value if value is None else value, mode, who, _RULE_ID[self.algorithm], it, pos, neg,
                    sdisc, self._r, self._s, self._p, lay.max_list)
            if pl is None:
                block_backward(*args)
            else:
                block_backward_par(pl.top, pl.task_f, pl.task_lo, pl.task_hi, pl.task_b0, pl.task_b1, pl.bin_start,
                                   pl.sh_start, pl.sh_off, pl.sh_len, pl.tbuf, *args)
            if mode == MODE_UPDATE_ZERO or mode == MODE_BR_ZERO:
                self._clean = True
            if mode == MODE_UPDATE_ZERO:
                self._matched = {0, 1} if who == 2 else {who}  # the kernel matched who's blocks (block_refresh)
            return
        args = (t.node_actor, t.utility_codes(), t.node_list, t.node_len, t.node_infoset, t.infoset_offset,
                t.infoset_nact, t.entry_child, t.elem_hand, t.deal_weight, self._pair_weight(),
                strat, self._reach,
                self._value if value is None else value,
                mode, who, _RULE_ID[self.algorithm], it, pos, neg, sdisc, self._r, self._s, self._p)
        if pl is None:
            _vbackward(*args)
        else:
            _vbackward_par(pl.top, pl.task_f, pl.task_lo, pl.task_hi, pl.task_b0, pl.task_b1, pl.bin_start,
                           pl.sh_start, pl.sh_off, pl.sh_len, pl.tbuf, *args)

    def _all_strategies(self, out: np.ndarray, average: bool) -> np.ndarray:
        """Every information set's current or average strategy into ``out`` (the kernels' order)."""
        t = self.tree
        if self._blocks is not None:
            lay = self._layout()
            pcfr = self.algorithm in PREDICTIVE
            for q in (0, 1):  # each player's nodes in block order (blocks read in element order)
                sw = lay.player_sweep(t.node_actor, t.node_list, q)
                args = (*sw, lay.parent, self._r, self._p, pcfr, self._s, out, average)
                if self.threads > 1 and t.num_slots >= PARALLEL_SLOTS:
                    block_strategies_par(4 * self.threads, *args, lay.max_list)
                else:
                    block_strategies(0, sw.ls.shape[0], *args, np.empty(lay.max_list),
                                     np.empty(lay.max_list, np.int32))
        elif average:
            _normalize(self._s, t.infoset_offset, t.infoset_nact, out)
        else:
            _strategy_from(self._r, self._p, self.algorithm in PREDICTIVE, t.infoset_offset, t.infoset_nact, out)
        return out

    def _pass(self, who: int) -> None:
        _ = self.tree  # first: a parked solver rebuilds its tree here, which marks both strategies stale
        self._avg_ready = False
        if len(self._stale) == 1:
            # measured on 10x10: 1.53 -> 1.2 s/iteration, iterates unchanged
            (q,) = self._stale
            self._refresh(q)
        else:
            self._all_strategies(self._strat, False)
            self._forward(self._strat)
        self._backward(self._strat, MODE_UPDATE, who)
        self._stale = {0, 1} if who == 2 else {who}

    def iterate(self, n: int = 1) -> None:
        """Run ``n`` iterations."""
        for _ in range(n):
            self.iteration += 1
            if self.alternating:
                self._pass(0)
                self._pass(1)
            else:
                self._pass(2)

    # ---- profiles -----------------------------------------------------
    def average_strategy(self) -> np.ndarray:
        """The average strategy per slot."""
        return self._state_out(self._all_strategies(np.zeros(self._s.shape[0], np.float32), True), 1.0)

    def load_state_dict(self, d) -> None:
        super().load_state_dict(d)
        self._stale, self._matched = {0, 1}, set()
        self._avg_ready = False

    def _average_in_work(self) -> np.ndarray:
        """The average strategy written into the working-strategy buffer (every pass recomputes the
        working strategy first, so it is free between passes): certificates cost no extra slot array,
        4 bytes per entry off the peak. Kept there until the state changes, so a table or best response
        written after a run's last certificate does not compute it again (a 7x7 table's 1.3 s of 22)."""
        _ = self.tree  # first: a parked solver remakes its tree and buffers here (self._strat is None until then)
        self._stale, self._matched = {0, 1}, set()
        if not self._avg_ready:
            self._all_strategies(self._strat, True)
            self._avg_ready = True
        return self._strat

    def current_strategy(self) -> np.ndarray:
        """The current (regret-matching) strategy per slot."""
        return self._state_out(self._all_strategies(np.zeros(self._r.shape[0], np.float32), False), 1.0)

    def _root_sum(self, p: int) -> float:
        H = self.tree.num_hands
        return float(self._value[p * H:(p + 1) * H].sum())

    def game_value(self, strategy: np.ndarray | None = None) -> float:
        """Player 0's expected payoff under ``strategy`` (default: the average profile)."""
        s = self._average_in_work() if strategy is None else self._strategy_in(strategy)
        self._forward(s)
        self._backward(s, MODE_EVAL, 2)
        return self._root_sum(0)

    def best_response_values(self, strategy: np.ndarray | None = None) -> tuple[float, float]:
        s = self._average_in_work() if strategy is None else self._strategy_in(strategy)
        self._forward(s)
        t = self.tree
        if self._plan() is None and t.num_elements <= BR_THREAD_ELEMENTS:
            # the two players' best responses are independent given the reaches: player 1's on a
            # helper thread into a second value buffer (8 bytes per element, only on trees this size)
            import threading

            v1 = np.zeros_like(self._value)
            err: list[BaseException] = []

            def other() -> None:
                try:
                    self._backward(s, MODE_BR, 1, v1)
                except BaseException as e:  # re-raised on the caller's thread below
                    err.append(e)

            th = threading.Thread(target=other)
            th.start()
            self._backward(s, MODE_BR, 0, roots_only=True)
            th.join()
            if err:
                raise err[0]
            H = t.num_hands
            return self._root_sum(0), float(v1[H:2 * H].sum())
        out = []
        for p in (0, 1):
            self._backward(s, MODE_BR, p, roots_only=True)
            out.append(self._root_sum(p))
        return out[0], out[1]

    def exploitability(self, strategy: np.ndarray | None = None) -> float:
        """NashConv / 2 of ``strategy`` (default: the average profile), in the game's units."""
        b0, b1 = self.best_response_values(strategy)
        return (b0 + b1) / 2.0

    def best_response_value(self, player: int, strategy: np.ndarray | None = None,
                            utilities: np.ndarray | None = None) -> float:
        """``player``'s best-response value against ``strategy``, optionally with other terminal
        utilities per outcome (player 0's; player 1 receives their negation). The tree's
        utilities are restored afterwards."""
        s = self._average_in_work() if strategy is None else self._strategy_in(strategy)
        with nullcontext() if utilities is None else self.tree.payoff_set(utilities):
            self._forward(s)
            self._backward(s, MODE_BR, player, roots_only=True)
            return self._root_sum(player)

    def best_response_values_under(self, utilities: tuple[np.ndarray, np.ndarray],
                                   strategy: np.ndarray | None = None) -> tuple[float, float]:
        """Both players' best-response values against ``strategy`` (default: the average profile), player p's
        with terminal utilities ``utilities[p]`` (player 0's per outcome, as in :meth:`best_response_value`).
        The same numbers as two :meth:`best_response_value` calls, with one forward pass for both (reaches do
        not depend on payoffs) and the average read where it is kept, not through a slot-order copy."""
        s = self._average_in_work() if strategy is None else self._strategy_in(strategy)
        self._forward(s)
        out = []
        for p in (0, 1):
            with self.tree.payoff_set(np.asarray(utilities[p])):
                self._backward(s, MODE_BR, p, roots_only=True)
                out.append(self._root_sum(p))
        return out[0], out[1]

    def best_response_actions(self, player: int, strategy: np.ndarray | None = None) -> np.ndarray:
        """A pure best response: per information set of ``player``, the index of its best action
        (-1 for the other player's sets), against ``strategy``'s other half."""
        s = self._average_in_work() if strategy is None else self._strategy_in(strategy)
        t = self.tree
        self._forward(s)
        self._backward(s, MODE_BR, player)
        best = np.full(t.num_infosets, -1, np.int32)
        _best_actions(t.node_actor, t.node_list, t.node_len, t.node_infoset, t.infoset_offset, t.infoset_nact,
                      t.entry_child, self._value, player, best)
        return best

    def element_reach(self, strategy: np.ndarray | None = None) -> np.ndarray:
        """Each element's own reach probability under ``strategy`` (the product of its player's own
        probabilities on the way there; chance and the opponent are not in it)."""
        self._forward(self._average_in_work() if strategy is None else self._strategy_in(strategy))
        return self._reach.copy()

    def slot_values(self, strategy: np.ndarray | None = None, dtype: type = np.float64,
                    min_actions: int = 0) -> tuple[np.ndarray, np.ndarray]:
        """(expected payoff to the actor of each slot given its information set is reached,
        probability each information set is reached), both under ``strategy``; the first as ``dtype``.
        Sets of fewer than ``min_actions`` actions get NaN (a table without forced sets: 2)."""
        s = self._average_in_work() if strategy is None else self._strategy_in(strategy)
        self._forward(s)
        self._backward(s, MODE_EVAL, 2)
        return slot_values_of(self.tree, self._reach, self._value, dtype, min_actions)

    def table_rows(self, min_actions: int = 2, dtype: type = np.float32) -> TableRows:
        """The average profile's table numbers (:class:`TableRows`) for the information sets of at least
        ``min_actions`` actions, values as ``dtype``. In the block layout they come straight from the kernels'
        state, with nothing per slot or per set of the whole tree made: a 10x10 table's writer held ~1 GB of
        slot-order copies (average, regrets, values) for the third of the slots a table keeps."""
        t = self.tree
        s = self._average_in_work()
        self._forward(s)
        self._backward(s, MODE_EVAL, 2)
        nact = np.asarray(t.infoset_nact)
        nsets = int(np.count_nonzero(nact >= min_actions))
        nrows = int(nact.sum(dtype=np.int64) if min_actions <= 1 else nact[nact >= min_actions].sum(dtype=np.int64))
        if self._blocks is None:
            av, own = slot_values_of(t, self._reach, self._value, dtype, min_actions)
            sets = np.flatnonzero(nact >= min_actions)
            slot = np.repeat(np.asarray(t.infoset_offset)[sets].astype(np.int64), nact[sets]) + (
                np.arange(nrows) - np.repeat(np.cumsum(nact[sets], dtype=np.int64) - nact[sets], nact[sets]))
            return TableRows(sets, nact[sets], own[sets], np.asarray(t.entry_action)[slot],
                             np.asarray(s, np.float32)[slot], av[slot], self._r[slot])
        lay = self._layout()
        rows = TableRows(np.empty(nsets, np.int32 if t.num_infosets < 2**31 else np.int64), np.empty(nsets, np.int8),
                         np.empty(nsets, dtype),
                         np.empty(nrows, np.asarray(t.entry_action).dtype), np.empty(nrows, np.float32),
                         np.empty(nrows, dtype), np.empty(nrows, np.float32))
        scratch = (np.empty(lay.max_list, np.int64), np.empty(lay.max_list, np.int64), np.empty(lay.max_list))
        j = r = 0
        # in slices of the decision order: each reads one contiguous stretch of the slot index (sets are numbered
        # in that order), whose file pages are dropped after it
        for part in t.slices(t.decision_order()):
            dj, dr = block_table_rows(part, t.node_actor, t.node_list, t.node_len, t.node_infoset, t.infoset_offset,
                                      nact, t.entry_action, lay.block_lo, lay.block_hi, lay.parent, lay.choice_base,
                                      t.elem_hand, t.deal_weight, self._reach, self._value, s, self._r, min_actions,
                                      rows.infosets[j:], rows.reach[j:], rows.action[r:], rows.probability[r:],
                                      rows.action_value[r:], rows.regret[r:], *scratch)
            rows.nact[j:j + dj] = nact[rows.infosets[j:j + dj]]
            j, r = j + dj, r + dr
            t.drop_mapped_pages()
        if (j, r) != (nsets, nrows):
            raise AssertionError(f"table rows: {(j, r)} written, {(nsets, nrows)} expected")
        return rows

    def nbytes(self) -> int:
        """Bytes of solver state and working buffers (the tree not included)."""
        sched = self._sched.nbytes() if self._sched else 0
        if isinstance(self._blocks, BlockLayout):
            sched += self._blocks.nbytes()
        return sched + sum(a.nbytes for a in (self._r, self._s, self._p, self._strat, self._reach,
                                              self._value) if a is not None)


class SubgameSolver:
    """Independent subgames: the game is their weighted sum.

    A card game with a public card dealt first splits into one subgame per class of that card,
    weighted by the class's probability, so value and
    exploitability are the weighted sums of the subgames'. ``parts`` are
    ``(weight, tree)`` or ``(weight, builder)`` pairs; with builders, every method
    works on one subgame at a time and parks it afterwards, so memory holds one
    tree (plus every subgame's regrets and strategy sums), not all of them.
    """

    def __init__(self, parts: list[tuple[float, object]], algorithm: str = "dcfr", alternating: bool = True,
                 **params) -> None:
        if not parts:
            raise ValueError("need at least one subgame")
        self.weights = [float(w) for w, _ in parts]
        self._made = [p if isinstance(p, VectorTree) else None for _, p in parts]
        self._builders = [None if isinstance(p, VectorTree) else p for _, p in parts]
        self._solvers: list[VectorSolver | None] = [None] * len(parts)
        self.algorithm = algorithm
        self.alternating = alternating
        self.params = params

    def __len__(self) -> int:
        return len(self.weights)

    def __iter__(self):
        """The subgames' trees, one at a time (lazy parts are built on demand)."""
        return iter(s.tree for s in self.solvers)

    @property
    def lazy(self) -> bool:
        return any(b is not None for b in self._builders)

    def part(self, i: int) -> VectorSolver:
        """Subgame ``i``'s solver (built on first use)."""
        if self._solvers[i] is None:
            tree = self._made[i] if self._made[i] is not None else self._builders[i]()
            self._made[i] = None
            self._solvers[i] = VectorSolver(tree, self.algorithm, self.alternating, builder=self._builders[i],
                                            **self.params)
        return self._solvers[i]

    def _each(self):
        """Each subgame's solver in turn, parked again after use (lazy parts)."""
        for i in range(len(self.weights)):
            s = self.part(i)
            yield s
            s.park()

    @property
    def solvers(self) -> list[VectorSolver]:
        return [self.part(i) for i in range(len(self.weights))]

    @property
    def iteration(self) -> int:
        return self.part(0).iteration

    @property
    def trees(self) -> list[VectorTree]:
        return [s.tree for s in self.solvers]

    def iterate(self, n: int = 1) -> None:
        for s in self._each():
            s.iterate(n)

    def game_value(self) -> float:
        return sum(w * s.game_value() for w, s in zip(self.weights, self._each(), strict=True))

    def best_response_values(self) -> tuple[float, float]:
        b = [s.best_response_values() for s in self._each()]
        return (sum(w * x[0] for w, x in zip(self.weights, b, strict=True)),
                sum(w * x[1] for w, x in zip(self.weights, b, strict=True)))

    def exploitability(self) -> float:
        b0, b1 = self.best_response_values()
        return (b0 + b1) / 2.0

    def state_dict(self) -> dict:
        out = {}
        for i, s in enumerate(self.solvers):
            for k, v in s.state_dict().items():
                out[f"{i}/{k}"] = v
        out["parts"] = np.int64(len(self.weights))
        return out

    def load_state_dict(self, d) -> None:
        if int(d["parts"]) != len(self.weights):
            raise ValueError(f"checkpoint has {int(d['parts'])} subgames, this solve has {len(self.weights)}")
        for i, s in enumerate(self.solvers):
            s.load_state_dict({k.split("/", 1)[1]: d[k] for k in d.keys() if k.startswith(f"{i}/")})

    def nbytes(self) -> int:
        return sum(s.nbytes() + (s._tree.nbytes() if s._tree is not None else 0)
                   for s in self._solvers if s is not None)
