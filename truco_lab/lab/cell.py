"""A cell is a value: :class:`CellSpec` (what is solved) and :func:`run_cell` (spec -> result).

A cell is one native subgame: rules, score, dealer, vira class, prunes, the
payoff objective (with its utilities per outcome) and the algorithm. Its
stable hash (:meth:`CellSpec.key`) names every artifact it produces
(checkpoint, table, result), so a resume compares hashes instead of trusting
file names, and a finished cell is simply reported again.

:func:`run_cell` is the one function that runs a cell, for the CLI,
``solve()``-style scripts, the match solver and every executor. It prints
nothing and writes only the cell's own files (progress goes to a callback);
summaries are the caller's, written by one writer.
"""

from __future__ import annotations

import contextlib
import datetime
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

import numpy as np

from solvers.api import checks_of, load_checkpoint, run
from solvers.storage import (
    available_memory_gb,
    keep_freed_memory,
    peak_rss_gb,
    read_json,
    release_freed_memory,
    reset_peak_rss,
    stable_hash,
    write_json,
)
from solvers.vector import VectorSolver
from truco_lab.abstraction.payoff import PAYOFFS, continuation_utilities, points_utilities, units
from truco_lab.abstraction.tree import (
    ALL_PRUNES,
    build_cell,
    check_cell_args,
    effective_prunes,
    raise_rights,
    vira_class_at,
)
from truco_lab.rules.ruleset import RuleSet

OFFLOAD_SLOTS = 2_000_000  # trees bigger than this keep navigation arrays memory-mapped, not resident


class CellError(ValueError):
    """A cell cannot run as asked (bad spec, unusable file, mismatched resume): one line, names the culprit."""


