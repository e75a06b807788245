"""What the explorer's front end asks, answered from one or two runs (the server and the widget share it).

Endpoints (all GET, JSON): ``/api/cells`` (``run``: 0 or 1), ``/api/decision`` (``cell=S0,S1,D``,
``vira=CARD``, ``history=H``, ``run``), ``/api/diff`` (the decision ``cell, vira, history`` of run 0 against
``cell2, vira2, history2`` of ``run2``; empty second values repeat the first), ``/api/range`` (the
opponent's range at a decision, ``hand``: the acting player's hand in level names for card removal). A bad parameter raises
:class:`truco_lab.lab.browse.BrowseError` with one line saying what is accepted.
"""

from __future__ import annotations

import secrets
import threading
from collections import OrderedDict
from pathlib import Path

from truco_lab.lab.browse import BrowseError, Run, diff

TABLE_BOTS = ("random", "heuristic-low", "heuristic-high", "solved", "br-solved", "br-random", "br-heuristic-low",
              "br-heuristic-high")
TEAM_BOTS = ("random", "heuristic-low", "heuristic-high", "mccfr")  # two against two: rivals and partner
TABLE_PARAMS = {
    "/api/table/new": {"bot", "partner", "seat", "seed", "hints", "hand", "score", "dealer"},
    "/api/table/act": {"id", "action"},
    "/api/table/next": {"id"},
    "/api/table/view": {"id"},
}
MAX_TABLES = 64  # tables kept per server (the oldest is dropped)

PARAMS = {
    "/api/cells": {"run"},
    "/api/decision": {"cell", "vira", "history", "run"},
    "/api/range": {"cell", "vira", "history", "hand", "run"},
    "/api/diff": {"cell", "vira", "history", "cell2", "vira2", "history2", "run2"},
}


