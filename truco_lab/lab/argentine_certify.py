"""The suit-blind abstraction's certificate (issue 20 §2): solve the abstract game of one Argentine hand, play
its strategy in the real game and take the real tree's exact best response to it.

See :mod:`truco_lab.abstraction.argentine_abstract` for the abstraction itself.
"""

from __future__ import annotations

import gc
import time
from dataclasses import asdict, dataclass

from solvers.api import run
from solvers.vector import VectorSolver
from truco_lab.abstraction.argentine_abstract import build_suit_blind_cell, lift_strategy, suit_blind_classes
from truco_lab.abstraction.argentine_tree import build_argentine_cell
from truco_lab.rules.ruleset import RuleSet


@dataclass
class SuitBlindCertificate:
    """One hand's abstraction, solved and certified in the real game (values in points per hand, player 0's)."""

    hands: int  # real hands of the deck
    classes: int  # abstract private states
    abstract_entries: int
    real_entries: int
    abstract_exploitability: float  # of the abstract strategy, in the abstract game
    abstract_iterations: int
    abstract_seconds: float
    abstract_value: float  # the abstract game's value under that strategy
    lifted_value: float  # the same strategy played in the real game (equal: a check of the lift)
    lifted_exploitability: float  # the real game's exact best response to it: the certificate
    real_exploitability: float | None = None  # the real game solved to the same target, for comparison
    real_value: float | None = None
    real_iterations: int | None = None
    real_seconds: float | None = None

    def row(self) -> dict:
        return asdict(self)


def certify(rules: RuleSet, score0: int = 0, score1: int = 0, dealer: int = 1, target: float = 1e-3,
            max_iterations: int = 4000, solve_real: bool = True, progress: bool = False) -> SuitBlindCertificate:
    """Solve the abstract hand to ``target`` points per hand, then certify its strategy in the real hand;
    with ``solve_real`` also solve the real hand to ``target`` (what the abstraction gives up)."""
    ab = suit_blind_classes(rules)
    t0 = time.perf_counter()
    A = build_suit_blind_cell(rules, score0, score1, dealer)
    sa = VectorSolver(A, "dcfr")
    ea, _ = run(sa, max_iterations, target, check_every=25, progress=progress, desc="abstract hand")
    strategy, va, ia = sa.average_strategy(), sa.game_value(), sa.iteration
    ta = time.perf_counter() - t0
    del sa
    gc.collect()
    R = build_argentine_cell(rules, score0, score1, dealer)
    lifted = lift_strategy(ab, A, strategy, R)
    na = A.num_slots
    del A, strategy
    gc.collect()
    sr = VectorSolver(R, "dcfr")
    cert = SuitBlindCertificate(ab.hands.num_hands, ab.num_classes, int(na), int(R.num_slots), float(ea), int(ia),
                                ta, float(va), float(sr.game_value(lifted)), float(sr.exploitability(lifted)))
    del lifted
    if solve_real:
        t1 = time.perf_counter()
        er, _ = run(sr, max_iterations, target, check_every=25, progress=progress, desc="real hand")
        cert.real_exploitability, cert.real_value = float(er), float(sr.game_value())
        cert.real_iterations, cert.real_seconds = int(sr.iteration), time.perf_counter() - t1
    return cert
