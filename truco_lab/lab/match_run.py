"""``truco-lab match``: plan, run and write a match solve (the CLI and ``make solve`` call this).

Outputs in ``--out``: ``equity.parquet`` (one row per cell, both seats),
``equity.png`` (heatmap, one panel per dealer), ``cells/<cell>/`` (a strategy
table per vira class, checkpoints, per-job results) and ``summary.json`` (per
cell: equity, exploitability, match exploitability, iterations, cost; the
match exploitability of the whole strategy). Only this driver writes the
summary and the equity table.
"""

from __future__ import annotations

import json
import math
import sys
import time
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from solvers.storage import available_memory_gb, read_json, total_memory_gb, write_json
from truco_lab.abstraction.levels import vira_classes
from truco_lab.abstraction.tree import ALL_PRUNES, CAP_OWN_RAISES
from truco_lab.lab.executors import make_executor
from truco_lab.lab.match import (
    AUTO,
    AUTO_OLD_RUNGS,
    CACHE_SHARE,
    MatchConfig,
    MatchState,
    auto_differs,
    default_store_gb,
    disk_plan,
    live_ladder,
    plan,
    select_cells,
    solve_match,
    store_plan,
    worst_path_bound,
)
from truco_lab.lab.runs import as_begun, claim, release_locks
from truco_lab.lab.schedule import TWO_THREAD_SPEEDUP, critical_path, simulate, task_gb, thread_speedup
from truco_lab.rules.ruleset import RuleSet