class TableHost:
    """The browser tables of one server: ``rules``, and ``strategy`` (a MatchStrategy) for the solved bot,
    its best response and hints (``None``: those are refused with a reason); two against two, ``mccfr``
    (loaded ``truco-lab mccfr`` runs) for the mccfr bot."""

    def __init__(self, rules, strategy=None, why_unsolved: str = "this server has no solved match run",
                 mccfr=None) -> None:
        self.rules, self.strategy, self.why, self.mccfr = rules, strategy, why_unsolved, mccfr
        self.tables: OrderedDict[str, object] = OrderedDict()
        self.lock = threading.Lock()

    def handle(self, path: str, params: dict[str, str]) -> dict:
        from truco_lab.people.session import SessionError

        extra = sorted(set(params) - TABLE_PARAMS[path])
        if extra:
            raise BrowseError(f"{path} takes no parameter {extra[0]!r} (it takes: {', '.join(sorted(TABLE_PARAMS[path]))})")
        if path == "/api/table/new":
            tid, t = self._new(params)
            return {"id": tid, "view": t.view()}
        t = self._get(params.get("id", ""))
        with t.lock:
            try:
                if path == "/api/table/act":
                    t.act(_int(params, "action", None))
                elif path == "/api/table/next":
                    t.next_hand()
            except SessionError as e:
                raise BrowseError(str(e)) from None
            return {"id": params["id"], "view": t.view()}

    def _new(self, params: dict[str, str]):
        if self.rules.seats == 4:
            t = self._new_team(params)
        else:
            if params.get("partner"):
                raise BrowseError(f"partner: {self.rules.name} is heads-up (no partner); partner is for *_2v2 rules")
            t = self._new_heads_up(params)
        tid = secrets.token_hex(8)
        with self.lock:
            self.tables[tid] = t
            while len(self.tables) > MAX_TABLES:
                self.tables.popitem(last=False)
        return tid, t

    def _score(self, params: dict[str, str]) -> tuple[int, int]:
        if not params.get("score"):
            return 0, 0
        try:
            score = tuple(int(x) for x in params["score"].split(","))
            assert len(score) == 2 and all(0 <= x < self.rules.target for x in score)
        except (ValueError, AssertionError):
            raise BrowseError(f"score {params['score']!r} is not A,B with both below {self.rules.target}") from None
        return score

    def _new_team(self, params: dict[str, str]):
        """Two against two: ``bot`` plays both rivals, ``partner`` (default: the same) the facing seat."""
        from truco_lab.people.roster import make_bot
        from truco_lab.people.session import TeamSession

        bot = params.get("bot") or "heuristic-high"
        partner = params.get("partner") or bot
        for what, name in (("bot", bot), ("partner", partner)):
            if name not in TEAM_BOTS:
                raise BrowseError(f"{what} {name!r} is not one of {', '.join(TEAM_BOTS)} (a team game has no solved "
                                  "strategy)")
        if params.get("hints", "0") not in ("", "0", "false"):
            raise BrowseError(f"hints: {self.rules.name} is a team game, with no solved strategy to hint from")
        if "mccfr" in (bot, partner) and not self.mccfr:
            raise BrowseError("the mccfr bot needs truco-lab mccfr runs: serve the table with --mccfr DIR")
        seat, dealer = _int(params, "seat", 0), _int(params, "dealer", 3)
        if seat not in range(4) or dealer not in range(4):
            raise BrowseError("two against two: seat and dealer are 0-3")
        seed = _int(params, "seed", secrets.randbelow(2**31))
        one = params.get("hand", "0") not in ("", "0", "false")
        mate = make_bot(partner, seed + 3, mccfr=self.mccfr)
        rivals = (make_bot(bot, seed + 1, mccfr=self.mccfr), make_bot(bot, seed + 2, mccfr=self.mccfr))
        return TeamSession(self.rules, mate, rivals, match=not one, seat=seat, seed=seed, score=self._score(params),
                           dealer=dealer)

    def _new_heads_up(self, params: dict[str, str]):
        from truco_lab.people.roster import make_bot
        from truco_lab.people.session import TableSession

        bot = params.get("bot") or "heuristic-high"
        if bot not in TABLE_BOTS:
            raise BrowseError(f"bot {bot!r} is not one of {', '.join(TABLE_BOTS)}")
        hints = params.get("hints", "0") not in ("", "0", "false")
        if bot in ("solved", "br-solved") and self.strategy is None:
            raise BrowseError(f"bot {bot!r} needs a solved match run: {self.why}")
        if hints and self.strategy is None:
            raise BrowseError(f"hints need a solved match run: {self.why}")
        seat, dealer = _int(params, "seat", 0), _int(params, "dealer", 1)
        if seat not in (0, 1) or dealer not in (0, 1):
            raise BrowseError("seat and dealer are 0 or 1")
        seed = _int(params, "seed", secrets.randbelow(2**31))
        one = params.get("hand", "0") not in ("", "0", "false")
        score = self._score(params)
        cell = (*score, dealer)
        try:
            b = make_bot(bot, seed + 1, self.strategy, rules=self.rules, cell=cell)
        except ValueError as e:
            raise BrowseError(str(e)) from None
        return TableSession(self.rules, b, match=not one, seat=seat, seed=seed, hints=self.strategy if hints else None,
                            score=score, dealer=dealer)

    def _get(self, tid: str):
        with self.lock:
            t = self.tables.get(tid)
        if t is None:
            raise BrowseError(f"no table {tid!r} here (tables live as long as the server; start a new one)")
        return t


def _int(params: dict[str, str], key: str, default: int | None) -> int:
    v = params.get(key, "")
    if v == "":
        if default is None:
            raise BrowseError(f"parameter {key} is needed (an integer)")
        return default
    try:
        return int(v)
    except ValueError:
        raise BrowseError(f"{key} {v!r} is not an integer") from None


class ExplorerAPI:
    """The runs being explored (the first, and optionally a second to compare) and their endpoints; with
    ``tables``, the browser table's endpoints too."""

    def __init__(self, folders: list[str | Path], tables: TableHost | None = None) -> None:
        if not (1 <= len(folders) <= 2 or (tables is not None and not folders)):
            raise BrowseError(f"explore takes one or two run folders, got {len(folders)}")
        self.runs = [Run(f) for f in folders]
        self.tables = tables

    def run(self, text: str | None) -> Run:
        if text in (None, ""):
            return self.runs[0]
        if text not in {str(i) for i in range(len(self.runs))}:
            raise BrowseError(f"run {text!r} is not one of {', '.join(str(i) for i in range(len(self.runs)))} "
                              f"(the folders given: {', '.join(r.name for r in self.runs)})")
        return self.runs[int(text)]

    def handle(self, path: str, params: dict[str, str]) -> dict:
        """The JSON answer to ``path`` with ``params`` (strings)."""
        if path in TABLE_PARAMS and self.tables is not None:
            return self.tables.handle(path, params)
        if path not in PARAMS or not self.runs:
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