@dataclass(frozen=True)
class CellSpec:
    """What one cell solves. Frozen and picklable; :meth:`key` is its stable hash."""

    rules: RuleSet
    score0: int
    score1: int
    dealer: int
    vira_class: int
    prunes: int = ALL_PRUNES
    payoff: str = "points"
    utilities: tuple[float, ...] = ()  # player 0's utility per outcome code (the objective, made explicit)
    algorithm: str = "dcfr"

    @classmethod
    def make(cls, rules: RuleSet, score0: int, score1: int, dealer: int, vira_class: int, *,
             prunes: int = ALL_PRUNES, payoff: str = "points", equity=None, algorithm: str = "dcfr") -> CellSpec:
        """Validate and fix the utilities: ``points`` from the rules, ``equity`` from an equity table."""
        from solvers.cfr import ALGORITHMS

        check_cell_args(rules, score0, score1, dealer)
        vira_class_at(rules, vira_class)
        if payoff not in PAYOFFS:
            raise CellError(f"payoff must be one of {', '.join(PAYOFFS)}, got {payoff!r}")
        if algorithm not in ALGORITHMS:
            raise CellError(f"algorithm must be one of {', '.join(ALGORITHMS)}, got {algorithm!r}")
        codes = candidate_codes(rules)
        if payoff == "points":
            u = points_utilities(rules, score0, score1, codes)
        else:
            if equity is None:
                raise CellError("payoff 'equity' needs an equity table (--equity FILE)")
            try:
                u = continuation_utilities(rules, score0, score1, dealer, codes, equity.value)
            except KeyError as e:
                raise CellError(f"cell {score0}x{score1} dealer {dealer}: {e.args[0]}") from None
        prunes = effective_prunes(rules, score0, score1, prunes)
        return cls(rules, int(score0), int(score1), int(dealer), int(vira_class), int(prunes), payoff,
                   tuple(float(x) for x in u), algorithm)

    def describe(self) -> dict:
        return {"rules": self.rules.to_dict(), "score": [self.score0, self.score1], "dealer": self.dealer,
                "vira_class": self.vira_class, "prunes": self.prunes, "payoff": self.payoff,
                "utilities": list(self.utilities), "algorithm": self.algorithm}

    def key(self) -> str:
        """Stable hash of everything that determines the solution."""
        return stable_hash(self.describe())

    def structure_key(self) -> str:
        """Cells with equal structure keys build identical trees (only payoffs differ), so one
        built tree and a neighbour's regrets serve them all: outside the hand of eleven a start's scores
        shape the tree only through who may raise from which stake (:func:`raise_rights`), so e.g. 0x9,
        0x10, 3x9 and 6x9 share one tree (the leader raises only from 1, the other player up to 6)."""
        t = self.rules.target
        on11 = (self.score0 == t - 1, self.score1 == t - 1) if self.rules.mao_de_onze else (False, False)
        what = {"rules": self.rules.to_dict(), "dealer": self.dealer, "vira_class": self.vira_class,
                "prunes": self.prunes, "on11": on11}
        if any(on11):  # no raises at all; the hand of eleven's own rules
            what["low"] = -1
        elif self.rules.envido or self.rules.flor:  # envido's stakes read the scores themselves
            what["score"] = [self.score0, self.score1]
        else:
            what["raises"] = [list(r) for r in raise_rights(self.rules, self.score0, self.score1, self.prunes)]
        return stable_hash(what)

    @property
    def name(self) -> str:
        return f"s{self.score0}-{self.score1}_d{self.dealer}_v{self.vira_class}"

    @property
    def cell_name(self) -> str:
        """The score cell (all vira classes) this subgame belongs to."""
        return f"s{self.score0}-{self.score1}_d{self.dealer}"


    def build(self):
        """The cell's tree with this spec's utilities."""
        return build_cell(self.rules, self.score0, self.score1, self.dealer, self.vira_class, self.prunes,
                          payoff=self.payoff, utilities=np.array(self.utilities))

    def adopt_stored(self, tree) -> None:
        """Give a tree read from a tree store (arrays only) this cell's source and utilities."""
        from truco_lab.abstraction.tree import Subgame

        tree.source = Subgame(self.rules, self.score0, self.score1, self.dealer,
                              vira_class_at(self.rules, self.vira_class), self.prunes, self.payoff)
        tree.set_payoff(np.array(self.utilities))

    def adopt(self, tree) -> None:
        """Point a tree of the same structure at this cell: its utilities and labels."""
        tree.set_payoff(np.array(self.utilities))
        tree.source = replace(tree.source, score0=self.score0, score1=self.score1, payoff=self.payoff)


def candidate_codes(rules: RuleSet) -> list[int]:
    """Every outcome code a hand under ``rules`` can end with (winner x points the hand can pay)."""
    from truco_lab.abstraction.payoff import outcome_code

    pts = set(rules.ladder) | {rules.eleven_value, rules.eleven_fold_points, rules.eleven_eleven_value}
    return sorted(int(outcome_code(w, p)) for w in (0, 1) for p in pts)


@dataclass(frozen=True)
class Stop:
    """When a cell is done: ``iterations`` exactly, or ``target`` exploitability (checked every
    ``check_every`` iterations) within ``max_iterations``."""

    iterations: int | None = None
    target: float | None = None
    max_iterations: int = 100_000
    check_every: int = 5
    checkpoint_every: int = 50

    def __post_init__(self) -> None:
        if self.iterations is None and self.target is None:
            raise CellError("give iterations or a target exploitability")

    def met(self, iterations: int, exploitability: float) -> bool:
        if self.target is not None:
            return exploitability <= self.target
        return iterations >= (self.iterations or 0)


