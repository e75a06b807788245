"""The match solver: backward induction over score cells, in match equity, with a match certificate.

A cell ``(a, b, d)`` is the hand played at scores ``a`` (player 0) and ``b``
(player 1) with player ``d`` dealing. Every hand pays at least one point, so
a cell's successors have a larger score sum and cells are solved by
decreasing ``a + b``. Each cell is solved with ``payoff="equity"``: its
terminals pay player 0's match-win probability at the successor cell.

Seat symmetry ``equity(a, b, d) = 1 - equity(b, a, 1 - d)`` halves the work:
only *canonical* cells (``a < b``, or ``a == b`` with dealer 1, the match's
first dealer) are solved; the mirror's strategy is the same strategy with the
seats swapped.

The certificate is the whole match strategy's: with every cell's average
strategy fixed, player ``p``'s best response in the match is computed by
backward induction too, each cell's best response paying the *best-response*
continuation values ``V_p`` of its successors (not the equilibrium ones). The
match exploitability at a cell is ``(V_0 + V_1 - 1) / 2`` in win probability.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import NamedTuple

import numpy as np

from solvers.storage import stable_hash
from truco_lab.abstraction.levels import blind_hand_value, vira_classes
from truco_lab.abstraction.payoff import continuation_utilities, successor
from truco_lab.abstraction.tree import ALL_PRUNES, CAP_OWN_RAISES, CAP_RAISES, own_capped_stakes
from truco_lab.lab.cell import CellJob, CellResult, CellSpec, Stop, candidate_codes
from truco_lab.lab.equity import EquityTable
from truco_lab.rules.ruleset import RuleSet, sees_own_cards


class ScoreCell(NamedTuple):
    """A score cell of the match: both scores at the start of a hand and the dealer. A plain tuple too
    (equal to and hashed as ``(score0, score1, dealer)``), so the match's dicts take either."""

    score0: int
    score1: int
    dealer: int

    def canonical(self) -> tuple[ScoreCell, bool]:
        """(the canonical cell, whether this one is its mirror): seat symmetry solves ``a < b``, or ``a = b``
        with player 1 dealing (the match's first dealer); the mirror plays it with the seats swapped."""
        a, b, d = self
        if a < b or (a == b and d == 1):
            return self, False
        return ScoreCell(b, a, 1 - d), True

    @property
    def name(self) -> str:
        return f"{self.score0}x{self.score1} d{self.dealer}"


def canonical(cell) -> tuple[ScoreCell, bool]:
    """(the canonical cell, whether ``cell`` is its mirror) of a ``(score0, score1, dealer)``."""
    return ScoreCell(*(int(x) for x in cell)).canonical()


def successors(rules: RuleSet, cell: ScoreCell) -> set[ScoreCell]:
    """Live cells a hand at ``cell`` can lead to."""
    a, b, d = cell
    out = set()
    for code in candidate_codes(rules):
        s0, s1, nd = successor(rules, a, b, d, code)
        if s0 < rules.target and s1 < rules.target:
            out.add((s0, s1, nd))
    return out


def select_cells(rules: RuleSet, which: str | list[tuple[int, int]]) -> list[ScoreCell]:
    """Canonical cells to solve, successors included: ``all``, ``eleven`` (a player on target-1),
    ``min:S`` (every cell whose two scores are both >= S), ``endgame`` (``min:`` target-3: 9x9 .. 11x11 in a
    match to 12) or a list of score pairs (both dealers)."""
    t = rules.target
    if which == "endgame":
        which = f"min:{t - 3}"
    if isinstance(which, str) and which.startswith("min:"):
        try:
            low = int(which[4:])
        except ValueError:
            raise ValueError(f"--cells {which}: min:S takes a whole score S, e.g. min:9") from None
        if not 0 <= low < t:
            raise ValueError(f"--cells {which}: S must be in 0..{t - 1}")
        start = [(a, b, d) for a in range(low, t) for b in range(low, t) for d in (0, 1)]
    elif which == "all":
        start = [(a, b, d) for a in range(t) for b in range(t) for d in (0, 1)]
    elif which == "eleven":
        start = [(a, b, d) for a in range(t) for b in range(t) for d in (0, 1) if t - 1 in (a, b)]
    else:
        start = []
        for a, b in which:
            if not (0 <= a < t and 0 <= b < t):
                raise ValueError(f"cell {a},{b}: scores must be in 0..{t - 1}")
            start += [(a, b, 0), (a, b, 1)]
    need: set[ScoreCell] = set()
    todo = [canonical(c)[0] for c in start]
    while todo:
        c = todo.pop()
        if c in need:
            continue
        need.add(c)
        todo.extend(canonical(s)[0] for s in successors(rules, c))
    return order(need)


def order(cells) -> list[ScoreCell]:
    """Backward-induction order: decreasing score sum (every successor comes first)."""
    return sorted(cells, key=lambda c: (-(c[0] + c[1]), c[0], c[1], c[2]))


def levels(cells: list[ScoreCell]) -> list[list[ScoreCell]]:
    """Cells grouped by score sum, in solving order; cells of one level are independent."""
    out: list[list[ScoreCell]] = []
    for c in order(cells):
        if out and out[-1][0][0] + out[-1][0][1] == c[0] + c[1]:
            out[-1].append(c)
        else:
            out.append([c])
    return out


def live_ladder(rules: RuleSet, cell: ScoreCell, prunes: int = ALL_PRUNES) -> tuple[int, ...]:
    """The stakes a hand at ``cell`` can reach: raises are capped once the stake already decides the match
    (``cap_raises``), and the leading player's once it decides it for them (``cap_own_raises``); raises
    alternate between the players."""
    a, b, _ = cell
    t = rules.target
    if rules.mao_de_onze and t - 1 in (a, b):
        return (rules.eleven_eleven_value,) if a == b else (rules.eleven_value,)
    lad, low = rules.ladder, min(a, b)
    own = own_capped_stakes(rules, a, b, prunes)

    def may(leader: bool, i: int) -> bool:  # may the leading (or the other) player raise from rung i?
        if i + 1 >= len(lad) or ((prunes & CAP_RAISES) and low + lad[i] >= t):
            return False
        return not (leader and lad[i] in own)

    top = 0
    for leader in (True, False):  # who raises first
        i = 0
        while may(leader, i):
            i, leader = i + 1, not leader
        top = max(top, i)
    return tuple(lad[:top + 1])