def print_plan(cfg: MatchConfig, cells, workers: int, file=None, cluster: tuple[int, int, float] | None = None,
               auto_threads: bool = False, out: Path | None = None) -> dict:
    """The plan table, its totals and critical path (also returned); with ``cluster`` (nodes, cores per node,
    GB per node) the simulated wall time of the level-by-level driver there. Where ``out`` holds finished tasks
    of a run, each cell's measured CPU-hours and peak stand beside the prediction, and a line compares them."""

    file = file or sys.stdout
    rows = plan(cfg.rules, cells, cfg.prunes, cfg.target, cfg.table, cfg.algorithm, cfg.warm_start,
                _store_gb(cfg))
    if auto_threads and cluster is None:  # the plan of the run this machine would do
        cfg = replace(cfg, threads=local_shape(cfg, rows, workers, auto_threads=True)[1])
    seen = measured_tasks(out) if out is not None else {}
    print(f"{'cell':>10} {'ladder':>14} {'classes':>7} {'peak/task':>10} {'CPU-h':>9}"
          + (f" {'measured':>13} {'peak':>7}" if seen else ""), file=file)
    total, peak, nstream = 0.0, 0.0, 0
    compared = []  # (tasks, measured CPU-h, predicted CPU-h for them, measured peak / predicted)
    for r in rows:
        a, b, d = r.cell
        st = r.peak_gb > cfg.stream_over_gb
        gb, h = task_gb(r, st, cfg.threads), (r.streamed_hours if st else r.hours)
        total, peak, nstream = total + h, max(peak, gb), nstream + st
        got = seen.get(r.cell, [])
        if got:
            compared.append((len(got), sum(map(task_cpu_hours, got)), h * len(got) / r.classes,
                             max(t["peak_memory_gb"] for t in got) / gb))
        print(f"{f'{a}x{b} d{d}':>10} {'-'.join(map(str, r.ladder)):>14} {r.classes:>7} {gb:>8.1f}GB "
              f"{h:>9.3f}" + (_measured_cell(got, r.classes) if seen else "") + ("  streamed" if st else ""),
              file=file)
    print(f"{len(rows)} cells (seat symmetry solves the mirrors), {len(rows) * rows[0].classes} tasks; "
          f"total {total:,.2f} CPU-hours; largest task {peak:.1f} GB"
          + (f"; {nstream} cells streamed from disk (over {cfg.stream_over_gb:g} GB in memory)" if nstream else ""),
          file=file)
    if compared:
        n, got_h, want_h = (sum(c[i] for c in compared) for i in range(3))
        lo, hi = min(c[3] for c in compared), max(c[3] for c in compared)
        span = f"{lo:.2f}x" if f"{lo:.2f}" == f"{hi:.2f}" else f"{lo:.2f}-{hi:.2f}x"
        print(f"measured in {out}: {n} finished tasks of {len(compared)} cells took {got_h:,.2f} CPU-hours, "
              f"{got_h / want_h:.2f}x the {want_h:,.2f} the plan predicts for them; their cells' peaks "
              f"{span} the predicted peak per task", file=file)
    store = store_plan(cfg.rules, [r for r in rows if r.peak_gb <= cfg.stream_over_gb], cfg.prunes, _store_gb(cfg))
    if store.read:
        cap = "" if math.isinf(_store_gb(cfg)) else f" (of {_store_gb(cfg):,.0f} GB allowed)"
        print(f"tree store: {store.built} tasks build their trees, {store.read} read them; up to "
              f"{store.peak_gb:,.1f} GB in DIR/trees at once{cap}", file=file)
    print(_disk_line(cfg, rows, workers, store.peak_gb, out, {c: len(t) for c, t in seen.items()}), file=file)
    threads = cfg.threads
    here = local_schedule(rows, workers, cfg)
    if here is not None:
        print(here[1], file=file)
    if compared:
        print(_left_line(out, len(rows) * rows[0].classes - n, total - want_h, total, got_h / want_h,
                         here[0] if here is not None else None), file=file)
    if threads > 1:
        how = "measured" if threads == 2 else f"extended from {TWO_THREAD_SPEEDUP:g}x at 2 by Amdahl's law, not measured"
        print(f"{threads} threads per task: each finishes {thread_speedup(threads):.2f}x sooner than on one core "
              f"({how})", file=file)
    chain = critical_path(cfg.rules, rows, cfg.stream_over_gb, threads)
    names = " -> ".join(f"{a}x{b} d{d}" for a, b, d in chain.cells[:6]) + (" -> ..." if len(chain.cells) > 6 else "")
    print(f"critical path: {chain.hours:,.2f} h over {len(chain.cells)} cells in a row ({names}); no cluster "
          f"finishes sooner", file=file)
    out = {"cells": len(rows), "cpu_hours": total, "max_task_gb": peak, "streamed_cells": nstream,
           "critical_path_hours": chain.hours, "critical_path_cells": len(chain.cells)}
    if here is not None and here[0] is not None:
        out["local_wall_hours"] = here[0]
    if cluster is not None:
        sim = simulate(rows, *cluster, stream_over_gb=cfg.stream_over_gb, threads=threads)
        per = "one core" if threads == 1 else f"{threads} cores"
        print(f"simulated on {sim.nodes} nodes x {sim.cores} cores, {sim.node_memory_gb:.0f} GB each ({per} and "
              f"its predicted peak per task, a score-sum level at a time): {sim.wall_hours:,.2f} h wall, cores "
              f"{sim.utilisation:.0%} busy", file=file)
        out["simulated_wall_hours"] = sim.wall_hours
    return out


def _disk_line(cfg: MatchConfig, rows, workers: int, store_gb: float, out: Path | None, finished: dict) -> str:
    """The disk the run needs in DIR, or what it still needs there when DIR holds finished tasks (and, given DIR,
    what is free there)."""
    disk = disk_plan(cfg.rules, rows, cfg.prunes, workers, cfg.table, store_gb, finished, cfg.keep_checkpoints,
                     cfg.warm_start)
    ck = disk.checkpoints_gb
    what = (f"~{disk.tables_gb:,.1f} GB of tables, " if cfg.table else "") + (
        f"checkpoints ~{ck:,.1f} GB (all kept)" if cfg.keep_checkpoints or not cfg.table else
        f"checkpoints up to ~{ck:,.1f} GB at once ({disk.all_checkpoints_gb:,.1f} with --keep-checkpoints)")
    free = ""
    if out is not None:
        from truco_lab.lab.match import free_disk_gb

        free = f"; {free_disk_gb(out):,.1f} GB free there now"
    head = "disk in DIR, for what is left" if any(finished.values()) else "disk in DIR"
    return f"{head}: {what}" + (f", tree store {store_gb:,.1f} GB" if store_gb else "") + \
        f": ~{disk.peak_gb:,.1f} GB at most{free}"


