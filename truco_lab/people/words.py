"""How a table names cards, moves and scores, per pack: the French pack's (paulista, mineiro) and the
Spanish pack's Argentine terms (seed 004: ``7 de oros``, truco / retruco / vale cuatro, quiero / no quiero,
envido, real envido, falta envido, flor, going to the deck, malas and buenas)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from truco_lab.rules import spanish
from truco_lab.rules.cards import (
    A_ACCEPT,
    A_ACCEPT_ELEVEN,
    A_CONCEDE,
    A_DOWN,
    A_ENVIDO,
    A_FALTA_ENVIDO,
    A_FLOR,
    A_FOLD,
    A_FOLD_ELEVEN,
    A_RAISE,
    A_REAL_ENVIDO,
    A_UP,
    RANKS,
    SUITS,
    action_str,
    parse_action,
)

SUIT_SYMBOLS = {"d": "♦", "s": "♠", "h": "♥", "c": "♣"}


def pretty(card: int) -> str:
    """A card with its suit symbol: ``7♥``."""
    return f"{RANKS[card >> 2]}{SUIT_SYMBOLS[SUITS[card & 3]]}"


_CALLS = ("truco!", "seis!", "nove!", "doze!")  # the calls of the ladder's rungs, first raise first


def describe_action(a: int, raise_targets: tuple[int, ...] = (3, 6, 9, 12)) -> str:
    """Short words for an action id (``raise_targets``: the rule set's, e.g. Mineiro's 4 8 10 12)."""
    if a < A_DOWN:
        return f"play {pretty(a)}"
    if a < A_RAISE:
        return f"play {pretty(a - A_DOWN)} face down"
    if a < A_ACCEPT:
        i = a - A_RAISE
        return f"{_CALLS[i]} (raise to {raise_targets[i]})"
    return {A_ACCEPT: "accept the raise", A_FOLD: "fold (run)", A_ACCEPT_ELEVEN: "accept the hand of eleven",
            A_FOLD_ELEVEN: "fold the hand of eleven", A_CONCEDE: "concede the hand (pays what a fold would)"
            }.get(a, action_str(a, raise_targets))


@dataclass(frozen=True)
class Words:
    """``card`` (as shown), ``literal`` (notation), ``act`` (a move in words), ``notation`` (a move in
    notation), ``parse`` (notation or words -> action id) and ``score`` (points as the players say them)."""

    card: Callable[[int], str]
    literal: Callable[[int], str]
    act: Callable[[int], str]
    notation: Callable[[int], str]
    parse: Callable[[str], int]
    score: Callable[[int], str]


_RAISE_WORDS = {2: "truco!", 3: "quiero retruco!", 4: "quiero vale cuatro!"}


def spanish_card(c: int) -> str:
    """``7 de oros``."""
    return f"{spanish.RANKS[c >> 2]} de {spanish.SUIT_NAMES[c & 3]}"


def words_for(rules) -> Words:
    """The table's words for ``rules``."""
    if rules.pack != "spanish":
        from truco_lab.rules.cards import card_str

        rt = rules.raise_targets
        return Words(pretty, card_str, lambda a: describe_action(a, rt), lambda a: action_str(a, rt),
                     lambda t: parse_action(t, rt), str)
    targets = rules.raise_targets

    def act(a: int) -> str:
        if A_UP <= a < A_UP + 40:
            return f"play {spanish_card(a - A_UP)}"
        if A_RAISE <= a < A_RAISE + len(targets):
            t = targets[a - A_RAISE]
            return f"{_RAISE_WORDS.get(t, f'raise to {t}')} (for {t})"
        return {A_ACCEPT: "quiero (accept)", A_FOLD: "no quiero (decline)", A_ENVIDO: "envido!",
                A_REAL_ENVIDO: "real envido!", A_FALTA_ENVIDO: "falta envido!", A_FLOR: "flor!",
                A_CONCEDE: "me voy al mazo (go to the deck)"}.get(a, spanish.action_str(a, rules))

    return Words(spanish_card, spanish.card_str, act, lambda a: spanish.action_str(a, rules),
                 lambda t: spanish.parse_action(t, rules), spanish.score_str)
