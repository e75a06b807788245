"""A solved run as the explorer reads it: its cells, and one decision at a time.

A run folder is what ``truco-lab match --out`` or ``truco-lab solve --out`` wrote: strategy tables named
``s{score0}-{score1}_d{dealer}_v{vira class}.{key}.parquet`` (each with its run metadata in the footer),
and for a match the ``equity.parquet`` of every cell. :class:`Run` lists the cells and answers
:meth:`Run.decision`: at one public history, every hand's strategy, reach, each action's value and its
**cost** against the hand's best action. Tables are read through :class:`solvers.tableindex.TableIndex`,
so a decision decodes one or two row groups, not the table. Bad input raises :class:`BrowseError`,
one line naming the value and what is accepted (the server answers it as HTTP 400).
"""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from solvers.tableindex import TableIndex
from solvers.tables import read_metadata
from truco_lab.abstraction.levels import hand_levels, level_names, vira_class_of, vira_classes
from truco_lab.lab.match import canonical
from truco_lab.rules.cards import card_str, parse_card
from truco_lab.rules.ruleset import RuleSet

TABLE_NAME = re.compile(r"^s(\d+)-(\d+)_d([01])_v(\d+)\.[0-9a-f]+\.parquet$")
# a hand reached less than this fraction of the decision's most reached hand: its average strategy was
# learnt from almost no weight, so its probabilities are not meaningful
LOW_REACH = 1e-3
COLUMNS = ["hand", "hidden", "action", "probability", "action_value", "reach"]
CACHED = 256  # decision answers kept per run (each ~0.1-1 MB of JSON-able rows)
MARK = 0.05  # the diff view marks probabilities that differ by at least this much


class BrowseError(ValueError):
    """A request the run cannot answer (one line: the value, and what is accepted)."""


@dataclass
class TableRef:
    """One strategy table of a run: its cell, vira class, file and footer metadata."""

    cell: tuple[int, int, int]
    vira_class: int
    path: Path
    meta: dict
    _index: TableIndex | None = field(default=None, repr=False)

    def index(self) -> TableIndex:
        if self._index is None:
            self._index = TableIndex.open(self.path)
        return self._index


