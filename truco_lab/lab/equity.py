"""Match-equity tables: player 0's match-win probability at the start of each hand.

``equity(a, b, d)`` is the probability that player 0 wins the match from scores
``(a, b)`` with player ``d`` dealing. The seat symmetry
``equity(a, b, d) = 1 - equity(b, a, 1 - d)`` lets a table be filled from half
the cells. Stored as Parquet with one row per cell: ``score0, score1, dealer,
equity, exploitability, iterations, seconds, peak_memory_gb``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from solvers.storage import atomic_write, stable_hash

COLUMNS = ("score0", "score1", "dealer", "equity", "exploitability", "iterations", "seconds", "peak_memory_gb")


class EquityTable:
    """A (possibly partial) match-equity table for a target score."""

    def __init__(self, target: int = 12) -> None:
        self.target = int(target)
        self.values = np.full((2, target, target), np.nan)  # [dealer, score0, score1]
        self.rows: dict[tuple[int, int, int], dict] = {}  # per cell: exploitability, iterations, ...

    def _check(self, a: int, b: int, d: int) -> None:
        if not (0 <= a < self.target and 0 <= b < self.target and d in (0, 1)):
            raise ValueError(f"cell ({a}, {b}, dealer {d}) is outside a match to {self.target}")

    def value(self, a: int, b: int, d: int) -> float:
        """Player 0's match-win probability at ``(a, b)``, dealer ``d``; ``KeyError`` if unknown."""
        self._check(a, b, d)
        v = self.values[d, a, b]
        if np.isnan(v):
            raise KeyError(f"equity of cell {a}x{b} dealer {d} is not known (not solved yet)")
        return float(v)

    def has(self, a: int, b: int, d: int) -> bool:
        return bool(not np.isnan(self.values[d, a, b]))

    def set(self, a: int, b: int, d: int, equity: float, mirror: bool = True, **info) -> None:
        """Record a cell (and, with ``mirror``, its seat-symmetric twin)."""
        self._check(a, b, d)
        self.values[d, a, b] = equity
        self.rows[(a, b, d)] = dict(info)
        if mirror:
            self.values[1 - d, b, a] = 1.0 - equity
            self.rows[(b, a, 1 - d)] = dict(info, mirror_of=[a, b, d])

    def key(self) -> str:
        """Stable hash of the known values (what a cell solved against this table depends on)."""
        known = np.argwhere(~np.isnan(self.values))
        return stable_hash([self.target, [[int(x) for x in k] + [float(self.values[tuple(k)])] for k in known]])

    def __len__(self) -> int:
        return int((~np.isnan(self.values)).sum())

    # ---- files ----------------------------------------------------------
    def to_pandas(self):
        import pandas as pd

        out = []
        for d, a, b in np.argwhere(~np.isnan(self.values)):
            info = self.rows.get((int(a), int(b), int(d)), {})
            out.append({"score0": int(a), "score1": int(b), "dealer": int(d), "equity": float(self.values[d, a, b]),
                        "exploitability": float(info.get("exploitability", np.nan)),
                        "iterations": int(info.get("iterations", 0)), "seconds": float(info.get("seconds", np.nan)),
                        "peak_memory_gb": float(info.get("peak_memory_gb", np.nan))})
        df = pd.DataFrame(out, columns=list(COLUMNS))
        return df.sort_values(["dealer", "score0", "score1"]).reset_index(drop=True)

    def write(self, path: str | Path) -> Path:
        import json

        import pyarrow as pa
        import pyarrow.parquet as pq

        t = pa.Table.from_pandas(self.to_pandas(), preserve_index=False)
        meta = dict(t.schema.metadata or {})
        meta[b"truco_lab"] = json.dumps({"target": self.target, "units": "match-win probability (player 0)",
                                         "key": self.key()}).encode()
        t = t.replace_schema_metadata(meta)
        return atomic_write(path, lambda p: pq.write_table(t, p))

    @classmethod
    def load(cls, path: str | Path) -> EquityTable:
        """Read ``equity.parquet`` (a file or a folder holding one); one-line ``ValueError`` if unusable."""
        import json

        import pyarrow.parquet as pq

        path = Path(path)
        if path.is_dir():
            path = path / "equity.parquet"
        try:
            t = pq.read_table(path)
        except FileNotFoundError:
            raise ValueError(f"equity table {path} does not exist") from None
        except Exception as e:  # noqa: BLE001 - pyarrow raises many types for corrupt files
            raise ValueError(f"equity table {path} is not a readable Parquet file ({type(e).__name__})") from None
        missing = [c for c in ("score0", "score1", "dealer", "equity") if c not in t.column_names]
        if missing:
            raise ValueError(f"equity table {path} lacks column(s) {', '.join(missing)}")
        raw = (t.schema.metadata or {}).get(b"truco_lab")
        try:
            target = json.loads(raw)["target"] if raw else None
        except (ValueError, KeyError, TypeError):
            target = None
        if not isinstance(target, int) or isinstance(target, bool) or not 2 <= target <= 30:
            raise ValueError(f"equity table {path} does not say which target score it is for (no truco_lab "
                             "metadata: not written by truco-lab match); rules differ in it (12, 30)")
        out = cls(target)
        df = t.to_pandas()
        for row in df.itertuples(index=False):
            info = {k: getattr(row, k) for k in ("exploitability", "iterations", "seconds", "peak_memory_gb")
                    if hasattr(row, k)}
            out.set(int(row.score0), int(row.score1), int(row.dealer), float(row.equity), mirror=False, **info)
        return out
