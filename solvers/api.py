"""``solve``: the solvers' Python entry point for any two-player zero-sum OpenSpiel game."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from solvers.cfr import CFRSolver
from solvers.tree import GameTree, build_openspiel_tree

TREE_BUILDERS = ("auto", "openspiel")


@dataclass
class SolveResult:
    """What a solve produced: the average profile and its certificates."""

    tree: GameTree
    solver: CFRSolver
    game: object
    exploitability: float
    game_value: float
    seconds: float
    history: list = field(default_factory=list)  # (iteration, exploitability)

    @property
    def iterations(self) -> int:
        return self.solver.iteration

    @property
    def average_strategy(self) -> np.ndarray:
        return self.solver.average_strategy()

    def to_openspiel_policy(self):
        """The average profile as an ``open_spiel`` TabularPolicy (small games)."""
        from open_spiel.python import policy as policy_lib

        pol = policy_lib.TabularPolicy(self.game)
        avg = self.solver.average_strategy()
        t = self.tree
        for i, key in enumerate(t.infoset_keys):
            row = pol.state_lookup[key]
            pol.action_probability_array[row, :] = 0.0
            o = t.infoset_offset[i]
            for a, act in enumerate(t.infoset_actions[i]):
                pol.action_probability_array[row, act] = avg[o + a]
        return pol

    def table(self):
        """One row per (information set, action) as a pandas DataFrame."""
        import pandas as pd

        t = self.tree
        avg = self.solver.average_strategy()
        rows = {"infoset": [], "player": [], "action": [], "probability": [], "regret": []}
        for i, key in enumerate(t.infoset_keys):
            o = int(t.infoset_offset[i])
            for a, act in enumerate(t.infoset_actions[i]):
                rows["infoset"].append(key)
                rows["player"].append(int(t.infoset_player[i]))
                rows["action"].append(int(act))
                rows["probability"].append(float(avg[o + a]))
                rows["regret"].append(float(self.solver.regrets[o + a]))
        return pd.DataFrame(rows)


def solve(
    game,
    algorithm: str = "dcfr",
    iterations: int | None = 400,
    target_exploitability: float | None = None,
    tree: str = "auto",
    alternating: bool = True,
    check_every: int = 10,
    checkpoint: str | Path | None = None,
    checkpoint_every: int = 100,
    resume: bool = False,
    progress: bool = False,
    **params,
) -> SolveResult:
    """Solve ``game`` (any two-player zero-sum ``pyspiel.Game``) with a CFR-family algorithm.

    Stops after ``iterations`` or once exploitability (checked every ``check_every``
    iterations) is at most ``target_exploitability``. With ``checkpoint`` the solver
    state is saved every ``checkpoint_every`` iterations and at the end; ``resume``
    continues from it bit-identically.
    """
    if tree not in TREE_BUILDERS:
        raise ValueError(f"tree must be one of {', '.join(TREE_BUILDERS)}, got {tree!r}")
    if iterations is None and target_exploitability is None:
        raise ValueError("give iterations, target_exploitability, or both")
    if iterations is not None and iterations < 0:
        raise ValueError(f"iterations must be >= 0, got {iterations}")
    t0 = time.perf_counter()
    # The native truco builder (lossless quotient) is not in yet: every game uses the generic walk.
    gt = build_openspiel_tree(game, progress=progress)
    solver = CFRSolver(gt, algorithm, alternating=alternating, **params)
    ckpt = Path(checkpoint) if checkpoint else None
    if resume:
        if ckpt is None or not ckpt.exists():
            raise FileNotFoundError(f"--resume: no checkpoint at {ckpt}")
        with np.load(ckpt) as d:
            solver.load_state_dict(d)
    history = []
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=iterations, initial=solver.iteration, unit="it")
    expl = float("inf")
    while iterations is None or solver.iteration < iterations:
        solver.iterate(1)
        if bar is not None:
            bar.update(1)
        if ckpt is not None and solver.iteration % checkpoint_every == 0:
            save_checkpoint(solver, ckpt)
        if target_exploitability is not None and solver.iteration % check_every == 0:
            expl = solver.exploitability()
            history.append((solver.iteration, expl))
            if bar is not None:
                bar.set_postfix(exploitability=f"{expl:.3g}")
            if expl <= target_exploitability:
                break
    if bar is not None:
        bar.close()
    if ckpt is not None:
        save_checkpoint(solver, ckpt)
    expl = solver.exploitability()
    return SolveResult(gt, solver, game, expl, solver.game_value(), time.perf_counter() - t0, history)


def save_checkpoint(solver: CFRSolver, path: Path) -> None:
    """Atomic save: an interrupted write never replaces a good checkpoint."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp.npz")
    np.savez(tmp, **solver.state_dict())
    tmp.replace(path)
