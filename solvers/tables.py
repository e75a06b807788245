"""Strategy tables: one row per (information set, action), stored as Parquet.

Every table has the generic columns ``player``, ``action`` (notation string), ``probability`` (average
strategy), ``reach`` (probability the equilibrium reaches the information set, chance included),
``action_value`` (expected payoff to the acting player after the action, given the set is reached) and
``regret`` (the solver's cumulative regret). The game's own key columns, their meanings and the lookup by a
game's own notation come from its :class:`TableSchema`, which the game registers by name
(:func:`register_schema`) and which a table names in its metadata: this module never imports a game, and no
data file chooses code (a name selects among registered schemas only). Forced information sets (one legal
action) are left out unless asked. Run metadata (rules, algorithm, iterations, exploitability, version,
date) is stored in the Parquet schema metadata under the lab's file key (``META_KEY``).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numba as nb
import numpy as np
import pandas as pd

META_KEY = b"truco_lab"
COUNTS_KEY = b"truco_lab_counts"  # row counts known only once a streamed table is written
GENERIC_COLUMNS = {
    "player": "the player acting at this information set",
    "action": "the action, in the game's notation",
    "probability": "probability of the action under the average (equilibrium) strategy",
    "reach": "probability that the equilibrium reaches this information set (deal and both players' actions)",
    "action_value": "expected payoff to the ACTING player after taking the action, given the information set is "
                    "reached (units in the metadata: points per hand or match-win probability)",
    "regret": "the solver's cumulative regret of the action (diagnostic)",
}


@dataclass(frozen=True)
class TableSchema:
    """A game's side of its strategy tables: the columns that identify an information set (``player``
    among them), what each of the game's columns means, the string columns kept as categoricals, and
    ``lookup(table, *args, **kw) -> DataFrame`` answering :meth:`StrategyTable.lookup` in the game's own
    notation (``None``: lookups by key columns only, through :meth:`StrategyTable.filter`). ``aliases``
    are older names tables may carry in their metadata."""

    name: str
    key_columns: tuple[str, ...]
    columns: dict[str, str] = field(default_factory=dict)
    categories: tuple[str, ...] = ()
    lookup: Callable | None = None
    aliases: tuple[str, ...] = ()

    @property
    def column_docs(self) -> dict[str, str]:
        """Every column's meaning: the game's, then the generic ones."""
        return {**self.columns, **GENERIC_COLUMNS}


SCHEMAS: dict[str, TableSchema] = {}
"""Registered table schemas by name (and alias): games register theirs; tables name theirs in metadata."""


def register_schema(schema: TableSchema) -> None:
    """Make tables whose metadata names ``schema`` (or one of its aliases) use it."""
    for name in (schema.name, *schema.aliases):
        SCHEMAS[name] = schema


def _load_plugins() -> None:
    """Schemas that installed packages declare under the entry-point group ``solvers.table_schemas`` (so a
    table loads with its lookup before its game is imported; the package's metadata chooses the code, never
    the data file)."""
    from importlib.metadata import entry_points

    for ep in entry_points(group="solvers.table_schemas"):
        if ep.name not in SCHEMAS:
            register_schema(ep.load())


def schema_of(metadata: dict) -> TableSchema | None:
    """The registered schema a table's metadata names (``schema``, or an older table's ``keyer``)."""
    metas = [metadata, *metadata.get("parts", [])]
    names = [m.get(k) for m in metas for k in ("schema", "keyer") if m.get(k)]
    if names and not any(n in SCHEMAS for n in names):
        _load_plugins()
    for m in metas:
        for k in ("schema", "keyer"):
            if m.get(k) in SCHEMAS:
                return SCHEMAS[m[k]]
    return None


def column_docs(metadata: dict) -> dict[str, str]:
    """The column docs a table with ``metadata`` is written with."""
    schema = schema_of(metadata)
    return schema.column_docs if schema is not None else dict(GENERIC_COLUMNS)


def small_unique(x: np.ndarray, size: int) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(x, return_inverse=True)`` for integers in ``0..size-1``, without sorting: three linear
    passes in numba (numpy's scatter and gather took 6 ms per million rows even for 200 categories; 48 calls
    were 0.72 s of a 10x10 table's 7.7)."""
    x = np.ascontiguousarray(x)
    index = np.zeros(size, np.int32)
    uniq = _mark_and_rank(x.reshape(-1), index)
    inv = np.empty(x.shape, np.int32)
    _gather_codes(x.reshape(-1), index, inv.reshape(-1))
    return uniq, inv


