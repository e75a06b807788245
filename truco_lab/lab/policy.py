"""The composed match strategy of a match run, playable at OpenSpiel states, and its best responses.

A match run stores, per canonical cell and vira class, a checkpoint named by
the cell's spec hash. :class:`MatchStrategy` rebuilds the specs from the run's
``equity.parquet`` (so the hashes match), loads the average strategies lazily
and answers ``action_probabilities(state)`` for ``truco_paulista_match`` (or
``truco_paulista``) states. Mirror cells (``a > b``) use the canonical cell's
strategy with the seats swapped. :meth:`MatchStrategy.best_response_action`
plays the backward-induction best response that the match certificate
measured.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from solvers.api import load_checkpoint
from solvers.storage import read_json
from solvers.vector import VectorSolver
from truco_lab.lab.cell import CellJob, CellSpec, Stop, TreeCache, candidate_codes
from truco_lab.lab.equity import EquityTable
from truco_lab.lab.match import MatchState, canonical
from truco_lab.payoff import continuation_utilities
from truco_lab.public_tree import openspiel_route, rules_from_dict, slot_probabilities, vira_class_of, vira_classes


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


@dataclass
class _Part:
    tree: object  # shared by every cell with the same structure key
    avg: np.ndarray
    br_utilities: tuple
    br: dict  # player -> best action index per information set
    spec: CellSpec
    checkpoint: Path


class MatchStrategy:
    """Average strategies of a match run's cells, loaded on demand."""

    def __init__(self, out: str | Path, max_gb: float = 4.0) -> None:
        out = Path(out)
        self.out = out
        run = read_json(out / "run.json", "run file")
        if run.get("kind") != "match":
            raise ValueError(f"{out} holds a {run.get('kind')!r} run, not a match run")
        d = run["describe"]
        self.rules = rules_from_dict(d["rules"])
        self.prunes = int(d["prunes"])
        self.algorithm = d["algorithm"]
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

    def spec(self, cell, vc: int) -> CellSpec:
        """The spec (and so the checkpoint's hash) of a canonical cell's vira class in this run."""
        a, b, d = cell
        return CellSpec.make(self.rules, a, b, d, vc, prunes=self.prunes, payoff="equity", equity=self.equity,
                             algorithm=self.algorithm)

    def _solver(self, part: _Part) -> VectorSolver:
        solver = VectorSolver(part.tree, self.algorithm)
        load_checkpoint(solver, part.checkpoint, CellJob(part.spec, Stop(iterations=1)).key)
        return solver

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
        codes = candidate_codes(rules)
        st = self.state
        br0 = continuation_utilities(rules, a, b, d, codes, lambda x, y, z: st.br_value(0, x, y, z), 1.0, 0.0)
        br1 = continuation_utilities(rules, a, b, d, codes, lambda x, y, z: -st.br_value(1, x, y, z), 0.0, -1.0)
        part = _Part(tree, np.empty(0, np.float32), (br0, br1), {}, spec, Path(job.path("checkpoint")))
        part.avg = self._solver(part).average_strategy()
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
        p = state.current_player()
        tp = 1 - p if mirrored else p  # the player in the canonical tree
        if tp not in part.br:
            s = self._solver(part)
            saved = s.tree.node_util.copy()
            try:
                s.tree.set_payoff(part.br_utilities[tp])
                part.br[tp] = s.best_response_actions(tp, part.avg)
            finally:
                s.tree.node_util[:] = saved
        # the information set of the route's slots: every slot of one set shares its offset block
        slots = [s for s in route.values() if s >= 0]
        t = part.tree
        info = int(np.searchsorted(t.infoset_offset, min(slots), side="right") - 1)
        best_slot = int(t.infoset_offset[info]) + int(part.br[tp][info])
        for a, s in route.items():
            if s == best_slot:
                return a
        raise KeyError("the best response's action has no legal counterpart here")


def classes(rules) -> int:
    return len(vira_classes(rules))
