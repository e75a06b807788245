"""``solve``: the solvers' Python entry point for any two-player zero-sum OpenSpiel game."""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from solvers.cfr import CFRSolver
from solvers.storage import atomic_write, rss_gb
from solvers.tree import FORCED, NATIVE_BUILDERS, GameTree, build_openspiel_tree
from solvers.vector import SubgameSolver

TREE_BUILDERS = ("auto", "native", "openspiel")


@dataclass
class SolveResult:
    """What a solve produced: the average profile and its certificates."""

    tree: GameTree | SubgameSolver  # a GameTree, or (native) the subgames, built on demand
    solver: CFRSolver | SubgameSolver
    game: object
    exploitability: float
    game_value: float
    seconds: float
    history: list = field(default_factory=list)  # (iteration, exploitability)
    algorithm: str = ""

    def metadata(self) -> dict:
        """Run metadata stored with strategy tables (the trees' source adds its own description)."""
        import datetime

        from solvers import __version__

        meta = {
            "algorithm": self.algorithm, "iterations": self.iterations, "exploitability": self.exploitability,
            "game_value": self.game_value, "game": str(self.game), "version": __version__,
            "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        }
        src_obj = self.solver._builders[0] if self.native else None
        if src_obj is None and self.native:
            src_obj = self.solver.part(0).tree.source
        if src_obj is not None and hasattr(src_obj, "metadata"):
            src = src_obj.metadata()
            meta.update({k: v for k, v in src.items() if k in ("rules", "schema", "payoff", "units", "prunes")})
        return meta

    @property
    def iterations(self) -> int:
        return self.solver.iteration

    @property
    def native(self) -> bool:
        return isinstance(self.solver, SubgameSolver)

    def to_openspiel_policy(self, warn=None):
        """The average profile as an ``open_spiel`` TabularPolicy (small games). States off the solved tree
        (after an action it prunes: the solution never reaches them) play uniformly, as TabularPolicy does;
        how many there are is said through ``warn`` (default: a ``UserWarning``) and kept in
        ``policy.off_tree_states``."""
        import warnings

        from open_spiel.python import policy as policy_lib

        pol = policy_lib.TabularPolicy(self.game)
        if self.native:
            trees = self.solver.trees
            avgs = [s.average_strategy() for s in self.solver.solvers]
            off = 0
            for row, state in enumerate(pol.states):
                part, route = _route(trees, state)
                if not route:
                    off += 1
                    continue  # TabularPolicy's default: uniform over legal actions
                pol.action_probability_array[row, :] = 0.0
                share: dict[int, int] = {}  # actions sharing a slot (e.g. equivalent cards) split it evenly
                for slot in route.values():
                    share[slot] = share.get(slot, 0) + 1
                for a, slot in route.items():
                    if slot >= 0:
                        pol.action_probability_array[row, a] = avgs[part][slot] / share[slot]
                    elif slot == FORCED:
                        pol.action_probability_array[row, a] = 1.0
            pol.off_tree_states = off
            if off:
                msg = (f"{off} of {len(pol.states)} information states lie off the solved tree (after actions its "
                       "prunes drop, never reached by the solution); they play uniformly")
                (warn or (lambda m: warnings.warn(m, UserWarning, stacklevel=3)))(msg)
            return pol
        avg = self.solver.average_strategy()
        t = self.tree
        for i, key in enumerate(t.infoset_keys):
            row = pol.state_lookup[key]
            pol.action_probability_array[row, :] = 0.0
            o = t.infoset_offset[i]
            for a, act in enumerate(t.infoset_actions[i]):
                pol.action_probability_array[row, act] = avg[o + a]
        return pol

    def table(self, include_forced: bool = False):
        """The strategy table, a :class:`solvers.tables.StrategyTable` for every solve: native
        solves are labelled by hand and public history, generic ones by OpenSpiel's
        information-state strings (column ``infoset``); ``to_pandas()`` gives the DataFrame."""
        import pandas as pd

        from solvers.tables import StrategyTable

        if self.native:
            from solvers.tables import subgame_frame

            frames = [subgame_frame(s, include_forced) for s in self.solver.solvers]
            df = pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0]
            for k in df.columns:  # text columns of concatenated subgames: categoricals again
                if df[k].dtype == object or str(df[k].dtype) == "str":
                    df[k] = df[k].astype("category")
            return StrategyTable(df, self.metadata())
        t = self.tree
        avg = self.solver.average_strategy()
        regrets = self.solver.regrets  # one copy (a solver may store them permuted)
        rows = {"infoset": [], "player": [], "action": [], "probability": [], "regret": []}
        for i, key in enumerate(t.infoset_keys):
            o = int(t.infoset_offset[i])
            for a, act in enumerate(t.infoset_actions[i]):
                rows["infoset"].append(key)
                rows["player"].append(int(t.infoset_player[i]))
                rows["action"].append(int(act))
                rows["probability"].append(float(avg[o + a]))
                rows["regret"].append(float(regrets[o + a]))
        return StrategyTable(pd.DataFrame(rows), self.metadata())


