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

import numba as nb
import numpy as np

from solvers.cfr import _ALG_ID, SolverState, _discounts, _normalize, _rule, _strategy_from
from solvers.tree import VectorTree

MODE_UPDATE = 0
MODE_EVAL = 1
MODE_BR = 2


@nb.njit(cache=True)
def _vforward(actor, nlist, nlen, ninfo, ioff, inact, echild, strat, reach, H):
    for i in range(2 * H):
        reach[i] = 1.0
    for n in range(actor.shape[0]):
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
def _vbackward(actor, util, nlist, nlen, ninfo, ioff, inact, echild, ehand, W, strat, reach, value,
               mode, who, alg, t, pos, neg, sdisc, regrets, ssum, pred):
    """Dispatch on a constant algorithm so the update rule's branches leave the inner loop."""
    if alg == 0:
        _vbackward_body(actor, util, nlist, nlen, ninfo, ioff, inact, echild, ehand, W, strat, reach, value,
                        mode, who, 0, t, pos, neg, sdisc, regrets, ssum, pred)
    elif alg == 1:
        _vbackward_body(actor, util, nlist, nlen, ninfo, ioff, inact, echild, ehand, W, strat, reach, value,
                        mode, who, 1, t, pos, neg, sdisc, regrets, ssum, pred)
    elif alg == 2:
        _vbackward_body(actor, util, nlist, nlen, ninfo, ioff, inact, echild, ehand, W, strat, reach, value,
                        mode, who, 2, t, pos, neg, sdisc, regrets, ssum, pred)
    elif alg == 3:
        _vbackward_body(actor, util, nlist, nlen, ninfo, ioff, inact, echild, ehand, W, strat, reach, value,
                        mode, who, 3, t, pos, neg, sdisc, regrets, ssum, pred)
    else:
        _vbackward_body(actor, util, nlist, nlen, ninfo, ioff, inact, echild, ehand, W, strat, reach, value,
                        mode, who, 4, t, pos, neg, sdisc, regrets, ssum, pred)


@nb.njit(cache=True, inline="always")
def _vbackward_body(actor, util, nlist, nlen, ninfo, ioff, inact, echild, ehand, W, strat, reach, value,
                    mode, who, alg, t, pos, neg, sdisc, regrets, ssum, pred):
    """Counterfactual values bottom-up. ``mode``: update ``who`` (0, 1, 2 = both),
    evaluate both players, or best response for ``who``."""
    value[:] = 0.0
    want0 = mode == MODE_EVAL or who == 0 or who == 2
    want1 = mode == MODE_EVAL or who == 1 or who == 2
    for n in range(actor.shape[0] - 1, -1, -1):
        p = actor[n]
        if p < 0:
            u = util[n]
            if u == 0.0:
                continue
            s0 = nlist[n, 0]
            n0 = nlen[n, 0]
            s1 = nlist[n, 1]
            n1 = nlen[n, 1]
            if want0:
                for i in range(n0):
                    row = ehand[s0 + i]
                    acc = 0.0
                    for j in range(n1):
                        acc += W[row, ehand[s1 + j]] * reach[s1 + j]
                    value[s0 + i] += u * acc
            if want1:
                for j in range(n1):
                    col = ehand[s1 + j]
                    acc = 0.0
                    for i in range(n0):
                        acc += W[ehand[s0 + i], col] * reach[s0 + i]
                    value[s1 + j] -= u * acc
            continue
        if (p == 0 and not want0) or (p == 1 and not want1):
            continue
        ls = nlist[n, p]
        i0 = ninfo[n]
        br = mode == MODE_BR and p == who
        upd = mode == MODE_UPDATE
        for k in range(nlen[n, p]):
            o = ioff[i0 + k]
            m = inact[i0 + k]
            if m <= 1:
                # forced: no regret, and the average strategy is 1 whatever the sums hold
                if m == 1:
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
            value[ls + k] += vi
            if upd:
                own = reach[ls + k]
                for a in range(m):
                    _rule(alg, t, pos, neg, sdisc, regrets, ssum, pred, o + a,
                          value[echild[o + a]] - vi, own * strat[o + a])


