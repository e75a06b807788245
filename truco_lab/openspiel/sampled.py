"""The numba engine as a :class:`solvers.mccfr.SampledGame`: MCCFR drives the engine directly (no OpenSpiel
wrapper in its loop), for hands whose full tree does not fit (the full Argentine hand).

The game's parameter array ``g`` is dealer, scores, the key kind and the deck, then the rules array. A
history entry is ``128 * player + action``. The information-state key hashes what the acting player knows, as
the OpenSpiel games' information states do: their dealt cards, the vira, the public actions (an opponent's
face-down card hidden) and, once an envido was accepted, the opponent's envido points (compared in the open).

**Strength keys.** Where a card matters only through its trick strength (rule sets without envido or flor:
paulista, mineiro and their two-against-two games), a card in a key is its strength under the hand's vira and
the vira is its rank: hands and histories that differ only by the suits of equally strong cards share one
information set. That is lossless: suits of plain cards are exchangeable, and so is the vira's suit (its rank
names the manilhas; the card it removes is a plain one of its rank). One index of a merged set's legal actions
must mean one strength in every member: legal actions come in card-id order, so a hand enters the key as the
strengths of its cards *in id order* (under a vira rank that order is the strength order; with fixed manilhas
it is not always, and such hands are then kept apart). On the full 40-card deck this is ~100x fewer sets at
a hand's first decision (9,880 hands x 37 viras -> ~4,000 per seat), so a two-against-two MCCFR table holds
the states it meets.

**Suit-blind keys** (``keys="suit-blind"``, Argentine truco): the same, plus the player's own envido points
and whether they hold a flor. A card played then shows its trick level only, and suits tell the envido, so
this is an abstraction, not an identity (the suit-blind one of :mod:`truco_lab.abstraction.argentine_abstract`):
its strategy is certified by the exact best response in the real game wherever that fits (small decks).
"""

from __future__ import annotations

import numba as nb
import numpy as np

from solvers.mccfr import MCCFRSolver, SampledGame
from truco_lab.rules import engine as E
from truco_lab.rules.cards import A_DOWN, A_RAISE, N_CARDS
from truco_lab.rules.ruleset import RuleSet
from truco_lab.rules.simulate import deal_hand

# the game's parameters: dealer, scores, the deck (padded to the pack), then the rules array to the end
G_DEALER = 0
G_SCORE = 1
G_KEYS = 3  # 0: cards as they are, 1: strength keys, 2: suit-blind keys (see the module's note)
G_NDECK = 4
G_DECK = 5
G_RULES = G_DECK + N_CARDS
HISTORY_SIZE = 40
KEY_KINDS = ("cards", "strength", "suit-blind")


def strength_keys(rules: RuleSet) -> bool:
    """Whether ``rules``' MCCFR keys name cards by strength (only trick strength tells its cards apart: no
    envido, no flor, the French pack)."""
    return not (rules.envido or rules.flor) and rules.pack == "french"


def key_kind(rules: RuleSet, keys: str | None = None) -> str:
    """``keys`` checked against ``rules`` (None: ``strength`` wherever it is lossless, else ``cards``)."""
    if keys is None:
        return "strength" if strength_keys(rules) else "cards"
    if keys not in KEY_KINDS:
        raise ValueError(f"keys must be one of {', '.join(KEY_KINDS)}, got {keys!r}")
    if keys == "strength" and not strength_keys(rules):
        raise ValueError(f"{rules.name}: its cards differ by more than trick strength (envido or flor), so strength "
                         "keys would merge information sets that are not alike (suit-blind keys abstract them)")
    if keys == "suit-blind" and (strength_keys(rules) or rules.seats != 2):
        raise ValueError(f"{rules.name}: suit-blind keys are for heads-up rule sets with envido or flor "
                         "(strength keys already merge suits losslessly here)")
    return keys


def game_params(rules: RuleSet, score: tuple[int, int], dealer: int, keys: str | None = None) -> np.ndarray:
    """The parameter array; ``keys``: how information sets are keyed (:func:`key_kind`)."""
    kind = KEY_KINDS.index(key_kind(rules, keys))
    deck = rules.deck
    r = rules.to_array()
    g = np.zeros(G_RULES + len(r), np.int32)
    g[G_DEALER] = dealer
    g[G_SCORE] = score[0]
    g[G_SCORE + 1] = score[1]
    g[G_KEYS] = kind
    g[G_NDECK] = len(deck)
    g[G_DECK:G_DECK + len(deck)] = deck
    g[G_RULES:] = r
    return g