def _route(trees: list, state) -> tuple[int, dict]:
    """(subgame index, OpenSpiel action -> slot) for ``state``; an empty map outside the solved tree."""
    for part, t in enumerate(trees):
        try:
            route = t.source.route(t, state)
        except KeyError:  # after a pruned action: outside the solved tree
            return part, {}
        if route is not None:
            return part, route
    raise ValueError(f"no subgame contains state {state}")


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
    native_options: dict | None = None,
    max_nodes: float | None = 50e6,
    threads: int = 1,
    **params,
) -> SolveResult:
    """Solve ``game`` (any two-player zero-sum ``pyspiel.Game``) with a CFR-family algorithm.

    ``tree="auto"`` uses the game's native builder when one is registered
    (e.g. one vector-form subgame per value of a public chance card), else walks the
    game once (``"openspiel"`` forces that). Stops after ``iterations`` or once
    exploitability (checked every ``check_every`` iterations) is at most
    ``target_exploitability``. With ``checkpoint`` the solver state is saved
    every ``checkpoint_every`` iterations and at the end; ``resume`` continues
    from it bit-identically. ``native_options`` go to the native builder
    (e.g. ``prunes``). ``max_nodes``: refuse to walk a game estimated bigger (None: no limit).
    ``params`` are the algorithm's (DCFR's alpha, beta, gamma). ``threads``: native trees only (2: each
    pass's subtrees on two threads, ~1.8x faster on big trees here); generic trees run on one.
    """
    if tree not in TREE_BUILDERS:
        raise ValueError(f"tree must be one of {', '.join(TREE_BUILDERS)}, got {tree!r}")
    _check_stop(iterations, target_exploitability)
    for name, v in (("check_every", check_every), ("checkpoint_every", checkpoint_every), ("threads", threads)):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
            raise ValueError(f"{name} must be a positive integer, got {v!r}")
    t0 = time.perf_counter()
    name = game.get_type().short_name
    if tree == "native" and name not in NATIVE_BUILDERS:
        raise ValueError(f"no native builder for {name!r}; native builders exist for: {', '.join(NATIVE_BUILDERS)}")
    if tree != "openspiel" and name in NATIVE_BUILDERS:
        parts = NATIVE_BUILDERS[name](game, **(native_options or {}))
        solver = SubgameSolver(parts, algorithm, alternating=alternating, threads=threads, **params)
        expl, history = run_subgames(solver, iterations, target_exploitability, check_every=check_every,
                                     checkpoint=checkpoint, checkpoint_every=checkpoint_every, resume=resume,
                                     progress=progress)
        trees = solver
    else:
        trees = build_openspiel_tree(game, progress=progress, max_nodes=max_nodes)
        solver = CFRSolver(trees, algorithm, alternating=alternating, **params)
        expl, history = run(solver, iterations, target_exploitability, check_every=check_every,
                            checkpoint=checkpoint, checkpoint_every=checkpoint_every, resume=resume,
                            progress=progress)
    return SolveResult(trees, solver, game, expl, solver.game_value(), time.perf_counter() - t0, history,
                       algorithm)