@dataclass(frozen=True)
class CellJob:
    """A spec plus how to run it: stop rule, where its files go, table options, a warm start,
    and (for the match certificate) the best-response continuation utilities."""

    spec: CellSpec
    stop: Stop
    workdir: str | None = None  # the cell's own folder (checkpoint, table, result), or None: nothing written
    table: bool = True
    table_min_reach: float = 0.0
    resume: bool = True  # continue from this spec's checkpoint if present
    warm_from: str | None = None  # checkpoint of a solved neighbour with the same structure key
    br_utilities: tuple[tuple[float, ...], tuple[float, ...]] | None = None
    split_depth: int = 0  # > 0: stream the tree cut at this public depth from disk (cells too big for memory)
    # threads of the in-memory passes (subtrees below public depth 2 in parallel): 2 halves the 10x10
    # iteration here. Not in the hash: it changes at most the last bits of a few sums
    threads: int = 1
    # a streamed solve's parts kept in memory between passes (GB; not in the hash: the iterates are the
    # same). None: what the machine has available at the start, less the rest of the solve and a margin
    resident_gb: float | None = None
    # a folder of built trees by structure key (not in the hash: a stored tree is the built one, array for
    # array): an in-memory cell reads its tree from there when a cell of the same structure stored it, and
    # stores the one it builds while the folder holds less than ``tree_store_gb``
    tree_store: str | None = None
    tree_store_gb: float = 0.0
    # GB a worker's tree cache may hold beside this job (not in the hash): a match sets it to the share of the
    # job's own predicted peak planned for kept trees, so a small task is not run beside a big task's cache
    cache_gb: float | None = None

    @property
    def key(self) -> str:
        """The spec's hash; a streamed solve numbers slots part by part, so its files get their own."""
        k = self.spec.key()
        return k if not self.split_depth else stable_hash({"spec": k, "split_depth": self.split_depth})

    def path(self, kind: str) -> Path | None:
        """The cell's file of ``kind`` (checkpoint, table, result), named by its hash."""
        if self.workdir is None:
            return None
        ext = {"checkpoint": "npz", "table": "parquet", "result": "json"}[kind]
        sub = {"checkpoint": "checkpoints", "table": "", "result": "results"}[kind]
        d = Path(self.workdir) / sub if sub else Path(self.workdir)
        return d / f"{self.spec.name}.{self.key[:12]}.{ext}"


@dataclass
class CellResult:
    """What running a cell produced (JSON-able through :meth:`to_dict`)."""

    key: str
    name: str
    score: list
    dealer: int
    vira_class: int
    vira_weight: float
    payoff: str
    units: str
    algorithm: str
    game_value: float
    exploitability: float
    iterations: int
    target: float | None
    target_met: bool
    seconds: float
    seconds_per_iteration: float | None
    build_seconds: float
    nodes: int
    infosets: int
    entries: int
    bytes_per_entry_state: float
    bytes_per_entry_total: float
    peak_memory_gb: float
    history: list = field(default_factory=list)  # [iteration, exploitability, seconds]
    warm_start: str | None = None
    warm_iterations: int = 0  # iterations of the neighbour whose regrets started this cell
    tree: str = "built"  # where its tree came from: built, a worker's cache, or the run's tree store
    br_values: list | None = None  # [player 0's, player 1's] best-response values with BR continuations
    br_key: str | None = None  # hash of the BR continuation utilities those values used
    table: str | None = None
    table_seconds: float | None = None  # writing the strategy table (labels, the evaluation pass, Parquet)
    setup_seconds: float | None = None  # the solver's layout over a built tree (block order, slot index to disk)
    rows: int | None = None
    rows_dropped: int | None = None
    reused: bool = False  # reported from an earlier run (same hash), not solved again
    split_depth: int = 0  # streamed from disk in parts cut at this depth (their files deleted once solved); 0: in memory
    threads: int = 1  # threads the task's passes ran on (a match's plan compares its seconds as one core's)
    br_seconds: float | None = None  # the closing best responses under the match's continuation values
    cpu_seconds: float | None = None  # the task's CPU time (its process, all threads): unlike wall time, not
    # stretched by other work on the machine

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> CellResult:
        names = {f for f in cls.__dataclass_fields__}
        return cls(**{k: v for k, v in d.items() if k in names})


ProgressFn = Callable[[dict], None]


