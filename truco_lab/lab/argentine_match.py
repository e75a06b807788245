"""Argentine truco's match, solved backward over every score on small decks (issue 20 §2, first part).

There is no native (vector-form) tree for argentino yet, so each cell's hand is walked through its OpenSpiel
game (:func:`solvers.tree.build_openspiel_tree`) with every terminal paying player 0's **match-win
probability** at the score the hand ends at (``2 q - 1`` as a zero-sum utility): the successor cell's equity
with the deal passed on, 1 or 0 once a side reaches the target (both at once: side 0, as the match game
decides). The falta envido's worth depends on the score, and this is where the match sees it. Every hand
pays at least one point, so cells are solved in decreasing total score; seat symmetry gives the mirrored
cell (``q(b, a, 1 - d) = 1 - q(a, b, d)``, mano being the seat after the dealer either way).

Each cell is solved with DCFR on its walked tree to ``target`` (exploitability in match-win probability);
the walk costs ~20 µs per node in Python, which is what limits this to small decks and targets (``--plan``
of the full deck: a native tree is needed first).
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
               max_iterations: int = 4000) -> ArgentineCell:
    """One cell: its hand walked with match-equity payoffs from ``equity`` ((score0, score1, dealer) -> q)."""
    t0 = time.perf_counter()
    top = rules.target
    nd = 1 - d

    def value(state) -> float:
        s0, s1 = int(E.score(state.s, 0)), int(E.score(state.s, 1))
        q = 1.0 if s0 >= top else 0.0 if s1 >= top else equity[(s0, s1, nd)]
        return 2.0 * q - 1.0

    name, params = openspiel_hand(rules, a, b, d)
    tree = build_openspiel_tree(pyspiel.load_game(name, params), max_nodes=None, utility_hook=value)
    solver = CFRSolver(tree, "dcfr")
    # exploitability in utility units (2q - 1) is twice that in match-win probability
    expl, _ = run(solver, max_iterations, 2 * target, check_every=25)
    v = solver.game_value()
    return ArgentineCell(a, b, d, (v + 1) / 2, expl / 2, tree.num_nodes, tree.num_infosets, solver.iteration,
                         time.perf_counter() - t0)


def solve_match(rules: RuleSet, target: float = 1e-4, progress=None) -> pd.DataFrame:
    """Every cell of ``rules``'s match (scores 0 .. target-1 each, both dealers), backward; one row per cell."""
    top = rules.target
    equity: dict[tuple[int, int, int], float] = {}
    rows: list[ArgentineCell] = []
    for total in range(2 * (top - 1), -1, -1):
        for a in range(max(0, total - top + 1), min(top - 1, total) + 1):
            b = total - a
            for d in (0, 1):
                if (a, b, d) in equity:
                    continue
                cell = solve_cell(rules, a, b, d, equity, target)
                rows.append(cell)
                equity[(a, b, d)] = cell.equity
                mirror = (b, a, 1 - d)
                if mirror not in equity:
                    equity[mirror] = 1.0 - cell.equity
                    rows.append(replace(cell, score0=b, score1=a, dealer=1 - d, equity=1.0 - cell.equity,
                                        mirrored=True))
                if progress is not None:
                    progress(cell)
    return pd.DataFrame([vars(r) for r in rows]).sort_values(["score0", "score1", "dealer"]).reset_index(drop=True)
