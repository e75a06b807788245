"""The composed match strategy of a match run, playable at OpenSpiel states, and its best responses.

A match run stores, per canonical cell and vira class, a checkpoint and a strategy table named by
the cell's spec hash (the checkpoint pruned once the cell is finished and nothing starts from it).
:class:`MatchStrategy` rebuilds the specs from the run's ``equity.parquet`` (so the hashes match), loads
the average strategies lazily (from the checkpoint, else the table: the same float32 numbers)
and answers ``action_probabilities(state)`` for ``truco_paulista_match`` (or
``truco_paulista``) states. Mirror cells (``a > b``) use the canonical cell's
strategy with the seats swapped. :meth:`MatchStrategy.best_response_action`
plays the backward-induction best response that the match certificate
measured.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from solvers.api import load_checkpoint
from solvers.blocks import BlockLayout
from solvers.storage import read_json
from solvers.tables import read_average
from solvers.tree import FORCED
from solvers.vector import VectorSolver
from truco_lab.abstraction.levels import hand_levels, level_names_at, vira_class_of, vira_classes
from truco_lab.abstraction.payoff import continuation_utilities, objective_utilities
from truco_lab.abstraction.tree import openspiel_route, outcome_codes, slot_probabilities
from truco_lab.lab.cell import CellJob, CellSpec, Stop, TreeCache, candidate_codes
from truco_lab.lab.equity import EquityTable
from truco_lab.lab.match import AUTO_OLD_RUNGS, MatchState, canonical, cell_algorithm, live_ladder
from truco_lab.rules import RuleSet


class _Mirror:
    """A state seen from the other seat (for a mirror cell's canonical tree)."""

    def __init__(self, st) -> None:
        self.deal = list(st.deal[3:6]) + list(st.deal[0:3]) + list(st.deal[6:])
        self.hand_actions = [(1 - p, a) for p, a in st.hand_actions]
        self._p = 1 - st.current_player()
        self._legal = st.legal_actions()

    def current_player(self) -> int:
        return self._p

    def legal_actions(self) -> list[int]:
        return self._legal


@dataclass(frozen=True)
class Decision:
    """The solution at one decision, for the player to act (``player``) — what advice and hints print.

    ``actions``: (action id, probability, value) per legal action the solved tree keeps, the value in the
    acting player's match-win probability if they take it and both sides then follow the solution (NaN for
    an action the tree prunes); ``reach``: the acting player's own probability of playing to this decision;
    ``opponent_range``: (hand label, probability) of the opponent's dealt hands by strength class, given
    everything public and the player's own cards; ``reached``: whether the solution ever reaches the
    decision (own reach and the opponent's range both non-zero): if not, its probabilities mean nothing."""

    player: int
    actions: list[tuple[int, float, float]]
    reach: float
    opponent_range: list[tuple[str, float]]
    reached: bool


@dataclass
class _Part:
    tree: object  # shared by every cell with the same structure key
    avg: np.ndarray
    br_utilities: tuple
    br: dict  # player -> best action index per information set
    spec: CellSpec
    checkpoint: Path
    table: Path


class MatchStrategy:
    """Average strategies of a match run's cells, loaded on demand."""

    def __init__(self, out: str | Path, max_gb: float = 4.0) -> None:
        out = Path(out)
        self.out = out
        run = read_json(out / "run.json", "run file")
        if run.get("kind") != "match":
            raise ValueError(f"{out} holds a {run.get('kind')!r} run, not a match run")
        d = run["describe"]
        self.rules = RuleSet.from_dict(d["rules"])
        self.prunes = int(d["prunes"])
        self.algorithm = d["algorithm"]
        self.auto_rungs = int(d.get("auto_rungs", AUTO_OLD_RUNGS))  # described only where it is not the old one
        self.equity = EquityTable.load(out / "equity.parquet")
        summary = read_json(out / "summary.json", "match summary")
        self.state = MatchState(self.rules.target)
        self.state.equity = self.equity
        for c in summary["cells"]:
            self.state.set_br((c["score0"], c["score1"], c["dealer"]), c["br0"], c["br1"])
        self.solved = {(c["score0"], c["score1"], c["dealer"]) for c in summary["cells"]}
        self._parts: dict[tuple, _Part] = {}
        self._route: dict[tuple, dict] = {}
        self.max_gb = max_gb
        self._trees = TreeCache(max_gb)
        self._layout: tuple[_Part, BlockLayout | str] | None = None
        self._holding = False  # inside decision(): the layout serves its values after its average

    def spec(self, cell, vc: int) -> CellSpec:
        """The spec (and so the checkpoint's hash) of a canonical cell's vira class in this run."""
        a, b, d = cell
        algorithm = cell_algorithm(self.algorithm, self.rules, live_ladder(self.rules, cell, self.prunes),
                                   self.auto_rungs)
        return CellSpec.make(self.rules, a, b, d, vc, prunes=self.prunes, payoff="equity", equity=self.equity,
                             algorithm=algorithm)

    def _solver(self, part: _Part) -> VectorSolver:
        # a part's average and its values (a decision's) each need a solver: they share one block layout, made
        # once, not twice (9x10: ~3 s each). Kept only while a decision needs it (~9 bytes per element)
        if self._layout is None or self._layout[0] is not part:
            self._layout = (part, BlockLayout.make(part.tree) or "slots")
        return VectorSolver(part.tree, part.spec.algorithm, layout=self._layout[1])

    def _average(self, part: _Part) -> np.ndarray:
        """A part's average strategy per slot: from its checkpoint, or where the run pruned that (a finished cell
        no later cell starts from, :func:`truco_lab.lab.match.prune_checkpoints`) from its table, the same
        float32 numbers."""
        key = CellJob(part.spec, Stop(iterations=1)).key
        if part.checkpoint.exists() or not part.table.exists():
            solver = self._solver(part)
            load_checkpoint(solver, part.checkpoint, key)
            return solver.average_strategy()
        return read_average(part.tree, part.table, key)

    def _part(self, cell, vc: int) -> _Part:
        key = (cell, vc)
        if key in self._parts:
            return self._parts[key]
        if cell not in self.solved:
            a, b, d = cell
            raise KeyError(f"cell {a}x{b} dealer {d} is not solved in {self.out}")
        a, b, d = cell
        rules = self.rules
        spec = self.spec(cell, vc)
        job = CellJob(spec, Stop(iterations=1), workdir=str(self.out / "cells" / spec.cell_name))
        tree = self._trees.get(spec)
        if tree is None:
            tree = spec.build()
            self._trees.put(spec, tree)
        else:  # another cell's tree of the same structure: this cell's view of it (its own source and payoffs)
            tree = copy.copy(tree)
            spec.adopt(tree)
        codes = candidate_codes(rules)
        st = self.state
        br0 = continuation_utilities(rules, a, b, d, codes, lambda x, y, z: st.br_value(0, x, y, z), 1.0, 0.0)
        br1 = continuation_utilities(rules, a, b, d, codes, lambda x, y, z: -st.br_value(1, x, y, z), 0.0, -1.0)
        part = _Part(tree, np.empty(0, np.float32), (br0, br1), {}, spec, Path(job.path("checkpoint")),
                     Path(job.path("table")))
        part.avg = self._average(part)
        if not self._holding:
            self._layout = None
        while self._parts and sum(p.avg.nbytes for p in self._parts.values()) / 2**30 > self.max_gb:
            self._parts.pop(next(iter(self._parts)))
        self._parts[key] = part
        return part

    def _locate(self, state):
        """(part, action -> slot, whether mirrored) for an OpenSpiel state of a hand in progress."""
        cell, mirrored = canonical((state.start_score[0], state.start_score[1], state.dealer))
        vc = vira_class_of(self.rules, state.vira).index
        view = _Mirror(state) if mirrored else state
        part = self._part(cell, vc)
        key = (cell, vc, view.current_player(), tuple(view.deal), tuple(view.hand_actions))
        route = self._route.get(key)
        if route is None:
            route = openspiel_route(part.tree, view)
            if len(self._route) > 200_000:
                self._route.clear()
            self._route[key] = route
        return part, route, mirrored

    def covers(self, state) -> bool:
        """Whether this run solved the cell of ``state``'s hand."""
        cell, _ = canonical((state.start_score[0], state.start_score[1], state.dealer))
        return cell in self.solved

    def _analysis(self, part: _Part, cell) -> tuple[np.ndarray, np.ndarray]:
        """(value per slot for its actor, own reach per element) under the solution, cached per part."""
        if getattr(part, "analysis", None) is not None:
            return part.analysis
        a, b, d = cell
        tree = part.tree
        u = objective_utilities(self.rules, a, b, d, outcome_codes(tree), "equity", self.equity)
        with tree.payoff_set(u):
            solver = self._solver(part)
            av, _ = solver.slot_values(part.avg)
            reach = solver.element_reach(part.avg)
        part.analysis = (av, reach)
        return part.analysis

    def decision(self, state) -> Decision:
        """The solution at ``state`` for the player to act (``KeyError`` if its cell is unsolved or the
        hand left the solved tree)."""
        self._holding = True
        try:
            return self._decision(state)
        finally:
            self._holding, self._layout = False, None

    def _decision(self, state) -> Decision:
        cell, mirrored = canonical((state.start_score[0], state.start_score[1], state.dealer))
        part, route, _ = self._locate(state)
        if FORCED in route.values():
            raise KeyError("this raise is one the solution prunes (it gains its maker nothing): the solution accepts "
                           "it and plays on as if it had not been made")
        slots = [s for s in route.values() if s >= 0]
        if not slots:
            raise KeyError("this decision is not in the solved tree (an earlier move the solution prunes)")
        av, reach = self._analysis(part, cell)
        tree = part.tree
        p = state.current_player()
        tp = 1 - p if mirrored else p
        probs = self.action_probabilities(state)
        acts = [(a, probs.get(a, 0.0), (float(av[s]) if tp == 0 else 1.0 + float(av[s])) if s >= 0 else float("nan"))
                for a, s in route.items()]  # utilities are player 0's win probability
        info = tree.infoset_of_slot(min(slots))
        node = int(tree.infoset_nodes()[info])
        own_elem = int(tree.node_list[node, tp]) + info - int(tree.node_infoset[node])
        own_row = int(tree.elem_hand[own_elem])
        tq = 1 - tp
        ls, n = int(tree.node_list[node, tq]), int(tree.node_len[node, tq])
        rows_opp = tree.elem_hand[ls:ls + n].astype(np.int64)
        w_deal = tree.deal_weight
        w = reach[ls:ls + n] * (w_deal[own_row, rows_opp] if tq == 1 else w_deal[rows_opp, own_row])
        names = level_names_at(self.rules, state.vira)  # the user's vira, not the class representative
        hands = hand_levels(tree.source.vira_class).hands
        mass: dict[str, float] = {}
        for r, x in zip(rows_opp, w, strict=True):
            label = " ".join(names[lv] for lv in sorted(hands[r], reverse=True))
            mass[label] = mass.get(label, 0.0) + float(x)
        tot = sum(mass.values())
        rng = sorted(((h, m / tot) for h, m in mass.items() if m > 0), key=lambda x: -x[1]) if tot > 0 else []
        own_reach = float(reach[own_elem])
        return Decision(p, acts, own_reach, rng, reached=own_reach > 0 and tot > 0)

    def action_probabilities(self, state) -> dict[int, float]:
        """The composed strategy's probabilities at ``state`` (legal actions outside the solved tree get 0)."""
        part, route, _ = self._locate(state)
        probs = slot_probabilities(route, part.avg)
        tot = sum(probs.values())
        return {a: p / tot for a, p in probs.items()} if tot > 0 else {a: 1 / len(probs) for a in probs}

    def best_response_action(self, state) -> int:
        """The action of the backward-induction best response (for the player to act) against
        this strategy: the strategy the match certificate's best-response values assume."""
        part, route, mirrored = self._locate(state)
        forced = [a for a, s in route.items() if s == FORCED]
        if forced:  # a raise the tree prunes: accepting it is a best response (folding never gains)
            return forced[0]
        p = state.current_player()
        tp = 1 - p if mirrored else p  # the player in the canonical tree
        if tp not in part.br:
            s = self._solver(part)
            with s.tree.payoff_set(part.br_utilities[tp]):
                part.br[tp] = s.best_response_actions(tp, part.avg)
            del s
            if not self._holding:
                self._layout = None
        # the information set of the route's slots: every slot of one set shares its offset block
        slots = [s for s in route.values() if s >= 0]
        t = part.tree
        info = t.infoset_of_slot(min(slots))
        best_slot = int(t.infoset_offset[info]) + int(part.br[tp][info])
        for a, s in route.items():
            if s == best_slot:
                return a
        raise KeyError("the best response's action has no legal counterpart here")


def classes(rules) -> int:
    return len(vira_classes(rules))
