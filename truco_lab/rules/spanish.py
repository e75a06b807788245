"""The Spanish pack of Argentine truco (seed 004): cards, notation, trick order and envido points.

The first piece of the ``argentino`` rule set (issue 9). The engine does not play it yet. This module is
the one place where the pack, its order and the envido count are written, as data.

Card literal: rank ``1..7, 10, 11, 12`` then suit ``e b o c`` (espadas, bastos, oros, copas): ``1e``,
``7o``, ``12c``. Card id ``= 4 * rank_index + suit_index`` over :data:`RANKS` and :data:`SUITS`.
"""

from __future__ import annotations

import numba as nb

RANKS = (1, 2, 3, 4, 5, 6, 7, 10, 11, 12)
SUITS = "eboc"
SUIT_NAMES = ("espadas", "bastos", "oros", "copas")
N_CARDS = 40

# Seed 004 §3, strongest first; cards in one tuple tie ("equal ranks tie across suits", except the top four).
_ORDER = (
    ("1e",), ("1b",), ("7e",), ("7o",),
    ("3e", "3b", "3o", "3c"), ("2e", "2b", "2o", "2c"), ("1c", "1o"),
    ("12e", "12b", "12o", "12c"), ("11e", "11b", "11o", "11c"), ("10e", "10b", "10o", "10c"),
    ("7c", "7b"), ("6e", "6b", "6o", "6c"), ("5e", "5b", "5o", "5c"), ("4e", "4b", "4o", "4c"),
)


def card_id(rank: int, suit: str) -> int:
    return 4 * RANKS.index(rank) + SUITS.index(suit)


def parse_card(text: str) -> int:
    """Spanish card literal (``1e``, ``12C``; case-insensitive) -> card id."""
    if not isinstance(text, str):
        raise ValueError(f"card literal must be a string like '1e', got {text!r}")
    t = text.strip().lower()
    rank, suit = t[:-1], t[-1:]
    if not rank.isdigit() or int(rank) not in RANKS or suit not in SUITS:
        raise ValueError(f"unknown card {text!r}: expected a rank in {' '.join(map(str, RANKS))} followed by a suit "
                         f"in {' '.join(SUITS)} (espadas, bastos, oros, copas), e.g. '1e', '12c'")
    return card_id(int(rank), suit)


def card_str(cid: int) -> str:
    """Card id -> canonical literal (``7o``)."""
    if not 0 <= int(cid) < N_CARDS:
        raise ValueError(f"card id must be in 0..{N_CARDS - 1}, got {cid!r}")
    return f"{RANKS[cid >> 2]}{SUITS[cid & 3]}"


def parse_cards(text: str | list[str]) -> list[int]:
    """``'7e 6e 1b'`` or a list of literals -> card ids; rejects repeats."""
    items = text.split() if isinstance(text, str) else list(text)
    ids = [parse_card(x) for x in items]
    if len(set(ids)) != len(ids):
        dup = next(c for c in ids if ids.count(c) > 1)
        raise ValueError(f"card {card_str(dup)!r} appears twice in {text!r}")
    return ids


TRICK_STRENGTH = tuple(
    next(len(_ORDER) - i for i, group in enumerate(_ORDER) if card_str(c) in group) for c in range(N_CARDS)
)
"""Trick strength of each card id (higher wins; equal values tie), seed 004 §3."""


def envido_value(cid: int) -> int:
    """A card's envido value: its number, the courts (10, 11, 12) nothing (seed 004 §5)."""
    r = RANKS[cid >> 2]
    return 0 if r >= 10 else r


def envido_points(cards: str | list[str] | list[int]) -> int:
    """The envido of a three-card hand (seed 004 §5): two cards of one suit score their values plus 20, the
    best two when three share a suit; with no two of a suit, the highest single value.

    >>> envido_points("7e 6e 1b")
    33
    """
    ids = parse_cards(cards) if isinstance(cards, str) or (cards and isinstance(cards[0], str)) else list(cards)
    if len(ids) != 3:
        raise ValueError(f"an envido hand has three cards, got {len(ids)}: {cards!r}")
    a, b, c = (int(x) for x in ids)
    return int(envido_rule(a, b, c, envido_value(a), envido_value(b), envido_value(c)))