AUTO = "auto"
"""The default update rule: each cell's own, chosen by :func:`cell_algorithm`."""
AUTO_BIG = "dcfr+"
# Why DCFR+ from four rungs on the real deck (README, *Measured*): to 1e-2 points per hand it needed 80
# iterations against DCFR's 90 at 4x4 (ladder 1-3-6-9) and 81 against ~92 on the 0x0 class (the full
# ladder), and fewer at every check; on the 10x10 cell in match equity (ladder 1-3) DCFR was as fast to
# 1e-3 and faster to 2.5e-4, and on small decks DCFR has never lost, so DCFR stays everywhere else.
# Stop 45 moved it from four rungs to three: in the proxy match equity DCFR+ reached 1e-3 in 70 iterations at 7x7
# (DCFR 80) and 60 at 6x9 (DCFR 70; PDCFR+ 80, HS-PCFR+ 90, HS-DCFR 70). Runs begun before keep four
# (MatchConfig.auto_rungs, as the run was begun).
AUTO_BIG_RUNGS = 3
AUTO_OLD_RUNGS = 4  # auto's threshold before stop 45
AUTO_BIG_ITERATIONS = 0.88  # DCFR+'s iterations relative to DCFR's on those cells (80/90, 81/92; 70/80, 60/70)
# DCFR+ costs about what DCFR does per iteration since stop 42 (before, its backward pass ran through the kernels'
# generic copy: ~1.6x DCFR's iteration on one thread at 10x10); stop 47 measured it 4-5% dearer at 7x7 and 4x4, and
# the tiers it solves (three rungs and more) are priced at its figure.


def auto_differs(rules: RuleSet, rungs: int | None = None) -> bool:
    """Whether ``auto`` (DCFR+ from ``rungs`` live rungs, default :data:`AUTO_BIG_RUNGS`) can choose anything
    but DCFR for ``rules``: the real 40-card paulista deck with a ladder that long."""
    rungs = AUTO_BIG_RUNGS if rungs is None else rungs
    return rules.name == "paulista" and len(rules.deck) == 40 and len(rules.ladder) >= rungs


def cell_algorithm(choice: str, rules: RuleSet, ladder: tuple[int, ...], rungs: int | None = None) -> str:
    """The update rule a cell with live ``ladder`` is solved with: ``choice`` itself, or for ``auto`` DCFR+
    on the real deck's cells whose ladder has at least ``rungs`` rungs (default :data:`AUTO_BIG_RUNGS`: 1-3-6
    and longer) and DCFR elsewhere."""
    if choice != AUTO:
        return choice
    rungs = AUTO_BIG_RUNGS if rungs is None else rungs
    return AUTO_BIG if auto_differs(rules, rungs) and len(ladder) >= rungs else "dcfr"


# ---- cost model for --plan ----------------------------------------------
# Per vira class of the full deck, by live ladder, measured on this machine (2 vCPUs, 24 GB) with
# benchmarks/solvers.py: entries, seconds per iteration of the rule the tier uses (DCFR below three rungs, DCFR+
# from three), standalone peak memory. The full ladder
# is projected from 4x4's bytes and seconds per entry at the public solver's information-set count.
# Iterations to 1e-3 in win probability are assumptions above the eleven row (measured: ~15).
TIERS = {
    # live rungs: (entries, s/iteration, peak GB, iterations to 1e-3 win probability, measured?)
    # one-thread seconds (CPU time): benchmarks/threads.py (11x11, 10x10) and benchmarks/solvers.py (7x7, 4x4)
    # on the current kernels; two threads finish ~1.8x sooner on about the same CPU time
    1: (5.38e6, 0.115, 0.5, 15, True),
    # 10x10: 0.952 s at stop 41 (0.974 before stop 40's pair sums); 80 iterations: every 10x10 and 9x10 class in the
    # endgame run
    2: (44.8e6, 0.952, 2.07, 80, True),
    # peaks of 7x7 and 4x4 from the element-major layout's run (benchmarks/solvers.py --threads 2, README:
    # "This stop"); the build and the boundary's slot-order strategy set them
    # Iterations of 7x7 and 4x4 (stop 39): DCFR to 1e-3 in a proxy match equity, the 10-card deck's whole grid
    # as successor values (experiments/update_rules.py --equity, vira class 0, dealer 1; 7x7 80, 4x4 70). They
    # had been guessed at 150 and 180. The real deck's own equity needs the grid these numbers price.
    # Seconds (stop 47, benchmarks/solvers.py --threads 1, the default DCFR+ these tiers use): 7x7 3.16 (DCFR 3.00;
    # 3.36 at stop 41), 4x4 8.59 (DCFR 8.24; 9.39 before)
    # Peaks (stop 48, run_cell as a match runs it, vira class 3): the tree build sets them, 7x7 6.23-6.25 GB (8.3
    # from the two-thread benchmark before), 4x4 15.27 with --no-table (17.9)
    3: (157e6, 3.16, 6.3, 80, True),
    4: (435e6, 8.59, 15.3, 70, True),
    # 0x0 (entries: benchmarks/streamed.py; seconds and peak 4x4 scaled): in the same proxy equity, the class
    # of vira 7d with the default DCFR+ reached 1e-3 at iteration 66 (stop 39), so DCFR's 66 / 0.88 = 75
    5: (1.067e9, 8.59 * 1.067e9 / 435e6, 15.3 * 1.067e9 / 435e6, 75, False),
}


# Stop 52's kernels (an update pass clears the values it consumed instead of a memset per pass, the refresh and the
# strategies read each player's nodes from arrays in block order, an update pass matches each block's next strategy
# while its regrets are in cache): an iteration's time against the kernels TIERS was measured on, paired in one
# process (iterations of the old and new solvers alternated on one tree, one thread, the same iterates bit for bit;
# medians of 6-8 pairs). 10x10 DCFR 0.78 (DCFR+ 0.762, 0.764), 7x7 DCFR+ 0.87 (0.873 beside a running match). 4x4
# does not fit twice in this machine's memory: one tree, old and new solvers made in turn (the state carried over),
# three iterations each, four rounds in alternating order: 0.884, 0.802, 0.813, 0.741, median 0.795. The full ladder
# is projected from 4x4's seconds per entry (TIERS), so it takes 4x4's ratio. The eleven row's cells are priced by
# their builds (not measured). Checks and the closing best responses are priced at the old iteration's seconds
# (their averages read the new arrays, their passes do not change). Streamed parts keep their own kernels.
ITERATION_RATIO = {1: 1.0, 2: 0.78, 3: 0.87, 4: 0.80, 5: 0.80}


