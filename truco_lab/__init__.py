"""truco-lab: exact truco paulista engine, OpenSpiel games and solvers."""

from truco_lab import games  # noqa: E402,F401  registers the OpenSpiel games
from truco_lab.cards import action_str, card_str, parse_action, parse_card
from truco_lab.rules import PAULISTA, RuleSet
from truco_lab.state import HandState, TrucoError

__version__ = "0.1.0"
__all__ = [
    "PAULISTA",
    "HandState",
    "RuleSet",
    "TrucoError",
    "action_str",
    "card_str",
    "parse_action",
    "parse_card",
]
