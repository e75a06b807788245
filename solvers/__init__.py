"""Solvers: flat game trees, the CFR family, exact best response.

Solvers know games only through :class:`solvers.tree.GameTree`.
"""

from solvers.api import SolveResult, solve
from solvers.cfr import ALGORITHMS, CFRSolver
from solvers.tree import GameTree, build_openspiel_tree

__all__ = ["ALGORITHMS", "CFRSolver", "GameTree", "SolveResult", "build_openspiel_tree", "solve"]