@nb.njit(cache=True)
def t_deal(g, s, h, rng):
    r = g[G_RULES:]
    nd = g[G_NDECK]
    deck = g[G_DECK:G_DECK + nd].copy()
    m = 3 * E.rule_seats(r)
    cards = np.empty(13, np.int32)
    deal_hand(s, r, deck, nd, m + 1 if E.rule_turns_vira(r) else m, rng, cards, g[G_DEALER], g[G_SCORE],
              g[G_SCORE + 1])
    h[0] = 0


@nb.njit(cache=True)
def t_player(g, s):
    return E.actor(s)


@nb.njit(cache=True)
def t_legal(g, s, out):
    return E.legal_actions(s, g[G_RULES:], out, False)


@nb.njit(cache=True)
def t_apply(g, s, h, a):
    p = E.actor(s)
    E.apply_unchecked(s, g[G_RULES:], a)
    h[0] += 1
    h[h[0]] = 128 * p + a


@nb.njit(cache=True)
def t_utility(g, s, p):
    side = p & 1  # two against two: partners share their side's result
    return float(E.gain(s, side) - E.gain(s, 1 - side))


@nb.njit(cache=True, inline="always")
def _mix(k, x):
    z = (k ^ np.uint64(x + 0x1000)) * np.uint64(0x9E3779B97F4A7C15)
    return z ^ (z >> np.uint64(29))


@nb.njit(cache=True)
def t_key(g, s, h, p):
    return _info_hash(g, s, h, p, np.uint64(0x51ED27))


@nb.njit(cache=True)
def t_check(g, s, h, p):
    """A second hash of the same information, from another seed: MCCFR refuses a key collision instead of
    merging two information sets."""
    return _info_hash(g, s, h, p, np.uint64(0xC0FFEE1234567))


@nb.njit(cache=True, inline="always")
def _card_code(g, s, card):
    """A card as a key sees it: its id, or with strength keys its strength under the hand's vira."""
    if g[G_KEYS] == 0:
        return card
    return E.strength(card, 0, E.manilha(s), g[G_RULES:]) + 1


@nb.njit(cache=True)
def _hand_key(g, s, k, p, base):
    """Seat ``p``'s three dealt cards in id order (the order of their play actions), each as a key sees it."""
    a = E.dealt_card(s, p, 0)
    b = E.dealt_card(s, p, 1)
    c = E.dealt_card(s, p, 2)
    lo = min(a, min(b, c))
    hi = max(a, max(b, c))
    k = _mix(k, base + _card_code(g, s, lo))
    k = _mix(k, _card_code(g, s, a + b + c - lo - hi))
    return _mix(k, _card_code(g, s, hi))


@nb.njit(cache=True)
def _info_hash(g, s, h, p, seed):
    k = _mix(seed, p)
    k = _hand_key(g, s, k, p, 0)
    v = E.vira(s)
    k = _mix(k, v if g[G_KEYS] == 0 or v < 0 else v >> 2)  # with strength keys the vira's rank alone
    if g[G_KEYS] == 2:  # suit-blind: what the suits told of the player's own hand
        k = _mix(k, 3000 + E.envido_of(s, p))
        k = _mix(k, 4000 + int(E.flor_dealt(s, p)))
    r = g[G_RULES:]
    t = E.rule_target(r) - 1
    if E.rule_seats(r) == 4 and E.rule_eleven(r) and g[G_SCORE + (p & 1)] == t and g[G_SCORE + 1 - (p & 1)] != t:
        k = _hand_key(g, s, k, (p + 2) % 4, 200)  # a side on eleven has seen its partner's cards (seed 003)
    for i in range(1, h[0] + 1):
        x = h[i]
        q = x >> 7
        act = x & 127
        if q != p and A_DOWN <= act < A_RAISE:
            x = 128 * q + 127  # the opponent's face-down card is hidden
        elif g[G_KEYS] != 0 and act < A_RAISE:  # a card played: its strength, face up or down
            down = 1 if act >= A_DOWN else 0
            x = 20000 + 1000 * q + 500 * down + _card_code(g, s, act - A_DOWN * down)
        k = _mix(k, x)
    if E.envido_seen(s):
        k = _mix(k, 1000 + E.envido_of(s, 1 - p))
    return k


