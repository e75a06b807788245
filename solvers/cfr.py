"""The CFR family on flat trees: one engine, variants differ only in the update rule.

Algorithms: ``cfr`` (vanilla), ``cfr+``, ``lcfr`` (linear CFR), ``dcfr``
(discounted, alpha/beta/gamma, default 1.5/0/2), ``pcfr+`` (predictive
CFR+), ``pdcfr+`` (predictive discounted CFR+, Xu et al. 2024: positive
regrets discounted by t^alpha/(t^alpha+1) and floored at 0, the last
instantaneous regret as prediction, average weights (t/(t+1))^gamma; default
alpha/gamma 2.3/5), ``dcfr+`` (the same without the prediction; default
1.5/4) and two with a hyperparameter schedule in the spirit of Zhang, McAleer
and Sandholm 2024: ``hs-dcfr`` (DCFR) and ``hs-pcfr+`` (PCFR+ regrets), whose
averaging exponent rises linearly from 1 at the first iteration to gamma at
``HS_HORIZON`` and stays there (default gamma 5). Alternating (default) or simultaneous updates. Exact best response and
exploitability (NashConv/2) run on the same arrays.
"""

from __future__ import annotations

import numba as nb
import numpy as np

from solvers.tree import CHANCE, DECISION, TERMINAL, GameTree

ALGORITHMS = ("cfr", "cfr+", "lcfr", "dcfr", "pcfr+", "pdcfr+", "dcfr+", "hs-dcfr", "hs-pcfr+")
# the update rule each algorithm runs (``_rule``); a scheduled algorithm shares its base's rule
_RULE_ID = {"cfr": 0, "cfr+": 1, "lcfr": 2, "dcfr": 3, "pcfr+": 4, "pdcfr+": 5, "dcfr+": 6, "hs-dcfr": 3,
            "hs-pcfr+": 7}
PREDICTIVE = frozenset({"pcfr+", "pdcfr+", "hs-pcfr+"})  # algorithms that keep a prediction per slot
SCHEDULED = frozenset({"hs-dcfr", "hs-pcfr+"})  # gamma ramps from 1 to its value over HS_HORIZON iterations
HS_HORIZON = 200  # iterations; the real-deck cells that cost time stop at 80-460
# (alpha, beta, gamma) when the caller gives none; only the discounted rules read them
DEFAULT_PARAMS = {"pdcfr+": (2.3, 0.0, 5.0), "dcfr+": (1.5, 0.0, 4.0), "hs-dcfr": (1.5, 0.0, 5.0),
                  "hs-pcfr+": (1.5, 0.0, 5.0)}
_DCFR_PARAMS = (1.5, 0.0, 2.0)


@nb.njit(cache=True, inline="always")
def regret_match(regrets, pred, use_pred, o, k, out, out_off):
    """Regret matching (plus the prediction for predictive CFR+) of one information set: the ``k`` regrets
    from ``o`` into ``out[out_off:out_off + k]``; uniform when no regret is positive. The one copy every
    solver (tabular, vector, MCCFR) calls."""
    tot = 0.0
    for a in range(k):
        x = regrets[o + a] + (pred[o + a] if use_pred else 0.0)
        x = x if x > 0.0 else 0.0
        out[out_off + a] = x
        tot += x
    for a in range(k):
        out[out_off + a] = out[out_off + a] / tot if tot > 0.0 else 1.0 / k


@nb.njit(cache=True, inline="always")
def normalize_block(ssum, o, k, out, out_off):
    """One information set's strategy sums as probabilities (uniform when they are all zero)."""
    tot = 0.0
    for a in range(k):
        tot += ssum[o + a]
    for a in range(k):
        out[out_off + a] = ssum[o + a] / tot if tot > 0.0 else 1.0 / k


@nb.njit(cache=True, nogil=True)
def _strategy_from(regrets, pred, use_pred, offset, nact, out):
    """Regret matching (plus prediction for PCFR+) for every information set."""
    _strategy_loop(regrets, pred, use_pred, offset, nact, nact, -1, out)


@nb.njit(cache=True, inline="always")
def _strategy_loop(regrets, pred, use_pred, offset, nact, iplayer, p, out):
    """Regret matching for player ``p``'s information sets (``p < 0``: all; ``iplayer`` unread)."""
    for i in range(offset.shape[0]):
        if p >= 0 and iplayer[i] != p:
            continue
        regret_match(regrets, pred, use_pred, offset[i], nact[i], out, offset[i])


