"""A strategy table file rewritten at several zstd levels (prints figures, never asserts): size per column, bytes
per row, write and read seconds, alternating levels so a loaded machine's drift falls on both.

The table writer (:func:`solvers.tables._parquet_writer`) uses :data:`solvers.tables.TABLE_ZSTD_LEVEL`; this
rewrites a file it wrote with the same encodings (dictionaries on the code columns only, statistics on the
constant ones) and only the level changed, row group by row group as the writer writes them.

    python benchmarks/table_compression.py results/endgame/cells/s10-10_d1/s10-10_d1_v0.*.parquet 1,4 3
"""

import sys
import tempfile
import time
from pathlib import Path

# Run as a script, this file's folder comes first on sys.path and benchmarks/solvers.py would shadow the package.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

import pyarrow.parquet as pq  # noqa: E402

from solvers.tables import NUMBER_COLUMNS, TABLE_ZSTD_LEVEL  # noqa: E402


def rewrite(src: pq.ParquetFile, out: Path, level: int) -> float:
    """``src`` rewritten at ``level`` into ``out``; the seconds it took (reading the source included)."""
    schema = src.schema_arrow
    names = schema.names
    stats = {c.path_in_schema for c in (src.metadata.row_group(0).column(i) for i in range(len(names)))
             if c.statistics is not None and c.statistics.has_min_max}
    dict_cols = [c for c in names if c not in NUMBER_COLUMNS and c not in stats] + ["player"]
    t0 = time.perf_counter()
    with pq.ParquetWriter(out, schema, compression="zstd", compression_level=level,
                          use_dictionary=[c for c in dict_cols if c in names],
                          write_statistics=sorted(stats)) as w:
        for g in range(src.num_row_groups):
            w.write_table(src.read_row_group(g))
    return time.perf_counter() - t0


def main() -> None:
    path = Path(sys.argv[1])
    levels = [int(x) for x in (sys.argv[2] if len(sys.argv) > 2 else f"1,{TABLE_ZSTD_LEVEL}").split(",")]
    reps = int(sys.argv[3]) if len(sys.argv) > 3 else 2
    src = pq.ParquetFile(path)
    rows = src.metadata.num_rows
    print(f"{path.name}: {rows:,} rows, {path.stat().st_size / 1e6:.1f} MB as written "
          f"(the writer's level today: {TABLE_ZSTD_LEVEL})")
    with tempfile.TemporaryDirectory() as d:
        for _ in range(reps):
            for level in levels:
                out = Path(d) / f"level{level}.parquet"
                w = rewrite(src, out, level)
                t0 = time.perf_counter()
                pq.read_table(out)
                r = time.perf_counter() - t0
                m = pq.ParquetFile(out).metadata
                col = dict.fromkeys(NUMBER_COLUMNS, 0)
                for g in range(m.num_row_groups):
                    for i in range(m.num_columns):
                        c = m.row_group(g).column(i)
                        if c.path_in_schema in col:
                            col[c.path_in_schema] += c.total_compressed_size
                size = out.stat().st_size
                cols = ", ".join(f"{k} {v / 1e6:.1f}" for k, v in col.items())
                print(f"  level {level}: {size / 1e6:7.1f} MB, {size / rows:.2f} B per row, write {w:.2f} s, "
                      f"read {r:.2f} s; MB by column: {cols}")


if __name__ == "__main__":
    main()