def sampled_game(rules: RuleSet, score: tuple[int, int] = (0, 0), dealer: int = 1,
                 keys: str | None = None) -> SampledGame:
    """One hand of ``rules`` at ``score`` with ``dealer``, for :class:`solvers.mccfr.MCCFRSolver`
    (``keys``: as :func:`game_params`)."""
    return SampledGame(game_params(rules, score, dealer, keys), E.STATE_SIZE, HISTORY_SIZE, t_deal, t_player, t_legal,
                       t_apply, t_utility, t_key, f"{rules.name} {score[0]}x{score[1]} d{dealer}", rules.seats,
                       check=t_check)


def state_key(state, player: int, keys: str | None = None) -> int:
    """The MCCFR key of an OpenSpiel truco state's information set for ``player``."""
    h = np.zeros(HISTORY_SIZE, np.int32)
    h[0] = len(state.hand_actions)
    for i, (q, a) in enumerate(state.hand_actions):
        h[i + 1] = 128 * q + a
    return int(t_key(game_params(state.rules, state.start_score, state.dealer, keys), state.s, h, player))


def keyed_tree(game, keys: str | None = None):
    """OpenSpiel hand ``game`` walked into a tree whose information sets carry their MCCFR keys (build once,
    measure many times with :func:`exploitability`; ``keys`` as :func:`game_params`)."""
    from solvers.tree import build_openspiel_tree

    return build_openspiel_tree(game, infoset_hook=lambda st, p: state_key(st, p, keys))


def exploitability(solver: MCCFRSolver, game_or_tree) -> float:
    """Exact exploitability (NashConv / 2, in points) of the MCCFR average strategy in an OpenSpiel hand game
    (small variants: the game is walked into a tree, or pass :func:`keyed_tree`'s; sets MCCFR never visited
    play uniformly)."""
    from solvers.cfr import best_response_values
    from solvers.tree import GameTree

    tree = game_or_tree if isinstance(game_or_tree, GameTree) else keyed_tree(game_or_tree)
    strat = np.zeros(tree.num_slots)
    for i, k in enumerate(tree.infoset_extra):
        o, n = int(tree.infoset_offset[i]), int(tree.infoset_nact[i])
        strat[o:o + n] = solver.average(k, n)
    b0, b1 = best_response_values(tree, strat)
    return (b0 + b1) / 2.0


def head_to_head(game: SampledGame, side0, side1, hands: int = 10_000, seed: int = 0) -> tuple[float, float]:
    """Play ``hands`` deals of ``game``: seats of side 0 follow ``side0``, the others ``side1``; each is an
    :class:`MCCFRSolver` (its average strategy) or ``None`` (uniformly random). Returns side 0's mean points
    per hand and its standard error. For team games, where CFR gives no equilibrium guarantee, this is the
    measure that means something."""
    rng = np.array([np.uint64(seed) * np.uint64(0x100000001B3) + np.uint64(7)], np.uint64)
    pick = np.random.default_rng(seed)
    s = np.zeros(game.state_size, np.int32)
    h = np.zeros(game.history_size, np.int32)
    buf = np.zeros(E.MAX_LEGAL, np.int32)
    g = game.g
    out = np.empty(hands)
    for i in range(hands):
        t_deal(g, s, h, rng)
        while True:
            p = int(t_player(g, s))
            if p < 0:
                break
            n = int(t_legal(g, s, buf))
            who = side0 if p % 2 == 0 else side1
            probs = np.full(n, 1.0 / n) if who is None else who.average(int(t_key(g, s, h, p)), n)
            t_apply(g, s, h, int(buf[pick.choice(n, p=probs / probs.sum())]))
        out[i] = t_utility(g, s, 0)
    return float(out.mean()), float(out.std(ddof=1) / np.sqrt(hands))