def _folder_gb(folder: Path) -> float:
    """GB of the files under ``folder`` (0 if there is none; a file removed meanwhile counts nothing)."""
    total = 0
    for f in folder.rglob("*") if folder.is_dir() else ():
        try:
            total += f.stat().st_size if f.is_file() else 0
        except OSError:
            pass
    return total / 2**30


def _warn_disk(cfg: MatchConfig, rows, workers: int, out: Path) -> None:
    """One line on stderr when what the run has left to write (tables and checkpoints; the tree store keeps to
    its budget) may not fit the disk space free in DIR: a run that fills the disk stops there (finished cells
    stay), so the user hears it at the start, not hours in."""
    from truco_lab.lab.match import free_disk_gb

    done = {c: len(t) for c, t in measured_tasks(out).items()}
    need = disk_plan(cfg.rules, rows, cfg.prunes, workers, cfg.table, 0.0, done, cfg.keep_checkpoints,
                     cfg.warm_start).peak_gb
    # the store's trees go after their last level and it holds at most its budget (default: half the free space)
    free = free_disk_gb(out) + _folder_gb(out / "trees")
    free -= min(_store_gb(cfg, out), free / 2)
    if need > free:
        print(f"truco-lab match: warning: what is left may need ~{need:,.1f} GB in {out} (tables and checkpoints; "
              f"--plan with this --out has the figures) and {free:,.1f} GB are free beside the tree store: free "
              "some, or give the store less (--tree-store-gb)", file=sys.stderr)


def _left_line(out: Path, tasks: int, left_h: float, total_h: float, ratio: float, wall_h: float | None) -> str:
    """What a begun run has left: its tasks and plan CPU-hours, and (where this machine's schedule is known)
    the wall time by the plan and at the rate its finished tasks ran (the plan's wall scaled by the share left,
    since a run's levels keep the cores about as busy as planned)."""
    if tasks <= 0:
        return f"left in {out}: nothing, every task is finished"
    line = f"left in {out}: {tasks} tasks, {left_h:,.2f} of the plan's {total_h:,.2f} CPU-hours"
    if wall_h is not None and total_h > 0:
        w = wall_h * left_h / total_h
        line += f"; ~{w:,.1f} h wall here by the plan, ~{w * ratio:,.1f} h at the {ratio:.2f}x its finished tasks ran"
    return line


def measured_tasks(out: Path) -> dict[tuple[int, int, int], list[dict]]:
    """Finished tasks in a run folder (``cells/*/results/*.json``), by canonical cell: the newest result of each
    (cell, vira class), since a cell solved again under new successor values leaves its older result beside."""
    newest: dict[tuple, tuple[float, dict]] = {}
    for f in Path(out).glob("cells/*/results/*.json"):
        try:
            when, d = f.stat().st_mtime, json.loads(f.read_text())
            key = (int(d["score"][0]), int(d["score"][1]), int(d["dealer"]), int(d["vira_class"]))
        except (OSError, ValueError, KeyError, TypeError, IndexError):
            continue  # being written, or not a task's result: the plan reports what it can read
        if key not in newest or when > newest[key][0]:
            newest[key] = (when, d)
    by_cell: dict[tuple[int, int, int], list[dict]] = {}
    for (a, b, dealer, _), (_, d) in sorted(newest.items()):
        by_cell.setdefault((a, b, dealer), []).append(d)
    return by_cell


def task_cpu_hours(result: dict) -> float:
    """A finished task's cost in the plan's unit, one core's hours. On one thread its CPU time where recorded (since
    stop 56): a machine busy with other work stretched the wall time, and the plan's comparison with it (8x10
    classes beside a test run took 3x their plan). Else its wall seconds (build, iterations and checks, setup,
    closing best responses, table) times the speedup its threads had (:func:`thread_speedup`): numba's idle worker
    threads may spin, so a multi-threaded task's CPU time overstates its work."""
    threads = int(result.get("threads") or 1)
    if threads == 1 and result.get("cpu_seconds"):
        return float(result["cpu_seconds"]) / 3600
    wall = sum(result.get(k) or 0.0 for k in ("seconds", "setup_seconds", "br_seconds", "table_seconds"))
    return wall * thread_speedup(threads) / 3600