@nb.njit(cache=True)
def _opp_reach(actor, nlist, nlen, ninfo, ehand, W, reach, out):
    """For each information set: the opponent's reach times the deal weight (its counterfactual reach)."""
    for n in range(actor.shape[0]):
        p = actor[n]
        if p < 0:
            continue
        q = 1 - p
        ls = nlist[n, p]
        lq = nlist[n, q]
        nq = nlen[n, q]
        i0 = ninfo[n]
        for k in range(nlen[n, p]):
            h = ehand[ls + k]
            acc = 0.0
            for j in range(nq):
                w = W[h, ehand[lq + j]] if p == 0 else W[ehand[lq + j], h]
                acc += w * reach[lq + j]
            out[i0 + k] = acc


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


class VectorSolver(SolverState):
    """CFR-family solver state on a :class:`VectorTree` (same interface as :class:`solvers.cfr.CFRSolver`).

    With a ``builder`` (a picklable zero-argument callable returning the tree), :meth:`park`
    drops the tree and the working buffers and keeps only the solver state (regrets, strategy
    sums); the tree is rebuilt on next use. This is how many subgames are solved one at a time.
    """

    def __init__(self, tree: VectorTree, algorithm: str = "dcfr", alternating: bool = True,
                 alpha: float = 1.5, beta: float = 0.0, gamma: float = 2.0, builder=None) -> None:
        self._tree = tree
        self._builder = builder
        super().__init__(tree, algorithm, alternating, alpha, beta, gamma)
        s = tree.num_slots
        self.regrets = np.zeros(s, np.float32)
        self.ssum = np.zeros(s, np.float32)
        self.pred = np.zeros(s if algorithm == "pcfr+" else 1, np.float32)
        self._buffers()

    @property
    def tree(self) -> VectorTree:
        if self._tree is None:
            self._tree = self._builder()
            self._buffers()
        return self._tree

    @tree.setter
    def tree(self, value: VectorTree) -> None:
        self._tree = value

    def _buffers(self) -> None:
        t = self._tree
        self._strat = np.zeros(t.num_slots, np.float32)
        # own reach is a product of float32 probabilities: float32 loses nothing; values accumulate
        # many terms (and certify), so they stay float64
        self._reach = np.zeros(t.num_elements, np.float32)
        self._value = np.zeros(t.num_elements, np.float64)

    def park(self, min_slots: int = 2_000_000) -> None:
        """Free the tree and working buffers (rebuilt on next use) if the tree has at least
        ``min_slots`` slots (small trees are cheaper to keep than to rebuild); needs a ``builder``."""
        if self._builder is not None and self._tree is not None and self._tree.num_slots >= min_slots:
            self._tree = None
            self._strat = self._reach = self._value = None

    # ---- kernels ------------------------------------------------------
    def _tree_args(self):
        t = self.tree
        return t.node_actor, t.node_list, t.node_len, t.node_infoset, t.infoset_offset, t.infoset_nact, t.entry_child

    def _forward(self, strat: np.ndarray) -> None:
        _vforward(*self._tree_args(), strat, self._reach, self.tree.num_hands)

    def _backward(self, strat: np.ndarray, mode: int, who: int) -> None:
        t = self.tree
        it = float(self.iteration)
        pos, neg, sdisc = _discounts(it, self.alpha, self.beta, self.gamma)
        _vbackward(t.node_actor, t.node_util, t.node_list, t.node_len, t.node_infoset, t.infoset_offset,
                   t.infoset_nact, t.entry_child, t.elem_hand, t.deal_weight, strat, self._reach, self._value,
                   mode, who, _ALG_ID[self.algorithm], it, pos, neg, sdisc, self.regrets, self.ssum, self.pred)

    def _pass(self, who: int) -> None:
        t = self.tree
        _strategy_from(self.regrets, self.pred, self.algorithm == "pcfr+", t.infoset_offset, t.infoset_nact,
                       self._strat)
        self._forward(self._strat)
        self._backward(self._strat, MODE_UPDATE, who)

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
        out = np.zeros(self.tree.num_slots, np.float32)
        _normalize(self.ssum, self.tree.infoset_offset, self.tree.infoset_nact, out)
        return out

    def current_strategy(self) -> np.ndarray:
        out = np.zeros(self.tree.num_slots, np.float32)
        t = self.tree
        _strategy_from(self.regrets, self.pred, self.algorithm == "pcfr+", t.infoset_offset, t.infoset_nact, out)
        return out

    def _root_sum(self, p: int) -> float:
        H = self.tree.num_hands
        return float(self._value[p * H:(p + 1) * H].sum())

    def game_value(self, strategy: np.ndarray | None = None) -> float:
        """Player 0's expected payoff under ``strategy`` (default: the average profile)."""
        s = self.average_strategy() if strategy is None else strategy
        self._forward(s)
        self._backward(s, MODE_EVAL, 2)
        return self._root_sum(0)

    def best_response_values(self, strategy: np.ndarray | None = None) -> tuple[float, float]:
        s = self.average_strategy() if strategy is None else strategy
        self._forward(s)
        out = []
        for p in (0, 1):
            self._backward(s, MODE_BR, p)
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
        s = self.average_strategy() if strategy is None else strategy
        t = self.tree
        saved = t.node_util.copy() if utilities is not None else None
        try:
            if utilities is not None:
                t.set_payoff(utilities)
            self._forward(s)
            self._backward(s, MODE_BR, player)
            return self._root_sum(player)
        finally:
            if saved is not None:
                t.node_util[:] = saved

    def best_response_actions(self, player: int, strategy: np.ndarray | None = None) -> np.ndarray:
        """A pure best response: per information set of ``player``, the index of its best action
        (-1 for the other player's sets), against ``strategy``'s other half."""
        s = self.average_strategy() if strategy is None else strategy
        t = self.tree
        self._forward(s)
        self._backward(s, MODE_BR, player)
        best = np.full(t.num_infosets, -1, np.int32)
        _best_actions(t.node_actor, t.node_list, t.node_len, t.node_infoset, t.infoset_offset, t.infoset_nact,
                      t.entry_child, self._value, player, best)
        return best

    def slot_values(self, strategy: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """(expected payoff to the actor of each slot given its information set is reached,
        probability each information set is reached), both under ``strategy``."""
        s = self.average_strategy() if strategy is None else strategy
        t = self.tree
        self._forward(s)
        opp = np.zeros(t.num_infosets)
        _opp_reach(t.node_actor, t.node_list, t.node_len, t.node_infoset, t.elem_hand, t.deal_weight,
                   self._reach, opp)
        self._backward(s, MODE_EVAL, 2)
        cfv = self._value[t.entry_child]
        per_slot_opp = np.repeat(opp, t.infoset_nact)
        with np.errstate(divide="ignore", invalid="ignore"):
            av = np.where(per_slot_opp > 0, cfv / per_slot_opp, np.nan)
        node = t.infoset_node()
        own = self._reach[t.node_list[node, t.node_actor[node]] + _rank_in_node(t, node)]
        return av, own * opp

    def nbytes(self) -> int:
        """Bytes of solver state and working buffers (the tree not included)."""
        return sum(a.nbytes for a in (self.regrets, self.ssum, self.pred, self._strat, self._reach, self._value)
                   if a is not None)


def _rank_in_node(t: VectorTree, node: np.ndarray) -> np.ndarray:
    return np.arange(t.num_infosets) - t.node_infoset[node]


class SubgameSolver:
    """Independent subgames: the game is their weighted sum.

    Truco's hand game is one subgame per vira class (the vira is public and
    dealt first), weighted by the class's probability, so value and
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
