"""Strategy tables: one row per (information set, action), stored as Parquet.

Columns for native truco solves: ``vira`` (representative card of the vira
class), ``vira_class``, ``score0``, ``score1``, ``dealer``, ``player``,
``hand`` (canonical levels, strongest first, e.g. ``Zap 3 2``), ``history``
(public actions, ``player:action``), ``hidden`` (the player's own face-down
cards, part of the information set), ``action`` (notation string, cards as the
level's representative card), ``probability`` (average strategy), ``reach``
(probability the equilibrium reaches the information set, chance included),
``action_value`` (expected points to the player after taking the action,
given the information set is reached) and ``regret`` (the solver's cumulative
regret). Forced information sets (one legal action) are left out unless asked.
Run metadata (rules, algorithm, iterations, exploitability, version, date) is
stored in the Parquet schema metadata under ``truco_lab``.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

META_KEY = b"truco_lab"
KEY_COLUMNS = ("vira_class", "score0", "score1", "dealer", "player", "hand", "history", "hidden")


def _cat(values) -> pd.Categorical:
    return pd.Categorical(values)


def subgame_frame(solver, include_forced: bool = False) -> pd.DataFrame:
    """The rows of one solved subgame (a :class:`solvers.vector.VectorSolver` on a labelled tree)."""
    t = solver.tree
    if t.source is None:
        raise ValueError("this tree has no source to label its rows: build it with a native builder")
    avg = solver.average_strategy()
    av, reach = solver.slot_values(avg)
    nact = t.infoset_nact
    keep = np.flatnonzero(nact >= (1 if include_forced else 2))
    cols = t.source.labels(t)
    slot = _slots_of(t.infoset_offset, nact, keep)
    info = np.repeat(keep, nact[keep])
    data = {k: np.full(len(slot), v) for k, v in cols["constants"].items()}
    data["player"] = cols["player"][info]
    for k in ("hand", "history", "hidden"):
        data[k] = _cat(cols[k][info])
    data["action"] = _cat(cols["action"][slot])
    data["probability"] = avg[slot].astype(np.float32)
    data["reach"] = reach[info].astype(np.float32)
    data["action_value"] = av[slot].astype(np.float32)
    data["regret"] = solver.regrets[slot].astype(np.float32)
    df = pd.DataFrame(data)
    if "vira" in df:
        df["vira"] = df["vira"].astype("category")
    return df


def _slots_of(offset: np.ndarray, nact: np.ndarray, keep: np.ndarray) -> np.ndarray:
    cnt = nact[keep].astype(np.int64)
    starts = np.repeat(offset[keep].astype(np.int64), cnt)
    within = np.arange(int(cnt.sum())) - np.repeat(np.cumsum(cnt) - cnt, cnt)
    return starts + within


class StrategyTable:
    """A strategy table in memory: a pandas DataFrame plus run metadata."""

    def __init__(self, df: pd.DataFrame, metadata: dict | None = None) -> None:
        self.df = df
        self.metadata = dict(metadata or {})

    # ---- I/O ------------------------------------------------------------
    def write(self, path: str | Path) -> Path:
        """Write Parquet atomically (zstd); metadata goes in the schema metadata."""
        import pyarrow as pa
        import pyarrow.parquet as pq

        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        table = pa.Table.from_pandas(self.df, preserve_index=False)
        meta = dict(table.schema.metadata or {})
        meta[META_KEY] = json.dumps(self.metadata, default=str).encode()
        table = table.replace_schema_metadata(meta)
        tmp = path.with_name(path.name + ".tmp")
        pq.write_table(table, tmp, compression="zstd")
        tmp.replace(path)
        return path

    @classmethod
    def load(cls, path: str | Path) -> StrategyTable:
        """Load one Parquet file, or every ``*.parquet`` in a directory (concatenated)."""
        import pyarrow.parquet as pq

        path = Path(path)
        files = sorted(path.glob("*.parquet")) if path.is_dir() else [path]
        if not files:
            raise FileNotFoundError(f"no strategy table (*.parquet) at {path}")
        frames, metas = [], []
        for f in files:
            t = pq.read_table(f)
            raw = (t.schema.metadata or {}).get(META_KEY)
            metas.append(json.loads(raw) if raw else {})
            frames.append(t.to_pandas())
        df = frames[0] if len(frames) == 1 else pd.concat(frames, ignore_index=True)
        for k in ("vira", "hand", "history", "hidden", "action"):
            if k in df and df[k].dtype != "category":
                df[k] = df[k].astype("category")
        meta = metas[0] if len(metas) == 1 else {"parts": metas}
        return cls(df, meta)

    # ---- access ---------------------------------------------------------
    def to_pandas(self) -> pd.DataFrame:
        return self.df

    def __len__(self) -> int:
        return len(self.df)

    def filter(self, **equal) -> StrategyTable:
        """Rows whose columns equal the given values (a list/tuple/set value means "any of")."""
        mask = np.ones(len(self.df), bool)
        for k, v in equal.items():
            if k not in self.df:
                raise KeyError(f"no column {k!r}; columns: {', '.join(self.df.columns)}")
            col = self.df[k]
            mask &= col.isin(list(v)).to_numpy() if isinstance(v, (list, tuple, set)) else (col == v).to_numpy()
        return StrategyTable(self.df[mask].reset_index(drop=True), self.metadata)

    def lookup(self, vira: str, cards: str, history: str | list[str] = "", *, player: int | None = None,
               score: tuple[int, int] | None = None, dealer: int | None = None) -> pd.DataFrame:
        """The rows of one information set, given real cards.

        ``vira`` and ``cards`` in notation (``"7c"``, ``"3d 2c Ah"``); ``history``
        is the hand's actions so far as notation strings, comma-separated or a
        list (``"play_face_up 4c, play_face_up 5h, play_face_down 7d"``); the
        opponent's face-down card may be written ``play_face_down ?``.
        """
        canonical_key = _keyer(self.metadata)
        df = self.df
        sc = score if score is not None else (int(df["score0"].iloc[0]), int(df["score1"].iloc[0]))
        dl = dealer if dealer is not None else int(df["dealer"].iloc[0])
        rules = self.metadata.get("rules")
        key = canonical_key(rules, vira, cards, history, dealer=dl, score=sc, player=player)
        return self.filter(score0=sc[0], score1=sc[1], dealer=dl, **key).df

    def frequency(self, action_prefix: str, by: str = "hand") -> pd.Series:
        """Aggregate view: reach-weighted frequency of actions starting with ``action_prefix``
        (e.g. ``play_face_down``, ``raise``, ``fold``) among the information sets where it is legal, by ``by``."""
        df = self.df
        act = df["action"].astype(str)
        legal_sets = df.loc[act.str.startswith(action_prefix), list(KEY_COLUMNS)].drop_duplicates()
        rows = df.merge(legal_sets, on=list(KEY_COLUMNS))
        hit = rows["action"].astype(str).str.startswith(action_prefix)
        w = rows["reach"] * rows["probability"] * hit
        g = pd.DataFrame({by: rows[by], "w": w, "reach": rows["reach"] * rows["probability"]})
        grouped = g.groupby(by, observed=True).sum()
        return (grouped["w"] / grouped["reach"]).rename(f"P({action_prefix})")


def _keyer(metadata: dict):
    """The function that maps real cards and histories to this table's key columns.

    Tables name it in their metadata (``keyer: "module:function"``), so this
    generic module never imports a game's package.
    """
    import importlib

    spec = metadata.get("keyer") or next((m.get("keyer") for m in metadata.get("parts", []) if m.get("keyer")), None)
    if not spec:
        raise ValueError("this table's metadata names no keyer (module:function) for lookups by real cards")
    mod, _, fn = spec.partition(":")
    return getattr(importlib.import_module(mod), fn)
