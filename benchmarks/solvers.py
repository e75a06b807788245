"""Solver speed and memory (prints figures, never asserts).

1. Leduc, DCFR 400 iterations end to end vs OpenSpiel's C++ CFRPlusSolver, same run.
2. Native truco cells, each in a fresh subprocess so peak memory is the cell's own:
   information sets, table entries, bytes per entry, build time, seconds per
   iteration, exploitability after the timed iterations, peak memory.

    python benchmarks/solvers.py                 # Leduc + the 11x11 cell (one vira class)
    python benchmarks/solvers.py --cells 11,11 10,10 --iterations 5
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

# Run as a script, this file's folder comes first on sys.path and its name
# would shadow the `solvers` package.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

import pyspiel  # noqa: E402

from solvers import solve  # noqa: E402


def leduc() -> None:
    game = pyspiel.load_game("leduc_poker")
    solve(game, algorithm="dcfr", iterations=2)  # numba compile, not timed
    t = time.perf_counter()
    r = solve(game, algorithm="dcfr", iterations=400)
    ours = time.perf_counter() - t
    print(f"ours  leduc dcfr 400 it (tree build included): {ours:.3f} s, exploitability {r.exploitability:.2e}, "
          f"{r.tree.num_infosets} infosets, {r.tree.num_slots} entries")
    t = time.perf_counter()
    cpp = pyspiel.CFRPlusSolver(game)
    for _ in range(400):
        cpp.evaluate_and_update_policy()
    theirs = time.perf_counter() - t
    pol = cpp.average_policy()
    print(f"open_spiel C++ CFRPlusSolver 400 it: {theirs:.3f} s, exploitability {pyspiel.exploitability(game, pol):.2e}")
    print(f"speed-up: {theirs / ours:.1f}x", flush=True)


def one_cell(score0: int, score1: int, dealer: int, vira: int, iterations: int, algorithm: str,
             converge: list[float], rules_name: str = "paulista", threads: int = 1, layout: str = "blocks") -> dict:
    """Build and time one cell in this process (navigation arrays memory-mapped, as run_cell does);
    with ``converge``, iterate on until each exploitability target (points per hand) is met."""
    from solvers.api import check_interval
    from solvers.storage import peak_rss_gb
    from solvers.vector import VectorSolver
    from truco_lab.abstraction.tree import build_cell
    from truco_lab.rules.ruleset import rule_set

    t = time.perf_counter()
    tree = build_cell(rule_set(rules_name), score0, score1, dealer, vira)
    tree.offload_navigation()
    build = time.perf_counter() - t
    build_peak = peak_rss_gb()
    s = VectorSolver(tree, algorithm, threads=threads, layout=layout)
    s.iterate(1)  # first iteration includes numba dispatch
    t = time.perf_counter()
    s.iterate(iterations)
    per_it = (time.perf_counter() - t) / iterations
    t = time.perf_counter()
    expl = s.exploitability()
    br = time.perf_counter() - t
    reached = {}
    for target in sorted(converge, reverse=True):
        while expl > target and s.iteration < 5000:
            ce = check_interval(s.iteration, 5)
            s.iterate(ce - s.iteration % ce)
            expl = s.exploitability()
        reached[str(target)] = s.iteration
    state = s.state_nbytes()
    # the least an iteration must move: its solver state read and written once (regrets, sums, prediction),
    # the strategy written and read once, and the structure the kernels read (child links, counts, hands)
    moved = 2 * state + 2 * s.current_strategy().nbytes + tree.nbytes()
    return {
        "cell": f"{rules_name} {score0}x{score1} dealer {dealer} vira class {vira} threads {threads} {s.layout}",
        "nodes": tree.num_nodes,
        "infosets": tree.num_infosets, "entries": tree.num_slots, "build_s": build, "s_per_iteration": per_it,
        "exploitability_s": br, "exploitability": expl, "iterations": s.iteration,
        "bytes_per_entry_state": state / tree.num_slots,
        "bytes_per_entry_total": (s.nbytes() + tree.nbytes()) / tree.num_slots,
        "build_peak_gb": build_peak, "peak_gb": peak_rss_gb(),
        "peak_bytes_per_entry": peak_rss_gb() * 2**30 / tree.num_slots, "iterations_to": reached,
        "bytes_per_iteration": moved, "best_response_s_per_entry": br / tree.num_slots,
    }


def print_cell(f: dict, gbps: float | None = None) -> None:
    conv = ", ".join(f"{n} it to {k}" for k, n in f["iterations_to"].items())
    if gbps:
        ns = f["s_per_iteration"] / f["entries"] * 1e9
        bound = f["bytes_per_iteration"] / (gbps * 1e9) / f["entries"] * 1e9
        print(f"  {f['cell']}: an iteration moves >= {f['bytes_per_iteration'] / 1e9:.2f} GB "
              f"({f['bytes_per_iteration'] / f['entries']:.0f} B/entry); {ns:.1f} ns/entry/iteration against a "
              f"bandwidth bound of {bound:.2f} ns ({ns / bound:.1f}x the bound at {gbps:.0f} GB/s); best response "
              f"{f['best_response_s_per_entry'] * 1e9:.1f} ns/entry", flush=True)
    print(f"{f['cell']}: {f['infosets']:,} infosets, {f['entries']:,} entries, {f['nodes']:,} public nodes; "
          f"build {f['build_s']:.1f} s; {f['s_per_iteration']:.3f} s/iteration; best response {f['exploitability_s']:.2f} s; "
          f"{f['bytes_per_entry_state']:.0f} B/entry solver state, {f['bytes_per_entry_total']:.0f} B/entry kernels all in, "
          f"{f['peak_bytes_per_entry']:.0f} B/entry at peak; peak {f['peak_gb']:.2f} GB (build {f['build_peak_gb']:.2f}); "
          f"exploitability {f['exploitability']:.2e} after {f['iterations']} it" + (f"; {conv}" if conv else ""),
          flush=True)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description="solver speed and memory")
    ap.add_argument("--cells", nargs="*", default=["11,11"], help="scores A,B of cells to time (default 11,11); "
                    "'tiers' = 11,11 10,10 7,7 4,4")
    ap.add_argument("--vira", type=int, default=0, help="vira class (0..8; 0 in rule sets without a vira)")
    ap.add_argument("--rules", default="paulista", help="rule set: paulista, paulista_house or mineiro")
    ap.add_argument("--dealer", type=int, default=0)
    ap.add_argument("--iterations", type=int, default=10, help="timed iterations per cell")
    ap.add_argument("--algorithm", default="dcfr")
    ap.add_argument("--threads", type=int, default=1, help="threads per pass (VectorSolver(threads=))")
    ap.add_argument("--layout", choices=("blocks", "slots"), default="blocks",
                    help="solver state by element (solvers.blocks, the default) or by slot (the previous kernels)")
    ap.add_argument("--converge", type=float, nargs="*", default=[],
                    help="also iterate each cell to these exploitabilities (points/hand), e.g. 1e-3 2.5e-4")
    ap.add_argument("--no-leduc", action="store_true")
    ap.add_argument("--one", help=argparse.SUPPRESS)  # internal: time one cell, print JSON
    args = ap.parse_args(argv)
    if args.one:
        a, b = (int(x) for x in args.one.split(","))
        print(json.dumps(one_cell(a, b, args.dealer, args.vira, args.iterations, args.algorithm, args.converge,
                                  args.rules, args.threads, args.layout)))
        return
    import importlib.util  # benchmarks/bandwidth.py, beside this file (not on sys.path: see above)

    spec = importlib.util.spec_from_file_location("bandwidth", Path(__file__).with_name("bandwidth.py"))
    bandwidth = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bandwidth)
    triad_gbps = bandwidth.triad_gbps

    gbps = triad_gbps(1.0, args.threads)
    print(f"memory bandwidth here (numba triad, {args.threads} thread(s)): {gbps:.1f} GB/s", flush=True)
    if not args.no_leduc:
        leduc()
    cells = ["11,11", "10,10", "7,7", "4,4"] if args.cells == ["tiers"] else args.cells
    for cell in cells:
        p = subprocess.run([sys.executable, __file__, "--one", cell, "--vira", str(args.vira), "--dealer",
                            str(args.dealer), "--iterations", str(args.iterations), "--algorithm", args.algorithm,
                            "--rules", args.rules, "--threads", str(args.threads), "--layout", args.layout,
                            "--converge", *map(str, args.converge)], capture_output=True, text=True)
        if p.returncode != 0:
            why = "killed (out of memory?)" if p.returncode < 0 else p.stderr.strip().splitlines()[-1:]
            print(f"cell {cell}: failed: {why}", flush=True)
            continue
        print_cell(json.loads(p.stdout.strip().splitlines()[-1]), gbps)


if __name__ == "__main__":
    main()