def present_codes(x: np.ndarray, size: int) -> np.ndarray:
    """The distinct values of integers ``x`` in ``0..size-1``, ascending, with nothing per element made."""
    return _mark_and_rank(np.ascontiguousarray(x).reshape(-1), np.zeros(size, np.int32))


@nb.njit(cache=True, nogil=True)
def _mark_and_rank(x, index):
    """Mark the values of ``x`` in ``index``, then number the marked ones in order; the values present."""
    for v in x:
        index[v] = 1
    n = 0
    for i in range(index.shape[0]):
        if index[i]:
            index[i] = n
            n += 1
    uniq = np.empty(n, np.int64)
    for v in x:
        uniq[index[v]] = v
    return uniq


@nb.njit(cache=True, nogil=True)
def _gather_codes(x, index, out):
    for i in range(x.shape[0]):
        out[i] = index[x[i]]


def _used(codes: np.ndarray, n_categories: int) -> tuple[np.ndarray, np.ndarray]:
    """The categories these rows use and their codes among them; without a sort where the categories are few
    against the rows (a table's hand, hidden and action codes, a part's nodes): the sort was most of a row
    group's time."""
    if n_categories <= 4 * len(codes) + 65536:
        return small_unique(codes, n_categories)
    # many categories (a tree's nodes): rows come in runs of one code (a node's information sets and their
    # actions are contiguous), so only the runs' codes are sorted; np.unique over every row was 1.1 s of a
    # 10x10 table's 8.7
    cut = np.flatnonzero(codes[1:] != codes[:-1]) + 1
    used, inv = np.unique(codes[np.r_[0, cut]] if len(codes) else codes, return_inverse=True)
    return used, np.repeat(inv, np.diff(np.r_[0, cut, len(codes)]) if len(codes) else 0)


def _code_width(n: int) -> type:
    """The narrowest code type for ``n`` categories (pandas' choice for a categorical)."""
    return np.int8 if n < 127 else np.int16 if n < 32767 else np.int32


# A file's columns have one type, fixed by its first row group, so a column's codes must be as wide as any
# group of the file can need: a later group with more categories than the first group's type holds cannot
# be written. One tree's groups share its category lists (their lengths bound every group); a split cell's
# parts each have their own lists, so a split table takes the widest its columns can need.
SPLIT_WIDTHS = {"history": np.int32}  # a part's nodes; every other column: int16 (at most 32,768 codes)


def _cat(codes: np.ndarray, categories) -> pd.Categorical:
    """A categorical holding only the categories these rows use."""
    used, inv = _used(codes, len(categories))
    return pd.Categorical.from_codes(inv.astype(np.int32), categories=pd.Index(categories[used].astype(str)))


def _dictionary(codes: np.ndarray, categories, width: type):
    """:func:`_cat` as an Arrow dictionary column with ``width`` codes, built without pandas."""
    import pyarrow as pa

    used, inv = _used(codes, len(categories))
    # categories that make their own Arrow strings (a tree's histories, built on demand) skip numpy's
    values = categories.arrow(used) if hasattr(categories, "arrow") else pa.array(
        np.asarray(categories[used]).astype(str), pa.string())
    return pa.DictionaryArray.from_arrays(inv.astype(width), values)


# a source's label entries that are not per-set key columns
NOT_KEYS = ("constants", "player", "action", "action_names", "min_actions")


def _labelled(t, min_actions: int = 0):
    if t.source is None:
        raise ValueError("this tree has no source to label its rows: build it with a native builder")
    return t.source.labels(t, min_actions=min_actions) if min_actions else t.source.labels(t)


def _frame(t, cols: dict, slot: np.ndarray, info: np.ndarray, avg, av, reach, regrets) -> pd.DataFrame:
    data = {k: np.full(len(slot), v) for k, v in cols["constants"].items()}
    data["player"] = cols["player"][info]
    for k, v in cols.items():  # the source's per-information-set label columns: (codes, categories)
        if k not in NOT_KEYS:
            codes, cats = v
            data[k] = _cat(codes[info], cats)
    data["action"] = _cat(cols["action"][0][slot], cols["action"][1])
    data.update(_numbers(slot, info, avg, av, reach, regrets))
    df = pd.DataFrame(data)
    for k, v in cols["constants"].items():  # a constant text column (a name) is a one-category column
        if isinstance(v, str):
            df[k] = df[k].astype("category")
    return df