@nb.njit(cache=True, inline="always")
def envido_rule(a, b, c, va, vb, vc) -> int:
    """The envido rule itself, once (the engine calls it with its rules table's values): cards ``a b c``
    (ids: the suit is ``id & 3``) worth ``va vb vc``; two of a suit score both values plus 20 (three of a
    suit: the best two), else the highest single value."""
    best = max(va, max(vb, vc))
    if a & 3 == b & 3:
        best = max(best, 20 + va + vb)
    if a & 3 == c & 3:
        best = max(best, 20 + va + vc)
    if b & 3 == c & 3:
        best = max(best, 20 + vb + vc)
    return best


# ---- action notation (seed 004's own words) ------------------------------
_RAISE_NAMES = {2: "truco", 3: "retruco", 4: "vale_cuatro"}


def _simple_names() -> dict[int, str]:
    from truco_lab.rules.cards import A_ACCEPT, A_CONCEDE, A_ENVIDO, A_FALTA_ENVIDO, A_FLOR, A_FOLD, A_REAL_ENVIDO

    return {A_ACCEPT: "quiero", A_FOLD: "no_quiero", A_CONCEDE: "go_to_deck", A_ENVIDO: "envido",
            A_REAL_ENVIDO: "real_envido", A_FALTA_ENVIDO: "falta_envido", A_FLOR: "flor"}


def action_str(action: int, rules) -> str:
    """Action id -> Argentine notation: ``play 7o``, ``truco``, ``retruco``, ``vale_cuatro``, ``quiero``,
    ``no_quiero``, ``envido``, ``real_envido``, ``falta_envido``, ``flor``, ``go_to_deck``."""
    from truco_lab.rules.cards import A_RAISE, A_UP, N_ACTIONS_ALL

    a = int(action)
    if A_UP <= a < A_UP + N_CARDS:
        return f"play {card_str(a - A_UP)}"
    targets = rules.raise_targets
    if A_RAISE <= a < A_RAISE + len(targets):
        return _RAISE_NAMES.get(targets[a - A_RAISE], f"raise {targets[a - A_RAISE]}")
    names = _simple_names()
    if a in names:
        return names[a]
    raise ValueError(f"action id {action!r} is not an action of rule set {rules.name!r} "
                     f"(ids 0..{N_ACTIONS_ALL - 1}; no face-down plays, no hand of eleven)")


def parse_action(text: str, rules) -> int:
    """Argentine notation -> action id (``ValueError`` naming what is wrong)."""
    from truco_lab.rules.cards import A_RAISE, A_UP

    if not isinstance(text, str):
        raise ValueError(f"action must be a string, got {text!r}")
    parts = text.strip().lower().split()
    targets = rules.raise_targets
    raises = [_RAISE_NAMES.get(t, f"raise {t}") for t in targets]
    expected = ("expected one of 'play CARD', " + ", ".join(f"'{x}'" for x in raises)
                + (", " if raises else "") + ", ".join(f"'{x}'" for x in _simple_names().values()))
    if not parts:
        raise ValueError(f"empty action: {expected}")
    if parts[0] == "play":
        if len(parts) != 2:
            raise ValueError(f"malformed action {text!r}: play takes one card, e.g. 'play 1e'")
        return A_UP + parse_card(parts[1])
    word = " ".join(parts)
    if word in raises:
        return A_RAISE + raises.index(word)
    for a, name in _simple_names().items():
        if word == name:
            return a
    raise ValueError(f"malformed action {text!r}: {expected}")


def score_str(points: int) -> str:
    """A score the Argentine way (seed 004 §1): the first 15 points are malas, the next 15 buenas
    (``17`` -> ``"2 buenas"``)."""
    if points <= 15:
        return f"{points} malas"
    b = points - 15
    return f"{b} buena" if b == 1 else f"{b} buenas"