class Run:
    """A match or solve folder, read-only: its tables and, for a match, its equity table."""

    def __init__(self, folder: str | Path) -> None:
        self.folder = Path(folder).resolve()
        if not self.folder.is_dir():
            raise BrowseError(f"run folder {folder} does not exist (give a folder written by truco-lab match or "
                              "truco-lab solve --out)")
        self.tables: dict[tuple[tuple[int, int, int], int], TableRef] = {}
        for f in sorted(self.folder.rglob("s*_d*_v*.parquet")):
            m = TABLE_NAME.match(f.name)
            if m is None or "checkpoints" in f.parts:
                continue
            a, b, d, vc = (int(x) for x in m.groups())
            self.tables[((a, b, d), vc)] = TableRef((a, b, d), vc, f, read_metadata(f))
        if not self.tables:
            raise BrowseError(f"run folder {folder} holds no strategy tables (s*_d*_v*.parquet); solve with "
                              "truco-lab match/solve --out and without --no-table")
        first = next(iter(self.tables.values())).meta
        self.rules = RuleSet.from_dict(first.get("rules"))
        self.units = first.get("units", "points per hand (player 0)")
        self.equity_units = "match-win" in self.units
        self.kind = "match" if (self.folder / "equity.parquet").exists() else "solve"
        self.name = self.folder.name
        self._cache: OrderedDict[tuple, dict] = OrderedDict()
        self._lock = threading.Lock()

    # ---- cells --------------------------------------------------------------------------------------
    def cells(self) -> list[dict]:
        """One object per cell: ``score0, score1, dealer, equity, exploitability`` (the equity table's, or
        for a solve folder the hand's game value), ``solved`` (its tables are here), ``mirror_of`` (the cell
        whose tables play it with the seats swapped, or ``None``) and its ``viras``."""
        out = []
        if self.kind == "match":
            import pandas as pd

            eq = pd.read_parquet(self.folder / "equity.parquet")
            for r in eq.itertuples(index=False):
                cell = (int(r.score0), int(r.score1), int(r.dealer))
                canon, mirrored = canonical(cell)
                out.append(self._cell_row(cell, float(r.equity), _num(r.exploitability),
                                          tuple(canon) if mirrored else None))
        else:
            for cell in sorted({c for c, _ in self.tables}):
                refs = [t for (c, _), t in self.tables.items() if c == cell]
                w = [_class_weight(self.rules, t.vira_class) for t in refs]
                value = sum(wi * (_num(t.meta.get("game_value")) or 0.0) for wi, t in zip(w, refs, strict=True)) / sum(w)
                expl = max(_num(t.meta.get("exploitability")) for t in refs)
                out.append(self._cell_row(cell, value, expl, None))
        return out

    def _cell_row(self, cell, equity: float, expl: float, mirror_of) -> dict:
        src = tuple(mirror_of) if mirror_of else cell  # a mirror plays its twin's tables
        viras = [{"vira_class": vc, "vira": t.meta.get("vira"), "exploitability": _num(t.meta.get("exploitability"))}
                 for (c, vc), t in sorted(self.tables.items()) if c == src]
        return {"score0": cell[0], "score1": cell[1], "dealer": cell[2], "equity": equity, "exploitability": expl,
                "solved": bool(viras) and not mirror_of, "mirror_of": list(mirror_of) if mirror_of else None,
                "viras": viras}

    def table(self, cell: str | tuple, vira: str | None) -> TableRef:
        """The table of ``cell`` (``"S0,S1,D"``) under ``vira`` (a card; ``None``: the first class solved)."""
        c = parse_cell(cell, self.rules.target)
        here = sorted(vc for (cc, vc) in self.tables if cc == c)
        if not here:
            canon, mirrored = canonical(c)
            if mirrored and any(cc == tuple(canon) for cc, _ in self.tables):
                a, b, d = canon
                raise BrowseError(f"cell {_cs(c)} is the seat mirror of cell {a},{b},{d}: its strategy is that "
                                  f"cell's with the seats swapped (ask for cell={a},{b},{d})")
            solved = sorted({cc for cc, _ in self.tables})
            raise BrowseError(f"cell {_cs(c)} has no strategy table in {self.name} (solved: "
                              f"{' '.join(_cs(x) for x in solved[:12])}{' ...' if len(solved) > 12 else ''})")
        if vira in (None, ""):
            return self.tables[(c, here[0])]
        try:
            v = parse_card(vira)
            vc = vira_class_of(self.rules, v).index
        except (ValueError, KeyError):
            raise BrowseError(f"vira {vira!r} is not a card of this deck (e.g. "
                              f"{', '.join(self.tables[(c, x)].meta.get('vira', '?') for x in here[:4])})") from None
        if vc not in here:
            reps = ", ".join(f"{self.tables[(c, x)].meta.get('vira')} (class {x})" for x in here)
            raise BrowseError(f"vira {vira} is in vira class {vc}, not solved for cell {_cs(c)} here (solved: {reps})")
        return self.tables[(c, vc)]

    # ---- one decision -------------------------------------------------------------------------------
    def decision(self, cell: str | tuple, vira: str | None = None, history: str = "") -> dict:
        """:meth:`answer`, remembered: tables never change under a run, so the last :data:`CACHED` answers are
        kept (a page's back and forward steps, and many readers of one position, cost one read)."""
        key = (_cs(parse_cell(cell, self.rules.target)), vira or "", normalize_history(history))
        with self._lock:
            hit = self._cache.get(key)
            if hit is not None:
                self._cache.move_to_end(key)
                return hit
        out = self.answer(*key)
        with self._lock:
            self._cache[key] = out
            while len(self._cache) > CACHED:
                self._cache.popitem(last=False)
        return out

    def mirror_of(self, cell: str | tuple) -> tuple[int, int, int] | None:
        """The canonical cell whose tables play ``cell`` with the seats swapped, if ``cell`` has none itself."""
        c = parse_cell(cell, self.rules.target)
        if any(cc == c for cc, _ in self.tables):
            return None
        canon, mirrored = canonical(c)
        return tuple(canon) if mirrored and any(cc == tuple(canon) for cc, _ in self.tables) else None

    def answer(self, cell: str | tuple, vira: str | None = None, history: str = "") -> dict:
        """:meth:`direct`, or for a seat-mirrored cell the canonical cell's answer with the seats swapped
        (player numbers in the history and the answer; values are the acting player's either way)."""
        m = self.mirror_of(cell)
        if m is None:
            return self.direct(cell, vira, history)
        out = self.direct(m, vira, swap_seats(normalize_history(history)))
        return _swapped(out, parse_cell(cell, self.rules.target))

    def direct(self, cell: str | tuple, vira: str | None = None, history: str = "") -> dict:
        """The decision after ``history`` (the tables' notation, e.g. ``"0:Zap, 1:raise 3"``): the acting
        ``player``, the legal ``actions``, ``rows`` (per hand and action: ``hand``, ``cards``, ``hidden``,
        ``action``, ``probability``, ``action_value``, ``reach``, ``cost``, ``low_reach``) and where to go next."""
        t = self.table(cell, vira)
        h = normalize_history(history)
        df = t.index().rows(h, ["player", *COLUMNS]).to_pandas()
        if df.empty:
            raise BrowseError(f"no decision after history {h!r} in cell {_cs(t.cell)}, vira {t.meta.get('vira')}: "
                              "the hand is over, the move is forced (tables leave those out) or the history is "
                              "off the solved tree (histories are 'player:action', comma-separated)")
        for c in ("hand", "hidden", "action"):
            df[c] = df[c].astype(str)
        player = int(df["player"].iloc[0])
        best = df.groupby(["hand", "hidden"])["action_value"].transform("max")
        scale = 100.0 if self.equity_units else 1.0
        df["cost"] = ((best - df["action_value"]) * scale).astype(float)
        df["low_reach"] = df["reach"] < LOW_REACH * float(df["reach"].max())
        cards = self._hand_cards(t)
        df["cards"] = df["hand"].map(lambda x: cards(x))
        actions = list(dict.fromkeys(df["action"].tolist()))
        nxt = []
        for a in actions:
            child = join_history(h, f"{player}:{self.action_token(t, a)}")
            nxt.append({"action": a, "history": child, "decision": bool(t.index().runs_of(child))})
        rows = df[["hand", "cards", "hidden", "action", "probability", "action_value", "reach", "cost", "low_reach"]]
        return {"cell": list(t.cell), "vira": t.meta.get("vira"), "vira_class": t.vira_class, "history": h,
                "steps": split_history(h), "player": player, "actions": actions, "next": nxt,
                "exploitability": _num(t.meta.get("exploitability")), "units": self.units,
                "cost_units": "percentage points of the match" if self.equity_units else "points per hand",
                "low_reach_below": LOW_REACH, "run": self.name,
                "rows": _records(rows)}

    def range(self, cell: str | tuple, vira: str | None = None, history: str = "", hand: str = "") -> dict:
        """The opponent's equilibrium range at the decision after ``history``: each hand the opponent can
        hold, weighted by the opponent's own probabilities of every action it took on the way (its face-down
        cards followed as its own hidden state) and by the deal given ``hand`` (``mass``: the unnormalized sum,
        ways to deal times probabilities) (the acting player's hand in
        the tables' level names, e.g. ``"Copas 4 4"``; empty: no hand picked, the deal's prior)."""
        m = self.mirror_of(cell)
        if m is not None:
            out = self.range(m, vira, swap_seats(normalize_history(history)), hand)
            return _swapped(out, parse_cell(cell, self.rules.target))
        t = self.table(cell, vira)
        h = normalize_history(history)
        me = int(self.decision(cell, vira, h)["player"])
        q = 1 - me
        vc = vira_classes(self.rules)[t.vira_class]
        names = level_names(self.rules, vc)
        level = {n: i for i, n in enumerate(names)}
        mine = _level_counts(hand, level, len(names)) if hand else np.zeros(len(names), np.int64)
        weight: dict[tuple[str, str], float] | None = None  # (hand, own hidden) -> the opponent's probability
        steps = split_history(h)
        for i, step in enumerate(steps):
            if not step.startswith(f"{q}:"):
                continue
            rows = t.index().rows(", ".join(steps[:i]), ["hand", "hidden", "action", "probability"]).to_pylist()
            if not rows:
                continue  # a forced move: probability one, and tables leave it out
            tok = step.split(":", 1)[1]
            nxt: dict[tuple[str, str], float] = {}
            for r in rows:
                key = (r["hand"], r["hidden"])
                if (weight is not None and key not in weight) or self.action_token(t, r["action"]) != tok:
                    continue
                hid = r["hidden"]
                if tok == "hidden":  # its own face-down card joins its hidden state
                    lv = names[int(hand_levels(vc).card_level[parse_card(r["action"].split()[1])])]
                    hid = f"{hid} {lv}".strip()
                w = (1.0 if weight is None else weight[key]) * float(r["probability"])
                nxt[(r["hand"], hid)] = nxt.get((r["hand"], hid), 0.0) + w
            weight = nxt
        mult = np.array(vc.multiplicity, np.int64)
        by_hand: dict[str, float] = {}
        if weight is None:  # the opponent has not acted: every hand, by the deal alone
            weight = {(" ".join(names[x] for x in sorted(hh, reverse=True)), ""): 1.0
                      for hh in (tuple(int(x) for x in row) for row in hand_levels(vc).hands)}
        for (oh, _), w in weight.items():
            theirs = _level_counts(oh, level, len(names))
            by_hand[oh] = by_hand.get(oh, 0.0) + w * _deal_weight(mult, mine, theirs)
        total = sum(by_hand.values())
        if total <= 0:
            raise BrowseError(f"no opponent hand is consistent with history {h!r} and hand {hand!r}")
        cards = self._hand_cards(t)
        rows = sorted(({"hand": k, "cards": cards(k), "share": v / total} for k, v in by_hand.items() if v > 0),
                      key=lambda r: -r["share"])
        return {"cell": list(t.cell), "vira": t.meta.get("vira"),
                "history": h, "player": q, "hand": hand, "hands": len(rows), "rows": rows, "mass": total,
                "exploitability": _num(t.meta.get("exploitability")), "run": self.name}

    def action_token(self, t: TableRef, action: str) -> str:
        """The history token an action leaves (a face-up card shows as its level's name, a face-down one as
        ``hidden``)."""
        kind, _, arg = action.partition(" ")
        if kind == "play_face_down":
            return "hidden"
        if kind == "play_face_up":
            vc = vira_classes(self.rules)[t.vira_class]
            return level_names(self.rules, vc)[int(hand_levels(vc).card_level[parse_card(arg)])]
        return action

    def _hand_cards(self, t: TableRef):
        """``hand`` (level names, strongest first) -> the representative cards of those levels."""
        vc = vira_classes(self.rules)[t.vira_class]
        names = level_names(self.rules, vc)
        level = {n: i for i, n in enumerate(names)}
        memo: dict[str, str] = {}

        def cards(hand: str) -> str:
            if hand not in memo:
                used: dict[int, int] = {}
                out = []
                for n in hand.split():
                    lv = level.get(n)
                    if lv is None:
                        return hand
                    k = used.get(lv, 0)
                    used[lv] = k + 1
                    cs = vc.level_cards[lv]
                    out.append(card_str(cs[min(k, len(cs) - 1)]))
                memo[hand] = " ".join(out)
            return memo[hand]

        return cards