@nb.njit(cache=True, nogil=True)
def _normalize(ssum, offset, nact, out):
    for i in range(offset.shape[0]):
        normalize_block(ssum, offset[i], nact[i], out, offset[i])


@nb.njit(cache=True)
def _backward(ntype, nplayer, ninfo, cstart, nchild, cprob, util, offset, strat, r0, r1, rc, v, inst, sinc, upd):
    """Values (player 0's) bottom-up; accumulate regrets/strategy for players in ``upd`` (0, 1, or 2 = both)."""
    for n in range(ntype.shape[0] - 1, -1, -1):
        t = ntype[n]
        if t == TERMINAL:
            v[n] = util[n]
            continue
        c = cstart[n]
        k = nchild[n]
        acc = 0.0
        if t == CHANCE:
            for a in range(k):
                acc += cprob[c + a] * v[c + a]
            v[n] = acc
            continue
        o = offset[ninfo[n]]
        for a in range(k):
            acc += strat[o + a] * v[c + a]
        v[n] = acc
        p = nplayer[n]
        if upd == 2 or upd == p:
            if p == 0:
                opp = r1[n] * rc[n]
                own = r0[n]
                sign = 1.0
            else:
                opp = r0[n] * rc[n]
                own = r1[n]
                sign = -1.0
            if opp != 0.0:
                for a in range(k):
                    inst[o + a] += opp * sign * (v[c + a] - acc)
            if own != 0.0:
                for a in range(k):
                    sinc[o + a] += own * strat[o + a]


@nb.njit(cache=True, inline="always")
def _discounts(t, alpha, beta, gamma, sched):
    """(positive-regret, negative-regret, strategy-sum) discounts at iteration ``t``; ``sched``: gamma
    ramps linearly from 1 at t = 1 to ``gamma`` at ``HS_HORIZON``."""
    if sched:
        gamma = 1.0 + (gamma - 1.0) * min(1.0, (t - 1.0) / (HS_HORIZON - 1.0))
    ta = t**alpha
    tb = t**beta
    return ta / (ta + 1.0), tb / (tb + 1.0), (t / (t + 1.0)) ** gamma


@nb.njit(cache=True, inline="always")
def _rule(alg, t, pos, neg, sdisc, regrets, ssum, pred, i, r, sinc):
    """The one place the algorithms differ: fold instantaneous regret ``r`` and
    strategy increment ``sinc`` into slot ``i`` at iteration ``t``."""
    if alg == 0:  # cfr
        regrets[i] += r
        ssum[i] += sinc
    elif alg == 1:  # cfr+
        x = regrets[i] + r
        regrets[i] = x if x > 0.0 else 0.0
        ssum[i] += t * sinc
    elif alg == 2:  # linear cfr
        regrets[i] += t * r
        ssum[i] += t * sinc
    elif alg == 3:  # dcfr
        x = regrets[i] + r
        regrets[i] = x * (pos if x > 0.0 else neg)
        ssum[i] = (ssum[i] + sinc) * sdisc
    elif alg == 4:  # pcfr+: predict next regret with this one
        x = regrets[i] + r
        regrets[i] = x if x > 0.0 else 0.0
        pred[i] = r
        ssum[i] += t * t * sinc
    elif alg == 5:  # pdcfr+: discounted positive regrets, floored, and the same prediction
        x = regrets[i] + r
        regrets[i] = x * pos if x > 0.0 else 0.0
        pred[i] = r
        ssum[i] = (ssum[i] + sinc) * sdisc
    elif alg == 6:  # dcfr+: pdcfr+ without the prediction
        x = regrets[i] + r
        regrets[i] = x * pos if x > 0.0 else 0.0
        ssum[i] = (ssum[i] + sinc) * sdisc
    else:  # 7, pcfr+ regrets with discounted averaging (gamma may be scheduled)
        x = regrets[i] + r
        regrets[i] = x if x > 0.0 else 0.0
        pred[i] = r
        ssum[i] = (ssum[i] + sinc) * sdisc