class TreeCache:
    """Built trees and solved states kept in a worker between cells with the same structure key."""

    def __init__(self, max_gb: float = 6.0, keep_last: bool = True) -> None:
        """``keep_last``: keep the newest tree even over ``max_gb`` (a strategy reading one cell again and
        again); off for match workers, whose budget is a share of the plan's margin."""
        self.max_gb = max_gb
        self.keep_last = keep_last
        self.trees: dict[str, object] = {}

    def get(self, spec: CellSpec):
        k = spec.structure_key()
        tree = self.trees.pop(k, None)
        if tree is None:
            return None
        self.trees[k] = tree  # most recent last
        return tree

    def put(self, spec: CellSpec, tree) -> None:
        self.trees[spec.structure_key()] = tree
        self.fit()

    def keep_only(self, key: str) -> None:
        """Drop every kept tree but the one of structure ``key``."""
        self.trees = {k: t for k, t in self.trees.items() if k == key}

    def drop_mapped_pages(self) -> None:
        """Take the kept trees' file-backed pages (navigation arrays a task paged in: labels, the table writer's
        slot index) out of this process's resident set: :meth:`fit` counts a tree by what it holds in memory."""
        for tree in self.trees.values():
            tree.drop_mapped_pages()

    def fit(self, max_gb: float | None = None) -> None:
        """Drop the oldest trees until the rest fit the cache's budget, or ``max_gb`` where that is less (a task's
        own share: the budget itself stays for the tasks after it)."""
        limit = self.max_gb if max_gb is None else min(self.max_gb, max_gb)
        # counted with their labels and lookups (a 10x10 tree's labels outweigh its structure): measured by the
        # structure alone, a worker once held 12.7 GB of cached trees beside a 5.4 GB task
        while len(self.trees) > int(self.keep_last) and (
                sum(t.resident_bytes() for t in self.trees.values()) / 2**30 > limit):
            self.trees.pop(next(iter(self.trees)))