def _measured_cell(got: list[dict], classes: int) -> str:
    """A plan row's measured columns: CPU-hours of the finished classes (how many, if not all) and their peak."""
    if not got:
        return f" {'-':>13} {'-':>7}"
    h = f"{sum(map(task_cpu_hours, got)):.3f}" + ("" if len(got) == classes else f" ({len(got)}/{classes})")
    return f" {h:>13} {max(t['peak_memory_gb'] for t in got):>5.1f}GB"


def _store_gb(cfg: MatchConfig, out: Path | None = None) -> float:
    """The tree store's budget in GB (see :attr:`MatchConfig.tree_store_gb`)."""
    if cfg.tree_store_gb is None:
        return default_store_gb(out) if out is not None else float("inf")
    return cfg.tree_store_gb


def local_shape(cfg: MatchConfig, rows, workers: int, available_gb: float | None = None,
                auto_threads: bool = False, notify=None) -> tuple[int, int]:
    """(workers, threads per task) for a local run: the workers whose largest predicted tasks fit the available
    memory together, and with ``auto_threads`` (and ``cfg.threads`` 1) the cores that memory leaves idle put
    inside the tasks instead (min:6 here: one 16.5 GB task at a time, on two threads, 1.8x sooner)."""
    peak = max((task_gb(r, r.peak_gb > cfg.stream_over_gb, cfg.threads) for r in rows), default=0.0)
    fit = workers_that_fit(workers, peak, available_gb, notify=notify or (lambda m: None))
    threads = cfg.threads
    if auto_threads and threads == 1 and fit < workers:
        threads = workers // fit
        if notify is not None:
            notify(f"truco-lab match: {threads} threads per task (the cores memory leaves idle; --threads 1 "
                   f"keeps one)")
    return fit, threads


def local_schedule(rows, workers: int, cfg: MatchConfig, available_gb: float | None = None,
                   auto_threads: bool = False) -> tuple[float | None, str] | None:
    """This machine's wall hours for the plan, as ``run_match`` would run it (see :func:`local_shape`; a
    score-sum level at a time), and the line saying so; ``None`` when memory is unknown. When a task cannot
    fit the memory available now (the solve's memory guard would refuse it), the hours are ``None`` and the
    line says so: a plan made while other work holds the memory must not read as a machine too small."""
    if available_gb is None:
        try:
            available_gb = available_memory_gb()
        except OSError:
            return None
    fit, threads = local_shape(cfg, rows, workers, available_gb, auto_threads)
    peak = max((task_gb(r, r.peak_gb > cfg.stream_over_gb, threads) for r in rows), default=0.0)
    try:
        sim = simulate(rows, 1, fit * threads, available_gb, stream_over_gb=cfg.stream_over_gb, threads=threads)
    except ValueError:
        return None, (f"on this machine: a {peak:.1f} GB task does not fit the {available_gb:.1f} GB available "
                      f"now; free memory, or stream the largest cells with --stream-over, and plan again")
    why = "" if fit == workers else f" (of {workers} asked: {fit} fit with {peak:.1f} GB tasks)"
    per = "" if threads == 1 else f" of {threads} threads each"
    line = (f"on this machine: {sim.wall_hours:,.2f} h wall with {fit} worker{'s' if fit != 1 else ''}{per}{why} "
            f"in the {available_gb:.0f} GB available, a score-sum level at a time (cores {sim.utilisation:.0%} busy)")
    spare = workers // fit
    if spare > 1 and threads == 1:  # the cores memory leaves idle can go inside the tasks instead
        alt = simulate(rows, 1, fit * spare, available_gb, stream_over_gb=cfg.stream_over_gb, threads=spare)
        line += f"; with --threads {spare}: {alt.wall_hours:,.2f} h"
    return sim.wall_hours, line


