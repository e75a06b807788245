"""Strength levels and vira classes: the lossless card quotient of DESIGN-NOTES §1-2.

A card is its strength level under the vira (9 plain levels + 4 manilhas in the full deck); viras that
induce the same multiplicity of each level form one vira class, solved once. Vira, everywhere in this
package: ``vira`` is a card id, ``vira_class`` (or ``vc``) a :class:`ViraClass`, ``vira_class.index`` its
index, and ``vira_name`` the card's literal.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from math import comb

import numba as nb
import numpy as np

from truco_lab.rules import engine as E
from truco_lab.rules.cards import RANKS, SUITS, card_str
from truco_lab.rules.ruleset import PAULISTA, RuleSet


@dataclass(frozen=True)
class ViraClass:
    """Viras that induce the same level multiplicities (hence isomorphic subgames)."""

    index: int
    vira: int  # representative vira card id
    viras: tuple[int, ...]  # every vira card of the class
    weight: float  # probability that the turned-up card falls in this class
    level_cards: tuple[tuple[int, ...], ...]  # cards of each level, weakest level first

    @property
    def multiplicity(self) -> tuple[int, ...]:
        return tuple(len(c) for c in self.level_cards)

    @property
    def name(self) -> str:
        return vira_name(self.vira)


def vira_name(vira: int) -> str:
    """A vira's card literal, or ``none`` in rule sets that turn no vira (Mineiro)."""
    return card_str(vira) if vira >= 0 else "none"


@lru_cache(maxsize=256)
def _levels(rules: RuleSet, vira: int) -> tuple[tuple[int, ...], ...]:

    manilha = RANKS.index(rules.manilha_rank(RANKS[vira >> 2])) if rules.vira else -1
    r = rules.to_array()
    by_strength: dict[int, list[int]] = {}
    for c in rules.deck:
        c = int(c)
        if c != vira:
            by_strength.setdefault(int(E.strength(c, 0, manilha, r)), []).append(c)
    return tuple(tuple(by_strength[k]) for k in sorted(by_strength))


def vira_classes(rules: RuleSet = PAULISTA) -> list[ViraClass]:
    """The vira classes of ``rules``' deck, ordered by multiplicity pattern."""
    return list(_vira_classes(rules))


@lru_cache(maxsize=64)
def _vira_classes(rules: RuleSet) -> tuple[ViraClass, ...]:
    groups: dict[tuple[int, ...], list[tuple[int, tuple]]] = {}
    viras = rules.deck.tolist() if rules.vira else [-1]  # no vira turned: one class, "vira" -1
    for v in viras:
        lv = _levels(rules, int(v))
        groups.setdefault(tuple(len(c) for c in lv), []).append((int(v), lv))
    n = len(viras)
    out = []
    for i, key in enumerate(sorted(groups)):
        members = groups[key]
        out.append(ViraClass(i, members[0][0], tuple(m[0] for m in members), len(members) / n, members[0][1]))
    return tuple(out)


@nb.njit(cache=True)
def _blind_odds(mult, r):
    """(P(player 0 wins), P(draw)) of a blind hand: six distinct cards drawn in order from levels with
    multiplicities ``mult`` (player 0's k-th card against player 1's k-th), tricks by strength level."""
    L = mult.shape[0]
    total = 0.0
    win = 0.0
    draw = 0.0
    left = mult.copy()
    n = left.sum()
    seq = np.zeros(6, np.int64)
    rwin = np.zeros(3, np.int32)
    idx = np.zeros(6, np.int64)
    # iterate over level sequences (odometer), weighting by the ordered draws that give them
    while True:
        w = 1.0
        for i in range(L):
            left[i] = mult[i]
        avail = n
        for k in range(6):
            lv = idx[k]
            w *= left[lv] / avail
            left[lv] -= 1
            avail -= 1
            seq[k] = lv
        if w > 0.0:
            res = -1
            for k in range(3):
                a = seq[k]
                b = seq[3 + k]
                rwin[k] = 0 if a > b else (1 if b > a else E.TIE)
                res = E.hand_result(rwin, k + 1, 0, E.rule_all_tied(r))
                if res >= 0:
                    break
            total += w
            if res == 0:
                win += w
            elif res == E.DRAW:
                draw += w
        k = 5
        while k >= 0:
            idx[k] += 1
            if idx[k] < L:
                break
            idx[k] = 0
            k -= 1
        if k < 0:
            break
    return win / total, draw / total