def run_cell(job: CellJob, progress: ProgressFn | None = None, cache: TreeCache | None = None) -> CellResult:
    """Build (or reuse), solve, certify and (with a workdir) write one cell. Prints nothing."""
    spec = job.spec
    res_path = job.path("result")
    if res_path is not None and res_path.exists():
        try:
            old = CellResult.from_dict(read_json(res_path, "cell result"))
        except (ValueError, TypeError) as e:
            raise CellError(f"{e}: delete it to solve the cell again") from None
        if old.key == job.key and job.stop.met(old.iterations, old.exploitability) and (
                old.table is None or not job.table or Path(old.table).exists()) and (
                job.br_utilities is None or old.br_key == stable_hash(job.br_utilities)):
            old.reused = True
            return old
    if cache is not None and job.cache_gb is not None:
        # a match worker, whose jobs come grouped by structure (executors.grouped_by_structure): a kept tree of
        # another structure is not used again and only raised this task's peak (10x10 tasks in a worker rose from
        # 2.1 to 2.9 GB, task after task, against 2.4 planned: its mapped pages, and the heap its arrays split)
        cache.keep_only(spec.structure_key())
        cache.fit(job.cache_gb)  # before the peak is reset: this task's peak holds only the trees it may keep
    if cache is not None:
        cache.drop_mapped_pages()
    release_freed_memory()  # what an earlier task in this process freed, so this task's peak is its own
    keep_freed_memory(False)  # a tree build's growing buffers would leave holes kept memory cannot reuse
    reset_peak_rss()
    vc = vira_class_at(spec.rules, spec.vira_class)
    t0 = time.perf_counter()
    c0 = time.process_time()
    if job.split_depth:
        return _run_streamed(job, vc, progress)
    tree = cache.get(spec) if cache is not None else None
    origin = "cache"
    if tree is None:
        tree, origin = _stored_or_built(job)
        if tree.num_slots > OFFLOAD_SLOTS:
            tree.offload_navigation()  # kernels never read it; tables read it back from the mapping
        if cache is not None:
            cache.put(spec, tree)
    else:
        spec.adopt(tree)
    build_s = time.perf_counter() - t0
    solver = VectorSolver(tree, spec.algorithm, threads=job.threads)
    release_freed_memory()  # the build's temporaries and the arrays moved to files
    keep_freed_memory()  # the solve and the table writer reuse what they free (see keep_freed_memory)
    setup_s = time.perf_counter() - t0 - build_s
    ckpt = job.path("checkpoint")
    resume = job.resume and ckpt is not None and ckpt.exists()
    warm_it, prior = 0, None
    if resume:
        _load(solver, ckpt, job.key)
    elif job.warm_from:
        warm_it, prior = _warm_start(solver, Path(job.warm_from))
    state_bytes = solver.state_nbytes()
    result = _iterate(job, vc, solver, progress, build_s, tree, state_bytes, solver.nbytes() + tree.nbytes(),
                      resume, prior)
    result.setup_seconds = setup_s
    result.warm_start = Path(job.warm_from).name if job.warm_from and not resume else None
    result.warm_iterations = warm_it
    result.tree = origin
    result.threads = job.threads
    if job.br_utilities is not None:
        t0 = time.perf_counter()
        b0, b1 = solver.best_response_values_under((np.array(job.br_utilities[0]), np.array(job.br_utilities[1])))
        result.br_values = [b0, b1]
        result.br_key = stable_hash(job.br_utilities)
        result.br_seconds = time.perf_counter() - t0
    if job.table and job.workdir is not None:
        from solvers.tables import write_table

        t0 = time.perf_counter()
        path, rows, dropped = write_table(solver, job.path("table"), _table_meta(tree.source, job, result),
                                          min_reach=job.table_min_reach)
        result.table, result.rows, result.rows_dropped = str(path), rows, dropped
        result.table_seconds = time.perf_counter() - t0
    result.peak_memory_gb = peak_rss_gb()
    result.cpu_seconds = time.process_time() - c0
    if res_path is not None:
        write_json(res_path, result.to_dict())
    return result


def _stored_or_built(job: CellJob) -> tuple:
    """The job's tree and where it came from: ``store`` (read from the job's tree store, where a cell of the
    same structure put it) or ``built`` (and stored, within the store's budget)."""
    from solvers.tree import STORED, load_tree, save_tree

    spec = job.spec
    if job.tree_store is None:
        return spec.build(), "built"
    key = spec.structure_key()
    folder = Path(job.tree_store) / key
    try:
        tree = load_tree(folder, key)
    except ValueError:  # a damaged copy (a disk error; writes are atomic): build the tree again, and store that
        import shutil

        shutil.rmtree(folder, ignore_errors=True)
        tree = None
    if tree is not None:
        spec.adopt_stored(tree)
        return tree, "store"
    tree = spec.build()
    size = sum(getattr(tree, n).nbytes for n in STORED if getattr(tree, n) is not None) / 2**30
    if store_gb(job.tree_store) + size <= job.tree_store_gb:
        save_tree(tree, folder, key)
    return tree, "built"


def store_gb(folder: str | Path) -> float:
    """GB the tree store ``folder`` holds."""
    import os

    total = 0
    # another worker's temporary copy may be renamed into place while the store is walked: os.walk skips a
    # folder that vanished (Path.rglob raised FileNotFoundError naming `.<key>.<host>.<pid>.tmp…`, which
    # failed a match in CI), and a file that vanished between the listing and the stat counts nothing
    for root, _, files in os.walk(folder):
        for name in files:
            if name.endswith(".npy"):
                with contextlib.suppress(FileNotFoundError):
                    total += os.stat(os.path.join(root, name)).st_size
    return total / 2**30