def write_outputs(cfg: MatchConfig, state: MatchState, out: Path, seconds: float, executor: str,
                  planned: int | None = None) -> dict:
    """equity.parquet, equity.png and summary.json (the one writer). With ``planned`` (the run's cells, successors
    included) the summary says whether every one is solved (``finished``): a run writes its outputs after each
    score-sum level, and its solved cells are final from then on."""
    state.equity.write(out / "equity.parquet")
    heatmap(state, out / "equity.png")
    rules = cfg.rules
    start = (0, 0, 1)
    cells = []
    for c, s in state.cells.items():
        row = {k: v for k, v in s.items() if k != "classes"}
        row["ladder"] = list(live_ladder(rules, c, cfg.prunes))
        row["worst_path_bound"] = worst_path_bound(rules, state, c)
        row["classes"] = s["classes"]
        cells.append(row)
    worst = max(cells, key=lambda r: r["match_exploitability"])
    summary = {
        "units": "match-win probability (player 0)",
        "rules": rules.to_dict(), "algorithm": cfg.algorithm, "prunes": cfg.prunes,
        "target": cfg.target, "target_met": all(c["target_met"] for c in cells),
        "executor": executor, "seconds": seconds,
        "finished": planned is None or len(cells) >= planned, "cells_planned": planned or len(cells),
        "cells_solved": len(cells), "cells_in_table": len(state.equity),
        "match_exploitability": state.match_exploitability(start) if start in state.cells else worst[
            "match_exploitability"],
        "match_exploitability_at": "0x0 dealer 1 (the match's start)" if start in state.cells else
        f"{worst['score0']}x{worst['score1']} dealer {worst['dealer']} (the worst solved cell)",
        "max_cell_exploitability": max(c["exploitability"] for c in cells),
        "start_equity": state.equity.value(*start) if state.equity.has(*start) else None,
        "cells": cells,
    }
    write_json(out / "summary.json", summary)
    return summary