# Cells where cap_own_raises takes some of the leading player's raises away (stop 44), per vira class of the real
# deck, by (live rungs, rungs the leader may not raise from): entries measured with build_cell / build_split
# (vira class 0, dealer 1). Trees of one shape are identical: 6x9, 6x10, 8x9, 3x9, 0x9 and 0x10 all have 98,300,044
# entries (the leader raises only from 1, so no stake passes 6). Seconds and peak scale with entries from the tier
# of the same live rungs (its ns per entry); iterations are that tier's (not measured on these trees).
OWN_CAPPED_ENTRIES = {(3, 1): 98.3e6, (4, 1): 306.2e6, (5, 1): 716.2e6}
# Iterations to 1e-3 (DCFR's) where measured on a capped shape in the proxy match equity (stop 44, vira class 0,
# dealer 1, checks every 10): 6x9 DCFR 70 (7x7: 80). 3x6 took 60 with DCFR+, as 4x4 did, so (4, 1) keeps its tier's.
# 0x3 (stop 45, streamed, the default DCFR+): 57 (the 0x0 class took 66), i.e. 65 of DCFR's by AUTO_BIG_ITERATIONS.
OWN_CAPPED_ITERATIONS = {(3, 1): 70, (5, 1): 65}


def tree_shape(rules: RuleSet, cell: ScoreCell, prunes: int = ALL_PRUNES) -> tuple[int, int]:
    """(live rungs, rungs of them the leading player may not raise from): cells of one shape build trees of
    one size (the plan's unit of cost)."""
    lad = live_ladder(rules, cell, prunes)
    own = own_capped_stakes(rules, cell[0], cell[1], prunes)
    return len(lad), sum(1 for s in lad[1:-1] if s in own)


# Warm starts (a cell started from the regrets of the last solved cell with the same tree, the match's default):
# iterations to 1e-3 relative to a cold start, per tier, where a warm start saved a check. Measured in the proxy
# match equity (stop 43, experiments/update_rules.py --variants <rule>@warm, vira class 0, dealer 1): 7x7 warm
# from 7x8 70 against 80 cold (DCFR, 11-16% lower at every check); 4x4 warm from 4x5 60 against 60 (DCFR+, equal
# from iteration 40); 9x9 warm from 9x10 in the real equity 70 against 70 (README, Measured). The eleven row's 33% (benchmarks/warm_start.py) is left out too (its
# cells take ~15 iterations, so the tier is priced by its builds).
# The full ladder (stop 45, streamed, DCFR+, vira 7d, dealer 1): 0x0 warm from 0x1 (its tree, 62 iterations cold)
# 54 against 66 cold (stop 39), lower at every check (3.35e-2 against 3.45e-2 at 10, 2.42e-3 against 3.21e-3 at 33);
# priced for the (5, 1) shape too, which was not measured warm.
# Stop 54, the 1-3-6 tier in the real equity (experiments/update_rules.py --cell 6,10 --dealer 1 --equity
# results/endgame/equity.parquet, warm from 8x9 d1's checkpoint, DCFR+): cold, @warm, @warm-count all reach 1e-3
# at 60 (1.06e-3, 1.02e-3, 1.05e-3 at 50), @warm-all at 70. The proxy's 70/80 did not hold: the tier is priced
# cold. (A warm cell still checks less: it schedules its checks from the neighbour's log, PRIOR_CHECKS.)
WARM_ITERATIONS = {5: 54 / 66}


# Rule sets whose trees differ from paulista's, per vira class: (entries, s/iteration, peak memory) relative to
# the tiers above, measured on the 7x7 cell (ladder 2-4-8 against paulista's 1-3-6) with benchmarks/solvers.py
# --rules mineiro. Mineiro, one class and no face-down plays: 86.2 M entries (paulista 157 M), 3.47 s/iteration
# (6.2), peak 5.49 GB (7.1; no vira leaves more hands per list, so more bytes per entry).
RULE_SCALE = {"mineiro": (86.2 / 157, 3.47 / 6.2, 5.49 / 7.1)}


# benchmarks/streamed.py at 0x0 on block parts (stop 31): 19.5 s per iteration on two threads, counted as
# 39 CPU-seconds (stop 46: 38-40 s on one thread through solve), against the tier's projection in memory on one
# thread (the slot parts took 79 on one thread). Stop 47, `solve --score 0,0 --dealer 1 --vira 7d --iterations 3
# --threads 1 --split-depth 3 --no-table`, freed memory kept or not (one pair): 3 iterations and a check in 127.2 s
# against 147.1 (build 232 against 263 s, peak 15.9 against 16.4 GB, the same exploitability), i.e. 32.4 s per
# iteration against 37.4 with the check at 0.93 of one; priced at 33.
STREAM_SLOWDOWN = 33.0 / TIERS[5][1]