def run_subgames(solver: SubgameSolver, iterations: int | None, target: float | None, *, check_every: int = 10,
                 checkpoint: str | Path | None = None, checkpoint_every: int = 100, resume: bool = False,
                 progress=False) -> tuple[float, list]:
    """The same loop as :func:`run`, one subgame at a time: each is solved to the stop condition
    (each to ``target`` when one is given, which bounds the weighted sum), then parked, so memory
    holds one tree. Subgame ``i`` checkpoints to ``<checkpoint stem>.part<i>.npz``. With a fixed
    iteration count the result equals solving the subgames in lockstep (they are independent)."""
    ck = Path(checkpoint) if checkpoint else None
    weights = np.array(solver.weights) / sum(solver.weights)
    expls = []
    history: list = []
    for i in range(len(solver.weights)):
        part = solver.part(i)
        cki = ck.with_name(f"{ck.stem}.part{i}{ck.suffix or '.npz'}") if ck is not None else None
        e, h = run(part, iterations, target, check_every=check_every, checkpoint=cki,
                   checkpoint_every=checkpoint_every, resume=resume and cki is not None and cki.exists(),
                   progress=progress, desc=f"subgame {i + 1}/{len(solver.weights)}")
        expls.append(e)
        history += [(it, ex, sec, i) for it, ex, sec in h]
        part.park()
    return float(np.dot(weights, expls)), history


def _check_stop(iterations, target) -> None:
    if iterations is None and target is None:
        raise ValueError("give iterations, target_exploitability, or both")
    if iterations is not None and iterations < 0:
        raise ValueError(f"iterations must be >= 0, got {iterations}")
    if target is not None and not (target > 0 and np.isfinite(target)):
        raise ValueError(f"target_exploitability must be a positive finite number, got {target}")


class _DeferredInterrupts:
    """SIGINT and SIGTERM (a cluster's preemption) only set a flag while iterating, so a
    checkpoint always holds whole iterations; the run then saves and raises KeyboardInterrupt."""

    def __init__(self) -> None:
        self.signal: int | None = None
        self._old: dict = {}

    def __enter__(self) -> _DeferredInterrupts:
        import signal
        import threading

        if threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGINT, signal.SIGTERM):
                self._old[sig] = signal.signal(sig, self._flag)
        return self

    def _flag(self, signum, frame) -> None:
        import sys

        if self.signal is not None:  # asked twice: stop now (the last checkpoint on disk is whole)
            raise KeyboardInterrupt(f"signal {signum} twice: stopped mid-iteration, the last checkpoint is kept")
        self.signal = signum
        # an iteration of a big cell takes minutes: tell a person at a terminal at once what happens and how to
        # stop sooner (a cluster's SIGTERM, with stderr in a log, gets only the closing line)
        if sys.stderr is not None and sys.stderr.isatty():
            print("stopping after this iteration, then saving a checkpoint (Ctrl-C again: stop now, keeping the "
                  "last checkpoint)", file=sys.stderr, flush=True)

    def __exit__(self, exc_type, *exc) -> None:
        import os
        import signal

        for sig, old in self._old.items():
            signal.signal(sig, old)
        if self.signal is not None and exc_type is None and self.signal in self._old:
            # flagged after the last iteration's check (during the closing exploitability, say) and the run
            # then ended: the signal still reaches the handler before, never silently dropped (a multiprocessing
            # worker that lost the pool's SIGTERM this way blocked the driver's terminate forever)
            old = self._old[self.signal]
            if callable(old):
                old(self.signal, None)
            elif old == signal.SIG_DFL:
                os.kill(os.getpid(), self.signal)


