"""An index beside a strategy table, so one key's rows are read without scanning the table.

A table's rows come in runs: every row of one public history is written together (one decision
node's information sets are consecutive slots), and a table of a full-ladder cell holds half a
billion rows, too many to filter. The index maps a stable 64-bit hash of each value of one string
column (``history``) to the runs that hold it, ``(hash, first row, row count)`` sorted by hash, in a
``.npy`` file that is memory-mapped: a lookup touches a few pages of it, and only the row groups
that hold the runs are decoded. It is built on first open (one pass over that column, a progress bar
on big tables), written atomically beside the table (or in a cache folder when the table's folder
is read-only), and rebuilt when the table changes (size, modification time, the table's key).
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from solvers.storage import atomic_write

INDEX_VERSION = 1
RUN_DTYPE = np.dtype([("hash", "<u8"), ("start", "<i8"), ("count", "<i8")])


def key_hash(value: str) -> int:
    """The stable 64-bit hash the index stores for ``value``."""
    return int.from_bytes(hashlib.blake2b(value.encode(), digest_size=8).digest(), "little")


def _stamp(table: Path) -> dict:
    st = table.stat()
    import pyarrow.parquet as pq

    kv = pq.ParquetFile(table).metadata.metadata or {}
    return {"version": INDEX_VERSION, "size": st.st_size, "mtime_ns": st.st_mtime_ns,
            "footer": hashlib.blake2b(b"".join(k + v for k, v in sorted(kv.items())), digest_size=8).hexdigest()}


def _index_paths(table: Path, column: str) -> list[tuple[Path, Path]]:
    """(runs file, stamp file) candidates: beside the table, then the user's cache folder."""
    name = f".{table.name}.{column}.idx"
    cache = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "strategy-table-index"
    tag = hashlib.blake2b(str(table.resolve()).encode(), digest_size=6).hexdigest()
    return [(table.parent / f"{name}.npy", table.parent / f"{name}.json"),
            (cache / f"{tag}{name}.npy", cache / f"{tag}{name}.json")]


@dataclass
class TableIndex:
    """The runs of one key column of one Parquet table; :meth:`rows` reads one key's rows."""

    path: Path
    column: str
    runs: np.ndarray  # RUN_DTYPE, sorted by hash (memory-mapped)
    group_start: np.ndarray  # int64 [row groups + 1]: first row of each row group

    @classmethod
    def open(cls, path: str | Path, column: str = "history", progress: bool | None = None) -> TableIndex:
        """The index of ``path`` (built and saved on first open, or when the table changed)."""
        import pyarrow.parquet as pq

        path = Path(path)
        pf = pq.ParquetFile(path)
        sizes = [pf.metadata.row_group(i).num_rows for i in range(pf.num_row_groups)]
        group_start = np.concatenate([[0], np.cumsum(sizes, dtype=np.int64)])
        stamp = _stamp(path)
        for runs_path, stamp_path in _index_paths(path, column):
            try:
                if json.loads(stamp_path.read_text()) == stamp:
                    return cls(path, column, np.load(runs_path, mmap_mode="r"), group_start)
            except (OSError, ValueError):
                continue
        runs = _build(pf, column, group_start, progress, path.name)
        for runs_path, stamp_path in _index_paths(path, column):
            try:
                atomic_write(runs_path, lambda p: np.save(p, runs), suffix=".npy")
                atomic_write(stamp_path, lambda p: p.write_text(json.dumps(stamp)))
                return cls(path, column, np.load(runs_path, mmap_mode="r"), group_start)
            except OSError:
                continue
        return cls(path, column, runs, group_start)  # nowhere writable: kept in memory for this process

    def runs_of(self, value: str) -> list[tuple[int, int]]:
        """``(first row, row count)`` of each run whose key hashes as ``value`` (table order)."""
        h = np.uint64(key_hash(value))
        hs = self.runs["hash"]
        lo = int(np.searchsorted(hs, h, side="left"))
        hi = int(np.searchsorted(hs, h, side="right"))
        out = [(int(r["start"]), int(r["count"])) for r in self.runs[lo:hi]]
        return sorted(out)

    def rows(self, value: str, columns: list[str] | None = None):
        """A ``pyarrow.Table`` of the rows whose column equals ``value`` (empty if none), decoding only the
        row groups that hold them."""
        import pyarrow as pa
        import pyarrow.compute as pc
        import pyarrow.parquet as pq

        pf = pq.ParquetFile(self.path, memory_map=True)
        want = list(columns) if columns is not None else pf.schema_arrow.names
        read = want if self.column in want else [*want, self.column]
        pieces = []
        for start, count in self.runs_of(value):
            g0 = int(np.searchsorted(self.group_start, start, side="right") - 1)
            g1 = int(np.searchsorted(self.group_start, start + count - 1, side="right") - 1)
            groups = pf.read_row_groups(list(range(g0, g1 + 1)), columns=read)
            piece = groups.slice(start - int(self.group_start[g0]), count)
            # a hash collision would show up here: keep only the rows that really hold the value
            pieces.append(piece.filter(pc.equal(piece[self.column].cast(pa.string()), value)))
        if not pieces:
            return pf.schema_arrow.empty_table().select(want)
        return pa.concat_tables(pieces, promote_options="permissive").select(want)


def _build(pf, column: str, group_start: np.ndarray, progress: bool | None, name: str) -> np.ndarray:
    """One pass over ``column``: the runs of equal values, hashed and sorted."""
    import pyarrow as pa

    n = pf.num_row_groups
    bar = None
    if progress or (progress is None and group_start[-1] >= 20_000_000):
        from tqdm import tqdm

        bar = tqdm(total=n, desc=f"indexing {name}", unit=" row group")
    parts = []
    for g in range(n):
        col = pf.read_row_group(g, columns=[column]).column(0).combine_chunks()
        if not pa.types.is_dictionary(col.type):
            col = col.dictionary_encode()
        codes = col.indices.to_numpy(zero_copy_only=False).astype(np.int64)
        hashes = np.array([key_hash(v) for v in col.dictionary.to_pylist()], np.uint64)
        if len(codes):
            starts = np.flatnonzero(np.concatenate([[True], codes[1:] != codes[:-1]]))
            counts = np.diff(np.concatenate([starts, [len(codes)]]))
            r = np.empty(len(starts), RUN_DTYPE)
            r["hash"], r["start"], r["count"] = hashes[codes[starts]], starts + group_start[g], counts
            parts.append(r)
        if bar is not None:
            bar.update(1)
    if bar is not None:
        bar.close()
    runs = np.concatenate(parts) if parts else np.empty(0, RUN_DTYPE)
    return _merge_boundaries(runs[np.argsort(runs["hash"], kind="stable")])


def _merge_boundaries(runs: np.ndarray) -> np.ndarray:
    """Join runs of one value that a row-group boundary split in two (sorted by hash, then start)."""
    if len(runs) < 2:
        return runs
    joins = (runs["hash"][1:] == runs["hash"][:-1]) & (runs["start"][:-1] + runs["count"][:-1] == runs["start"][1:])
    if not joins.any():
        return runs
    head = np.concatenate([[True], ~joins])
    gid = np.cumsum(head) - 1
    out = runs[head].copy()
    out["count"] = np.bincount(gid, weights=runs["count"]).astype(np.int64)
    return out