# A task that writes its strategy table peaks while it does: the solve's arrays, the rows the table keeps (their
# numbers and their sets' labels) and the navigation pages the labels read back from their files. Measured with
# tests/test_plan_memory.py's task on the full deck (vira class 3, 3 iterations), per vira class:
#   stop 48, the writer holding only its rows (solvers.vector.VectorSolver.table_rows) and reading the slot index in
#   slices whose file pages it drops (VectorTree.drop_mapped_pages): 11x11 0.49 GB, 10x10 2.08, 7x7 6.23 (the
#   build's peak), 4x4 17.03 (435.5 M entries, 205 M rows; 15.27 without a table): 38.3-38.6 bytes per entry over
#   a 0.35 GB process, about what the solve itself holds, so a table no longer sets a task's peak by much;
#   with the rows alone (the slot index's file pages kept): 0.57, 2.61, 8.57, 22.84 GB, 50-52 bytes;
#   before: 89 bytes (11x11 0.83, 10x10 4.32: every slot's labels, average, regrets and values at once); 113 B
#   before the action values were computed in place and label codes narrowed.
TABLE_BASE_GB = 0.35
TABLE_BYTES_PER_ENTRY = 38.5
# Work a task does besides iterating, per entry of its vira class (CPU seconds; the plan left both out until
# stop 35, and predicted the real endgame at 1.04 CPU-hours where the run took 2.31): building the tree and
# writing its strategy table. Stop 41: the builder finishes terminals where it makes them (10x10 14.7 -> 9.2 s,
# 7x7 52 -> 33 s; `solve` reports 35.8 s of build at 7x7 with the block layout) and the table writer lost
# Parquet's float dictionaries and two sorts (10x10 10.4 -> 8.0 s, 7x7 32 s on one thread). Before: 0.4 and
# 0.6 us. A streamed table pass labels and evaluates part by part: ~10 min at the 0x0 class (stop 31), 0.6 us per
# entry until stop 45 (below).
# Stop 47, through `solve --iterations 3 --threads 1` (build_seconds, setup_seconds, table_seconds in its summary),
# with freed memory kept in the solve and the table writer (solvers.storage.keep_freed_memory; not across the build,
# whose holes raised a 4x4 cell's peak from 15.3 to 21.9 GB): 7x7 build 29.9 s (0.19 us per entry; 4x4 0.23-0.25),
# table 25.8 s (0.164; 27.1 before stop 47's table passes, 33.5 in a process's first write at stop 46's commit).
# Stop 48 (the writer holds only its rows, reads them straight from the solver's state and labels only their
# sets), tests/test_plan_memory.py's task with 3 iterations: 7x7 table 21.9 s against 32.3 s at stop 47's commit
# (one pair, 0.139 against 0.205 us per entry), 4x4 62.6 and 63.8 s (0.144-0.147)
BUILD_S_PER_ENTRY = 0.23e-6
# Stop 56: tables at zstd level 4 (solvers.tables.TABLE_ZSTD_LEVEL) write ~0.4 s more of a 10x10 class's ~6.7 s
TABLE_S_PER_ENTRY = 0.16e-6
# Priced from stop 47 on (left out before): the solver's layout over a built tree (block order, the slot index
# written to a file the kernels never read: 7x7 0.044 us per entry, 4x4 0.026-0.028) and what the first iteration
# and check cost beyond the others (their buffers first touched: 7x7 7.5 s, 0.048 us per entry; 4x4 0.037),
# 0.09 us per entry. A streamed cell makes its layout while building its parts (STREAMED_BUILD_S_PER_ENTRY).
SETUP_S_PER_ENTRY = 0.09e-6
# A streamed cell's build (its parts and their block files): 0x0 class 232 s for 1.067e9 entries (stop 47, freed
# memory kept; 263 s without), 0.22 us per entry; it was priced with the in-memory build until stop 47
STREAMED_BUILD_S_PER_ENTRY = 0.22e-6
# A streamed table pass (stop 45, 6x9 at split depth 3, one thread, two runs each): 0.23-0.24 us per entry reading
# each part's navigation file, 0.34-0.38 rebuilding the parts as before (the build 0.18-0.23 either way)
STREAMED_TABLE_S_PER_ENTRY = 0.25e-6
STORED_BYTES_PER_ENTRY = 27.3  # a stored tree's files (6x9: 2.5 GiB for 98.3 M entries, navigation included)
# Reading a stored tree (stop 45): 1.9-2.0 s for 6x9's 98.3 M entries (2.5 GB of files) here, 0.02 us per entry
# against 0.27 to build it, from the page cache. In the real min:6 run (stop 53: 52 reads beside a second worker,
# the store's files partly evicted; this disk reads ~350 MB/s cold) 0.034-0.22 us per entry, median 0.071: priced
# at that (0.05 until stop 53, what 27 bytes per entry at 0.5 GB/s from shared storage would take)
LOAD_S_PER_ENTRY = 0.071e-6
# A match worker may keep built trees for its next task up to this share of the task's own peak, so the
# plan's peak per task includes it (measured in the endgame run: 10x10 tasks peaked at 6.0 GB in a worker
# against 5.42 GB alone, before the table writer's cut).
CACHE_SHARE = 0.15


def task_peak_gb(entries: float, solve_peak_gb: float, table: bool = True) -> float:
    """Predicted peak of one (cell, vira class) task: the solve's, or the table writer's when it writes one."""
    return max(solve_peak_gb, TABLE_BASE_GB + TABLE_BYTES_PER_ENTRY * entries / 1e9) if table else solve_peak_gb


@dataclass
class PlanRow:
    cell: ScoreCell
    ladder: tuple[int, ...]
    classes: int
    peak_gb: float
    hours: float  # CPU-hours, all vira classes
    entries: float = 0.0  # per vira class
    streamed_hours: float = 0.0  # CPU-hours if streamed (--split-depth 3)

    @property
    def streamed_gb(self) -> float:
        """Peak of a streamed solve (``--split-depth 3``) on one thread: see :meth:`streamed_peak_gb`."""
        return self.streamed_peak_gb(1)

    def streamed_peak_gb(self, threads: int = 1) -> float:
        """Peak of a streamed solve (``--split-depth 3``) that keeps no part resident: solver state for
        the real choices (measured at 0x0: 0.50 per entry, 4 bytes), the trunk, and ``threads`` parts with
        their working buffers (the largest at 0x0: 2.85 GB). A solve keeps parts resident only in memory
        that is free beyond this."""
        part = 2.85 * min(1.0, self.entries / 1.067e9)
        # the table pass works on one part at a time but holds its labelled tree and rows too: ~13.5 GB
        # resident at 0x0's largest parts (stop 31, sampled), i.e. ~3.3 parts' working size beside the state
        return 4e-9 * self.entries + part * max(max(1, threads), 3.3) + 1.0


# One exploitability check (the average strategy and a best response per player) in iterations. Stop 46, the median
# of four pairs each: one thread 0.62 (10x10 DCFR+), 0.66 (10x10 DCFR), 0.71 (7x7 DCFR+); two threads 0.87 (10x10
# DCFR+, where the best response gains less from the second thread). The plan's hours are one core's (tasks on more
# threads divide them by thread_speedup), so a check is priced at the highest one-thread figure (stop 47; 0.9, the
# highest of all, at stop 46, 1.25 before). On two threads a task with checks every ~15 iterations then finishes
# ~1% later than thread_speedup says (1.8 * (1 + 0.71 k) / (1 + 0.87 k) = 1.78 at k = 1/15), which is left out.
CHECK_COST = 0.71
# A warm-started cell schedules its checks from its neighbour's (solvers.api.next_check's prior), measured on the
# 10-card grid's whole match (max stake 3, stop 46): its 57 warm cells of 45 iterations or more made 3.07 checks
# each against 7.02, and 0.6% more iterations (3,001 against 2,983); all 107 of 20 or more, 1.6% more
PRIOR_CHECKS = 3.1
PRIOR_OVERSHOOT = 1.01
# A match task closes with both players' best responses under the successors' best-response values (the match
# certificate), one forward pass and two backward ones on the kept average. The plan left it out until stop 52, when
# it cost 1.2-1.4 s at 10x10 against a 1.1-1.2 s iteration (min:6's tasks, an average copied to slot order and back
# and a forward pass per player); with one forward pass and the kept average (stop 52, 10x10, one thread, three
# interleaved reps beside a running match) 0.50-0.73 iterations, against 0.86-1.24 before. Priced at the median.
CLOSING_COST = 0.68


