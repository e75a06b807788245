"""Solve jobs over truco cells: one (score, dealer, vira class) subgame at a time.

Used by ``truco-lab solve`` and the experiment scripts. Each cell is built
natively, solved to a stop condition with checkpoints, and written as a
Parquet strategy table; ``summary.json`` collects the certificates and the
cost figures (information sets, entries, bytes per entry, seconds per
iteration, peak memory).
"""

from __future__ import annotations

import datetime
import json
import resource
import time
from pathlib import Path

import numpy as np

from solvers.api import run
from solvers.tables import StrategyTable, subgame_frame
from solvers.vector import VectorSolver
from truco_lab.cards import card_str, parse_card
from truco_lab.public_tree import ALL_PRUNES, ViraClass, build_cell, rules_to_dict, vira_class_of, vira_classes
from truco_lab.rules import PAULISTA, RuleSet


def peak_rss_mb() -> float:
    """Peak resident memory of this process so far (MB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def parse_viras(text: str, rules: RuleSet = PAULISTA) -> list[tuple[ViraClass, str]]:
    """``all`` -> every class (labelled by its representative); a card -> its class (labelled by that card)."""
    if text == "all":
        return [(vc, card_str(vc.vira)) for vc in vira_classes(rules)]
    card = parse_card(text)
    return [(vira_class_of(rules, card), card_str(card))]


def cell_name(score: tuple[int, int], dealer: int, vc: ViraClass) -> str:
    return f"s{score[0]}-{score[1]}_d{dealer}_v{vc.index}-{card_str(vc.vira)}"


def solve_cell(rules: RuleSet, score: tuple[int, int], dealer: int, vc: ViraClass, *, algorithm: str = "dcfr",
               iterations: int | None = None, target_exploitability: float | None = None,
               max_iterations: int = 100_000, out: Path | None = None, resume: bool = False,
               check_every: int = 5, checkpoint_every: int = 50, progress: bool = True,
               prunes: int = ALL_PRUNES, vira_label: str | None = None, **params) -> dict:
    """Build, solve and (with ``out``) write one cell; returns its summary."""
    t0 = time.perf_counter()
    tree = build_cell(rules, score[0], score[1], dealer, vc, prunes)
    build_s = time.perf_counter() - t0
    solver = VectorSolver(tree, algorithm, **params)
    name = cell_name(score, dealer, vc)
    ckpt = out / "checkpoints" / f"{name}.npz" if out is not None else None
    resume = resume and ckpt is not None and ckpt.exists()  # cells never started begin afresh
    start_it = 0
    if resume:
        with np.load(ckpt) as d:
            start_it = int(d["iteration"])
    cap = iterations if iterations is not None else max_iterations
    t1 = time.perf_counter()
    expl, history = run(solver, cap, target_exploitability, check_every=check_every, checkpoint=ckpt,
                        checkpoint_every=checkpoint_every, resume=resume, progress=progress,
                        desc=f"vira {vira_label or card_str(vc.vira)} d{dealer}")
    solve_s = time.perf_counter() - t1
    done = solver.iteration - start_it
    value = solver.game_value()
    state_bytes = solver.regrets.nbytes + solver.ssum.nbytes + (solver.pred.nbytes if solver.pred.size > 1 else 0)
    total_bytes = solver.nbytes() + tree.nbytes()
    summary = {
        "vira": vira_label or card_str(vc.vira), "vira_class": vc.index, "vira_weight": vc.weight,
        "score": list(score), "dealer": dealer, "algorithm": algorithm,
        "game_value": value, "exploitability": expl, "iterations": solver.iteration,
        "seconds_per_iteration": solve_s / done if done else None,
        "build_seconds": build_s, "nodes": tree.num_nodes, "infosets": tree.num_infosets,
        "entries": tree.num_slots, "bytes_per_entry_state": state_bytes / max(tree.num_slots, 1),
        "bytes_per_entry_total": total_bytes / max(tree.num_slots, 1), "peak_rss_mb": peak_rss_mb(),
        "history": history,
    }
    if out is not None:
        df = subgame_frame(solver)
        meta = {
            "rules": rules_to_dict(rules), "algorithm": algorithm, "iterations": solver.iteration,
            "exploitability": expl, "game_value": value, "score": list(score), "dealer": dealer,
            "vira_class": vc.index, "vira": card_str(vc.vira), "version": _version(),
            "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"), "prunes": prunes,
        }
        path = StrategyTable(df, meta).write(out / f"{name}.parquet")
        summary["table"] = str(path)
        summary["rows"] = len(df)
    return summary


def solve_cells(rules: RuleSet, score: tuple[int, int], dealer: int, viras: list[tuple[ViraClass, str]],
                out: Path | None, **kw) -> dict:
    """Solve each vira class in turn; ``summary.json`` (in ``out``) is rewritten after every cell."""
    cells = []
    summary: dict = {}
    done = _finished_cells(out, kw) if kw.get("resume") else {}
    for vc, label in viras:
        if vc.index in done:  # finished before an interruption: keep its table
            cells.append(done[vc.index])
            continue
        cells.append(solve_cell(rules, score, dealer, vc, out=out, vira_label=label, **kw))
        summary = combine(cells, score, dealer, kw.get("algorithm", "dcfr"),
                          "all" if len(viras) > 1 else viras[0][1])
        if out is not None:
            write_json(out / "summary.json", summary)
    return summary


def _finished_cells(out: Path | None, kw: dict) -> dict[int, dict]:
    """Cells of a previous run in ``out`` that met this run's stop condition and have their table."""
    if out is None or not (out / "summary.json").exists():
        return {}
    old = json.loads((out / "summary.json").read_text())
    target, iters = kw.get("target_exploitability"), kw.get("iterations")
    keep = {}
    for c in old.get("cells", []):
        met = (target is not None and c["exploitability"] <= target) or (iters is not None and c["iterations"] >= iters)
        if met and c.get("algorithm") == kw.get("algorithm", "dcfr") and Path(c.get("table", "")).exists():
            keep[c["vira_class"]] = c
    return keep


def combine(cells: list[dict], score, dealer: int, algorithm: str, vira: str) -> dict:
    """One summary for a set of vira cells: weighted by class probability when all are present."""
    wsum = sum(c["vira_weight"] for c in cells)
    w = [c["vira_weight"] / wsum for c in cells] if len(cells) > 1 else [1.0]
    secs = [c["seconds_per_iteration"] for c in cells if c["seconds_per_iteration"] is not None]
    return {
        "game_value": float(sum(x * c["game_value"] for x, c in zip(w, cells, strict=True))),
        "exploitability": float(sum(x * c["exploitability"] for x, c in zip(w, cells, strict=True))),
        "iterations": max(c["iterations"] for c in cells),
        "seconds_per_iteration": float(np.mean(secs)) if secs else None,
        "score": list(score), "dealer": dealer, "vira": vira, "algorithm": algorithm,
        "units": "points per hand (player 0)", "peak_rss_mb": peak_rss_mb(),
        "cells": [{k: v for k, v in c.items() if k != "history"} for c in cells],
    }


def write_json(path: Path, obj) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(obj, indent=2, default=float) + "\n")
    tmp.replace(path)


def _version() -> str:
    from truco_lab import __version__

    return __version__