def run(solver, iterations: int | None, target_exploitability: float | None = None, *, check_every: int = 10,
        checkpoint: str | Path | None = None, checkpoint_every: int = 100, resume: bool = False,
        progress=False, desc: str = "solving", checkpoint_meta: dict | None = None,
        prior: list[tuple[int, float]] | None = None, loaded: bool = False) -> tuple[float, list]:
    """Iterate ``solver`` to a stop condition; returns (final exploitability,
    [(iteration, exploitability, seconds)]).

    ``progress``: ``True`` for a tqdm bar (iterations, speed, last exploitability,
    resident memory), or a callable receiving a dict after every step. Checkpoints
    (every ``checkpoint_every`` iterations, at the end, and on SIGINT/SIGTERM) hold
    whole iterations only; ``checkpoint_meta`` is stored with them (e.g. a spec hash).
    ``prior``: the logged checks of a solved neighbour this run was warm-started from (see
    :func:`next_check`); kept in the checkpoints, so a resumed run schedules as an uninterrupted one.
    ``loaded``: with ``resume``, the caller has already loaded ``checkpoint`` into ``solver`` (only its
    logged schedule is read here).
    """
    _check_stop(iterations, target_exploitability)
    ckpt = Path(checkpoint) if checkpoint else None
    checks: list[tuple[int, float]] = []  # the scheduled checks so far: what the next one is chosen from
    if resume:
        checks, prior = _resumed(solver, ckpt, loaded, (checkpoint_meta or {}).get("key"), prior)
    history: list = []
    bar = None
    callback = progress if callable(progress) else None
    if progress is True:
        from tqdm import tqdm

        # with a target the stopping point is unknown: count up instead of showing a cap
        total = iterations if target_exploitability is None else None
        bar = tqdm(total=total, initial=solver.iteration, unit="it", desc=desc)
    t0 = time.perf_counter()
    expl = float("inf")
    if target_exploitability is not None and solver.iteration > 0:
        expl = solver.exploitability()
        history.append((solver.iteration, expl, 0.0))
        if expl <= target_exploitability:
            iterations = solver.iteration  # already there: nothing to do
    slow = solver_is_slow(solver)
    watching = target_exploitability is not None or bar is not None or callback is not None
    saved_at = -1
    if checks or (prior and solver.iteration == 0):
        due = next_check(checks, check_every, target_exploitability, prior)
    else:  # a fresh run, or a checkpoint written before checks were logged: the fixed schedule's next check
        ce = check_interval(solver.iteration, check_every)
        due = (solver.iteration // ce + 1) * ce

    def save() -> None:
        nonlocal saved_at
        if ckpt is not None and saved_at != solver.iteration:
            save_checkpoint(solver, ckpt, checkpoint_meta, checks, prior)
            saved_at = solver.iteration

    with _DeferredInterrupts() as sig:
        try:
            while iterations is None or solver.iteration < iterations:
                # iterate in chunks up to the next event: one numba call per chunk
                it = solver.iteration
                step = iterations - it if iterations is not None else check_every
                if watching:
                    step = min(step, due - it)
                if ckpt is not None:
                    step = min(step, checkpoint_every - it % checkpoint_every)
                if slow:
                    step = 1  # big trees: react to signals and update progress every iteration
                solver.iterate(step)
                if bar is not None:
                    bar.update(step)
                if sig.signal is not None:
                    save()
                    raise KeyboardInterrupt(f"signal {sig.signal}: checkpoint saved at iteration {solver.iteration}")
                if ckpt is not None and solver.iteration % checkpoint_every == 0:
                    save()
                checked = False
                if watching and solver.iteration >= due:
                    expl = solver.exploitability()
                    checked = True
                    history.append((solver.iteration, expl, time.perf_counter() - t0))
                    checks.append((solver.iteration, expl))
                    due = next_check(checks, check_every, target_exploitability, prior)
                    if bar is not None:
                        bar.set_postfix(exploitability=f"{expl:.3g}", rss=f"{rss_gb():.2f}GB")
                if callback is not None:
                    callback({"iteration": solver.iteration, "exploitability": expl if checked else None,
                              "seconds": time.perf_counter() - t0, "rss_gb": rss_gb()})
                if checked and target_exploitability is not None and expl <= target_exploitability:
                    break
            save()  # the end, also when a signal came during the last check (it is delivered on leaving)
        finally:
            if bar is not None:
                bar.close()
            if sig.signal is None:
                save()  # an error's way out: the last whole iteration (a second signal stops mid-iteration)
    if not history or history[-1][0] != solver.iteration:
        expl = solver.exploitability()
        history.append((solver.iteration, expl, time.perf_counter() - t0))
    else:
        expl = history[-1][1]
    return expl, history


def _resumed(solver, ckpt: Path | None, loaded: bool, key: str | None, prior: list | None) -> tuple[list, list | None]:
    """Load ``ckpt`` into ``solver`` (unless ``loaded``); the checks it logged and the prior it was scheduled with."""
    if ckpt is None or not ckpt.exists():
        raise FileNotFoundError(f"--resume: no checkpoint at {ckpt}")
    if not loaded:
        load_checkpoint(solver, ckpt, key)
    return checks_of(ckpt, solver.iteration), checks_of(ckpt, None, "run/prior") or prior


def next_check(checks: list[tuple[int, float]], check_every: int, target: float | None,
               prior: list[tuple[int, float]] | None = None) -> int:
    """The iteration of the next exploitability check after the scheduled ones in ``checks`` ((iteration,
    exploitability), oldest first). A check costs about one iteration (a best response per player), so:

    * with a target: the first two at ``check_every`` and twice that; then where a power law from the last
      check (exploitability ~ t^-k, k clamped to [0.5, 3]; the steeper of the last two checks' and the last
      three's end to end) reaches the target, at least one iteration
      on and at most ``max(check_interval, t // 2)`` (a check where progress stalls falls back to
      :func:`check_interval`). A 10x10 cell to 1e-3 is checked ~8 times instead of ~13;
    * with a target and a ``prior`` (the logged checks of the solved neighbour a warm start came from): the
      first at :data:`PRIOR_SHARE` of the iteration where the prior met the target (:func:`prior_reach`), kept
      within ``check_every`` and twice that; the second where that check meets the target on the prior's last
      slope (at most :data:`PRIOR_SLOPE_CAP`, so a steep prior rather checks once more than overshoots), at most
      at the prior's reach or ``check_every`` on; then as above. Cells of one tree converge alike late (so the
      neighbour's slope), not equally fast (0.3-1.1x the neighbour's count on a whole 10-card grid: so the cell's
      own first check, early where the neighbour was quick), and the checks in between only located the curve;
    * without one (a fixed iteration count: the checks only inform): at ``check_every`` x 2^j.

    A pure function of the logged checks (and the prior), which checkpoints carry, so a resumed run checks
    (and stops) exactly where an uninterrupted one does."""
    if target is None:
        return max(check_every, 2 * checks[-1][0]) if checks else check_every
    reach = prior_reach(prior, target) if prior else None
    if not checks:  # a cell can need as little as PRIOR_SHARE of its neighbour's count (never less than check_every)
        return max(check_every, min(2 * check_every, int(PRIOR_SHARE * reach))) if reach else check_every
    t, e = checks[-1]
    if len(checks) < 2:
        k = _slope(prior[-2:]) if reach and len(prior) >= 2 else None
        if k is None or not (0.0 < target < e):
            return t + check_every
        due = math.ceil(t * (e / target) ** (1.0 / min(k, PRIOR_SLOPE_CAP)))
        return max(t + 1, min(due, max(reach, t + check_every)))
    base = check_interval(t, check_every)
    # The steeper of the last interval and the last two: a stall between two close checks is mostly the
    # iterates' wobble, and a step taken on it overshot the target by up to t // 2 (8x10's classes 84 and 88
    # iterations where their siblings met 1e-3 at 60-62). Replayed on the real endgame's 34 logged curves:
    # 2,361 iterations plus checks -> 2,324, those two at 67 and 70, no curve later than before.
    k = _slope(checks[-2:])
    if k is None or not (0.0 < e and target > 0.0):  # no progress measured: no prediction
        return t + base
    if len(checks) >= 3:
        k = max(k, _slope([checks[-3], checks[-1]]) or k)
    step = math.ceil(t * (e / target) ** (1.0 / k) - t)
    return t + min(max(step, 1), max(base, t // 2))


# See next_check. Replayed on the curves of two whole matches' warm cells, iterations plus checks (1.25 iterations
# each) against the schedule without a prior: the 10-card grid (139 cells, max stake 3) 0.941, the real deck's
# eleven row (180 cells, most done at their first check) 1.000. A first check always at twice check_every: 0.956
# and 1.71 (the real eleven row then ran 2,142 iterations against 1,287); at 0.75 of the neighbour's count: 0.989.
PRIOR_SHARE = 0.3
PRIOR_SLOPE_CAP = 2.0


def _slope(two: list[tuple[int, float]]) -> float | None:
    """The power law's exponent k (exploitability ~ t^-k) between two checks, clamped to [0.5, 3]; ``None``
    where they show no progress."""
    (t1, e1), (t, e) = two
    if not (0.0 < e < e1 and t > t1 > 0):
        return None
    return min(max(math.log(e1 / e) / math.log(t / t1), 0.5), 3.0)


def prior_reach(prior: list[tuple[int, float]], target: float) -> int | None:
    """The first logged iteration at which ``prior`` (a check log) met ``target``; past its end, where its last
    two checks' power law meets it (at most twice its last iteration); ``None`` for an empty log."""
    for t, e in prior:
        if e <= target:
            return int(t)
    if not prior:
        return None
    t = int(prior[-1][0])
    k = _slope(prior[-2:]) if len(prior) >= 2 else None
    if k is None or target <= 0.0:
        return t
    return min(2 * t, math.ceil(t * (prior[-1][1] / target) ** (1.0 / k)))


def checks_of(path: Path, iteration: int | None, name: str = "run/checks") -> list[tuple[int, float]]:
    """The scheduled checks a checkpoint logged (up to its ``iteration``; all of them for ``None``), or with
    ``name="run/prior"`` the prior it was scheduled with; [] when it predates the log."""
    try:
        with np.load(path, allow_pickle=False) as d:
            if name not in d.files:
                return []
            a = np.asarray(d[name], np.float64).reshape(-1, 2)
    except (OSError, ValueError):
        return []
    return [(int(i), float(x)) for i, x in a if iteration is None or int(i) <= iteration]


def check_interval(iteration: int, check_every: int) -> int:
    """Iterations between exploitability checks after ``iteration``: ``check_every`` for the first
    ten checks, then doubling each time the iteration count doubles, up to 4 x ``check_every`` (so
    a run overshoots its target by at most that). A pure function of the iteration, so a resumed
    run checks (and stops) exactly where an uninterrupted one does."""
    k = check_every
    while iteration >= 10 * k and k < 4 * check_every:
        k *= 2
    return k


def solver_is_slow(solver) -> bool:
    """Big trees: advance the progress bar every iteration (the call overhead is nothing there)."""
    trees = solver.trees if hasattr(solver, "trees") else [solver.tree]
    return sum(t.num_slots for t in trees) > 1_000_000


def save_checkpoint(solver, path: Path, meta: dict | None = None, checks: list | None = None,
                    prior: list | None = None) -> None:
    """Atomic save: an interrupted write never replaces a good checkpoint. ``checks``: the run's scheduled
    exploitability checks, ``prior`` the neighbour's it was scheduled with (:func:`next_check` continues from
    them on resume)."""
    state = solver.state_dict()
    for k, v in (meta or {}).items():
        state[f"meta/{k}"] = np.array(v)
    if checks:
        state["run/checks"] = np.array(checks, np.float64)
    if prior:
        state["run/prior"] = np.array(prior, np.float64)
    atomic_write(path, lambda p: np.savez(p, **state), suffix=".npz")


def load_checkpoint(solver, path: str | Path, key: str | None = None) -> None:
    """Load a checkpoint into ``solver``; every problem is a one-line ``ValueError`` naming the file
    (missing, truncated, not a checkpoint, another spec, another algorithm, another tree shape)."""
    import zipfile

    path = Path(path)
    try:
        with np.load(path, allow_pickle=False) as d:
            data = {k: d[k] for k in d.files}
    except FileNotFoundError:
        raise ValueError(f"checkpoint {path} does not exist") from None
    except (OSError, ValueError, EOFError, zipfile.BadZipFile, KeyError) as e:
        raise ValueError(f"checkpoint {path} is unreadable ({type(e).__name__}): delete it or run with --fresh") from None
    need = {"parts"} if "parts" in data else {"regrets", "ssum", "pred", "iteration", "algorithm", "shape"}
    if not need <= set(data):
        raise ValueError(f"checkpoint {path} is not a solver checkpoint (missing {', '.join(sorted(need - set(data)))})")
    if key is not None and "meta/key" in data and str(data["meta/key"]) != key:
        raise ValueError(f"checkpoint {path} belongs to another cell spec (hash {str(data['meta/key'])[:12]}, "
                         f"this one {key[:12]}): options changed since it was written")
    try:
        solver.load_state_dict(data)
    except (ValueError, KeyError) as e:
        raise ValueError(f"checkpoint {path}: {e}") from None