def check_overhead(iterations: float, check_every: int = 5, prior: bool = False) -> float:
    """How much the exploitability checks add to ``iterations`` iterations run to a target: the checks
    :func:`solvers.api.next_check` schedules on a curve converging as the plan assumes (t^-1.8), priced at
    :data:`CHECK_COST` iterations each. 80 iterations: 1.07 (1.12 at the stop 45 check cost; 1.3 with a check every
    5-10 iterations).
    ``prior``: a warm-started cell, scheduled from its neighbour's checks, as measured (:data:`PRIOR_CHECKS`,
    :data:`PRIOR_OVERSHOOT`): 1.04 at 66 iterations against 1.08."""
    from solvers.api import next_check

    its = max(1, round(iterations))
    if prior:
        return PRIOR_OVERSHOOT + CHECK_COST * PRIOR_CHECKS / its
    checks, due = [], check_every
    while True:
        e = (its / due) ** 1.8  # in units of the target
        checks.append((due, e))
        if e <= 1.0:
            break
        due = next_check(checks, check_every, 1.0)
    return 1.0 + CHECK_COST * len(checks) / max(its, due)


def plan(rules: RuleSet, cells: list[ScoreCell], prunes: int = ALL_PRUNES, target: float = 1e-3,
         table: bool = True, algorithm: str = AUTO, warm: bool = True,
         store_gb: float = float("inf")) -> list[PlanRow]:
    """Predicted cost of each cell: live ladder, peak memory of one (cell, vira class) task (writing its
    strategy table unless ``table`` is false), CPU-hours. The tiers' iterations are DCFR's; a cell that
    ``algorithm`` solves with DCFR+ takes :data:`AUTO_BIG_ITERATIONS` of them, and with ``warm`` starts a
    cell after the first of its tree (``cells`` in solving order) takes :data:`WARM_ITERATIONS` of them. A cell
    whose tree the run's tree store holds (up to ``store_gb``; see :func:`store_plan`) reads it
    (:data:`LOAD_S_PER_ENTRY`) instead of building it; streamed cells build their parts."""
    nclass = len(vira_classes(rules))
    full = len(rules.deck) == 40
    rows = []
    seen: set[str] = set()  # structure keys already solved: the cells after them start warm
    for c in cells:
        lad = live_ladder(rules, c, prunes)
        tier = len(lad) if len(lad) > 1 or lad[0] == 1 else 1
        entries, spi, peak, iters, _ = TIERS[min(tier, 5)]
        shape = tree_shape(rules, c, prunes)
        if full and shape in OWN_CAPPED_ENTRIES:  # a smaller tree than its tier's: the same cost per entry
            f = OWN_CAPPED_ENTRIES[shape] / entries
            entries, spi, peak = entries * f, spi * f, peak * f
            iters = OWN_CAPPED_ITERATIONS.get(shape, iters)
        if not full:  # small decks: scale by the deck's hand count (cheap and rough)
            scale = (len(rules.deck) / 40) ** 6
            entries, spi, peak = entries * scale, spi * scale, 0.3 + peak * scale
        elif rules.name in RULE_SCALE:
            se, ss, sp = RULE_SCALE[rules.name]
            entries, spi, peak = entries * se, spi * ss, peak * sp
        its = iters * (1e-3 / target) ** (1 / 1.8)
        if cell_algorithm(algorithm, rules, lad) == AUTO_BIG and len(lad) >= AUTO_BIG_RUNGS:
            its *= AUTO_BIG_ITERATIONS
        key = CellSpec.make(rules, *c, 0, prunes=prunes).structure_key()
        warm_cell = warm and key in seen
        if warm_cell:
            its *= WARM_ITERATIONS.get(tier, 1.0)
        seen.add(key)
        checks = its * (check_overhead(its, prior=warm_cell) - 1.0) + CLOSING_COST  # in iterations of TIERS' kernels
        iterating = spi * (its * ITERATION_RATIO[min(tier, 5)] + checks)
        rest_streamed = entries * (STREAMED_BUILD_S_PER_ENTRY + (STREAMED_TABLE_S_PER_ENTRY if table else 0.0))
        rows.append(PlanRow(c, lad, nclass, task_peak_gb(entries, peak, table) * (1 + CACHE_SHARE),
                            nclass * iterating / 3600, entries,
                            nclass * (spi * (its + checks) * STREAM_SLOWDOWN + rest_streamed) / 3600))
    reads = store_plan(rules, rows, prunes, store_gb).reads
    for r in rows:
        build = LOAD_S_PER_ENTRY if r.cell in reads else BUILD_S_PER_ENTRY
        r.hours += r.classes * r.entries * (build + SETUP_S_PER_ENTRY + (TABLE_S_PER_ENTRY if table else 0.0)) / 3600
    return rows


class StorePlan(NamedTuple):
    reads: set  # cells that read their trees from the store
    peak_gb: float  # the most the store holds at once
    built: int  # trees built (tasks)
    read: int  # trees read instead (tasks)