def _level_counts(hand: str, level: dict[str, int], n: int) -> np.ndarray:
    """A hand in level names -> how many of its cards lie in each level."""
    out = np.zeros(n, np.int64)
    for name in hand.split():
        if name not in level:
            raise BrowseError(f"hand {hand!r}: {name!r} is not a level of this vira class (levels: "
                              f"{', '.join(level)})")
        out[level[name]] += 1
    return out


def _deal_weight(mult: np.ndarray, mine: np.ndarray, theirs: np.ndarray) -> float:
    """Ways to deal the opponent ``theirs`` (cards per level) once ``mine`` are out of the deck."""
    from math import comb

    w = 1
    for n, a, b in zip(mult.tolist(), mine.tolist(), theirs.tolist(), strict=True):
        if a + b > n:
            return 0.0
        w *= comb(n - a, b)
    return float(w)


def diff(a: dict, b: dict) -> dict:
    """Two decisions side by side: per ``(hand, hidden, action)`` both probabilities and values, and
    ``marked`` where the probabilities differ by at least :data:`MARK`."""
    key = ("hand", "hidden", "action")
    rb = {tuple(r[k] for k in key): r for r in b["rows"]}
    rows = []
    for r in a["rows"]:
        o = rb.pop(tuple(r[k] for k in key), None)
        pb = o["probability"] if o else None
        rows.append({**{k: r[k] for k in key}, "cards": r["cards"], "probability_a": r["probability"],
                     "probability_b": pb, "value_a": r["action_value"], "value_b": o["action_value"] if o else None,
                     "marked": pb is None or abs(r["probability"] - pb) >= MARK})
    for o in rb.values():
        rows.append({**{k: o[k] for k in key}, "cards": o["cards"], "probability_a": None,
                     "probability_b": o["probability"], "value_a": None, "value_b": o["action_value"], "marked": True})
    strip = ("rows", "next")
    return {"a": {k: v for k, v in a.items() if k not in strip}, "b": {k: v for k, v in b.items() if k not in strip},
            "mark": MARK, "marked": sum(r["marked"] for r in rows), "rows": rows}