NUMBER_COLUMNS = ("probability", "reach", "action_value", "regret")
# zstd's level for table files. Arrow's default (1) finds few of the repeats in the reach column (one information
# set's reach on each of its action rows, float32 noise between sets); level 4 does. Measured on a 10x10 table
# (14.5 M rows, its 15 row groups written from memory, four alternating runs beside a running match): 91.2 -> 75.1 MB
# (reach 38.0 -> 24.5 MB), the writes 1.42-1.63 s -> 1.72-2.29 s (level 3: 79.3 MB, 1.51-1.79 s). That is ~6% more
# of a table's time (~0.15 us per entry, ~0.3 rows per entry) for 18% less disk, which is what bounds a long match
# here (min:6's tables). Level 5 saved 1% more and wrote 1.5x slower; byte-stream-split pages were larger.
TABLE_ZSTD_LEVEL = 4


def _parquet_writer(path, table, meta: dict, constants):
    """A table file's writer. Parquet's dictionary encoding is tried only on the code columns (on the
    number columns it built a hash of every float and then fell back to plain pages) and min/max statistics
    are kept only on the one-value columns (``constants``, ``player``), which let a query over many files
    skip whole files; statistics of labels or numbers prune nothing in a table ordered by tree node.
    Measured on a 10x10 table (14.5 M rows): 2.92 -> 1.87 s per write, 46 -> 37 MB.
    Every column is declared required (a table has no missing values, so no definition levels are written) and
    the constant number columns are plain pages (dictionary-encoding one value hashed every row): the same
    10x10 table's 15 row groups 1.97 -> 1.35 s, the same size."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    schema = pa.schema([f.with_nullable(False) for f in table.schema],
                       metadata={META_KEY: json.dumps(meta, default=str).encode()})
    names = schema.names
    plain = {k for k, v in constants.items() if not isinstance(v, str)}
    return pq.ParquetWriter(path, schema, compression="zstd", compression_level=TABLE_ZSTD_LEVEL,
                            use_dictionary=[c for c in names if c not in NUMBER_COLUMNS and c not in plain],
                            write_statistics=[c for c in names if c in constants or c == "player"])


def _numbers(slot: np.ndarray, info: np.ndarray, avg, av, reach, regrets) -> dict[str, np.ndarray]:
    return dict(zip(NUMBER_COLUMNS, (avg[slot].astype(np.float32), reach[info].astype(np.float32),
                                     av[slot].astype(np.float32), regrets[slot].astype(np.float32)), strict=True))


def _arrow(t, cols: dict, slot: np.ndarray, info: np.ndarray, avg, av, reach, regrets, split: bool = False):
    """:func:`_frame`'s rows as an Arrow table, the same columns, built without pandas: going through a
    DataFrame was about half of writing a table (per part of a split cell, more). Codes are as wide as any
    group of the file can need (``split``: a part of a split cell, see :data:`SPLIT_WIDTHS`)."""
    import pyarrow as pa

    def width(k: str, categories) -> type:
        return SPLIT_WIDTHS.get(k, np.int16) if split else _code_width(len(categories))

    n = len(slot)
    data = {}
    for k, v in cols["constants"].items():
        data[k] = (pa.DictionaryArray.from_arrays(np.zeros(n, np.int8), pa.array([v], pa.string()))
                   if isinstance(v, str) else pa.array(np.full(n, v)))
    data["player"] = pa.array(cols["player"][info])
    for k, v in cols.items():
        if k not in NOT_KEYS:
            data[k] = _dictionary(v[0][info], v[1], width(k, v[1]))
    data["action"] = _dictionary(cols["action"][0][slot], cols["action"][1], width("action", cols["action"][1]))
    data.update({k: pa.array(x) for k, x in _numbers(slot, info, avg, av, reach, regrets).items()})
    return pa.table(data)


def _row_labels(t, cols: dict, rows, min_actions: int) -> dict:
    """The source's labels as arrays aligned with ``rows`` (a :class:`solvers.vector.TableRows`): per-set
    arrays per row set, ``action`` codes per row. A source that labelled only these sets (``min_actions``)
    is used as it is; one that labelled every set is gathered at them."""
    out = dict(cols)
    if cols.get("min_actions", 0) != min_actions:
        sets = rows.infosets
        out["player"] = cols["player"][sets]
        for k, v in cols.items():
            if k not in NOT_KEYS:
                out[k] = (v[0][sets], v[1])
    if "action_names" in cols:  # the rows' own action codes, named
        codes, names = cols["action_names"]
        index = np.zeros(32768, np.int32)
        index[codes] = np.arange(len(codes), dtype=np.int32)
        act = np.empty(len(rows.action), _code_width(len(codes)))
        _gather_codes(rows.action, index, act)
        out["action"] = (act, names)
    else:  # the source's per-slot codes at the rows' slots
        slot_code, names = cols["action"]
        out["action"] = (slot_code[_slots_of(t.infoset_offset, t.infoset_nact, rows.infosets)], names)
    out.pop("action_names", None)
    out["min_actions"] = min_actions
    return out


def _table_rows(solver, include_forced: bool):
    """The solver's table numbers and its tree's labels, aligned: (rows, labels, sets' first rows)."""
    m = 1 if include_forced else 2
    t = solver.tree
    rows = solver.table_rows(m)
    if hasattr(solver, "drop_buffers"):  # the rows are out: labelling and writing reuse the pass's buffers
        solver.drop_buffers()
    cols = _row_labels(t, _labelled(t, m), rows, m)
    return rows, cols, np.cumsum(rows.nact, dtype=np.int64) - rows.nact


def subgame_frame(solver, include_forced: bool = False) -> pd.DataFrame:
    """The rows of one solved subgame (a :class:`solvers.vector.VectorSolver` on a labelled tree)."""
    rows, cols, start = _table_rows(solver, include_forced)
    pos = np.arange(len(rows.infosets))
    row = _slots_of(start, rows.nact, pos)
    return _frame(solver.tree, cols, row, np.repeat(pos, rows.nact), rows.probability, rows.action_value,
                  rows.reach, rows.regret)


def write_table(solver, path: str | Path, metadata: dict, *, min_reach: float = 0.0, include_forced: bool = False,
                rows_per_group: int = 1_000_000) -> tuple[Path, int, int]:
    """Stream one solved subgame's table to Parquet, a row group at a time, so writing never holds
    more than one group of rows. Information sets the profile reaches with probability below
    ``min_reach`` are dropped. Returns (path, rows written, rows dropped). Only the rows' own numbers and the
    labels of their sets are held (:meth:`solvers.vector.VectorSolver.table_rows`), nothing per slot."""

    from solvers.storage import atomic_write

    t = solver.tree
    rows, cols, start = _table_rows(solver, include_forced)
    nact = rows.nact
    keep = np.flatnonzero(rows.reach >= min_reach) if min_reach > 0 else np.arange(len(nact))
    total = int(nact.sum(dtype=np.int64))
    nrows = int(nact[keep].sum(dtype=np.int64))
    meta = dict(metadata, rows=nrows, rows_dropped=total - nrows, min_reach=min_reach, columns=column_docs(metadata))
    bounds = np.searchsorted(np.cumsum(nact[keep], dtype=np.int64), np.arange(rows_per_group, nrows, rows_per_group))
    pieces = np.split(keep, bounds) if len(keep) else [keep]

    def write(tmp: Path) -> None:
        writer = None
        for part in pieces:
            table = _arrow(t, cols, _slots_of(start, nact, part), np.repeat(part, nact[part]), rows.probability,
                           rows.action_value, rows.reach, rows.regret)
            if writer is None:
                writer = _parquet_writer(tmp, table, meta, cols["constants"])
            writer.write_table(table.cast(writer.schema))
        writer.close()

    atomic_write(path, write)
    return Path(path), nrows, total - nrows


def write_split_table(solver, path: str | Path, metadata: dict, source, *, min_reach: float = 0.0,
                      include_forced: bool = False, rows_per_group: int = 1_000_000,
                      progress: bool = False) -> tuple[Path, int, int]:
    """:func:`write_table` for a :class:`solvers.streamed.StreamedSolver`: one evaluation pass, each
    part's rows written as it is evaluated (then the trunk's), so one part is in memory at a time.
    ``source`` gives the labelled trees: ``source.tree(i)`` (part ``i``, ``-1`` the trunk, with the
    navigation arrays the part files leave out) and ``source.labels(i, tree)``. The row counts are
    only known at the end: they go into the footer (:data:`COUNTS_KEY`), which
    :func:`read_metadata` merges into the run metadata. ``progress``: a bar over the parts (stderr)."""

    from solvers.storage import atomic_write

    counts = {"rows": 0, "dropped": 0}
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=solver.split.num_parts + 1, desc="writing the table", unit=" part")

    def write(tmp: Path) -> None:
        writer = None

        def visit(i, t, avg, av, reach, regrets) -> None:
            nonlocal writer
            if bar is not None:
                bar.update(1)
                bar.set_postfix(rows=f"{counts['rows']:,}")
            if i < 0:
                t = source.tree(-1)
            nact = t.infoset_nact
            cand = nact >= (1 if include_forced else 2)
            keep = np.flatnonzero(cand & (reach >= min_reach)) if min_reach > 0 else np.flatnonzero(cand)
            counts["dropped"] += int(nact[cand].sum() - nact[keep].sum())
            if not len(keep):
                return
            cols = source.labels(i, t)
            bounds = np.searchsorted(np.cumsum(nact[keep].astype(np.int64)),
                                     np.arange(rows_per_group, int(nact[keep].sum()), rows_per_group))
            for piece in np.split(keep, bounds):
                slot = _slots_of(t.infoset_offset, nact, piece)
                info = np.repeat(piece, nact[piece])
                table = _arrow(t, cols, slot, info, avg, av, reach, regrets, split=True)
                if writer is None:
                    meta = dict(metadata, min_reach=min_reach, columns=column_docs(metadata))
                    writer = _parquet_writer(tmp, table, meta, cols["constants"])
                writer.write_table(table.cast(writer.schema))
                counts["rows"] += len(slot)

        solver.evaluate_parts(visit, load=source.tree, min_actions=1 if include_forced else 2)
        if writer is None:
            raise ValueError(f"no rows to write: every information set is below min_reach {min_reach}")
        writer.add_key_value_metadata({COUNTS_KEY: json.dumps({"rows": counts["rows"],
                                                               "rows_dropped": counts["dropped"]})})
        writer.close()

    try:
        atomic_write(path, write)
    finally:
        if bar is not None:
            bar.close()
    return Path(path), counts["rows"], counts["dropped"]