def store_plan(rules: RuleSet, rows: list[PlanRow], prunes: int, store_gb: float) -> StorePlan:
    """How the run's tree store serves ``rows`` (in solving order), as :func:`solve_match` fills it: a level at a
    time, a built tree stored when a later level has a cell of its structure and the store stays within
    ``store_gb``, and dropped after the last such level. Keys and sizes are vira class 0's, for all classes
    (cells of one level with one tree share a worker, whose tree cache serves them)."""
    key = {r.cell: CellSpec.make(rules, *r.cell, 0, prunes=prunes).structure_key() for r in rows}
    size = {r.cell: r.classes * r.entries * STORED_BYTES_PER_ENTRY / 2**30 for r in rows}
    by_level = levels([r.cell for r in rows])
    last = {key[c]: i for i, level in enumerate(by_level) for c in level}
    held: dict[str, float] = {}
    reads, peak = set(), 0.0
    for i, level in enumerate(by_level):
        for c in level:
            if key[c] in held:
                reads.add(c)
            elif last[key[c]] > i and sum(held.values()) + size[c] <= store_gb:  # a later level will read it
                held[key[c]] = size[c]
        peak = max(peak, sum(held.values()))
        held = {k: g for k, g in held.items() if last[k] > i}
    nclass = rows[0].classes if rows else 0
    return StorePlan(reads, peak, nclass * (len(rows) - len(reads)), nclass * len(reads))


# Disk a run writes per entry (information-set action), measured in results/endgame (stop 54): a strategy table
# 1.70 bytes over its first 198 tasks (1.6-2.4 a task at the 1-3 and 98 M-entry 1-3-6 cells, 0.2-0.4 on the eleven
# row, whose sets are mostly forced) but 2.55 at 8x8 d1 (157 M entries): priced at the largest, since a run that
# fills its disk stops; a checkpoint 3.14 (regrets and strategy sums, 8 bytes each per real choice, 0.196 choices
# per entry at 8x9). Stop 56: tables at zstd level 4 (solvers.tables.TABLE_ZSTD_LEVEL) are 0.83x level 1's at 8x10
# (a class's 228.5 -> 189.4 MB, 1.83 bytes per entry) and 0.82x at 10x10, so the largest is priced at 2.55 x 0.83
TABLE_DISK_BYTES_PER_ENTRY = 2.15
CHECKPOINT_BYTES_PER_ENTRY = 3.14


class DiskPlan(NamedTuple):
    tables_gb: float  # every cell's tables (they stay)
    checkpoints_gb: float  # the most checkpoints held at once (running tasks' and later levels' warm starts)
    all_checkpoints_gb: float  # with --keep-checkpoints: every task's
    store_gb: float  # the tree store's peak

    @property
    def peak_gb(self) -> float:
        return self.tables_gb + self.checkpoints_gb + self.store_gb


def disk_plan(rules: RuleSet, rows: list[PlanRow], prunes: int, workers: int, table: bool = True,
              store_gb: float = 0.0, finished: dict | None = None, keep: bool = False, warm: bool = True) -> DiskPlan:
    """What a run of ``rows`` (in solving order) keeps on disk, as :func:`solve_match` prunes it: tables, the
    checkpoints of ``workers`` running tasks plus each tree's newest one while a later level solves that tree
    again with ``warm`` starts (all of them when ``keep`` or without tables: nothing else holds the strategies),
    and the store's peak.
    ``finished`` (cell -> tasks already done, a resumed run's): what is left to write, its done tasks' files
    already there."""
    if finished:
        rows = [r for r in rows if finished.get(r.cell, 0) < r.classes]
    key = {r.cell: CellSpec.make(rules, *r.cell, 0, prunes=prunes).structure_key() for r in rows}
    ck = {r.cell: r.classes * r.entries * CHECKPOINT_BYTES_PER_ENTRY / 2**30 for r in rows}
    by_level = levels([r.cell for r in rows])
    last = {key[c]: i for i, level in enumerate(by_level) for c in level}
    held: dict[str, float] = {}
    peak = 0.0
    for i, level in enumerate(by_level):
        running = sum(sorted((ck[c] / rows[0].classes for c in level), reverse=True)[:workers])
        sources = {key[c]: ck[c] for c in level if warm and last[key[c]] > i}  # a later level's warm starts
        peak = max(peak, sum(held.values()) + sum(sources.values()) + running)
        held.update(sources)  # superseded ones go at the level's end
        held = {k: g for k, g in held.items() if last[k] > i}
    left = sum((r.classes - (finished or {}).get(r.cell, 0)) * r.entries for r in rows)
    tables = left * TABLE_DISK_BYTES_PER_ENTRY / 2**30 if table else 0.0
    every = sum(ck.values())
    return DiskPlan(tables, peak if table and not keep else every, every, store_gb)


# ---- the driver ---------------------------------------------------------
@dataclass(frozen=True)
class MatchConfig:
    """What a match run solves and how; :meth:`key` names the run folder's owner."""

    rules: RuleSet
    prunes: int = ALL_PRUNES
    algorithm: str = AUTO  # per cell: cell_algorithm
    target: float = 1e-3
    max_iterations: int = 5000
    check_every: int = 5
    checkpoint_every: int = 50
    table: bool = True
    table_min_reach: float = 0.0
    warm_start: bool = True
    stream_over_gb: float = float("inf")  # cells predicted to need more in memory are streamed (--split-depth 3)
    threads: int = 1  # per worker (the pool's workers already use the cores)
    # GB of built trees the run may keep in OUT/trees for later cells of the same structure (not in the key: a
    # stored tree is the built one); None: half the disk space free when the run starts; 0: none
    tree_store_gb: float | None = None
    # keep every finished cell's checkpoints (not in the key): by default a checkpoint goes once no later cell
    # can warm-start from it and its table holds its strategy (:func:`prunable`); kept, a rerun to a tighter
    # target resumes each cell where it stopped instead of from a neighbour
    keep_checkpoints: bool = False
    auto_rungs: int = AUTO_BIG_RUNGS  # auto's DCFR+ threshold (a run begun before stop 45 keeps 4)

    def __post_init__(self) -> None:
        # cap_own_raises only where it bites at some score of this rule set's grid: elsewhere (short ladders,
        # seed 001's rule) it changes no tree, so a run keeps the key it had before that prune existed
        t = self.rules.target
        if not any(own_capped_stakes(self.rules, a, b, self.prunes) for a in range(t) for b in range(t)):
            object.__setattr__(self, "prunes", self.prunes & ~CAP_OWN_RAISES)

    def key(self) -> str:
        what = {"kind": "match", "rules": self.rules.to_dict(), "prunes": self.prunes,
                "algorithm": self.keyed_algorithm()}
        return stable_hash({**what, **self.auto_keyed()})

    def keyed_algorithm(self) -> str:
        """The algorithm the run is keyed by: ``auto`` where it solves some cell otherwise than DCFR would,
        else ``dcfr`` (the same solves, so the same key as before ``auto`` was the default)."""
        return "dcfr" if self.algorithm == AUTO and not auto_differs(self.rules, self.auto_rungs) else self.algorithm

    def auto_keyed(self) -> dict:
        """``{"auto_rungs": n}`` where ``auto`` chooses by a threshold other than the one before stop 45 (and that
        changes some cell's rule here), else nothing: so a run's key and description stay what they were."""
        on = self.algorithm == AUTO and self.auto_rungs != AUTO_OLD_RUNGS and (
            auto_differs(self.rules, self.auto_rungs) or auto_differs(self.rules, AUTO_OLD_RUNGS))
        return {"auto_rungs": self.auto_rungs} if on else {}

    def cell_algorithm(self, cell: ScoreCell) -> str:
        """The update rule this run solves ``cell`` with."""
        return cell_algorithm(self.algorithm, self.rules, live_ladder(self.rules, cell, self.prunes), self.auto_rungs)

    def stop(self) -> Stop:
        return Stop(target=self.target, max_iterations=self.max_iterations, check_every=self.check_every,
                    checkpoint_every=self.checkpoint_every)


