"""The rules layer: cards and notation, the Spanish pack, rule sets as data, the numba engine, hand states
and their truco-spec JSON, the truco-spec runner. Imports nothing from the layers above it."""

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
    check_start,
    rule_set,
    sees_own_cards,
    sees_partner,
)

__all__ = ["ARGENTINO", "MINEIRO", "MINEIRO_2V2", "PAULISTA", "PAULISTA_2V2", "PAULISTA_HOUSE", "RULE_SETS",
           "TEAM_RULE_SETS", "RuleSet", "check_start", "rule_set", "sees_own_cards", "sees_partner"]