def read_metadata(path: str | Path) -> dict:
    """A table file's run metadata: the schema's, plus the counts a streamed writer adds to the
    footer when it closes (:data:`COUNTS_KEY`)."""
    import pyarrow.parquet as pq

    kv = pq.ParquetFile(path).metadata.metadata or {}
    meta = json.loads(kv[META_KEY]) if META_KEY in kv else {}
    if COUNTS_KEY in kv:
        meta.update(json.loads(kv[COUNTS_KEY]))
    return meta


def read_average(tree, path: str | Path, key: str | None = None) -> np.ndarray:
    """The average strategy per slot of ``tree`` as the table at ``path`` wrote it (:func:`write_table`, every set
    kept): the same float32 numbers as the solver's ``average_strategy()`` then, forced slots 1. So a solved
    subgame needs no checkpoint to be played once its table is written. Every problem is a one-line
    ``ValueError`` naming the file (another subgame, rows dropped, another tree's row count)."""
    import pyarrow.parquet as pq

    try:
        meta = read_metadata(path)
        if key is not None and meta.get("key") not in (None, key):
            raise ValueError(f"belongs to another subgame (hash {str(meta.get('key'))[:12]}, this one {key[:12]})")
        if meta.get("rows_dropped"):
            raise ValueError(f"dropped {meta['rows_dropped']:,} rows (min_reach {meta.get('min_reach')})")
        prob = pq.read_table(path, columns=["probability"]).column(0).to_numpy()
    except (OSError, KeyError, _arrow_error()) as e:
        raise ValueError(f"table {path} is unreadable ({type(e).__name__})") from None
    except ValueError as e:
        raise ValueError(f"table {path} {e}") from None
    nact = np.asarray(tree.infoset_nact)
    sets = np.flatnonzero(nact >= 2)  # the writer's rows: sets of two or more actions, ascending, slots in order
    slots = _slots_of(np.asarray(tree.infoset_offset), nact, sets)
    if slots.shape[0] != prob.shape[0]:
        raise ValueError(f"table {path} has {prob.shape[0]:,} rows, this tree's sets {slots.shape[0]:,}")
    out = np.ones(tree.num_slots, np.float32)
    out[slots] = prob
    return out


