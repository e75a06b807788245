"""Explorer latency (prints figures, never asserts).

1. Cold decision queries: a fresh process per table opens the run, the table's index (built first if
   missing, timed apart) and answers one decision; then warm queries of other histories.
2. Load: ``--clients`` concurrent clients making ``--queries`` decision queries each against the
   server on loopback; errors and p50/p95 latency.

    python benchmarks/explore.py results/endgame --cell 10,10,1 --vira 4d
    python benchmarks/explore.py DIR --cell 0,0,1 --vira 7d --clients 20 --queries 100
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

COLD = """
import time, json, sys
t0 = time.perf_counter()
from truco_lab.lab.browse import Run
run = Run(sys.argv[1]); t1 = time.perf_counter()
ref = run.table(sys.argv[2], sys.argv[3]); ix = ref.index(); t2 = time.perf_counter()
d = run.decision(sys.argv[2], sys.argv[3], sys.argv[4]); t3 = time.perf_counter()
print(json.dumps({"open_run": t1 - t0, "index": t2 - t1, "decision": t3 - t2, "rows": len(d["rows"]),
                  "table_rows": int(ix.group_start[-1]), "next": [n["history"] for n in d["next"] if n["decision"]]}))
"""


def cold(folder: str, cell: str, vira: str, history: str) -> dict:
    out = subprocess.run([sys.executable, "-c", COLD, folder, cell, vira, history], capture_output=True, text=True,
                         check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def load(folder: str, cell: str, vira: str, histories: list[str], clients: int, queries: int) -> None:
    from urllib.parse import urlencode

    from truco_lab.people.explorer.server import serve

    httpd = serve([folder], port=0, background=True)
    urls = [httpd.url + "api/decision?" + urlencode({"cell": cell, "vira": vira, "history": h}) for h in histories]
    lat, errors = [], 0

    def client(i: int) -> None:
        nonlocal errors
        for q in range(queries):
            t = time.perf_counter()
            try:
                with urllib.request.urlopen(urls[(i + q) % len(urls)], timeout=120) as r:
                    r.read()
                    if r.status != 200:
                        errors += 1
            except Exception:  # noqa: BLE001 - a benchmark counts every failure
                errors += 1
            lat.append(time.perf_counter() - t)

    t = time.perf_counter()
    with ThreadPoolExecutor(clients) as ex:
        list(ex.map(client, range(clients)))
    wall = time.perf_counter() - t
    httpd.shutdown()
    lat.sort()
    print(f"load: {clients} clients x {queries} decision queries over {len(urls)} histories: {len(lat)} answers, "
          f"{errors} errors, p50 {1e3 * lat[len(lat) // 2]:.0f} ms, p95 {1e3 * lat[int(0.95 * len(lat))]:.0f} ms, "
          f"{len(lat) / wall:.1f} queries/s")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("folder")
    ap.add_argument("--cell", required=True)
    ap.add_argument("--vira", required=True)
    ap.add_argument("--clients", type=int, default=20)
    ap.add_argument("--queries", type=int, default=100)
    a = ap.parse_args()
    first = cold(a.folder, a.cell, a.vira, "")
    print(f"cold, first open: run {first['open_run']:.2f} s, index {first['index']:.2f} s (built or read), "
          f"decision {1e3 * first['decision']:.0f} ms ({first['rows']} rows of {first['table_rows']:,})")
    hist = [""] + first["next"][:5]
    for h in hist:
        r = cold(a.folder, a.cell, a.vira, h)
        print(f"cold decision {h or '(start)'!r}: {1e3 * r['decision']:.0f} ms, {r['rows']} rows "
              f"(run open {1e3 * r['open_run']:.0f} ms, index open {1e3 * r['index']:.0f} ms)")
    load(a.folder, a.cell, a.vira, hist, a.clients, a.queries)


if __name__ == "__main__":
    main()