def blind_hand_value(rules: RuleSet) -> float:
    """Player 0's probability of winning a blind hand (seed 001's iron hand) and with it the match:
    cards flipped in dealt order, a draw replays the hand (blind again), so ``P(win) / (1 - P(draw))``
    over the viras; the same for either dealer (in a blind hand who leads decides nothing)."""
    r = rules.to_array()
    win = draw = 0.0
    for vc in vira_classes(rules):
        w, d = _blind_odds(np.array(vc.multiplicity, np.int64), r)
        win += vc.weight * w
        draw += vc.weight * d
    return win / (1.0 - draw)


def vira_class_of(rules: RuleSet, vira: int) -> ViraClass:
    """The class a vira card belongs to."""
    for vc in vira_classes(rules):
        if vira in vc.viras:
            return vc
    if not rules.vira:
        raise ValueError(f"rule set {rules.name!r} turns no vira (its manilhas are fixed), got vira {vira_name(vira)}")
    raise ValueError(f"vira {vira_name(vira)} is not in the deck ranks={rules.ranks!r} suits={rules.suits!r}")


def _hands(mult: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
    """Canonical hands (sorted level triples) and their packed level counts (2 bits per level)."""
    L = len(mult)
    hands, packed = [], []
    for a in range(L):
        for b in range(a, L):
            for c in range(b, L):
                cnt = [0] * L
                for x in (a, b, c):
                    cnt[x] += 1
                if all(cnt[i] <= mult[i] for i in range(L)):
                    hands.append((a, b, c))
                    packed.append(sum(cnt[i] << (2 * i) for i in range(L)))
    return np.array(hands, np.int8), np.array(packed, np.int64)


def deal_weights(mult: tuple[int, ...], hands: np.ndarray) -> np.ndarray:
    """W[h0, h1] = probability that player 0 holds hand h0 and player 1 holds h1."""
    L = len(mult)
    n = sum(mult)
    cnt = np.zeros((len(hands), L), np.int64)
    for i, h in enumerate(hands):
        for x in h:
            cnt[i, x] += 1
    own = np.array([np.prod([comb(mult[lv], int(k)) for lv, k in enumerate(row)]) for row in cnt], np.float64)
    W = np.zeros((len(hands), len(hands)))
    for i in range(len(hands)):
        rest = np.array(mult) - cnt[i]
        for j in range(len(hands)):
            w = 1
            for lv in range(L):
                k = int(cnt[j, lv])
                if k:
                    w *= comb(int(rest[lv]), k)
                    if w == 0:
                        break
            W[i, j] = own[i] * w
    return W / (comb(n, 3) * comb(n - 3, 3))


# ---- the numba builder ---------------------------------------------------

MANILHA_NAMES = {"c": "Zap", "h": "Copas", "s": "Espadilha", "d": "Ouros"}


def level_names(rules: RuleSet, vc: ViraClass) -> list[str]:
    """Readable name of each level under the class's representative vira: plain
    levels by rank (``7``), manilhas by their traditional names (``Zap``)."""
    return level_names_at(rules, vc.vira)


def level_names_at(rules: RuleSet, vira: int) -> list[str]:
    """Level names under an actual vira (a class member's levels are the representative's, renamed)."""

    manilha = rules.manilha_rank(RANKS[vira >> 2]) if rules.vira else None
    fixed = set(rules.fixed_manilha_ids())
    out = []
    for cards in _levels(rules, vira):
        c = cards[0]
        # Mineiro's fixed manilhas are one per suit in the same order, so the traditional names fit too
        is_manilha = RANKS[c >> 2] == manilha if rules.vira else c in fixed
        out.append(MANILHA_NAMES[SUITS[c & 3]] if is_manilha else RANKS[c >> 2])
    return out




@dataclass(frozen=True)
class HandLevels:
    """A vira class's private states as the trees number them: ``hands`` (sorted level tuples, the tree's
    hand rows), ``lvl_cards`` (the card ids of each level, -1 padded), ``card_level`` (the level of each
    card id, -1 outside the deck) and ``hand_index`` (hand tuple -> row)."""

    hands: np.ndarray
    lvl_cards: np.ndarray
    card_level: np.ndarray
    hand_index: dict


@lru_cache(maxsize=256)
def hand_levels(vc: ViraClass) -> HandLevels:
    """The levels and hands of a vira class (the same for every cell of that class)."""
    nlev = len(vc.level_cards)
    lvl_cards = np.full((nlev, 4), -1, np.int32)
    card_level = np.full(40, -1, np.int32)
    for lv, cards in enumerate(vc.level_cards):
        lvl_cards[lv, : len(cards)] = cards
        for c in cards:
            card_level[c] = lv
    hands, _ = _hands(vc.multiplicity)
    return HandLevels(hands, lvl_cards, card_level, {tuple(int(x) for x in h): i for i, h in enumerate(hands)})
