"""Engine speed: numba batch path vs the OpenSpiel wrapper (prints figures, never asserts)."""

from __future__ import annotations

import numba

from truco_lab.openspiel.bench import numba_rate, openspiel_rate


def main() -> None:
    for threads in sorted({1, numba.get_num_threads()}):
        rate, out = numba_rate(2_000_000, seed=0, threads=threads)
        print(f"numba random hands, {threads} thread(s): {rate:,.0f} hands/s ({out[:, 3].mean():.2f} actions/hand)")
    for name in ("python_kuhn_poker", "truco_paulista", "truco_paulista_match"):
        games, steps = openspiel_rate(name, seconds=2.0)
        print(f"openspiel {name}: {games:,.1f} games/s, {steps:,.0f} steps/s, {1e6 / steps:.1f} us/step")


if __name__ == "__main__":
    main()
