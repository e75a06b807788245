"""Streamed solves of full-ladder cells (prints figures, never asserts).

Builds one cell cut at a public depth (the trunk in memory, the parts written to ``--dir``), then
times DCFR iterations and the exact certificate (both players' best responses, streamed) and
prints the peak memory of the process (the kernel's high-water mark, the build included).

    python benchmarks/streamed.py --cell 4,4 --depth 3 --iterations 2
    python benchmarks/streamed.py --cell 0,0 --depth 3 --iterations 3 --dir /work/split-0x0 --threads 2 \
        [--layout slots] [--resident-gb auto]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

from solvers.storage import peak_rss_gb  # noqa: E402
from solvers.streamed import StreamedSolver, memory_of  # noqa: E402
from truco_lab.abstraction.tree import build_split  # noqa: E402
from truco_lab.rules.ruleset import rule_set  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cell", default="4,4")
    ap.add_argument("--dealer", type=int, default=0)
    ap.add_argument("--vira", type=int, default=0)
    ap.add_argument("--rules", default="paulista")
    ap.add_argument("--depth", type=int, default=3)
    ap.add_argument("--iterations", type=int, default=2)
    ap.add_argument("--resident-gb", default="0", help="parts kept in memory between passes (GB, or auto: what is "
                    "available less the solve's other needs and 2 GB)")
    ap.add_argument("--layout", default="blocks", choices=("blocks", "slots"), help="parts' layout (default blocks)")
    ap.add_argument("--dir", default=None, help="where the parts go (default: a temporary folder)")
    ap.add_argument("--threads", type=int, default=1, help="parts worked on at once (default 1)")
    a = ap.parse_args()
    import tempfile

    s0, s1 = (int(x) for x in a.cell.split(","))
    folder = a.dir or tempfile.mkdtemp(prefix="truco-split-")
    t = time.perf_counter()
    sp = build_split(folder, rule_set(a.rules), s0, s1, a.dealer, a.vira, depth=a.depth, progress=True)
    build = time.perf_counter() - t
    m = memory_of(sp, a.threads)
    disk = sp.store.nbytes()
    print(f"cell {s0}x{s1} dealer {a.dealer} vira class {a.vira} ({a.rules}), depth {a.depth}: "
          f"{sp.num_infosets:,} infosets, {sp.num_slots:,} entries, {sp.num_parts:,} parts; "
          f"trunk {sp.trunk.num_slots:,} entries; largest part(s) ~{m['largest_part'] / 1e9:.2f} GB in memory; "
          f"parts on disk {disk / 1e9:.1f} GB ({disk / sp.num_slots:.1f} B/entry)")
    print(f"build {build:.0f} s, peak after build {peak_rss_gb():.2f} GB", flush=True)
    t = time.perf_counter()
    s = StreamedSolver(sp, threads=a.threads, layout=a.layout, progress=True)
    if a.layout == "blocks":
        blk = sum(sp.store.block_path(i).stat().st_size for i in range(sp.num_parts))
        print(f"block files made in {time.perf_counter() - t:.0f} s: {blk / 1e9:.1f} GB "
              f"({blk / sp.num_slots:.1f} B/entry), {s.state_start[-1]:,} state entries "
              f"({s.state_start[-1] / sp.num_slots:.3f} per entry)")
    m = memory_of(sp, a.threads, s)
    if a.resident_gb == "auto":
        from solvers.storage import available_memory_gb

        s.resident_bytes = max(0, int(available_memory_gb() * 2**30 - sum(m.values()) - 2 * 2**30))
    else:
        s.resident_bytes = int(float(a.resident_gb) * 1e9)
    print(f"threads {a.threads}, layout {a.layout}, resident budget {s.resident_bytes / 1e9:.1f} GB, "
          f"state {m['state'] / 1e9:.2f} GB, largest part(s) working {m['largest_part'] / 1e9:.2f} GB")
    times = []
    for _ in range(a.iterations):
        t = time.perf_counter()
        s.iterate(1)
        times.append(time.perf_counter() - t)
        print(f"iteration {s.iteration}: {times[-1]:.1f} s, {times[-1] * 1e9 / sp.num_slots:.1f} ns/entry "
              f"(parts read so far {s.parts_read}, resident {s.resident_used / 1e9:.1f} GB, peak "
              f"{peak_rss_gb():.2f} GB)", flush=True)
    if not times:
        return
    t = time.perf_counter()
    e = s.exploitability()
    br = time.perf_counter() - t
    print(f"s/iteration {min(times):.1f} (min of {len(times)}), certificate {br:.1f} s, "
          f"exploitability after {s.iteration} iterations {e:.4f} points per hand")
    print(f"peak memory {peak_rss_gb():.2f} GB ({peak_rss_gb() * 1e9 / sp.num_slots:.1f} B/entry all in)")


if __name__ == "__main__":
    main()
