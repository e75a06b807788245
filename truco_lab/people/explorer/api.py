"""What the explorer's front end asks, answered from one or two runs (the server and the widget share it).

Endpoints (all GET, JSON): ``/api/cells`` (``run``: 0 or 1), ``/api/decision`` (``cell=S0,S1,D``,
``vira=CARD``, ``history=H``, ``run``), ``/api/diff`` (the decision ``cell, vira, history`` of run 0 against
``cell2, vira2, history2`` of ``run2``; empty second values repeat the first), ``/api/range`` (the
opponent's range at a decision, ``hand``: the acting player's hand in level names for card removal). A bad parameter raises
:class:`truco_lab.lab.browse.BrowseError` with one line saying what is accepted.
"""

from __future__ import annotations

from pathlib import Path

from truco_lab.lab.browse import BrowseError, Run, diff

PARAMS = {
    "/api/cells": {"run"},
    "/api/decision": {"cell", "vira", "history", "run"},
    "/api/range": {"cell", "vira", "history", "hand", "run"},
    "/api/diff": {"cell", "vira", "history", "cell2", "vira2", "history2", "run2"},
}


class ExplorerAPI:
    """The runs being explored (the first, and optionally a second to compare) and their endpoints."""

    def __init__(self, folders: list[str | Path]) -> None:
        if not 1 <= len(folders) <= 2:
            raise BrowseError(f"explore takes one or two run folders, got {len(folders)}")
        self.runs = [Run(f) for f in folders]

    def run(self, text: str | None) -> Run:
        if text in (None, ""):
            return self.runs[0]
        if text not in {str(i) for i in range(len(self.runs))}:
            raise BrowseError(f"run {text!r} is not one of {', '.join(str(i) for i in range(len(self.runs)))} "
                              f"(the folders given: {', '.join(r.name for r in self.runs)})")
        return self.runs[int(text)]

    def handle(self, path: str, params: dict[str, str]) -> dict:
        """The JSON answer to ``path`` with ``params`` (strings)."""
        if path not in PARAMS:
            raise LookupError(f"no endpoint {path} (endpoints: {', '.join(PARAMS)})")
        extra = sorted(set(params) - PARAMS[path])
        if extra:
            raise BrowseError(f"{path} takes no parameter {extra[0]!r} (it takes: {', '.join(sorted(PARAMS[path]))})")
        if path == "/api/cells":
            r = self.run(params.get("run"))
            return {"run": r.name, "kind": r.kind, "units": r.units, "rules": r.rules.name, "cells": r.cells()}
        if path == "/api/decision":
            if not params.get("cell"):
                raise BrowseError("/api/decision needs cell=S0,S1,D (e.g. cell=10,10,1)")
            return self.run(params.get("run")).decision(params["cell"], params.get("vira"), params.get("history", ""))
        if path == "/api/range":
            if not params.get("cell"):
                raise BrowseError("/api/range needs cell=S0,S1,D (e.g. cell=10,10,1)")
            return self.run(params.get("run")).range(params["cell"], params.get("vira"), params.get("history", ""),
                                                     params.get("hand", ""))
        if not params.get("cell"):
            raise BrowseError("/api/diff needs cell=S0,S1,D")
        a = self.runs[0].decision(params["cell"], params.get("vira"), params.get("history", ""))
        b = self.run(params.get("run2")).decision(params.get("cell2") or params["cell"],
                                                   params.get("vira2") or params.get("vira"),
                                                   params.get("history2") or params.get("history", ""))
        return diff(a, b)