def _warm_start(solver, path: Path) -> tuple[int, list]:
    """Start ``solver`` (in memory or streamed) from a solved neighbour's regrets only; the neighbour's
    iteration count and its logged exploitability checks (this cell's checks are scheduled from them:
    :func:`solvers.api.next_check`). Its current strategy is this cell's first iterate, while strategy sums and the
    iteration count start afresh (the neighbour's average belongs to other payoffs). Measured on the
    full-deck eleven row: 33% fewer iterations than cold, never more; carrying the sums and count over too
    saved only 2% and cost up to 2.7x more near the match's end (benchmarks/warm_start.py)."""
    try:
        load_checkpoint(solver, path, None)
    except ValueError as e:
        raise CellError(f"warm start: {e} (a warm start needs a checkpoint of a cell with the same tree)") from None
    warm_it = solver.iteration
    solver.reset_averages()
    solver.iteration = 0
    return warm_it, checks_of(path, None)


def _iterate(job: CellJob, vc, solver, progress, build_s: float, tree, state_bytes: int,
             total_bytes: int, resumed: bool = False, prior: list | None = None) -> CellResult:
    """Iterate ``solver`` to the job's stop rule (checkpoints keyed by the job's hash) and describe
    the outcome; ``tree`` gives the sizes, the byte counts the per-entry figures. ``resumed``: the job's
    checkpoint is loaded (its logged checks go on); ``prior``: the warm start's neighbour's checks."""
    spec, stop = job.spec, job.stop
    start_it = solver.iteration
    cap = stop.iterations if stop.target is None else stop.max_iterations
    t1 = time.perf_counter()
    expl, history = run(solver, cap, stop.target, check_every=stop.check_every, checkpoint=job.path("checkpoint"),
                        checkpoint_every=stop.checkpoint_every, resume=resumed, loaded=True, progress=progress,
                        checkpoint_meta={"key": job.key}, prior=prior)
    solve_s = time.perf_counter() - t1
    done = solver.iteration - start_it
    n = max(tree.num_slots, 1)
    return CellResult(
        key=job.key, name=spec.name, score=[spec.score0, spec.score1], dealer=spec.dealer,
        vira_class=spec.vira_class, vira_weight=vc.weight, payoff=spec.payoff, units=units(spec.payoff),
        algorithm=spec.algorithm, game_value=solver.game_value(), exploitability=expl, iterations=solver.iteration,
        target=stop.target, target_met=stop.met(solver.iteration, expl) if stop.target is not None else True,
        seconds=solve_s + build_s, seconds_per_iteration=solve_s / done if done else None, build_seconds=build_s,
        nodes=tree.num_nodes, infosets=tree.num_infosets, entries=tree.num_slots,
        bytes_per_entry_state=state_bytes / n, bytes_per_entry_total=total_bytes / n, peak_memory_gb=0.0,
        history=[[int(i), float(e), float(s)] for i, e, s in history])


