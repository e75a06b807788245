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

import numpy as np
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
                known: list[ArgentineCell] | None = None, workers: int = 1) -> pd.DataFrame:
    """Every cell of ``rules``'s match (scores 0 .. target-1 each, both dealers), backward; one row per cell.
    ``known``: cells solved before (a resumed run; mirrored rows are derived again); ``progress(cell)`` is
    called after each newly solved cell. Cells of one total score depend only on higher totals, so
    ``workers`` processes solve each such diagonal side by side (the results do not depend on it)."""
    top = rules.target
    equity: dict[tuple[int, int, int], float] = {}
    rows: list[ArgentineCell] = []
    done = {(c.score0, c.score1, c.dealer): c for c in (known or []) if not c.mirrored}
    pool = None
    if workers > 1:
        import multiprocessing

        # a multiprocessing pool, not concurrent.futures': on Ctrl-C or SIGTERM its workers are terminated
        # rather than left to finish (or orphaned with) their cells; solved cells are already on disk
        pool = multiprocessing.get_context("fork").Pool(workers, initializer=_quiet_worker)
    ok = False
    try:
        for total in range(2 * (top - 1), -1, -1):
            todo = []
            for a in range(max(0, total - top + 1), min(top - 1, total) + 1):
                for d in (0, 1):
                    b = total - a
                    if (b, a, 1 - d) not in todo and (a, b, d) not in todo:
                        todo.append((a, b, d))
            fresh = [c for c in todo if c not in done]
            if pool is None:
                solved = (solve_cell(rules, a, b, d, equity, target, tree=tree) for a, b, d in fresh)
            else:
                solved = pool.imap(_solve_task, [(rules, a, b, d, dict(equity), target, tree) for a, b, d in fresh])
            for cell in solved:
                done[(cell.score0, cell.score1, cell.dealer)] = cell
                if progress is not None:
                    progress(cell)
            for key in todo:
                cell = done[key]
                rows.append(cell)
                equity[key] = cell.equity
                a, b, d = key
                if (b, a, 1 - d) != key:
                    equity[(b, a, 1 - d)] = 1.0 - cell.equity
                    rows.append(replace(cell, score0=b, score1=a, dealer=1 - d, equity=1.0 - cell.equity,
                                        mirrored=True))
        ok = True
    finally:
        if pool is not None:
            if ok:
                pool.close()
            else:
                pool.terminate()
            pool.join()
    return pd.DataFrame([vars(r) for r in rows]).sort_values(["score0", "score1", "dealer"]).reset_index(drop=True)