def _arrow_error() -> type:
    """pyarrow's base error class (imported only where a table is read)."""
    import pyarrow as pa

    return pa.ArrowException


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

        from solvers.storage import atomic_write

        table = pa.Table.from_pandas(self.df, preserve_index=False)
        meta = dict(table.schema.metadata or {})
        meta[META_KEY] = json.dumps(dict(self.metadata, columns=column_docs(self.metadata)), default=str).encode()
        table = table.replace_schema_metadata(meta)
        return atomic_write(path, lambda p: pq.write_table(table, p, compression="zstd", compression_level=TABLE_ZSTD_LEVEL))

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
            metas.append(read_metadata(f))
            frames.append(t.to_pandas())
        df = frames[0] if len(frames) == 1 else pd.concat(frames, ignore_index=True)
        meta = metas[0] if len(metas) == 1 else {"parts": metas}
        schema = schema_of(meta)
        for k in ((*schema.categories, "action") if schema is not None else ("action",)):
            if k in df and df[k].dtype != "category":
                df[k] = df[k].astype("category")
        return cls(df, meta)

    # ---- access ---------------------------------------------------------
    def to_pandas(self) -> pd.DataFrame:
        return self.df

    def __len__(self) -> int:
        return len(self.df)

    def describe(self) -> pd.DataFrame:
        """What every column means (units and perspective included), from the file's metadata."""
        meta = self.metadata if "parts" not in self.metadata else self.metadata["parts"][0]
        doc = dict(column_docs(self.metadata), **meta.get("columns", {}))
        units = meta.get("units", "points per hand (player 0)")
        rows = [{"column": c, "meaning": doc.get(c, ""), "dtype": str(self.df[c].dtype)} for c in self.df.columns]
        out = pd.DataFrame(rows).set_index("column")
        out.attrs["units"] = units
        return out

    def filter(self, **equal) -> StrategyTable:
        """Rows whose columns equal the given values (a list/tuple/set value means "any of")."""
        mask = np.ones(len(self.df), bool)
        for k, v in equal.items():
            if k not in self.df:
                raise KeyError(f"no column {k!r}; columns: {', '.join(self.df.columns)}")
            col = self.df[k]
            mask &= col.isin(list(v)).to_numpy() if isinstance(v, (list, tuple, set)) else (col == v).to_numpy()
        return StrategyTable(self.df[mask].reset_index(drop=True), self.metadata)

    @property
    def schema(self) -> TableSchema | None:
        """The game's schema this table names (``None``: not registered in this process)."""
        return schema_of(self.metadata)

    def lookup(self, *args, **kw) -> pd.DataFrame:
        """The rows of one information set, asked in the game's own notation (its schema's ``lookup``: for
        the native card game, ``lookup(turned_card, cards, history="", *, player=None, score=None, ...)``). No row:
        ``LookupError`` saying why."""
        schema = self.schema
        if schema is None or schema.lookup is None:
            raise ValueError("this table's game registers no lookup in its own notation (import the game's package "
                             "first); use filter() on the key columns")
        return schema.lookup(self, *args, **kw)

    def frequency(self, action_prefix: str, by: str = "hand") -> pd.Series:
        """Aggregate view: reach-weighted frequency of actions starting with ``action_prefix``
        (e.g. ``play_face_down``, ``raise``, ``fold``) among the information sets where it is legal, by ``by``."""
        df = self.df
        act = df["action"].astype(str)
        schema = self.schema
        keys = list(schema.key_columns) if schema is not None else [c for c in df.columns if c not in GENERIC_COLUMNS
                                                                   or c == "player"]
        legal_sets = df.loc[act.str.startswith(action_prefix), keys].drop_duplicates()
        rows = df.merge(legal_sets, on=keys)
        hit = rows["action"].astype(str).str.startswith(action_prefix)
        w = rows["reach"] * rows["probability"] * hit
        g = pd.DataFrame({by: rows[by], "w": w, "reach": rows["reach"] * rows["probability"]})
        grouped = g.groupby(by, observed=True).sum()
        return (grouped["w"] / grouped["reach"]).rename(f"P({action_prefix})")