def heatmap(state: MatchState, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from solvers.storage import atomic_write

    t = state.target
    fig, axes = plt.subplots(1, 2, figsize=(11, 5), constrained_layout=True)
    for d, ax in enumerate(axes):
        im = ax.imshow(state.equity.values[d], origin="lower", vmin=0, vmax=1, cmap="RdBu")
        ax.set_title(f"player {d} deals")
        ax.set_xlabel("player 1's score")
        ax.set_ylabel("player 0's score")
        ax.set_xticks(range(t))
        ax.set_yticks(range(t))
        for a in range(t):
            for b in range(t):
                v = state.equity.values[d, a, b]
                if not np.isnan(v):
                    txt = "1" if v >= 0.995 else ("0" if v < 0.005 else f"{v:.2f}"[1:])
                    ax.text(b, a, txt, ha="center", va="center", fontsize=6)
    fig.colorbar(im, ax=axes, label="P(player 0 wins the match)")
    fig.suptitle("Match equity at the start of a hand (seat symmetry: E(a,b,d) = 1 - E(b,a,1-d))")
    atomic_write(path, lambda p: fig.savefig(p, dpi=110, format="png"))
    plt.close(fig)


def _cpu(done: float, total: float) -> str:
    """``done`` of ``total`` predicted CPU-hours, in hours or, for small runs, minutes or seconds."""
    unit, per_hour = ("h", 1) if total >= 1.0 else ("min", 60) if total >= 1 / 60 else ("s", 3600)
    return f"{done * per_hour:.1f}/{total * per_hour:.1f} plan CPU-{unit}"


class WorkBar:
    """A match's progress bar measured in the plan's CPU-hours, not in tasks: a full-ladder task is ~400 times an
    eleven-row one, so a bar counting tasks sped through the eleven row and then stood still with a false ETA.
    Tasks a resume reports again advance the bar without counting toward its rate (so they do not shorten the
    ETA)."""

    def __init__(self, rows, stream_over_gb: float, nclass: int) -> None:
        from tqdm import tqdm

        # each task's share: its cell's predicted hours over its vira classes (streamed where the run streams it)
        self.hours = {r.cell: (r.streamed_hours if r.peak_gb > stream_over_gb else r.hours) / r.classes
                      for r in rows}
        self.tasks, self.ntasks = 0, len(rows) * nclass
        total = sum(self.hours.values()) * nclass
        # the run's mean rate (smoothing 0): tasks of a level finish in bursts, and a moving average of those
        # swings the ETA by hours; a fixed miniters keeps tqdm from learning to skip updates from the small tasks
        self.bar = tqdm(total=total, smoothing=0, miniters=1e-12,
                        bar_format="match: {percentage:3.0f}%|{bar}| {desc} [{elapsed}<{remaining}]")
        self.bar.set_description_str(f"0/{self.ntasks} tasks, {_cpu(0.0, total)}")

    def done(self, job, res) -> None:
        """One task finished (or reported again by a resume)."""
        w = self.hours.get((job.spec.score0, job.spec.score1, job.spec.dealer), 0.0)
        self.tasks += 1
        if getattr(res, "reused", False):
            self.bar.n += w  # finished before this run: not part of its rate
            self.bar.initial += w
            self.bar.last_print_n += w
        else:
            self.bar.update(w)
        self.bar.set_description_str(
            f"{self.tasks}/{self.ntasks} tasks, {_cpu(self.bar.n, self.bar.total)}, "
            f"{job.spec.cell_name} expl={res.exploitability:.2g} it={res.iterations}")

    def close(self) -> None:
        self.bar.close()


def run_match(cfg: MatchConfig, which, out: str | Path, **kw) -> tuple[MatchState, dict]:
    """Claim ``out``, solve the cells, write the outputs; returns (state, summary). ``kw``: ``executor``
    ("local"), ``workers`` (2), ``address``, ``resume``, ``fresh``, ``progress`` (True). The folder is
    locked while this runs and released after, however it ends."""
    try:
        return _run_match(cfg, which, out, **kw)
    finally:
        release_locks(Path(out))


def _run_match(cfg: MatchConfig, which, out: str | Path, *, executor: str = "local", workers: int = 2,
               address: str | None = None, resume: bool = False, fresh: bool = False, progress: bool = True,
               auto_threads: bool = False) -> tuple[MatchState, dict]:
    from truco_lab.lab.cell import CellJob, CellResult

    out = Path(out)  # a script may pass a string; claim() and the cell folders need a Path
    cells = select_cells(cfg.rules, which)
    describe = {"kind": "match", "rules": cfg.rules.to_dict(), "prunes": cfg.prunes, "algorithm": cfg.algorithm,
                **cfg.auto_keyed()}
    formers = {}
    if cfg.algorithm == AUTO and (auto_differs(cfg.rules) or auto_differs(cfg.rules, AUTO_OLD_RUNGS)):
        formers["algorithm"] = "dcfr"  # the default before DCFR+ on the 1-3-6-9 and full-ladder cells
    if "auto_rungs" in describe:
        formers["auto_rungs"] = AUTO_OLD_RUNGS  # auto's DCFR+ from four rungs before stop 45
    if cfg.prunes & CAP_OWN_RAISES:
        formers["prunes"] = cfg.prunes & ~CAP_OWN_RAISES  # before the leading player's raises were capped
    begun = {} if fresh else as_begun(out, "match", describe, formers)
    if begun:
        # its cells and checkpoints stay as they began
        why = {"algorithm": "with DCFR on every cell (the default before DCFR+ on the 1-3-6-9 and full-ladder cells)",
               "prunes": "before the leading player's raises were capped (cap_own_raises)",
               "auto_rungs": "with auto's DCFR+ on cells of four rungs or more (before it took the 1-3-6 cells too)"}
        said = [f for f in begun if not (f == "auto_rungs" and "algorithm" in begun)]  # a DCFR run: auto is moot
        print(f"{out}: this run was begun {' and '.join(why[f] for f in said)}; continuing it so (another --out, or "
              "--fresh to start it over, for the new defaults)", file=sys.stderr)
        cfg = replace(cfg, **begun)
        describe.update(begun)
    claim(out, "match", cfg.key(), describe, resume=resume, fresh=fresh)
    nclass = len(vira_classes(cfg.rules))
    rows = plan(cfg.rules, cells, cfg.prunes, cfg.target, cfg.table, cfg.algorithm, cfg.warm_start,
                _store_gb(cfg, out))
    if executor == "local":
        workers, threads = local_shape(cfg, rows, workers, auto_threads=auto_threads,
                                       notify=lambda m: print(m, file=sys.stderr))
        cfg = replace(cfg, threads=threads)  # not in the run's key: threads change no result beyond last bits
    if executor == "local":
        _warn_disk(cfg, rows, workers, out)
    peaks = {r.cell: task_gb(r, r.peak_gb > cfg.stream_over_gb, cfg.threads) for r in rows}
    peak_gb = max(peaks.values(), default=0.0)
    # a worker's kept trees stay inside the share of the prediction planned for them (CACHE_SHARE): small
    # trees are cached, big ones rebuilt (a 10x10 build is ~7% of its solve)
    ex = make_executor(executor, workers, address,
                       memory_gb=lambda job: peaks.get((job.spec.score0, job.spec.score1, job.spec.dealer), 1.0),
                       cache_gb=min(16.0 / workers, CACHE_SHARE / (1 + CACHE_SHARE) * peak_gb))
    bar = WorkBar(rows, cfg.stream_over_gb, nclass) if progress else None

    def on_job(job: CellJob, res: CellResult) -> None:
        if bar is not None:
            bar.done(job, res)

    t0 = time.perf_counter()
    planned = len(cells)

    def on_level(state: MatchState) -> None:
        # each finished level's cells are final: written as they come, so an interrupted or still running run
        # already serves them (play, explain, the explorer, notebooks), marked unfinished
        if len(state.cells) < planned:
            write_outputs(cfg, state, out, time.perf_counter() - t0, executor, planned=planned)

    try:
        state = solve_match(cfg, cells, ex, out, on_job=on_job, on_level=on_level)
    finally:
        if bar is not None:
            bar.close()
        ex.close()
    summary = write_outputs(cfg, state, out, time.perf_counter() - t0, executor, planned=planned)
    return state, summary


@dataclass(frozen=True)
class MatchRun:
    """How a match solve is run (what :class:`MatchConfig` leaves to the caller): which cells, where,
    on which executor, resumed or fresh, with or without a progress bar; ``plan_only`` solves nothing."""

    cells: str | list[tuple[int, int]]
    out: Path
    plan_only: bool = False
    executor: str = "local"
    workers: int = 2
    address: str | None = None
    resume: bool = False
    fresh: bool = False
    progress: bool = True
    cluster: tuple[int, int, float] | None = None  # --plan --nodes/--cores/--node-memory
    auto_threads: bool = False  # --threads not given: spare cores go inside tasks when memory limits workers


def workers_that_fit(workers: int, task_gb: float, available_gb: float | None = None, notify=None) -> int:
    """Local workers whose largest predicted tasks fit this machine's available memory together (at least one:
    a task too big for the machine is the plan's and the memory guard's to refuse). Fewer than asked is said."""
    if available_gb is None:
        try:
            available_gb = available_memory_gb()
        except OSError:
            return workers  # unknown: as asked (the single-task guard elsewhere still refuses what cannot fit)
    fit = max(1, int(available_gb // task_gb)) if task_gb > 0 else workers
    if fit < workers:
        (notify or (lambda m: print(m, file=sys.stderr)))(
            f"truco-lab match: {workers} workers at ~{task_gb:.1f} GB per task (--plan) exceed the {available_gb:.0f} GB "
            f"available: running {fit}")
        return fit
    return workers


def main(cfg: MatchConfig, run: MatchRun) -> int:
    """``truco-lab match``: the plan, or the solve with its row table and closing lines; the exit code."""
    if cfg.tree_store_gb is None:  # a cluster's store is its shared storage: the plan does not guess its size
        cfg = replace(cfg, tree_store_gb=float("inf") if run.plan_only and run.cluster else default_store_gb(run.out))
    if run.plan_only:
        print_plan(cfg, select_cells(cfg.rules, run.cells), run.workers, cluster=run.cluster,
                   auto_threads=run.auto_threads, out=run.out)
        return 0
    state, summary = run_match(cfg, run.cells, run.out, executor=run.executor, workers=run.workers,
                               address=run.address, resume=run.resume, fresh=run.fresh, progress=run.progress,
                               auto_threads=run.auto_threads)
    print_row_table(state)
    print(f"match exploitability {summary['match_exploitability']:.3e} (win probability, at "
          f"{summary['match_exploitability_at']}); largest cell exploitability "
          f"{summary['max_cell_exploitability']:.3e}; {summary['cells_solved']} cells solved in "
          f"{summary['seconds']:.0f} s; written to {run.out}/equity.parquet, equity.png, summary.json")
    if not summary["target_met"]:
        print(f"truco-lab match: warning: some cells missed the target {cfg.target:g} within --max-iterations "
              f"{cfg.max_iterations} (target_met in summary.json)", file=sys.stderr)
        return 3
    return 0


def print_row_table(state: MatchState, file=None) -> None:
    """Equity of every solved cell (both seats), player 0's view."""
    file = file or sys.stdout
    print(f"{'score0':>6} {'score1':>6} {'E(d=0)':>8} {'E(d=1)':>8}", file=file)
    t = state.target
    for a in range(t):
        for b in range(t):
            e = state.equity.values[:, a, b]
            if not np.isnan(e).all():
                f = [f"{x:8.4f}" if not np.isnan(x) else f"{'-':>8}" for x in e]
                print(f"{a:>6} {b:>6} {f[0]} {f[1]}", file=file)


def match_command(rules: RuleSet, which, out: str | Path) -> str:
    """The ``truco-lab match`` command that solves ``which`` (``all``, ``eleven`` or score pairs) for
    ``rules`` into ``out``, with every option the rules need (safe to copy as printed) and its cost by
    ``--plan`` (CPU-hours, the largest task's memory)."""
    cells = which if isinstance(which, str) else " ".join(f"{a},{b}" for a, b in which)
    opts = rules.cli_options()
    cmd = f"truco-lab match --cells {cells} --out {out}" + (f" {opts}" if opts else "")
    rows = plan(rules, select_cells(rules, which), ALL_PRUNES, 1e-3)
    try:
        machine = total_memory_gb()
    except OSError:
        machine = float("inf")
    over = float("inf")
    if max(r.peak_gb for r in rows) > 0.9 * machine:  # in memory it would be refused here: stream what must
        over = float(int(0.8 * machine))
        cmd += f" --stream-over {over:g}"
    streamed = [r.peak_gb > over for r in rows]
    hours = sum(r.streamed_hours if st else r.hours for r, st in zip(rows, streamed, strict=True))
    gb = max(task_gb(r, st) for r, st in zip(rows, streamed, strict=True))
    cost = f"{hours:,.2f} CPU-hours" if hours >= 0.05 else f"{hours * 60:.1f} CPU-minutes"
    return f"{cmd}  (by --plan: {cost}, {gb:.1f} GB per task, {len(rows)} cells)"


def default_solved_dir(rules: RuleSet) -> Path:
    """Where ``make lab`` / ``make solve`` (full deck) or an on-demand solve (other decks) keeps a rule set's
    match run."""
    from solvers.storage import stable_hash
    from truco_lab.rules.ruleset import PAULISTA

    if rules == PAULISTA:
        # the endgame run (make lab: 9x9 .. 11x11) holds the eleven row too; make solve's eleven row otherwise
        endgame = Path("results/endgame")
        return endgame if (endgame / "summary.json").exists() else Path("results/eleven")
    return Path("results") / f"solved-{stable_hash(rules.to_dict())[:12]}"


def ensure_solved(rules: RuleSet, solved: str | Path | None = None, on_demand: bool = True, notify=None,
                  workers: int = 2) -> Path | None:
    """A match run for ``rules`` (finished, or with the levels it finished so far, which it says through
    ``notify``): ``solved`` if given (``ValueError`` if it holds none), else
    the rule set's default folder, solved there on demand when missing — every cell for decks of at
    most 10 cards (minutes), the eleven row otherwise (~8 minutes for the full deck). ``None`` when
    missing and ``on_demand`` is off."""
    notify = notify or (lambda msg: print(msg, file=sys.stderr))
    out = Path(solved) if solved else default_solved_dir(rules)
    if (out / "summary.json").exists() and (out / "equity.parquet").exists():
        summ = read_json(out / "summary.json", "match summary")
        if not summ.get("finished", True):  # a run still going, or interrupted: its solved cells are final
            notify(f"{out}: {summ['cells_solved']} of {summ['cells_planned']} cells solved so far (the run is "
                   "unfinished); hands elsewhere play with the fallback")
        return out
    if solved:
        raise ValueError(f"--solved {out}: no match run's outputs there (summary.json and equity.parquet are "
                         "written after each score-sum level of truco-lab match)")
    if not on_demand:
        return None
    which = "all" if len(rules.ranks) * len(rules.suits) <= 10 else "eleven"
    notify(f"solving the {'whole grid' if which == 'all' else 'eleven row'} of these rules once, into {out} "
           f"(resumable; the same as: {match_command(rules, which, out)})")
    run_match(MatchConfig(rules), which, out, workers=workers, resume=(out / "run.json").exists())
    return out
