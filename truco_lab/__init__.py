"""truco-lab: exact truco engine (paulista, seed 001 house rules, Mineiro, Argentine truco, two against two),
OpenSpiel games and solvers."""

from solvers.tables import register_schema as _register_schema
from solvers.tree import register_native_builder as _register
from truco_lab.abstraction import argentine_tree as _argentine_tree
from truco_lab.abstraction import tree as _public_tree
from truco_lab.openspiel import games  # noqa: F401  registers the OpenSpiel games
from truco_lab.rules.cards import action_str, card_str, parse_action, parse_card
from truco_lab.rules.ruleset import (
    ARGENTINO,
    MINEIRO,
    MINEIRO_2V2,
    PAULISTA,
    PAULISTA_2V2,
    PAULISTA_HOUSE,
    RULE_SETS,
    TEAM_RULE_SETS,
    RuleSet,
    rule_set,
)
from truco_lab.rules.spanish import envido_points
from truco_lab.rules.state import HandState, TrucoError

_register("truco_paulista", _public_tree.native_parts)
_register("truco_argentino", _argentine_tree.native_parts)
_register_schema(_argentine_tree.TABLE_SCHEMA)
_register_schema(_public_tree.TABLE_SCHEMA)

__version__ = "0.2.0"
__all__ = [
    "ARGENTINO",
    "MINEIRO",
    "MINEIRO_2V2",
    "PAULISTA",
    "PAULISTA_2V2",
    "PAULISTA_HOUSE",
    "RULE_SETS",
    "TEAM_RULE_SETS",
    "HandState",
    "RuleSet",
    "TrucoError",
    "action_str",
    "card_str",
    "envido_points",
    "parse_action",
    "parse_card",
    "rule_set",
]