def _run_streamed(job: CellJob, vc, progress: ProgressFn | None) -> CellResult:
    """:func:`run_cell` for a tree cut at ``job.split_depth``: the parts are built onto disk (in the
    cell's folder, kept for a resume until the cell's result is written; a temporary folder without one) and
    streamed every pass."""
    import shutil
    import tempfile

    from solvers.streamed import StreamedSolver, memory_of
    from truco_lab.abstraction.tree import build_split

    keep_freed_memory()  # parts built and read a pass at a time: measured at 0x0, 15.9 GB peak kept, 16.4 not
    spec = job.spec
    tmp = None
    if job.workdir is None:
        folder = Path(tmp := tempfile.mkdtemp(prefix="truco-parts-"))
    else:
        folder = Path(job.workdir) / "parts" / f"{spec.name}.{job.key[:12]}"
    try:
        t0 = time.perf_counter()
        split = build_split(folder, spec.rules, spec.score0, spec.score1, spec.dealer, spec.vira_class,
                            spec.prunes, depth=job.split_depth, utilities=np.array(spec.utilities),
                            progress=getattr(progress, "bar", None) is not None)  # the CLI's bar, not quiet
        build_s = time.perf_counter() - t0
        bar = getattr(progress, "bar", None) is not None
        solver = StreamedSolver(split, spec.algorithm, threads=job.threads, progress=bar)
        build_s = time.perf_counter() - t0  # the block files are made once, as part of the build
        ckpt = job.path("checkpoint")
        resume = job.resume and ckpt is not None and ckpt.exists()
        warm_it, prior = 0, None
        if resume:
            _load(solver, ckpt, job.key)
        elif job.warm_from:  # a neighbour streamed at the same depth: the same parts, so the same choices
            warm_it, prior = _warm_start(solver, Path(job.warm_from))
        solver.resident_bytes = _resident_budget(job, memory_of(split, job.threads, solver))
        result = _iterate(job, vc, solver, progress, build_s, split, solver.nbytes(),
                          sum(memory_of(split, job.threads, solver).values()) + solver.resident_bytes, resume, prior)
        result.warm_start = Path(job.warm_from).name if job.warm_from and not resume else None
        result.warm_iterations = warm_it
        result.threads = job.threads
        if job.br_utilities is not None:
            t0 = time.perf_counter()
            result.br_values = [solver.best_response_value(p, None, np.array(job.br_utilities[p])) for p in (0, 1)]
            result.br_key = stable_hash(job.br_utilities)
            result.br_seconds = time.perf_counter() - t0
        if job.table and job.workdir is not None:
            from solvers.tables import write_split_table
            from truco_lab.abstraction.tree import SplitLabels

            labels = SplitLabels(split, spec.rules, spec.score0, spec.score1, spec.dealer, spec.vira_class,
                                 spec.prunes, spec.payoff, job.split_depth)
            t0 = time.perf_counter()
            path, rows, dropped = write_split_table(solver, job.path("table"), _table_meta(labels.cell, job, result),
                                                    labels, min_reach=job.table_min_reach,
                                                    progress=getattr(progress, "bar", None) is not None)
            result.table, result.rows, result.rows_dropped = str(path), rows, dropped
            result.table_seconds = time.perf_counter() - t0
        result.peak_memory_gb = peak_rss_gb()
        result.split_depth = job.split_depth
        if job.workdir is not None:
            write_json(job.path("result"), result.to_dict())
            # the result is what a resume reuses; the parts (a 0x0 class's ~31 GB) are rebuilt if ever needed,
            # so a --vira all run or a grid needs one class's disk at a time, not all of them
            shutil.rmtree(folder, ignore_errors=True)
            with contextlib.suppress(OSError):
                folder.parent.rmdir()  # the cell's parts/ folder, once no class is left in it
        return result
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)


RESIDENT_MARGIN_GB = 2.0  # left free beside a streamed solve's resident parts (the table pass, the page cache)


def _resident_budget(job: CellJob, need: dict[str, int]) -> int:
    """Bytes of parts a streamed solve keeps in memory: ``job.resident_gb``, or what is available now less
    the solve's other needs (state, trunk, the parts being worked on) and a margin."""
    if job.resident_gb is not None:
        return int(job.resident_gb * 1e9)
    try:
        have = available_memory_gb() * 2**30
    except OSError:
        return 0
    return max(0, int(have - sum(need.values()) - RESIDENT_MARGIN_GB * 2**30))


def _table_meta(cell, job: CellJob, result: CellResult) -> dict:
    """A strategy table's run metadata (the cell's, the solve's, the code's version and the date)."""
    return dict(cell.metadata(), algorithm=job.spec.algorithm, iterations=result.iterations,
                exploitability=result.exploitability, game_value=result.game_value, key=job.key,
                version=_version(), date=datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"))


def _load(solver: VectorSolver, path: Path, key: str | None) -> None:
    try:
        load_checkpoint(solver, path, key)
    except ValueError as e:
        raise CellError(str(e)) from None


def _version() -> str:
    from truco_lab import __version__

    return __version__


def units_of(payoff: str) -> str:
    return units(payoff)