# ---- parameters ------------------------------------------------------------------------------------------
def parse_cell(text: str | tuple, target: int = 12) -> tuple[int, int, int]:
    """``"S0,S1,D"`` (or a tuple) -> ``(score0, score1, dealer)``, validated against the match's target."""
    parts = list(text) if isinstance(text, (tuple, list)) else str(text).replace("x", ",").split(",")
    try:
        a, b, d = (int(str(p).strip()) for p in parts)
    except ValueError:
        raise BrowseError(f"cell {text!r} is not S0,S1,D (two scores and the dealer, e.g. 10,10,0)") from None
    if not (0 <= a < target and 0 <= b < target and d in (0, 1)):
        raise BrowseError(f"cell {text!r} is outside a match to {target} (scores 0..{target - 1}, dealer 0 or 1)")
    return a, b, d


def split_history(history: str) -> list[str]:
    return [x.strip() for x in str(history).split(",") if x.strip()]


def normalize_history(history: str) -> str:
    """The tables' spelling: ``player:action`` tokens joined by ``", "``; one-line error on a bad token."""
    steps = split_history(history or "")
    for s in steps:
        p, sep, act = s.partition(":")
        if not sep or p not in ("0", "1") or not act:
            raise BrowseError(f"history step {s!r} is not 'player:action' (player 0 or 1, e.g. '0:Zap' or "
                              "'1:raise 3')")
    return ", ".join(steps)


