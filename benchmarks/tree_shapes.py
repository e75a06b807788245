"""Tree size per shape of the real deck's cells (prints figures, never asserts).

A cell's tree is set by its live ladder and by the stakes ``cap_own_raises`` takes from the leading player
(``truco_lab.lab.match.tree_shape``); ``--plan`` prices the capped shapes by the entries printed here
(``OWN_CAPPED_ENTRIES``). Cells that fit are built in memory; ``--split`` builds them cut at public depth 3
with the parts on disk (deleted after), so a full-ladder shape can be counted on this machine.

    python benchmarks/tree_shapes.py 6,9 0,10 3,6
    python benchmarks/tree_shapes.py --split 0,3
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

from solvers.storage import peak_rss_gb  # noqa: E402
from truco_lab.abstraction.tree import ALL_PRUNES, build_cell, build_split  # noqa: E402
from truco_lab.lab.match import live_ladder, tree_shape  # noqa: E402
from truco_lab.rules.ruleset import rule_set  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("cells", nargs="+", help="scores A,B")
    ap.add_argument("--dealer", type=int, default=1)
    ap.add_argument("--vira", type=int, default=0, help="vira class index (default 0)")
    ap.add_argument("--rules", default="paulista")
    ap.add_argument("--split", action="store_true", help="build cut at depth 3, parts on disk (big shapes)")
    a = ap.parse_args()
    rules = rule_set(a.rules)
    for text in a.cells:
        x, y = (int(v) for v in text.split(","))
        cell = (x, y, a.dealer)
        t0 = time.perf_counter()
        if a.split:
            folder = Path(tempfile.mkdtemp(prefix="shape-"))
            try:
                t = build_split(folder, rules, x, y, a.dealer, a.vira, ALL_PRUNES, depth=3)
                entries, infosets, nodes = t.num_slots, t.num_infosets, t.num_nodes
            finally:
                shutil.rmtree(folder, ignore_errors=True)
        else:
            t = build_cell(rules, x, y, a.dealer, a.vira, ALL_PRUNES)
            entries, infosets, nodes = t.num_slots, t.num_infosets, len(t.node_actor)
        del t
        lad = "-".join(map(str, live_ladder(rules, cell)))
        print(f"{x}x{y} d{a.dealer} v{a.vira}  shape {tree_shape(rules, cell)}  ladder {lad}  entries {entries:,}  "
              f"infosets {infosets:,}  nodes {nodes:,}  build {time.perf_counter() - t0:.1f} s  "
              f"peak so far {peak_rss_gb():.2f} GB", flush=True)


if __name__ == "__main__":
    main()