def _quiet_worker() -> None:
    """A worker leaves Ctrl-C to the driver (which terminates it) and dies silently of SIGTERM."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


def _solve_task(args) -> ArgentineCell:
    rules, a, b, d, equity, target, tree = args
    try:
        return solve_cell(rules, a, b, d, equity, target, tree=tree)
    except KeyboardInterrupt:
        # the solver's loop defers SIGTERM (the pool's terminate) and raises at the next whole iteration;
        # a cell keeps no checkpoint, so the worker just goes, without a traceback on the driver's stderr
        import os

        os._exit(143)


def cells_to_solve(rules: RuleSet) -> int:
    """How many cells :func:`solve_match` solves (the others are their seat mirrors)."""
    return rules.target ** 2


class ArgentineStrategy:
    """A solved Argentine match (a folder of ``experiments/argentine_match.py``) played at OpenSpiel
    ``truco_argentino`` states: the :class:`truco_lab.people.strategy.Strategy` of ``play --bot solved``,
    hints and explain. The folder holds every cell's equity; a cell's strategy is re-solved from it on
    first use (its native tree with those equities as payoffs, to the run's per-cell target, in seconds on
    the small decks the grid is solved on) and kept."""

    def __init__(self, out) -> None:
        from pathlib import Path

        from solvers.storage import read_json

        self.out = Path(out)
        summary = self.out / "summary.json"
        if not summary.exists() or not (self.out / "equity.csv").exists():
            raise ValueError(f"--solved {self.out}: no finished Argentine match there (experiments/argentine_match.py "
                             "writes summary.json and equity.csv when it ends)")
        meta = read_json(summary, "summary")
        self.rules = RuleSet.from_dict(meta["rules"])
        self.target = float(meta["target"])
        df = pd.read_csv(self.out / "equity.csv")
        self.equity = {(int(r.score0), int(r.score1), int(r.dealer)): float(r.equity) for r in df.itertuples()}
        self._cells: dict = {}

    def covers(self, state) -> bool:
        """Whether ``state`` is a hand of this match's rules at a score the run solved."""
        if getattr(state, "rules", None) is None or state.rules != self.rules:
            return False
        return (state.start_score[0], state.start_score[1], state.dealer) in self.equity

    def _cell(self, state):
        from solvers.vector import VectorSolver
        from truco_lab.abstraction.argentine_tree import build_argentine_cell, equity_utilities, outcome_codes

        key = (state.start_score[0], state.start_score[1], state.dealer)
        if key not in self.equity:
            raise KeyError(f"cell {key[0]}x{key[1]} dealer {key[2]} is not in {self.out}")
        if key not in self._cells:
            a, b, d = key
            t = build_argentine_cell(self.rules, a, b, d)
            t.set_payoff(equity_utilities(self.rules, a, b, outcome_codes(t), lambda x, y: self.equity[(x, y, 1 - d)]))
            s = VectorSolver(t, "dcfr")
            run(s, 4000, self.target, check_every=25)
            avg = s.average_strategy()
            self._cells[key] = (t, s, avg, {})
        return self._cells[key]

    def _route(self, state):
        from truco_lab.abstraction.argentine_tree import argentine_route

        t, s, avg, br = self._cell(state)
        return t, s, avg, br, argentine_route(t, state)

    def action_probabilities(self, state) -> dict[int, float]:
        _, _, avg, _, route = self._route(state)
        probs = {a: float(avg[s]) if s >= 0 else 0.0 for a, s in route.items()}
        tot = sum(probs.values())
        return {a: p / tot for a, p in probs.items()} if tot > 0 else {a: 1 / len(probs) for a in probs}

    def best_response_action(self, state) -> int:
        """The best response to this strategy in the hand's cell, for the player to act."""
        t, s, avg, br, route = self._route(state)
        p = state.current_player()
        if p not in br:
            br[p] = s.best_response_actions(p, avg)
        slots = [x for x in route.values() if x >= 0]
        info = t.infoset_of_slot(min(slots))
        best = int(t.infoset_offset[info]) + int(br[p][info])
        return next(a for a, x in route.items() if x == best)

    def decision(self, state):
        """Probabilities, values (the acting player's match-win probability), own reach and the opponent's
        range (their three cards, given everything public) at ``state``."""
        from truco_lab.abstraction.argentine_tree import argentine_hands
        from truco_lab.lab.policy import Decision

        t, s, avg, _, route = self._route(state)
        key = ("analysis",)
        cache = self._cells[(state.start_score[0], state.start_score[1], state.dealer)][3]
        if key not in cache:
            cache[key] = (s.slot_values(avg)[0], s.element_reach(avg))
        av, reach = cache[key]  # per slot: the actor's value; per element: its owner's reach
        p = state.current_player()
        probs = self.action_probabilities(state)
        acts = [(a, probs.get(a, 0.0), (float(av[x]) if p == 0 else 1.0 + float(av[x])) if x >= 0 else float("nan"))
                for a, x in route.items()]
        info = t.infoset_of_slot(min(x for x in route.values() if x >= 0))
        node = int(t.infoset_nodes()[info])
        own = int(t.node_list[node, p]) + info - int(t.node_infoset[node])
        q = 1 - p
        ls, n = int(t.node_list[node, q]), int(t.node_len[node, q])
        rows = t.elem_hand[ls:ls + n].astype(np.int64)
        w = reach[ls:ls + n] * (t.deal_weight[t.elem_hand[own], rows] if q == 1 else t.deal_weight[rows, t.elem_hand[own]])
        cards = argentine_hands(self.rules).cards
        tot = float(w.sum())
        rng = sorted(((" ".join(self.rules.card_str(int(c)) for c in cards[r]), float(x) / tot)
                      for r, x in zip(rows, w, strict=True) if x > 0), key=lambda z: -z[1]) if tot > 0 else []
        own_reach = float(reach[own])
        return Decision(p, acts, own_reach, rng, reached=own_reach > 0 and tot > 0)