@nb.njit(cache=True, inline="always")
def _update_loop(alg, t, pos, neg, sdisc, slot_player, upd, regrets, ssum, pred, inst, sinc):
    for i in range(regrets.shape[0]):
        if upd != 2 and slot_player[i] != upd:
            continue
        _rule(alg, t, pos, neg, sdisc, regrets, ssum, pred, i, inst[i], sinc[i])
        inst[i] = 0.0
        sinc[i] = 0.0


@nb.njit(cache=True)
def _update(alg, sched, t, alpha, beta, gamma, slot_player, upd, regrets, ssum, pred, inst, sinc, strat):
    pos, neg, sdisc = _discounts(t, alpha, beta, gamma, sched)
    # a constant ``alg`` per loop lets the compiler drop the rule's branches from the inner loop
    if alg == 0:
        _update_loop(0, t, pos, neg, sdisc, slot_player, upd, regrets, ssum, pred, inst, sinc)
    elif alg == 1:
        _update_loop(1, t, pos, neg, sdisc, slot_player, upd, regrets, ssum, pred, inst, sinc)
    elif alg == 2:
        _update_loop(2, t, pos, neg, sdisc, slot_player, upd, regrets, ssum, pred, inst, sinc)
    elif alg == 3:
        _update_loop(3, t, pos, neg, sdisc, slot_player, upd, regrets, ssum, pred, inst, sinc)
    elif alg == 4:
        _update_loop(4, t, pos, neg, sdisc, slot_player, upd, regrets, ssum, pred, inst, sinc)
    else:  # the rarer rules share one copy with the branch inside (compile time: one copy less per rule)
        _update_loop(alg, t, pos, neg, sdisc, slot_player, upd, regrets, ssum, pred, inst, sinc)


@nb.njit(cache=True)
def _pdepth(ntype, nplayer, cstart, nchild, p, depth):
    depth[0] = 0
    for n in range(ntype.shape[0]):
        if ntype[n] == TERMINAL:
            continue
        d = depth[n] + (1 if (ntype[n] == DECISION and nplayer[n] == p) else 0)
        for a in range(nchild[n]):
            depth[cstart[n] + a] = d


@nb.njit(cache=True)
def _best_response(ntype, nplayer, ninfo, cstart, nchild, cprob, util, offset, nact, strat, r0, r1, rc,
                   p, order, level_start, q, best, v):
    """Value for player ``p`` of a best response to ``strat`` (the opponent's part is used)."""
    sign = 1.0 if p == 0 else -1.0
    for i in range(q.shape[0]):
        q[i] = 0.0
    nlev = level_start.shape[0] - 1
    for lev in range(nlev):
        lo = level_start[lev]
        hi = level_start[lev + 1]
        # A: action values of p's information sets at this level (children are one level deeper)
        for j in range(lo, hi):
            n = order[j]
            if ntype[n] == DECISION and nplayer[n] == p:
                opp = (r1[n] if p == 0 else r0[n]) * rc[n]
                o = offset[ninfo[n]]
                c = cstart[n]
                for a in range(nchild[n]):
                    q[o + a] += opp * v[c + a]
        # B: the best action of each such information set
        for j in range(lo, hi):
            n = order[j]
            if ntype[n] == DECISION and nplayer[n] == p:
                i = ninfo[n]
                o = offset[i]
                b = 0
                for a in range(1, nact[i]):
                    if q[o + a] > q[o + b]:
                        b = a
                best[i] = b
        # C: values bottom-up within the level (order is by decreasing node index)
        for j in range(lo, hi):
            n = order[j]
            t = ntype[n]
            c = cstart[n]
            if t == TERMINAL:
                v[n] = sign * util[n]
            elif t == CHANCE:
                acc = 0.0
                for a in range(nchild[n]):
                    acc += cprob[c + a] * v[c + a]
                v[n] = acc
            elif nplayer[n] == p:
                v[n] = v[c + best[ninfo[n]]]
            else:
                o = offset[ninfo[n]]
                acc = 0.0
                for a in range(nchild[n]):
                    acc += strat[o + a] * v[c + a]
                v[n] = acc
    return v[0]


@nb.njit(cache=True)
def _strategy_of(regrets, pred, use_pred, offset, nact, iplayer, p, out):
    """Like ``_strategy_from`` for player ``p``'s information sets only."""
    if use_pred:  # constant per loop: the branch leaves the inner loop
        _strategy_loop(regrets, pred, True, offset, nact, iplayer, p, out)
    else:
        _strategy_loop(regrets, pred, False, offset, nact, iplayer, p, out)


