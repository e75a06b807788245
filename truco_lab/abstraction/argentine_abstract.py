"""The suit-blind abstraction of Argentine truco (issue 20 §2): the full deck's hand is ~1e12 native entries.

In the abstract game a player's private state is a *class* of real hands: the trick levels of its three cards
(seed 004's order: 1 de espadas, 1 de bastos, 7 de espadas, 7 de oros, the 3s, ... the 4s), its envido points
and its flor. A card played shows only its level, never its suit. Everything the game pays is still decided
by public information: tricks by levels, the envido and the flor by the values shown. Card removal comes in
through the deal: the probability of each pair of classes counts the real pairs of disjoint hands.

The builder is the native one (:func:`truco_lab.abstraction.argentine_tree.tree_of_hands`) over *copies*: a
level with m cards has m deck positions; player 0's class holds the lowest copies of each of its levels and
player 1's the highest, so two classes clash exactly when their counts of some level exceed m (the native
builder's card-removal pruning then holds as it is). A player plays the copies of one level in a fixed
order, so "a 3" is one public action, not one per suit.

A strategy of the abstract game is played in the real game by mapping each real information set to its class
and its public history with suits forgotten (:func:`lift_strategy`); where a hand holds two cards of one level,
the abstract action plays the lower card id. The exact best response of the real tree to that lifted strategy
is the abstraction's honest certificate (:func:`certify`), wherever the real tree fits.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numba as nb
import numpy as np

from solvers.tree import VectorTree
from truco_lab.abstraction.argentine_tree import (
    ArgentineHands,
    PrivateStates,
    argentine_hands,
    points_utilities,
    roots_of,
    tree_of_hands,
)
from truco_lab.rules import engine as E
from truco_lab.rules.cards import A_DOWN, A_UP
from truco_lab.rules.ruleset import RuleSet, check_start


@dataclass(frozen=True)
class SuitBlindClasses:
    """The classes of a deck's real hands, as private states of the abstract game."""

    hands: ArgentineHands  # the real hands
    cls: np.ndarray  # int32 [H]: each real hand's class
    states: PrivateStates  # per class (the builder's input)
    level: np.ndarray  # int32 [64]: trick level of each card id (-1: not in the deck)
    weights: np.ndarray  # float64 [K, K]: the deal's probability of each pair of classes

    @property
    def num_classes(self) -> int:
        return int(self.states.masks.shape[1])


def card_levels(rules: RuleSet) -> np.ndarray:
    """Trick level of each card id of the deck (the engine's strength; -1 outside the deck)."""
    r = rules.to_array()
    out = np.full(64, -1, np.int32)
    for c in rules.deck:
        out[int(c)] = E.strength(int(c), 0, -1, r)
    return out


@nb.njit(cache=True)
def _pair_counts(mask, cls, K):
    """Counts of ordered pairs of disjoint real hands per pair of classes."""
    W = np.zeros((K, K))
    H = mask.shape[0]
    for a in range(H):
        for b in range(H):
            if (mask[a] & mask[b]) == 0:
                W[cls[a], cls[b]] += 1.0
    return W


@lru_cache(maxsize=8)
def suit_blind_classes(rules: RuleSet) -> SuitBlindClasses:
    """The abstraction of ``rules``'s deck (cached per rule set)."""
    hands = argentine_hands(rules)
    level = card_levels(rules)
    deck = hands.deck
    # deck positions grouped by level: copy k of a level is its k-th card in deck order
    by_level: dict[int, list[int]] = {}
    for i, c in enumerate(deck.tolist()):
        by_level.setdefault(int(level[c]), []).append(i)
    prev = np.full((2, len(deck)), -1, np.int32)
    for pos in by_level.values():
        for k in range(1, len(pos)):
            prev[0, pos[k]] = pos[k - 1]  # player 0 plays copies upwards,
            prev[1, pos[k - 1]] = pos[k]  # player 1 downwards (it holds the highest ones)
    keys: dict[tuple, int] = {}
    cls = np.empty(hands.num_hands, np.int32)
    for h in range(hands.num_hands):
        lv = tuple(sorted(int(level[c]) for c in hands.cards[h]))
        cls[h] = keys.setdefault((lv, int(hands.envido[h]), int(hands.flor[h])), len(keys))
    K = len(keys)
    masks = np.zeros((2, K), np.int64)
    envido = np.zeros(K, np.int32)
    flor = np.zeros(K, np.int32)
    cards = np.zeros((K, 3), np.int32)
    for (lv, env, fl), k in keys.items():
        envido[k], flor[k] = env, fl
        for L in set(lv):
            pos, m = by_level[L], lv.count(L)
            for j in range(m):
                masks[0, k] |= np.int64(1) << pos[j]
                masks[1, k] |= np.int64(1) << pos[len(pos) - 1 - j]
    for h in range(hands.num_hands - 1, -1, -1):
        cards[cls[h]] = hands.cards[h]  # a real hand of each class (the roots read its flor kind)
    W = _pair_counts(hands.mask, cls, K)
    states = PrivateStates(masks, envido, flor, deck, prev, cards)
    return SuitBlindClasses(hands, cls, states, level, W / W.sum())


