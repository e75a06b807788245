"""What the people layer needs of a solution: a small protocol, so bots and advice never reach into the lab's
private members (:class:`truco_lab.lab.policy.MatchStrategy` is the one implementation)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol

from truco_lab.rules import RuleSet


class Strategy(Protocol):
    """A solved strategy playable at OpenSpiel truco states."""

    rules: RuleSet
    out: Path  # the run folder it was read from (named in messages)
    equity: Any  # the run's equity table (match-win probability per cell)

    def covers(self, state) -> bool:
        """Whether the solution covers the cell of ``state``'s hand."""

    def action_probabilities(self, state) -> dict[int, float]:
        """The strategy's probabilities at ``state`` (``KeyError`` off the solved tree)."""

    def best_response_action(self, state) -> int:
        """The best response to this strategy (the certificate's) for the player to act."""

    def decision(self, state) -> Any:
        """Probabilities, action values, own reach and the opponent's range at ``state``
        (:class:`truco_lab.lab.policy.Decision`)."""