@nb.njit(cache=True)
def _reach_of(ntype, nplayer, ninfo, cstart, nchild, offset, strat, p, r):
    """Player ``p``'s own reach (product of their action probabilities) at every node."""
    r[0] = 1.0
    for n in range(ntype.shape[0]):
        t = ntype[n]
        if t == TERMINAL:
            continue
        c = cstart[n]
        rn = r[n]
        if t == DECISION and nplayer[n] == p:
            o = offset[ninfo[n]]
            for a in range(nchild[n]):
                r[c + a] = rn * strat[o + a]
        else:
            for a in range(nchild[n]):
                r[c + a] = rn


@nb.njit(cache=True)
def _chance_reach(ntype, cstart, nchild, cprob, rc):
    rc[0] = 1.0
    for n in range(ntype.shape[0]):
        if ntype[n] == TERMINAL:
            continue
        c = cstart[n]
        for a in range(nchild[n]):
            rc[c + a] = rc[n] * (cprob[c + a] if ntype[n] == CHANCE else 1.0)


@nb.njit(cache=True)
def _iterations(n, it0, alternating, alg, sched, use_pred, alpha, beta, gamma, ntype, nplayer, ninfo, cstart, nchild,
                cprob, util, offset, nact, iplayer, slot_player, regrets, ssum, pred, inst, sinc, strat, r0, r1, rc, v):
    """``n`` iterations in one call. Chance reach never changes and a player's reach
    changes only when their own regrets do, so each pass recomputes one strategy and
    one reach array: the updated player's, which the next pass reads as opponent reach."""
    _strategy_from(regrets, pred, use_pred, offset, nact, strat)
    _reach_of(ntype, nplayer, ninfo, cstart, nchild, offset, strat, 0, r0)
    _reach_of(ntype, nplayer, ninfo, cstart, nchild, offset, strat, 1, r1)
    for k in range(n):
        t = float(it0 + k + 1)
        if alternating:
            for p in range(2):
                _backward(ntype, nplayer, ninfo, cstart, nchild, cprob, util, offset, strat, r0, r1, rc, v, inst,
                          sinc, p)
                _update(alg, sched, t, alpha, beta, gamma, slot_player, p, regrets, ssum, pred, inst, sinc, strat)
                _strategy_of(regrets, pred, use_pred, offset, nact, iplayer, p, strat)
                _reach_of(ntype, nplayer, ninfo, cstart, nchild, offset, strat, p, r0 if p == 0 else r1)
        else:
            _backward(ntype, nplayer, ninfo, cstart, nchild, cprob, util, offset, strat, r0, r1, rc, v, inst, sinc, 2)
            _update(alg, sched, t, alpha, beta, gamma, slot_player, 2, regrets, ssum, pred, inst, sinc, strat)
            _strategy_from(regrets, pred, use_pred, offset, nact, strat)
            _reach_of(ntype, nplayer, ninfo, cstart, nchild, offset, strat, 0, r0)
            _reach_of(ntype, nplayer, ninfo, cstart, nchild, offset, strat, 1, r1)


