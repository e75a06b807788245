"""Solvers: flat game trees, the CFR family, exact best response.

Solvers know games only through :class:`solvers.tree.GameTree` and
:class:`solvers.tree.VectorTree` (with its :class:`solvers.tree.TreeSource`);
they never import a game's package.
"""

__version__ = "0.2.0"

from solvers.api import SolveResult, solve  # noqa: E402
from solvers.cfr import ALGORITHMS, CFRSolver  # noqa: E402
from solvers.tree import GameTree, build_openspiel_tree  # noqa: E402

__all__ = ["ALGORITHMS", "CFRSolver", "GameTree", "SolveResult", "build_openspiel_tree", "solve"]