def swap_seats(history: str) -> str:
    """A history with the players' numbers swapped (``0:Zap, 1:raise 3`` -> ``1:Zap, 0:raise 3``)."""
    return ", ".join(f"{1 - int(x[0])}{x[1:]}" for x in split_history(history))


def _swapped(answer: dict, cell: tuple[int, int, int]) -> dict:
    """A canonical cell's answer told from its mirror ``cell``: seats swapped back."""
    out = dict(answer, cell=list(cell), mirror_of=answer["cell"], player=1 - answer["player"])
    out["history"] = swap_seats(answer["history"])
    if "steps" in out:
        out["steps"] = split_history(out["history"])
    if "next" in out:
        out["next"] = [dict(n, history=swap_seats(n["history"])) for n in answer["next"]]
    return out


def join_history(history: str, step: str) -> str:
    return f"{history}, {step}" if history else step


def _cs(cell) -> str:
    return ",".join(str(x) for x in cell)


def _num(x) -> float | None:
    try:
        x = float(x)
    except (TypeError, ValueError):
        return None
    return None if np.isnan(x) else x


def _records(df) -> list[dict]:
    """Rows as JSON-able dicts (column lists zipped: iterating the frame's rows costs ~20x more)."""
    names = list(df.columns)
    cols = [df[c].to_numpy(dtype=object if df[c].dtype.kind not in "fb" else None).tolist() for c in names]
    return [dict(zip(names, vals, strict=True)) for vals in zip(*cols, strict=True)]


def _class_weight(rules: RuleSet, vc: int) -> float:
    return vira_classes(rules)[vc].weight
