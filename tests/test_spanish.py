"""Seed 004's Spanish pack: notation, trick order (§3) and envido points (§5), from the seed's sentences."""

from __future__ import annotations

import itertools

import pytest

import truco_lab
from truco_lab.rules.spanish import N_CARDS, TRICK_STRENGTH, card_str, envido_points, parse_card, parse_cards


def beats(a: str, b: str) -> bool:
    return TRICK_STRENGTH[parse_card(a)] > TRICK_STRENGTH[parse_card(b)]


def ties(a: str, b: str) -> bool:
    return TRICK_STRENGTH[parse_card(a)] == TRICK_STRENGTH[parse_card(b)]


def test_the_pack_and_its_notation():
    """§2: "1–7, Sota (10), Caballo (11) and Rey (12) in each suit, excluding 8s, 9s"; literals rank then suit."""
    lits = [card_str(c) for c in range(N_CARDS)]
    assert len(set(lits)) == 40 and {"1e", "7o", "12c", "10b"} <= set(lits)
    assert all(parse_card(x) == c for c, x in enumerate(lits)) and parse_card("12C") == parse_card("12c")
    for bad in ("8e", "9o", "13c", "1x", "e1", ""):
        with pytest.raises(ValueError, match="unknown card"):
            parse_card(bad)
    with pytest.raises(ValueError, match="appears twice"):
        parse_cards("1e 1e 7o")


def test_trick_order_high_to_low():
    """§3: "Swords 1, Batons 1, Swords 7, Coins 7, all 3s, all 2s, Cups 1 and Coins 1, all 12s, all 11s, all 10s,
    Cups 7 and Batons 7, all 6s, all 5s, all 4s. Except for the four highest cards, equal ranks tie"."""
    chain = ["1e", "1b", "7e", "7o", "3c", "2e", "1c", "12o", "11b", "10e", "7c", "6b", "5o", "4e"]
    for hi, lo in itertools.pairwise(chain):
        assert beats(hi, lo), (hi, lo)
    assert ties("1c", "1o") and ties("7c", "7b") and ties("3e", "3o") and ties("12e", "12c")
    assert not ties("1e", "1b") and not ties("7e", "7o") and beats("7o", "7c")


def test_envido_points_from_the_seed():
    """§5: "Two same-suit cards score their numeric sum plus 20, with 10–12 worth zero. Without a pair, use the
    highest single value. Three same-suit cards use the best two"."""
    assert envido_points("7e 6e 1b") == 33 and truco_lab.envido_points("7e 6e 1b") == 33
    assert envido_points("10c 11c 4o") == 20  # two courts of a suit: 20
    assert envido_points("12o 5o 3e") == 25
    assert envido_points("7b 6b 5b") == 33  # three of a suit: the best two
    assert envido_points("7o 5e 12c") == 7  # no two of a suit: the highest single value
    assert envido_points("12e 11o 10c") == 0
    assert envido_points([parse_card("7e"), parse_card("6e"), parse_card("1b")]) == 33
    with pytest.raises(ValueError, match="three cards"):
        envido_points("7e 6e")
