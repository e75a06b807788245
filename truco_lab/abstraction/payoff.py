"""Hand outcomes and the objectives that turn them into utilities.

The tree builder records, at each terminal, an *outcome code*: who won the hand
and the points it paid before the cap (``winner * 16 + awarded``). An objective
maps every code to player 0's utility at one score cell:

* ``points``: the points the hand adds to the winner's score (after the cap),
  signed for player 0 — the hand's own value;
* ``equity``: player 0's match-win probability at the successor cell (scores
  after the award, the other player deals next), 1 or 0 when someone reaches
  the target — the hand's value in the match.

So one built tree serves every backward-induction pass; only ``set_payoff``
changes.
"""

from __future__ import annotations

from collections.abc import Callable

import numba as nb
import numpy as np

from truco_lab.rules import engine as E
from truco_lab.rules.ruleset import RuleSet

N_OUTCOMES = 48  # winner in {0, 1, DRAW} x awarded points 0..15
PAYOFFS = ("points", "equity")


@nb.njit(cache=True, inline="always")
def outcome_code(winner: int, awarded: int) -> int:
    """The code of a finished hand: winner (0, 1, DRAW) and the points it paid before the cap."""
    return winner * 16 + awarded


def decode(code: int) -> tuple[int, int]:
    """(winner, awarded points) of an outcome code."""
    return code >> 4, code & 15


def successor(rules: RuleSet, score0: int, score1: int, dealer: int, code: int) -> tuple[int, int, int]:
    """(score0, score1, next dealer) after the outcome; a score may equal the target (match over)."""
    w, pts = decode(code)
    a, b = E.award(rules.to_array(), score0, score1, w, pts)
    return int(a), int(b), 1 - dealer


def points_utilities(rules: RuleSet, score0: int, score1: int, codes=None) -> np.ndarray:
    """Player 0's points per outcome code (capped at the target); ``codes`` default: every code."""
    u = np.zeros(N_OUTCOMES)
    for code in range(N_OUTCOMES) if codes is None else codes:
        code = int(code)
        if decode(code)[0] > E.DRAW:
            continue
        a, b, _ = successor(rules, score0, score1, 0, code)
        u[code] = (a - score0) - (b - score1)
    return u


def continuation_utilities(rules: RuleSet, score0: int, score1: int, dealer: int, codes,
                           value: Callable[[int, int, int], float], win0: float = 1.0, win1: float = 0.0) -> np.ndarray:
    """Utility per outcome code (for the tree's ``codes``) from continuation values:
    ``value(a, b, d)`` at a live successor, ``win0`` / ``win1`` when player 0 / player 1
    reaches the target.

    With ``value`` = player 0's match-win probability this is the ``equity`` objective;
    the match certificate passes best-response continuation values instead.
    """
    u = np.zeros(N_OUTCOMES)
    t = rules.target
    for code in codes:
        code = int(code)
        w, _ = decode(code)
        if w == E.DRAW:
            raise ValueError("a drawn hand leaves the score unchanged, so match equity is not a backward "
                             "induction over scores under these rules (all_tied='draw')")
        a, b, d = successor(rules, score0, score1, dealer, code)
        u[code] = win0 if a >= t else (win1 if b >= t else value(a, b, d))
    return u


def objective_utilities(rules: RuleSet, score0: int, score1: int, dealer: int, codes, payoff: str = "points",
                        equity=None) -> np.ndarray:
    """Utility per outcome code under an objective: ``points``, or ``equity`` with an equity
    table (anything with ``value(score0, score1, dealer)``: player 0's match-win probability)."""
    if payoff == "points":
        return points_utilities(rules, score0, score1, codes)
    if payoff == "equity":
        if equity is None:
            raise ValueError("payoff='equity' needs an equity table (equity=EquityTable or a file)")
        return continuation_utilities(rules, score0, score1, dealer, codes, equity.value)
    raise ValueError(f"payoff must be one of {', '.join(PAYOFFS)}, got {payoff!r}")


def units(payoff: str) -> str:
    """How values and exploitabilities of a cell are measured."""
    return "points per hand (player 0)" if payoff == "points" else "match-win probability (player 0)"
