"""The issue-18 tier table, measured as a user runs it (prints figures, never asserts): this machine's triad bandwidth
on one and two threads, then per tier one ``truco-lab solve`` in its own process and what its ``summary.json``
reports: seconds per iteration (its periodic certificates included) over entries, bytes per entry all in, peak.

    python benchmarks/tiers.py                          # 11x11 10x10 7x7 4x4, dealer 0, vira 7d, two threads
    python benchmarks/tiers.py --cells 10,10 0,0 --iterations 40 5

The bound is what an iteration must move at the two-thread triad bandwidth: the solver state read and written once
and the rest of the kernels' arrays read once, ``(all in + state)`` bytes per entry (a floor: values, reaches and
the strategy are written and read again by the passes).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CLI = Path(sys.executable).with_name("truco-lab")


def _bandwidth():
    spec = importlib.util.spec_from_file_location("bandwidth", Path(__file__).with_name("bandwidth.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.triad_gbps


def solve(cell: str, iterations: int, threads: int, vira: str, dealer: int) -> dict | str:
    """One ``truco-lab solve`` without a table; its summary's figures, or why it failed."""
    with tempfile.TemporaryDirectory() as d:
        cmd = [str(CLI), "solve", "--score", cell, "--dealer", str(dealer), "--vira", vira, "--iterations",
               str(iterations), "--threads", str(threads), "--no-table", "--out", d, "-q"]
        p = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
        if p.returncode != 0:
            return "killed (out of memory?)" if p.returncode < 0 else (p.stderr.strip().splitlines() or ["?"])[-1]
        s = json.loads((Path(d) / "summary.json").read_text())
    c = s["cells"][0]
    return {"entries": c["entries"], "spi": s["seconds_per_iteration"], "peak": s["peak_memory_gb"],
            "total": c["bytes_per_entry_total"], "state": c["bytes_per_entry_state"], "expl": s["exploitability"],
            "streamed": bool(c.get("split_depth") or c.get("streamed"))}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cells", nargs="*", default=["11,11", "10,10", "7,7", "4,4"])
    ap.add_argument("--iterations", nargs="*", type=int, default=[40],
                    help="iterations per cell (one figure for all, or one per cell)")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--vira", default="7d")
    ap.add_argument("--dealer", type=int, default=0)
    args = ap.parse_args(argv)
    its = args.iterations * len(args.cells) if len(args.iterations) == 1 else args.iterations
    if len(its) != len(args.cells):
        ap.error(f"--iterations: {len(its)} figures for {len(args.cells)} cells (give one, or one per cell)")
    triad = _bandwidth()
    one, two = triad(1.0, 1), triad(1.0, args.threads)
    print(f"triad bandwidth here: {one:.1f} GB/s on one thread, {two:.1f} GB/s on {args.threads}", flush=True)
    print("| cell | entries | s/iteration (checks in) | ns per entry | bound ns | x bound | B/entry all in | peak GB |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for cell, n in zip(args.cells, its, strict=True):
        r = solve(cell, n, args.threads, args.vira, args.dealer)
        if isinstance(r, str):
            print(f"| {cell} | failed: {r} |", flush=True)
            continue
        ns = r["spi"] / r["entries"] * 1e9
        bound = (r["total"] + r["state"]) / two  # bytes per entry over GB/s is ns per entry
        tag = " (streamed)" if r["streamed"] else ""
        print(f"| {cell.replace(',', 'x')}{tag} | {r['entries']:,} | {r['spi']:.3f} | {ns:.1f} | {bound:.2f} | "
              f"{ns / bound:.0f} | {r['total']:.1f} | {r['peak']:.2f} |", flush=True)


if __name__ == "__main__":
    main()
