"""Argentine truco's match, solved backward over every score on small decks (issue 20 §2).

Every terminal of a cell's hand pays player 0's **match-win probability** at the score the hand ends at: the
successor cell's equity
with the deal passed on, 1 or 0 once a side reaches the target (both at once: side 0, as the match game
decides). The falta envido's worth depends on the score, and this is where the match sees it. Every hand
pays at least one point, so cells are solved in decreasing total score; seat symmetry gives the mirrored
cell (``q(b, a, 1 - d) = 1 - q(a, b, d)``, mano being the seat after the dealer either way).

Each cell is solved with DCFR to ``target`` (exploitability in match-win probability) on its native tree
(:mod:`truco_lab.abstraction.argentine_tree`, terminals paying by outcome code), or, as the independent
check, on the hand walked through OpenSpiel (~20 µs per node in Python: small decks only).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace

import pandas as pd
import pyspiel

from solvers.api import run
from solvers.cfr import CFRSolver
from solvers.tree import build_openspiel_tree
from truco_lab.openspiel.games import openspiel_hand
from truco_lab.rules import engine as E
from truco_lab.rules.ruleset import RuleSet


@dataclass
class ArgentineCell:
    score0: int
    score1: int
    dealer: int
    equity: float  # player 0's match-win probability at the start of the hand
    exploitability: float  # of the cell's strategy, in match-win probability
    nodes: int
    infosets: int
    iterations: int
    seconds: float
    mirrored: bool = False  # filled in from the seat-mirrored cell


def match_rules(rules: RuleSet, target: int) -> RuleSet:
    """``rules`` played to ``target`` points (the match's length; malas and buenas split it in halves)."""
    if rules.pack != "spanish":
        raise ValueError(f"the Argentine match solver takes argentino rule sets, got {rules.name}")
    if not 2 <= target <= 30:
        raise ValueError(f"target must be 2..30, got {target}")
    return replace(rules, target=int(target))


def solve_cell(rules: RuleSet, a: int, b: int, d: int, equity: dict, target: float = 1e-4,
               max_iterations: int = 4000, tree: str = "native") -> ArgentineCell:
    """One cell: its hand with match-equity payoffs from ``equity`` ((score0, score1, dealer) -> q).
    ``tree``: ``native`` (:mod:`truco_lab.abstraction.argentine_tree`) or ``openspiel`` (the hand walked
    through its OpenSpiel game: the independent check, small decks only)."""
    t0 = time.perf_counter()
    top = rules.target
    nd = 1 - d
    if tree == "native":
        from solvers.vector import VectorSolver
        from truco_lab.abstraction.argentine_tree import build_argentine_cell, equity_utilities, outcome_codes

        t = build_argentine_cell(rules, a, b, d)
        t.set_payoff(equity_utilities(rules, a, b, outcome_codes(t), lambda x, y: equity[(x, y, nd)]))
        solver = VectorSolver(t, "dcfr")
        expl, _ = run(solver, max_iterations, target, check_every=25)
        v = solver.game_value()
        return ArgentineCell(a, b, d, v, expl, t.num_nodes, t.num_infosets, solver.iteration,
                             time.perf_counter() - t0)
    if tree != "openspiel":
        raise ValueError(f"tree must be 'native' or 'openspiel', got {tree!r}")

    def value(state) -> float:
        s0, s1 = int(E.score(state.s, 0)), int(E.score(state.s, 1))
        q = 1.0 if s0 >= top else 0.0 if s1 >= top else equity[(s0, s1, nd)]
        return 2.0 * q - 1.0

    name, params = openspiel_hand(rules, a, b, d)
    gt = build_openspiel_tree(pyspiel.load_game(name, params), max_nodes=None, utility_hook=value)
    solver = CFRSolver(gt, "dcfr")
    # exploitability in utility units (2q - 1) is twice that in match-win probability
    expl, _ = run(solver, max_iterations, 2 * target, check_every=25)
    v = solver.game_value()
    return ArgentineCell(a, b, d, (v + 1) / 2, expl / 2, gt.num_nodes, gt.num_infosets, solver.iteration,
                         time.perf_counter() - t0)


def solve_match(rules: RuleSet, target: float = 1e-4, progress=None, tree: str = "native",
                known: list[ArgentineCell] | None = None) -> pd.DataFrame:
    """Every cell of ``rules``'s match (scores 0 .. target-1 each, both dealers), backward; one row per cell.
    ``known``: cells solved before (a resumed run; mirrored rows are derived again); ``progress(cell)`` is
    called after each newly solved cell."""
    top = rules.target
    equity: dict[tuple[int, int, int], float] = {}
    rows: list[ArgentineCell] = []
    done = {(c.score0, c.score1, c.dealer): c for c in (known or []) if not c.mirrored}
    for total in range(2 * (top - 1), -1, -1):
        for a in range(max(0, total - top + 1), min(top - 1, total) + 1):
            b = total - a
            for d in (0, 1):
                if (a, b, d) in equity:
                    continue
                cell = done.get((a, b, d))
                if cell is None:
                    cell = solve_cell(rules, a, b, d, equity, target, tree=tree)
                    if progress is not None:
                        progress(cell)
                rows.append(cell)
                equity[(a, b, d)] = cell.equity
                mirror = (b, a, 1 - d)
                if mirror not in equity:
                    equity[mirror] = 1.0 - cell.equity
                    rows.append(replace(cell, score0=b, score1=a, dealer=1 - d, equity=1.0 - cell.equity,
                                        mirrored=True))
    return pd.DataFrame([vars(r) for r in rows]).sort_values(["score0", "score1", "dealer"]).reset_index(drop=True)


def cells_to_solve(rules: RuleSet) -> int:
    """How many cells :func:`solve_match` solves (the others are their seat mirrors)."""
    return rules.target ** 2