class SolverState:
    """What every solver holds (algorithm, parameters, regrets, strategy sums,
    prediction, iteration) and its checkpointing."""

    def __init__(self, tree, algorithm: str, alternating: bool, alpha: float | None, beta: float | None,
                 gamma: float | None) -> None:
        if algorithm not in _RULE_ID:
            raise ValueError(f"algorithm must be one of {', '.join(ALGORITHMS)}, got {algorithm!r}")
        d = DEFAULT_PARAMS.get(algorithm, _DCFR_PARAMS)
        alpha, beta, gamma = (d[i] if v is None else v for i, v in enumerate((alpha, beta, gamma)))
        self.tree = tree
        self._tree_shape = np.array([tree.num_nodes, tree.num_infosets, tree.num_slots])
        self.algorithm = algorithm
        self.alternating = alternating
        for name, v in (("alpha", alpha), ("beta", beta), ("gamma", gamma)):
            if not isinstance(v, (int, float, np.integer, np.floating)) or not np.isfinite(v):
                raise ValueError(f"{name} must be a finite number, got {v!r}")
        self.alpha, self.beta, self.gamma = float(alpha), float(beta), float(gamma)
        self.iteration = 0

    @property
    def predictive(self) -> bool:
        """Whether the strategy adds a prediction to the regrets (``pred`` holds one per slot)."""
        return self.algorithm in PREDICTIVE

    @property
    def scheduled(self) -> bool:
        """Whether gamma follows the hyperparameter schedule (``SCHEDULED``)."""
        return self.algorithm in SCHEDULED

    tree: object
    regrets: np.ndarray
    ssum: np.ndarray
    pred: np.ndarray
    iteration: int
    algorithm: str
    alternating: bool
    alpha: float
    beta: float
    gamma: float

    def _shape(self) -> np.ndarray:
        return self._tree_shape  # fixed at construction: a parked solver need not rebuild its tree

    def state_dict(self) -> dict:
        return {
            **self._state_arrays(),
            "iteration": np.int64(self.iteration), "algorithm": np.array(self.algorithm),
            "alternating": np.bool_(self.alternating),
            "params": np.array([self.alpha, self.beta, self.gamma]),
            "shape": self._shape(),
        }

    def _state_arrays(self) -> dict:
        """Regrets, strategy sums and prediction as a checkpoint stores them (per slot here)."""
        return {"regrets": self.regrets, "ssum": self.ssum, "pred": self.pred}

    def _load_array(self, d, name: str) -> None:
        cur = getattr(self, name)
        v = np.asarray(d[name])
        if v.shape != cur.shape:
            raise ValueError(f"checkpoint's {name} has shape {v.shape}, this solver's {cur.shape}")
        setattr(self, name, v.astype(cur.dtype, copy=True))  # assigned, not written into (see VectorSolver)

    def _check_shape(self, d) -> None:
        shape = self._shape()
        if not np.array_equal(np.asarray(d["shape"]), shape):
            raise ValueError(f"checkpoint is for a tree of shape {[int(x) for x in d['shape']]}, this tree is {[int(x) for x in shape]}")

    def load_state_dict(self, d) -> None:
        self._check_shape(d)
        if str(d["algorithm"]) != self.algorithm:
            raise ValueError(f"checkpoint was made by {str(d['algorithm'])!r}, this solver runs {self.algorithm!r}")
        for name in ("regrets", "ssum", "pred"):
            self._load_array(d, name)
        self.iteration = int(d["iteration"])

    def load_regrets(self, d) -> None:
        """Only the regrets of a checkpoint of a tree of this shape (any algorithm's): a warm start."""
        self._check_shape(d)
        self._load_array(d, "regrets")

    def reset_averages(self) -> None:
        """Strategy sums and prediction to zero (a warm start keeps only the regrets)."""
        self.ssum = np.zeros_like(self.ssum)
        self.pred = np.zeros_like(self.pred)