def build_suit_blind_cell(rules: RuleSet, score0: int = 0, score1: int = 0, dealer: int = 1,
                          utilities: np.ndarray | None = None) -> VectorTree:
    """The abstract game's tree of one Argentine hand (payoffs as
    :func:`truco_lab.abstraction.argentine_tree.build_argentine_cell`'s)."""
    check_start(rules, score0, score1, dealer)
    if rules.face_down_from_round <= 3:
        raise ValueError("native Argentine trees have no face-down cards; this rule set allows them")
    ab = suit_blind_classes(rules)
    st = ab.states
    card_pos = np.full(64, 62, np.int32)  # no real card is shown: clashes come from the copies (see above)
    card_pos[st.deck] = np.arange(len(st.deck), dtype=np.int32)
    roots = roots_of(rules, st.cards, st.flor, score0, score1, dealer)
    tree = tree_of_hands(rules, roots, st.masks, st.envido, st.flor, st.deck, card_pos, st.prev, ab.weights)
    tree.source = SuitBlindCell(rules, int(score0), int(score1), int(dealer))
    tree.set_payoff(points_utilities() if utilities is None else utilities)
    return tree


@dataclass(frozen=True)
class SuitBlindCell:
    """One abstract cell (the tree's builder; it has no table schema of its own)."""

    rules: RuleSet
    score0: int
    score1: int
    dealer: int

    def __call__(self) -> VectorTree:
        return build_suit_blind_cell(self.rules, self.score0, self.score1, self.dealer)

    def metadata(self) -> dict:
        return {"rules": self.rules.to_dict(), "score": [self.score0, self.score1], "dealer": self.dealer,
                "abstraction": "suit-blind"}


@nb.njit(cache=True, inline="always")
def _same_action(a, b, level):
    """Real action ``a`` is abstract action ``b``: equal codes, or card plays of one level."""
    if a == b:
        return True
    return a < A_DOWN and b < A_DOWN and level[a - A_UP] == level[b - A_UP]


@nb.njit(cache=True)
def _lift(r_actor, r_list, r_len, r_info, r_child, r_nchild, r_action, r_ioff, r_inact, r_eact, r_ehand,
          a_list, a_len, a_info, a_child, a_nchild, a_action, a_ioff, a_inact, a_eact, a_ehand,
          cls, level, K, a_strat):
    """Each real slot's probability under the abstract strategy (see the module docstring); -1 on failure."""
    N = r_actor.shape[0]
    amap = np.full(N, -1, np.int64)
    amap[0] = 0
    out = np.zeros(r_eact.shape[0], np.float32)
    where = np.full(K, -1, np.int64)
    for n in range(N):
        m = amap[n]
        if m < 0:
            return out, n  # a real history the abstract tree does not have
        for j in range(r_nchild[n]):
            c = r_child[n] + j
            for k in range(a_nchild[m]):
                if _same_action(r_action[c], a_action[a_child[m] + k], level):
                    amap[c] = a_child[m] + k
                    break
        p = r_actor[n]
        if p < 0:
            continue
        for t in range(a_len[m, p]):
            where[a_ehand[a_list[m, p] + t]] = t
        for t in range(r_len[n, p]):
            i = r_info[n] + t
            if r_inact[i] == 0:
                continue
            w = where[cls[r_ehand[r_list[n, p] + t]]]
            if w < 0:
                return out, n
            ai = a_info[m] + w
            for e in range(r_ioff[i], r_ioff[i] + r_inact[i]):
                for f in range(a_ioff[ai], a_ioff[ai] + a_inact[ai]):
                    if _same_action(r_eact[e], a_eact[f], level):
                        taken = False  # a second card of the same level: the first one took it
                        for e2 in range(r_ioff[i], e):
                            if _same_action(r_eact[e2], a_eact[f], level):
                                taken = True
                        if not taken:
                            out[e] = a_strat[f]
                        break
        for t in range(a_len[m, p]):
            where[a_ehand[a_list[m, p] + t]] = -1
    return out, -1


def lift_strategy(ab: SuitBlindClasses, abstract: VectorTree, strategy: np.ndarray, real: VectorTree) -> np.ndarray:
    """The abstract ``strategy`` (per slot of ``abstract``) as a strategy per slot of the ``real`` tree."""
    R, A = real, abstract
    out, bad = _lift(R.node_actor, R.node_list, R.node_len, R.node_infoset, R.node_child, R.node_nchild,
                     R.node_action, R.infoset_offset, R.infoset_nact, R.entry_action, R.elem_hand,
                     A.node_list, A.node_len, A.node_infoset, A.node_child, A.node_nchild, A.node_action,
                     A.infoset_offset, A.infoset_nact, A.entry_action, A.elem_hand,
                     ab.cls, ab.level, ab.num_classes, np.asarray(strategy, np.float32))
    if bad >= 0:
        raise ValueError(f"real node {bad} has no abstract counterpart")
    return out