@dataclass
class MatchPlan:
    """What solving a whole Argentine match would take: per canonical cell the estimated tree, and the
    costs per entry measured on a tree built here."""

    cells: pd.DataFrame  # score0, score1, dealer, nodes, infosets, entries, entries_se, gb
    bytes_per_entry: float  # tree and solver state, measured
    ns_per_entry_iteration: float  # one DCFR iteration, measured (one thread)
    iterations: float  # per cell, from the small-deck grid (or an assumption the caller gives)
    machine_gb: float

    def lines(self) -> list[str]:
        c = self.cells
        total = float(c.entries.sum())
        cpu_h = total * self.ns_per_entry_iteration * 1e-9 * self.iterations / 3600
        fits = int((c.gb <= self.machine_gb).sum())
        big = c.loc[c.entries.idxmax()]
        return [
            f"{len(c)} cells to solve (the other {len(c)} are their seat mirrors)",
            f"entries: {total:.3g} in all (Knuth estimates, standard error {float(np.sqrt((c.entries_se ** 2).sum())):.2g}); "
            f"the largest cell {int(big.score0)}x{int(big.score1)} d{int(big.dealer)}: {big.entries:.3g} entries, "
            f"{big.gb:,.3g} GB",
            f"measured here: {self.bytes_per_entry:.1f} bytes and {self.ns_per_entry_iteration:.1f} ns per entry and "
            f"iteration (one thread); {self.iterations:.0f} iterations per cell",
            f"CPU time: {cpu_h:.3g} CPU-hours; cells that fit {self.machine_gb:.0f} GB: {fits} of {len(c)}",
        ]


def plan_match(rules: RuleSet, probes: int = 400, iterations: float = 50.0, machine_gb: float = 20.0,
               progress=None, calibrate: RuleSet | None = None) -> MatchPlan:
    """Estimate every canonical cell of ``rules``'s match (:func:`estimate_cell_size`) and price it with the
    bytes and nanoseconds per entry measured on ``calibrate``'s 0x0 tree (default: 1 3 7 12 of two suits with
    the same options), built and iterated here."""
    from solvers.vector import VectorSolver
    from truco_lab.abstraction.argentine_tree import build_argentine_cell, estimate_cell_size

    cal = calibrate or RuleSet.from_options("argentino", ranks="1 3 7 12", suits="eb", max_stake=rules.max_stake,
                                            flor=rules.flor)
    t = build_argentine_cell(cal, 0, 0, 1)
    s = VectorSolver(t, "dcfr")
    s.iterate(2)  # compiled and warm
    t0 = time.perf_counter()
    s.iterate(10)
    ns = (time.perf_counter() - t0) / 10 / t.num_slots * 1e9
    bpe = (t.nbytes() + s.nbytes() + sum(getattr(t, k).nbytes for k in t.NAVIGATION)) / t.num_slots
    top = rules.target
    rows, seen = [], set()
    for a in range(top):
        for b in range(top):
            for d in (0, 1):
                if (b, a, 1 - d) in seen:
                    continue
                seen.add((a, b, d))
                est = estimate_cell_size(rules, a, b, d, probes=probes, seed=len(rows))
                rows.append({"score0": a, "score1": b, "dealer": d, "nodes": est.nodes, "infosets": est.infosets,
                             "entries": est.entries, "entries_se": est.entries_se,
                             "gb": est.entries * bpe / 1e9})
                if progress is not None:
                    progress(rows[-1])
    return MatchPlan(pd.DataFrame(rows), bpe, ns, iterations, machine_gb)