class CFRSolver(SolverState):
    """CFR-family solver state on a :class:`GameTree` (regrets, strategy sums, iteration)."""

    def __init__(self, tree: GameTree, algorithm: str = "dcfr", alternating: bool = True, *,
                 alpha: float | None = None, beta: float | None = None, gamma: float | None = None) -> None:
        super().__init__(tree, algorithm, alternating, alpha, beta, gamma)
        s = tree.num_slots
        n = tree.num_nodes
        self.regrets = np.zeros(s, np.float64)
        self.ssum = np.zeros(s, np.float64)
        self.pred = np.zeros(s, np.float64)
        self._inst = np.zeros(s, np.float64)
        self._sinc = np.zeros(s, np.float64)
        self._strat = np.zeros(s, np.float64)
        self._r = np.zeros((3, n), np.float64)
        self._v = np.zeros(n, np.float64)
        self.slot_player = np.repeat(tree.infoset_player, tree.infoset_nact).astype(np.int8)
        self._br_cache: dict[int, tuple[np.ndarray, np.ndarray]] = {}
        self._rc: np.ndarray | None = None

    def _args(self):
        t = self.tree
        return t.node_type, t.node_player, t.node_infoset, t.child_start, t.num_children, t.chance_prob

    def iterate(self, n: int = 1) -> None:
        """Run ``n`` iterations (one numba call: dispatch costs more than a Leduc pass)."""
        if n <= 0:
            return
        t = self.tree
        if self._rc is None:
            self._rc = np.zeros(t.num_nodes)
            _chance_reach(t.node_type, t.child_start, t.num_children, t.chance_prob, self._rc)
        r0, r1 = self._r[0], self._r[1]
        rc = self._rc
        _iterations(n, self.iteration, self.alternating, _RULE_ID[self.algorithm], self.scheduled, self.predictive,
                    self.alpha, self.beta, self.gamma,
                    *self._args(), t.utility, t.infoset_offset, t.infoset_nact, t.infoset_player, self.slot_player,
                    self.regrets,
                    self.ssum, self.pred, self._inst, self._sinc, self._strat, r0, r1, rc, self._v)
        self.iteration += n

    def average_strategy(self) -> np.ndarray:
        """The average profile, one probability per information-set action."""
        out = np.zeros_like(self.ssum)
        _normalize(self.ssum, self.tree.infoset_offset, self.tree.infoset_nact, out)
        return out

    def current_strategy(self) -> np.ndarray:
        out = np.zeros_like(self.regrets)
        t = self.tree
        _strategy_from(self.regrets, self.pred, self.predictive, t.infoset_offset, t.infoset_nact, out)
        return out

    # ---- evaluation --------------------------------------------------
    def game_value(self, strategy: np.ndarray | None = None) -> float:
        """Player 0's expected return under ``strategy`` (default: the average profile)."""
        return evaluate(self.tree, self.average_strategy() if strategy is None else strategy)

    def best_response_values(self, strategy: np.ndarray | None = None) -> tuple[float, float]:
        s = self.average_strategy() if strategy is None else strategy
        return best_response_values(self.tree, s, self._br_cache)

    def exploitability(self, strategy: np.ndarray | None = None) -> float:
        """NashConv / 2 of ``strategy`` (default: the average profile), in the game's units."""
        b0, b1 = self.best_response_values(strategy)
        return (b0 + b1) / 2.0

def _reaches(tree: GameTree, strategy: np.ndarray, r: np.ndarray) -> None:
    """r[0], r[1]: each player's own reach under ``strategy``; r[2]: chance's."""
    args = (tree.node_type, tree.node_player, tree.node_infoset, tree.child_start, tree.num_children,
            tree.infoset_offset, strategy)
    _reach_of(*args, 0, r[0])
    _reach_of(*args, 1, r[1])
    _chance_reach(tree.node_type, tree.child_start, tree.num_children, tree.chance_prob, r[2])


def evaluate(tree: GameTree, strategy: np.ndarray) -> float:
    """Player 0's expected return when both play ``strategy``."""
    n = tree.num_nodes
    r = np.zeros((3, n))
    v = np.zeros(n)
    dummy = np.zeros(tree.num_slots)
    args = (tree.node_type, tree.node_player, tree.node_infoset, tree.child_start, tree.num_children, tree.chance_prob)
    _reaches(tree, strategy, r)
    _backward(*args, tree.utility, tree.infoset_offset, strategy, r[0], r[1], r[2], v, dummy, dummy.copy(), -1)
    return float(v[0])


def best_response_values(tree: GameTree, strategy: np.ndarray, cache: dict | None = None) -> tuple[float, float]:
    """(best-response value of player 0 vs ``strategy``, same for player 1), in each player's own payoff."""
    n = tree.num_nodes
    args = (tree.node_type, tree.node_player, tree.node_infoset, tree.child_start, tree.num_children, tree.chance_prob)
    r = np.zeros((3, n))
    _reaches(tree, strategy, r)
    out = []
    cache = {} if cache is None else cache
    for p in (0, 1):
        if p not in cache:
            depth = np.zeros(n, np.int32)
            _pdepth(tree.node_type, tree.node_player, tree.child_start, tree.num_children, p, depth)
            order = np.lexsort((-np.arange(n), -depth)).astype(np.int32)  # deepest level first, then by -index
            d_sorted = depth[order]
            bounds = np.flatnonzero(np.diff(d_sorted)) + 1
            level_start = np.concatenate(([0], bounds, [n])).astype(np.int32)
            cache[p] = (order, level_start)
        order, level_start = cache[p]
        q = np.zeros(tree.num_slots)
        best = np.zeros(tree.num_infosets, np.int32)
        v = np.zeros(n)
        out.append(float(_best_response(*args, tree.utility, tree.infoset_offset, tree.infoset_nact, strategy,
                                        r[0], r[1], r[2], p, order, level_start, q, best, v)))
    return out[0], out[1]
