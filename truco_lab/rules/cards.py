"""Cards and action notation: the public text contract.

Card literal: rank ``4 5 6 7 Q J K A 2 3`` + suit ``d s h c`` (manilha order,
weakest first). Card id ``= 4 * rank_index + suit_index`` (``4d`` = 0,
``3c`` = 39). Action ids are the engine's and the OpenSpiel games' ids.
"""

from __future__ import annotations

RANKS = "4567QJKA23"
SUITS = "dshc"
SUIT_NAMES = ("DIAMONDS", "SPADES", "HEARTS", "CLUBS")
N_CARDS = 40

# Action ids (shared by the numba engine and the OpenSpiel games).
A_UP = 0  # + card id: play_face_up
A_DOWN = 40  # + card id: play_face_down
A_RAISE = 80  # + ladder index - 1 (paulista 80: raise 3 .. 83: raise 12; Mineiro 80: raise 4 .. 83: raise 12)
A_ACCEPT = 84
A_FOLD = 85
A_CONCEDE = 86
A_ACCEPT_ELEVEN = 87
A_FOLD_ELEVEN = 88
N_ACTIONS = 89  # the paulista family's games (paulista, paulista_house, mineiro)
# Argentine calls (seed 004), after paulista's ids so those games keep their action space
A_ENVIDO = 89
A_REAL_ENVIDO = 90
A_FALTA_ENVIDO = 91
A_FLOR = 92
N_ACTIONS_ALL = 93

_RAISE_TARGETS = (3, 6, 9, 12)  # paulista's; other rule sets pass their ``raise_targets``
_SIMPLE = {
    A_ACCEPT: "accept_raise",
    A_FOLD: "fold",
    A_CONCEDE: "concede_hand",
    A_ACCEPT_ELEVEN: "accept_eleven",
    A_FOLD_ELEVEN: "fold_eleven",
}
_SIMPLE_BY_NAME = {v: k for k, v in _SIMPLE.items()}


def card_id(rank_index: int, suit_index: int) -> int:
    return 4 * rank_index + suit_index


def parse_card(text: str) -> int:
    """Card literal (case-insensitive, e.g. ``3d``, ``qS``) -> card id."""
    if not isinstance(text, str):
        raise ValueError(f"card literal must be a string like '3d', got {text!r}")
    t = text.strip()
    if len(t) != 2 or t[0].upper() not in RANKS or t[1].lower() not in SUITS:
        raise ValueError(
            f"unknown card {text!r}: expected a rank in {' '.join(RANKS)} followed by a suit in "
            f"{' '.join(SUITS)} (e.g. '3d', 'Qs')"
        )
    return card_id(RANKS.index(t[0].upper()), SUITS.index(t[1].lower()))


def card_str(cid: int) -> str:
    """Card id -> canonical literal (``Qs``)."""
    if not 0 <= int(cid) < N_CARDS:
        raise ValueError(f"card id must be in 0..39, got {cid!r}")
    return RANKS[cid >> 2] + SUITS[cid & 3]


def parse_cards(text: str | list[str]) -> list[int]:
    """``'3d Qs 5c'`` or a list of literals -> card ids; rejects repeats."""
    items = text.split() if isinstance(text, str) else list(text)
    ids = [parse_card(t) for t in items]
    seen: set[int] = set()
    for t, c in zip(items, ids, strict=False):
        if c in seen:
            raise ValueError(f"card {card_str(c)!r} dealt twice (from {t!r})")
        seen.add(c)
    return ids


def action_str(action: int, raise_targets: tuple[int, ...] = _RAISE_TARGETS) -> str:
    """Action id -> notation string (``play_face_up 3d``, ``raise 3``, ...). ``raise_targets``: the
    rule set's (``RuleSet.raise_targets``; Mineiro's raises print as ``raise 4`` .. ``raise 12``)."""
    a = int(action)
    if A_UP <= a < A_UP + N_CARDS:
        return f"play_face_up {card_str(a - A_UP)}"
    if A_DOWN <= a < A_DOWN + N_CARDS:
        return f"play_face_down {card_str(a - A_DOWN)}"
    if A_RAISE <= a < A_RAISE + 4:
        if a - A_RAISE >= len(raise_targets):
            raise ValueError(f"action id {a} is a raise past this ladder's top ({raise_targets[-1] if raise_targets else 'no raises'})")
        return f"raise {raise_targets[a - A_RAISE]}"
    if a in _SIMPLE:
        return _SIMPLE[a]
    raise ValueError(f"action id must be in 0..{N_ACTIONS - 1}, got {action!r}")


def parse_action(text: str, raise_targets: tuple[int, ...] = _RAISE_TARGETS) -> int:
    """Notation string -> action id. Raises ValueError naming what is wrong. ``raise_targets`` as in
    :func:`action_str`."""
    if not isinstance(text, str):
        raise ValueError(f"action must be a string, got {text!r}")
    parts = text.strip().split()
    rungs = "|".join(str(x) for x in raise_targets) or "(none)"
    expected = (
        f"expected one of 'play_face_up CARD', 'play_face_down CARD', 'raise {rungs}', "
        "'accept_raise', 'fold', 'concede_hand', 'accept_eleven', 'fold_eleven'"
    )
    if not parts:
        raise ValueError(f"empty action: {expected}")
    kind = parts[0].lower()  # action names are case-insensitive, like card literals
    if kind in ("play_face_up", "play_face_down"):
        if len(parts) != 2:
            raise ValueError(f"malformed action {text!r}: {kind} takes one card, e.g. '{kind} 3d'")
        base = A_UP if kind == "play_face_up" else A_DOWN
        return base + parse_card(parts[1])
    if kind == "raise":
        if len(parts) != 2 or not parts[1].isdigit() or int(parts[1]) not in raise_targets:
            raise ValueError(f"malformed action {text!r}: raise takes a target in "
                             f"{', '.join(str(x) for x in raise_targets) or '(none: this ladder has no raises)'}")
        return A_RAISE + raise_targets.index(int(parts[1]))
    if kind in _SIMPLE_BY_NAME and len(parts) == 1:
        return _SIMPLE_BY_NAME[kind]
    raise ValueError(f"malformed action {text!r}: {expected}")


def raise_action(to: int, raise_targets: tuple[int, ...] = _RAISE_TARGETS) -> int:
    """Action id of ``raise to``."""
    if to not in raise_targets:
        raise ValueError(f"raise target must be one of {', '.join(str(x) for x in raise_targets)}, got {to!r}")
    return A_RAISE + raise_targets.index(to)