@dataclass
class MatchState:
    """Equity and best-response tables as they fill up."""

    target: int
    equity: EquityTable = None  # type: ignore[assignment]
    v0: np.ndarray = None  # type: ignore[assignment]  # player 0's BR win probability [d, a, b]
    v1: np.ndarray = None  # type: ignore[assignment]
    cells: dict = field(default_factory=dict)  # canonical cell -> summary dict

    def __post_init__(self) -> None:
        self.equity = EquityTable(self.target)
        self.v0 = np.full((2, self.target, self.target), np.nan)
        self.v1 = np.full((2, self.target, self.target), np.nan)

    def set_br(self, cell: ScoreCell, b0: float, b1: float) -> None:
        a, b, d = cell
        self.v0[d, a, b], self.v1[d, a, b] = b0, b1
        self.v0[1 - d, b, a], self.v1[1 - d, b, a] = b1, b0  # the mirror: seats swapped

    def br_value(self, player: int, a: int, b: int, d: int) -> float:
        v = (self.v0 if player == 0 else self.v1)[d, a, b]
        if np.isnan(v):
            raise KeyError(f"best-response value of cell {a}x{b} dealer {d} is not known")
        return float(v)

    def match_exploitability(self, cell: ScoreCell) -> float:
        a, b, d = cell
        return float((self.v0[d, a, b] + self.v1[d, a, b] - 1.0) / 2.0)


def cell_jobs(cfg: MatchConfig, state: MatchState, cell: ScoreCell, out: Path | None,
              last_by_structure: dict[str, CellJob]) -> list[CellJob]:
    """The (cell, vira class) jobs of one canonical cell, given every successor's values."""
    rules = cfg.rules
    a, b, d = cell
    codes = candidate_codes(rules)
    br0 = continuation_utilities(rules, a, b, d, codes, lambda x, y, z: state.br_value(0, x, y, z), 1.0, 0.0)
    br1 = continuation_utilities(rules, a, b, d, codes, lambda x, y, z: -state.br_value(1, x, y, z), 0.0, -1.0)
    jobs = []
    peak_gb = plan(rules, [cell], cfg.prunes, cfg.target, cfg.table)[0].peak_gb
    streamed = peak_gb > cfg.stream_over_gb
    algorithm = cfg.cell_algorithm(cell)
    for vc in vira_classes(rules):
        spec = CellSpec.make(rules, a, b, d, vc.index, prunes=cfg.prunes, payoff="equity", equity=state.equity,
                             algorithm=algorithm)
        workdir = str(out / "cells" / spec.cell_name) if out is not None else None
        depth = 3 if streamed else 0
        # ``last_by_structure`` holds earlier levels' jobs only: a job of this level may still be running when
        # a neighbour of the same tree starts (on a cluster every task of a level starts at once)
        prev = last_by_structure.get(spec.structure_key()) if cfg.warm_start else None
        # a checkpoint numbers its choices as its solver lays them out: in memory, or part by part at a depth
        same = prev is not None and prev.workdir is not None and prev.split_depth == depth
        # pruned by an earlier run of other cells (:func:`prunable`): start cold
        warm = str(prev.path("checkpoint")) if same and prev.path("checkpoint").exists() else None
        store = str(out / "trees") if out is not None and not depth and cfg.tree_store_gb else None
        job = CellJob(spec, cfg.stop(), workdir=workdir, table=cfg.table,
                      table_min_reach=cfg.table_min_reach, warm_from=warm, br_utilities=(tuple(br0), tuple(br1)),
                      split_depth=depth, threads=cfg.threads,
                      # workers run side by side: none may take the others' memory for resident parts
                      resident_gb=0.0, tree_store=store, tree_store_gb=cfg.tree_store_gb or 0.0,
                      # the kept trees' share of this task's own prediction: a small task beside a cache sized for
                      # the run's largest peaked at twice its plan (eleven row: 1.3 GB against 0.6)
                      cache_gb=peak_gb * CACHE_SHARE / (1 + CACHE_SHARE))
        jobs.append(job)
    return jobs


def combine_cell(cell: ScoreCell, results: list[CellResult]) -> dict:
    """One score cell from its vira classes (weighted by class probability)."""
    w = np.array([r.vira_weight for r in results])
    w = w / w.sum()

    def wsum(xs):
        return float(np.dot(w, xs))

    secs = [r.seconds_per_iteration for r in results if r.seconds_per_iteration]
    return {
        "score0": cell[0], "score1": cell[1], "dealer": cell[2],
        "equity": wsum([r.game_value for r in results]),
        "exploitability": wsum([r.exploitability for r in results]),
        "br0": wsum([r.br_values[0] for r in results]), "br1": wsum([r.br_values[1] for r in results]),
        "iterations": int(max(r.iterations for r in results)),
        "warm_iterations": int(max(r.warm_iterations for r in results)),
        "seconds": float(sum(r.seconds for r in results)),
        "seconds_per_iteration": float(np.mean(secs)) if secs else None,
        "peak_memory_gb": float(max(r.peak_memory_gb for r in results)),
        "target_met": all(r.target_met for r in results),
        "classes": [{k: v for k, v in r.to_dict().items() if k != "history"} | {"history": r.history}
                    for r in results],
    }


