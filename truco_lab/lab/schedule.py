"""The grid's wall time on a cluster: its critical path and a simulated schedule of the plan's tasks.

A cell's vira-class tasks wait for every successor cell (backward induction), so however many machines
run the grid, its wall time is at least the longest chain of cells, each costing its longest task. The
match driver goes a score-sum level at a time (every task of a level before the next level starts): the
simulation schedules exactly that, longest tasks first onto the node with the most free memory, each task
on ``threads`` cores (one by default) and holding its predicted peak memory.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass

from truco_lab.lab.match import PlanRow, ScoreCell, canonical, levels, successors
from truco_lab.rules.ruleset import RuleSet


@dataclass(frozen=True)
class Chain:
    """The longest chain of cells (each waits for the next one) and its hours (one task per cell)."""

    cells: tuple[ScoreCell, ...]
    hours: float


@dataclass(frozen=True)
class Schedule:
    """A simulated run: wall hours, the machine, and how busy its cores were."""

    wall_hours: float
    nodes: int
    cores: int
    node_memory_gb: float
    utilisation: float


# Two threads per pass against one, measured here (benchmarks/threads.py, in memory): 10x10 1.86x, 11x11 1.76x.
# This machine has two cores, so more threads are not measured: the plan extends the two-thread figure by
# Amdahl's law (the parallel share that gives it: 0.89), which says 3.0x at 4 threads and 6.1x at 16.
TWO_THREAD_SPEEDUP = 1.8


def thread_speedup(threads: int) -> float:
    """How much sooner a task finishes on ``threads`` threads than on one (measured at 2, Amdahl beyond)."""
    if threads <= 1:
        return 1.0
    f = 2.0 * (1.0 - 1.0 / TWO_THREAD_SPEEDUP)
    return 1.0 / ((1.0 - f) + f / threads)


def task_hours(row: PlanRow, streamed: bool, threads: int = 1) -> float:
    """Wall hours of one (cell, vira class) task on ``threads`` cores (its CPU-hours on one core by default)."""
    return (row.streamed_hours if streamed else row.hours) / row.classes / thread_speedup(threads)


def task_gb(row: PlanRow, streamed: bool, threads: int = 1) -> float:
    """Predicted peak of one task: a streamed solve holds one part per thread besides its state."""
    return row.streamed_peak_gb(threads) if streamed else row.peak_gb


def critical_path(rules: RuleSet, rows: list[PlanRow], stream_over_gb: float = float("inf"),
                  threads: int = 1) -> Chain:
    """The longest dependency chain through the planned cells (the wall time no cluster can beat), each
    task on ``threads`` cores."""
    by_cell = {r.cell: r for r in rows}
    best: dict[ScoreCell, tuple[float, tuple[ScoreCell, ...]]] = {}
    for level in levels(list(by_cell)):
        for c in level:  # successors have higher score sums: already in ``best``
            r = by_cell[c]
            own = task_hours(r, r.peak_gb > stream_over_gb, threads)
            after = [best[s] for s in {canonical(x)[0] for x in successors(rules, c)} if s in best]
            h, chain = max(after, default=(0.0, ()))
            best[c] = (own + h, (c,) + chain)
    hours, chain = max(best.values(), default=(0.0, ()))
    return Chain(chain, hours)


def simulate(rows: list[PlanRow], nodes: int, cores: int, node_memory_gb: float,
             stream_over_gb: float = float("inf"), threads: int = 1) -> Schedule:
    """The level-by-level driver on ``nodes`` machines of ``cores`` cores and ``node_memory_gb`` each, every
    task on ``threads`` of a node's cores. ``ValueError`` when a task cannot fit one node."""
    if threads > cores:
        raise ValueError(f"{threads} threads per task: a node has {cores} cores")
    by_cell = {r.cell: r for r in rows}
    wall, busy = 0.0, 0.0
    for level in levels(list(by_cell)):
        tasks = []
        for c in level:
            r = by_cell[c]
            st = r.peak_gb > stream_over_gb
            gb = task_gb(r, st, threads)
            if gb > node_memory_gb:
                raise ValueError(f"cell {c[0]}x{c[1]} d{c[2]}: a task needs ~{gb:.1f} GB, a node has "
                                 f"{node_memory_gb:g} GB (try --stream-over)")
            tasks += [(task_hours(r, st, threads), gb)] * r.classes
        wall += _level_wall(sorted(tasks, reverse=True), nodes, cores, node_memory_gb, threads)
        busy += sum(h for h, _ in tasks) * threads
    util = busy / (wall * nodes * cores) if wall > 0 else 0.0
    return Schedule(wall, nodes, cores, node_memory_gb, util)


def _level_wall(tasks: list[tuple[float, float]], nodes: int, cores: int, memory: float, threads: int = 1) -> float:
    """Wall hours of one level: list scheduling, longest first, a task starting as soon as a node has
    ``threads`` free cores and its memory."""
    free_cores = [cores] * nodes
    free_mem = [memory] * nodes
    running: list[tuple[float, int, float]] = []  # (end time, node, memory)
    now, end = 0.0, 0.0
    pending = list(tasks)
    while pending:
        placed = False
        for i, (h, gb) in enumerate(pending):
            fits = [n for n in range(nodes) if free_cores[n] >= threads and free_mem[n] >= gb]
            if fits:
                n = max(fits, key=lambda k: free_mem[k])
                free_cores[n] -= threads
                free_mem[n] -= gb
                heapq.heappush(running, (now + h, n, gb))
                end = max(end, now + h)
                pending.pop(i)
                placed = True
                break
        if not placed:  # wait for the next task to finish
            t, n, gb = heapq.heappop(running)
            now = t
            free_cores[n] += threads
            free_mem[n] += gb
    return end