def solve_match(cfg: MatchConfig, cells: list[ScoreCell], executor, out: Path | None = None,
                on_cell: Callable[[ScoreCell, dict, MatchState], None] | None = None,
                on_job: Callable[[CellJob, CellResult], None] | None = None,
                on_level: Callable[[MatchState], None] | None = None) -> MatchState:
    """Solve ``cells`` (canonical, successors included) level by level on ``executor``; ``on_level`` sees the
    state after each score-sum level (its cells are final: a cell depends only on the levels before it)."""
    state = MatchState(cfg.rules.target)
    last_by_structure: dict[str, CellJob] = {}
    if out is not None and cfg.tree_store_gb is None:
        cfg = replace(cfg, tree_store_gb=default_store_gb(out))
    uses = _last_uses(cfg, levels(cells)) if out is not None else {}
    last_use = uses if cfg.tree_store_gb else {}
    for i, level in enumerate(levels(cells)):
        jobs: list[CellJob] = []
        owner: dict[str, ScoreCell] = {}
        blind = [c for c in level if not sees_own_cards(cfg.rules, c[:2])]
        for cell in blind:
            # seed 001's iron hand: no decisions, its exact value is the deal's chance (nothing to certify)
            e = blind_hand_value(cfg.rules)
            a, b, d = cell
            summ = {"score0": a, "score1": b, "dealer": d, "equity": e, "exploitability": 0.0, "br0": e,
                    "br1": 1.0 - e, "iterations": 0, "warm_iterations": 0, "seconds": 0.0,
                    "seconds_per_iteration": None, "peak_memory_gb": 0.0, "target_met": True, "classes": [],
                    "blind": True}
            state.equity.set(a, b, d, e, exploitability=0.0, iterations=0, seconds=0.0, peak_memory_gb=0.0)
            state.set_br(cell, e, 1.0 - e)
            summ["match_exploitability"] = state.match_exploitability(cell)
            state.cells[cell] = summ
            if on_cell is not None:
                on_cell(cell, summ, state)
        level = [c for c in level if c not in blind]
        for cell in level:
            for job in cell_jobs(cfg, state, cell, out, last_by_structure):
                if job.tree_store is not None and last_use.get(job.spec.structure_key(), -1) <= i:
                    job = replace(job, tree_store_gb=0.0)  # read a stored tree, store none: no later level needs it
                jobs.append(job)
                owner[job.key] = cell
        done: dict[ScoreCell, list[CellResult]] = {c: [] for c in level}

        # the last task of each tree in this level: a later level's cells of that tree warm-start from it. Every
        # other finished task's checkpoint goes (a 1-3-6 cell's nine are ~2.8 GB, more than its tables)
        source = {job.spec.structure_key(): job for job in jobs}
        prune = out is not None and not cfg.keep_checkpoints
        # keys of the tasks whose checkpoints a later level starts from
        wanted = {j.key for k, j in source.items() if cfg.warm_start and uses.get(k, -1) > i}

        def collect(job: CellJob, res: CellResult, done=done, owner=owner, wanted=wanted, prune=prune) -> None:
            done[owner[job.key]].append(res)
            if prune and job.key not in wanted:
                _drop_checkpoint(job)
            if on_job is not None:
                on_job(job, res)

        executor.map(jobs, collect)
        for key in [k for k, last in last_use.items() if last == i]:  # no later cell builds this tree
            shutil.rmtree(Path(out) / "trees" / key, ignore_errors=True)
        for cell in level:
            rs = sorted(done[cell], key=lambda r: r.vira_class)
            summ = combine_cell(cell, rs)
            a, b, d = cell
            state.equity.set(a, b, d, summ["equity"], exploitability=summ["exploitability"],
                             iterations=summ["iterations"], seconds=summ["seconds"],
                             peak_memory_gb=summ["peak_memory_gb"])
            state.set_br(cell, summ["br0"], summ["br1"])
            summ["match_exploitability"] = state.match_exploitability(cell)
            state.cells[cell] = summ
            if on_cell is not None:
                on_cell(cell, summ, state)
        if on_level is not None and state.cells:
            on_level(state)
        for k, old in list(last_by_structure.items()):
            if prune and (k in source or uses.get(k, -1) <= i):  # superseded, or no later cell of its tree
                _drop_checkpoint(old)
        last_by_structure.update(source)
    return state


def prunable(job: CellJob) -> bool:
    """Whether a finished task's checkpoint may go: its table holds its whole average strategy, which is what a
    finished cell is played from (:class:`truco_lab.lab.policy.MatchStrategy` reads it there). Not for streamed
    cells (their tables are written part by part), tables that drop rows, or runs without tables."""
    return (job.workdir is not None and job.table and not job.table_min_reach and not job.split_depth
            and Path(job.path("table")).exists())


def _drop_checkpoint(job: CellJob) -> None:
    if prunable(job):
        Path(job.path("checkpoint")).unlink(missing_ok=True)


def free_disk_gb(out: str | Path) -> float:
    """Disk space free where ``out`` is (or would be made), GB."""
    p = Path(out).resolve()
    while not p.exists():
        p = p.parent
    return shutil.disk_usage(p).free / 2**30


def default_store_gb(out: str | Path) -> float:
    """The tree store's default budget: half the disk space free where ``out`` is (or would be made)."""
    return free_disk_gb(out) / 2


def _last_uses(cfg: MatchConfig, by_level: list[list[ScoreCell]]) -> dict[str, int]:
    """Structure key -> the last level with a cell of that tree (after it, a stored copy serves no one)."""
    last = {}
    for i, level in enumerate(by_level):
        for a, b, d in level:
            if sees_own_cards(cfg.rules, (a, b)):
                for vc in vira_classes(cfg.rules):
                    last[CellSpec.make(cfg.rules, a, b, d, vc.index, prunes=cfg.prunes).structure_key()] = i
    return last


def worst_path_bound(rules: RuleSet, state: MatchState, cell: ScoreCell) -> float:
    """Sum of per-cell NashConvs along the worst path from ``cell``: an upper bound on the
    match exploitability there (each cell adds at most its own best-response gains)."""
    memo: dict[ScoreCell, float] = {}

    def go(c: ScoreCell) -> float:
        can, _ = canonical(c)
        if can in memo:
            return memo[can]
        here = 2.0 * state.cells[can]["exploitability"]
        nxt = [go(s) for s in successors(rules, can)]
        memo[can] = here + (max(nxt) if nxt else 0.0)
        return memo[can]

    return go(cell)


