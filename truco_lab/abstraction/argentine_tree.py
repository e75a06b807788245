"""Native Argentine trees: one score cell of ``argentino`` as a :class:`solvers.tree.VectorTree` (issue 20 §2).

Suits matter in Argentine truco (envido and flor), so there is no strength-level quotient: a private state is
the player's three cards themselves. The tree is built from the numba engine (no rule is coded here): a
public node carries a representative engine state whose hands are blank and get each card as it is played,
as in :mod:`truco_lab.abstraction.tree`.

Two things a player's cards decide become public, and the tree makes them public nodes of their own
(*reveals*: a node of the owner where each hand has one forced slot, to the child of what it shows):

* **flor** (rule sets with flor): whether each player holds one is known before anyone decides anything
  (a flor is announced first and forced), so the root reveals player 0's, then player 1's; each pair of
  answers continues from an engine state dealt with hands of those kinds;
* **envido points**, once an envido is accepted: seed 004 compares them in the open, so "quiero" is followed
  by both players showing their points; the engine then compares what was shown.

So every terminal's payoff is public (the VectorTree contract), the envido's showdown is the comparison of
two shown values, and card removal between the two hands is in the deal weights. A terminal records both
players' gains this hand (envido, flor and truco, after the cap) as ``gain0 * 32 + gain1``.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from itertools import combinations

import numba as nb
import numpy as np

from solvers.signals import deferred_signals
from solvers.tables import TableSchema, small_unique
from solvers.tree import VectorTree
from truco_lab.abstraction.tree import NodeHistories, _grow
from truco_lab.rules import engine as E
from truco_lab.rules.cards import A_ACCEPT, A_DOWN, A_UP
from truco_lab.rules.ruleset import RuleSet, check_start

REVEAL = 128  # public and private code of "shows v": REVEAL + v (envido points, or 0/1 for flor)
GAIN_BASE = 32  # outcome code = gain0 * GAIN_BASE + gain1
N_OUTCOMES = GAIN_BASE * GAIN_BASE
PH_PLAY, PH_ENV0, PH_ENV1, PH_FLOR0, PH_FLOR1 = 0, 1, 2, 3, 4


@dataclass(frozen=True)
class ArgentineHands:
    """Every three-card hand of a Spanish deck, with what the engine says it shows."""

    deck: np.ndarray  # int32 [C]: card ids
    cards: np.ndarray  # int32 [H, 3]: each hand's cards, increasing
    mask: np.ndarray  # int64 [H]: bit i set if the hand holds deck[i]
    envido: np.ndarray  # int32 [H]
    flor: np.ndarray  # int32 [H]: 1 if the hand is a flor (rule sets with flor), else 0
    index: dict  # tuple of cards -> hand

    @property
    def num_hands(self) -> int:
        return int(self.cards.shape[0])

    def deal_weights(self) -> np.ndarray:
        """Probability of each ordered pair of disjoint hands (uniform deals)."""
        disjoint = (self.mask[:, None] & self.mask[None, :]) == 0
        return disjoint / disjoint.sum()


@lru_cache(maxsize=16)
def argentine_hands(rules: RuleSet) -> ArgentineHands:
    """The hands of ``rules``'s deck (cached per rule set)."""
    if rules.pack != "spanish":
        raise ValueError(f"native Argentine trees take argentino rule sets, got {rules.name}")
    deck = np.asarray(rules.deck, np.int32)
    if len(deck) > 63:
        raise ValueError(f"a deck of {len(deck)} cards: hand masks hold at most 63")
    r = rules.to_array()
    hands = np.array(list(combinations(deck.tolist(), 3)), np.int32).reshape(-1, 3)
    pos = {int(c): i for i, c in enumerate(deck)}
    mask = np.array([sum(1 << pos[int(c)] for c in h) for h in hands], np.int64)
    env = np.array([E.envido_points(h[0], h[1], h[2], r) for h in hands], np.int32)
    s = np.zeros(E.STATE_SIZE, np.int32)
    flor = np.zeros(len(hands), np.int32)
    if rules.flor:
        for i, h in enumerate(hands):
            E.new_hand(s, r, 0, 0, 0, np.concatenate([h, h]).astype(np.int32), -1)
            flor[i] = int(E.flor_dealt(s, 0))
    return ArgentineHands(deck, hands, mask, env, flor, {tuple(int(c) for c in h): i for i, h in enumerate(hands)})


@nb.njit(cache=True)
def _grow2(a, need):
    if need <= a.shape[0]:
        return a
    b = np.empty((max(need, 2 * a.shape[0]), a.shape[1]), a.dtype)
    b[: a.shape[0]] = a
    return b


@nb.njit(cache=True, inline="always")
def _put(e, pfill, j, h, rem, code, el_hand, el_rem, el_entry, e_child, e_action):
    """Slot ``e`` (private action ``code``) of a hand ``h`` leads to the next element of public child ``j``."""
    d = pfill[j]
    pfill[j] += 1
    el_hand[d] = h
    el_rem[d] = rem
    el_entry[d] = e
    e_child[e] = d
    e_action[e] = code


@nb.njit(cache=True)
def _face_up(s, q, card_pos):
    """Deck positions of the cards player ``q`` has played face up."""
    m = np.int64(0)
    for x in range(E.nplays(s)):
        c = E.play_card(s, x)
        if E.play_owner(s, x) == q and c >= 0 and not E.play_down(s, x):
            m |= np.int64(1) << card_pos[c]
    return m


@nb.njit(cache=True, inline="always")
def _playable(rem, prev):
    """The cards of ``rem`` its owner may play now: a card whose ``prev`` copy is still held waits for it (the
    suit-blind abstraction's copies of one level go in a fixed order; real decks have no copies: all -1)."""
    m = rem
    for i in range(prev.shape[0]):
        if prev[i] >= 0 and (rem >> i) & 1 and (rem >> prev[i]) & 1:
            m &= ~(np.int64(1) << i)
    return m


@nb.njit(cache=True)
def _build_kernel(r, roots, first_phase, hand_mask, hand_env, hand_flor, deck, card_pos, H, with_concede, prev):
    """Expand the public tree (see the module docstring); ``roots[2 * f0 + f1]`` is the state after the flor
    reveals (``roots[0]`` without flor). ``hand_mask[p, h]``: the deck positions hand ``h`` holds as player
    ``p``; ``prev[p, i]``: the position player ``p`` must play before ``i`` (-1: none), see :func:`_playable`."""
    cap = 1 << 12
    n_actor = np.empty(cap, np.int8)
    n_outc = np.empty(cap, np.int16)
    n_parent = np.empty(cap, np.int32)
    n_paction = np.empty(cap, np.int16)
    n_ls = np.empty((cap, 2), np.int32)
    n_ln = np.empty((cap, 2), np.int32)
    n_info = np.empty(cap, np.int32)
    n_child = np.empty(cap, np.int32)
    n_nchild = np.empty(cap, np.int16)
    i_off = np.empty(cap, np.int64)
    i_nact = np.empty(cap, np.int8)
    e_child = np.empty(cap, np.int32)
    e_action = np.empty(cap, np.int16)
    el_hand = np.empty(2 * H, np.int16)
    el_rem = np.empty(2 * H, np.int64)
    el_entry = np.empty(2 * H, np.int32)
    for p in range(2):
        for h in range(H):
            el_hand[p * H + h] = h
            el_rem[p * H + h] = hand_mask[p, h]
            el_entry[p * H + h] = -1
    nel = 2 * H
    nnodes, ninfo, nent = 1, 0, 0
    n_parent[0] = -1
    n_paction[0] = -1
    n_ls[0, 0], n_ln[0, 0], n_ls[0, 1], n_ln[0, 1] = 0, H, H, H
    S = roots.shape[1]
    st_node = np.empty(256, np.int32)
    st_phase = np.empty(256, np.int32)
    st_aux = np.empty(256, np.int32)
    st_state = np.empty((256, S), np.int32)
    st_node[0], st_phase[0], st_aux[0] = 0, first_phase, 0
    st_state[0] = roots[0]
    sp = 1
    buf = np.empty(E.MAX_LEGAL, np.int32)
    pub = np.empty(128, np.int32)
    pcount = np.empty(128, np.int64)
    pfill = np.empty(128, np.int64)
    child_of_val = np.full(64, -1, np.int32)
    up_slot = np.full(64, -1, np.int32)
    possible = np.zeros(2 * H, np.bool_)
    while sp > 0:
        sp -= 1
        n, phase, aux = st_node[sp], st_phase[sp], st_aux[sp]
        s = st_state[sp].copy()
        n_child[n], n_nchild[n], n_info[n], n_outc[n] = 0, 0, -1, -1
        if phase == PH_PLAY and E.winner(s) >= 0:
            n_actor[n] = -1
            n_outc[n] = E.gain(s, 0) * GAIN_BASE + E.gain(s, 1)
            continue
        p = E.actor(s) if phase == PH_PLAY else (0 if phase == PH_ENV0 or phase == PH_FLOR0 else 1)
        n_actor[n] = p
        ls, ln = n_ls[n, p], n_ln[n, p]
        opp = _face_up(s, 1 - p, card_pos)
        union = np.int64(0)
        for t in range(ln):
            possible[t] = (hand_mask[p, el_hand[ls + t]] & opp) == 0  # a hand holding a card the other showed: none
            if possible[t]:
                union |= _playable(el_rem[ls + t], prev[p])
        npub, nfixed = 0, 0
        if phase != PH_PLAY:
            child_of_val[:] = -1
            for t in range(ln):
                if possible[t]:
                    h = el_hand[ls + t]
                    v = hand_env[h] if phase <= PH_ENV1 else hand_flor[h]
                    child_of_val[v] = 0
            for v in range(64):
                if child_of_val[v] == 0:
                    child_of_val[v] = npub
                    pub[npub] = REVEAL + v
                    npub += 1
        else:
            k = E.legal_actions(s, r, buf, with_concede)
            for j in range(k):
                pub[npub] = buf[j]  # hands are blank, so these are the actions every hand has
                npub += 1
            nfixed = npub
            up_slot[:] = -1
            if E.plays_allowed(s):
                for i in range(deck.shape[0]):
                    if (union >> i) & 1:
                        up_slot[i] = npub
                        pub[npub] = A_UP + deck[i]
                        npub += 1
        for j in range(npub):
            pcount[j] = 0
        ient = 0
        for t in range(ln):
            if not possible[t]:
                continue
            if phase != PH_PLAY:
                h = el_hand[ls + t]
                pcount[child_of_val[hand_env[h] if phase <= PH_ENV1 else hand_flor[h]]] += 1
                ient += 1
                continue
            for j in range(nfixed):
                pcount[j] += 1
            ient += nfixed
            can = _playable(el_rem[ls + t], prev[p])
            for i in range(deck.shape[0]):
                if (can >> i) & 1 and up_slot[i] >= 0:
                    pcount[up_slot[i]] += 1
                    ient += 1
        c0 = nnodes
        nnodes += npub
        if nnodes > n_actor.shape[0]:
            n_actor = _grow(n_actor, nnodes)
            n_outc = _grow(n_outc, nnodes)
            n_parent = _grow(n_parent, nnodes)
            n_paction = _grow(n_paction, nnodes)
            n_ls = _grow2(n_ls, nnodes)
            n_ln = _grow2(n_ln, nnodes)
            n_info = _grow(n_info, nnodes)
            n_child = _grow(n_child, nnodes)
            n_nchild = _grow(n_nchild, nnodes)
        n_child[n], n_nchild[n] = c0, npub
        for j in range(npub):
            c = c0 + j
            pfill[j] = nel
            n_parent[c] = n
            n_paction[c] = pub[j]
            n_ls[c, 1 - p], n_ln[c, 1 - p] = n_ls[n, 1 - p], n_ln[n, 1 - p]
            n_ls[c, p], n_ln[c, p] = nel, pcount[j]
            nel += pcount[j]
        el_hand = _grow(el_hand, nel)
        el_rem = _grow(el_rem, nel)
        el_entry = _grow(el_entry, nel)
        i0 = ninfo
        ninfo += ln
        i_off = _grow(i_off, ninfo)
        i_nact = _grow(i_nact, ninfo)
        n_info[n] = i0
        e_child = _grow(e_child, nent + ient)
        e_action = _grow(e_action, nent + ient)
        for t in range(ln):
            src = ls + t
            i_off[i0 + t] = nent
            i_nact[i0 + t] = 0
            if not possible[t]:
                continue
            h = el_hand[src]
            rem = el_rem[src]
            if phase != PH_PLAY:
                v = hand_env[h] if phase <= PH_ENV1 else hand_flor[h]
                _put(nent, pfill, child_of_val[v], h, rem, REVEAL + v, el_hand, el_rem, el_entry, e_child, e_action)
                m = 1
            else:
                for j in range(nfixed):
                    _put(nent + j, pfill, j, h, rem, pub[j], el_hand, el_rem, el_entry, e_child, e_action)
                m = nfixed
                can = _playable(rem, prev[p])
                for i in range(deck.shape[0]):
                    if (can >> i) & 1 and up_slot[i] >= 0:
                        _put(nent + m, pfill, up_slot[i], h, rem & ~(np.int64(1) << i), A_UP + deck[i], el_hand,
                             el_rem, el_entry, e_child, e_action)
                        m += 1
            i_nact[i0 + t] = m
            nent += m
        if sp + npub > st_node.shape[0]:
            st_node = _grow(st_node, sp + npub)
            st_phase = _grow(st_phase, sp + npub)
            st_aux = _grow(st_aux, sp + npub)
            st_state = _grow2(st_state, sp + npub)
        for j in range(npub):
            a = pub[j]
            child = s.copy()
            cphase, caux = PH_PLAY, 0
            if phase == PH_FLOR0:
                cphase, caux = PH_FLOR1, a - REVEAL
            elif phase == PH_FLOR1:
                child = roots[2 * aux + a - REVEAL].copy()
            elif phase == PH_ENV0:
                E.set_envido_of(child, 0, a - REVEAL)
                cphase = PH_ENV1
            elif phase == PH_ENV1:
                E.set_envido_of(child, 1, a - REVEAL)
                E.apply_unchecked(child, r, A_ACCEPT)  # the engine compares what was shown
            elif a == A_ACCEPT and E.envido_pending(s) != 0:
                cphase = PH_ENV0  # "quiero" to an envido: both show their points first
            else:
                if a < A_DOWN:
                    E.give_card(child, p, a - A_UP)
                E.apply_unchecked(child, r, a)
            st_node[sp], st_phase[sp], st_aux[sp] = c0 + j, cphase, caux
            st_state[sp] = child
            sp += 1
    return (n_actor[:nnodes], n_outc[:nnodes], n_parent[:nnodes], n_paction[:nnodes], n_ls[:nnodes].copy(),
            n_ln[:nnodes].copy(), n_info[:nnodes], n_child[:nnodes], n_nchild[:nnodes], i_off[:ninfo],
            i_nact[:ninfo], e_child[:nent], e_action[:nent], el_hand[:nel], el_entry[:nel])


def _roots(rules: RuleSet, hands: ArgentineHands, score0: int, score1: int, dealer: int) -> np.ndarray:
    """The engine state after the deal, hands blank, for each pair of flor answers (one state without flor)."""
    return roots_of(rules, hands.cards, hands.flor, score0, score1, dealer)


def roots_of(rules: RuleSet, cards: np.ndarray, flor: np.ndarray, score0: int, score1: int,
             dealer: int) -> np.ndarray:
    """:func:`_roots` from any hands' ``cards`` [H, 3] and ``flor`` kinds (for abstractions of the deck)."""
    r = rules.to_array()
    kinds = (0, 1) if rules.flor else (0,)
    out = np.zeros((4, E.STATE_SIZE), np.int32)
    for f0 in kinds:
        for f1 in kinds:
            # any hands of these kinds: the engine reads only their kinds here (the pair may even overlap)
            h0 = cards[int(np.flatnonzero(flor == f0)[0])] if (flor == f0).any() else cards[0]
            h1 = cards[int(np.flatnonzero(flor == f1)[0])] if (flor == f1).any() else cards[0]
            s = out[2 * f0 + f1]
            E.new_hand(s, r, dealer, score0, score1, np.concatenate([h0, h1]).astype(np.int32), -1)
            E.forget_hands(s)
    return out


@dataclass(frozen=True)
class ArgentineCell:
    """One native Argentine cell (a :class:`solvers.tree.TreeSource`): rules, score and dealer."""

    rules: RuleSet
    score0: int
    score1: int
    dealer: int
    payoff: str = "points"

    def __call__(self) -> VectorTree:
        return build_argentine_cell(self.rules, self.score0, self.score1, self.dealer)

    def labels(self, tree: VectorTree, min_actions: int = 0) -> dict:
        """Labels of every information set (``min_actions`` is a hint these small trees do not need)."""
        return argentine_labels(tree)

    def route(self, tree: VectorTree, state) -> dict[int, int] | None:
        return argentine_route(tree, state)

    def metadata(self) -> dict:
        from truco_lab.abstraction.payoff import units

        return {"rules": self.rules.to_dict(), "score": [self.score0, self.score1], "dealer": self.dealer,
                "payoff": self.payoff, "units": units(self.payoff), "schema": TABLE_SCHEMA_NAME}


def build_argentine_cell(rules: RuleSet, score0: int = 0, score1: int = 0, dealer: int = 1,
                         utilities: np.ndarray | None = None) -> VectorTree:
    """The vector-form tree of one Argentine hand at ``score0`` x ``score1`` with ``dealer`` dealing. Payoff:
    points per hand (player 0's gain minus player 1's) unless ``utilities`` (per outcome code, see
    :func:`gains_of`) are given; ``tree.set_payoff`` changes them later."""
    check_start(rules, score0, score1, dealer)
    if rules.face_down_from_round <= 3:
        raise ValueError("native Argentine trees have no face-down cards; this rule set allows them")
    hands = argentine_hands(rules)
    card_pos = np.full(64, -1, np.int32)
    card_pos[hands.deck] = np.arange(len(hands.deck), dtype=np.int32)
    tree = tree_of_hands(rules, _roots(rules, hands, score0, score1, dealer), np.stack([hands.mask, hands.mask]),
                         hands.envido, hands.flor, hands.deck, card_pos, np.full((2, len(hands.deck)), -1, np.int32),
                         hands.deal_weights())
    tree.source = ArgentineCell(rules, int(score0), int(score1), int(dealer))
    tree.set_payoff(points_utilities() if utilities is None else utilities)
    return tree


def tree_of_hands(rules: RuleSet, roots: np.ndarray, masks: np.ndarray, envido: np.ndarray, flor: np.ndarray,
                  deck: np.ndarray, card_pos: np.ndarray, prev: np.ndarray, weights: np.ndarray) -> VectorTree:
    """The builder's kernel over any private states: ``masks[p, h]`` the deck positions state ``h`` holds as
    player ``p``, its ``envido`` and ``flor``; ``weights`` the deal's probability of each pair of states."""
    H = int(masks.shape[1])
    with deferred_signals():
        arrs = _build_kernel(rules.to_array(), roots, PH_FLOR0 if rules.flor else PH_PLAY, masks, envido, flor, deck,
                             card_pos, H, True, prev)
    (actor, outc, parent, paction, ls, ln, info, child, nchild, ioff, inact, echild, eaction, ehand, eentry) = arrs
    return VectorTree(
        node_actor=actor.copy(), node_util=None, node_list=ls, node_len=ln,
        node_infoset=info.copy(), infoset_offset=ioff.astype(np.int32), infoset_nact=inact.copy(),
        entry_child=echild.copy(), elem_hand=ehand.copy(), deal_weight=weights, num_hands=H,
        node_parent=parent.copy(), node_action=paction.copy(), node_child=child.copy(), node_nchild=nchild.copy(),
        entry_action=eaction.copy(), elem_entry=eentry.copy(), node_outcome=outc.copy(),
    )


def gains_of(code: int) -> tuple[int, int]:
    """(player 0's, player 1's) points this hand from an outcome code."""
    return code // GAIN_BASE, code % GAIN_BASE


def points_utilities() -> np.ndarray:
    """Player 0's points per hand (gain0 - gain1) per outcome code: what the OpenSpiel hand game returns."""
    codes = np.arange(N_OUTCOMES)
    return (codes // GAIN_BASE - codes % GAIN_BASE).astype(np.float64)


def equity_utilities(rules: RuleSet, score0: int, score1: int, codes, value) -> np.ndarray:
    """Player 0's match-win probability per outcome code (for the tree's ``codes``): ``value(a, b)`` at the
    scores the hand ends at (the other player deals next), 1 or 0 once a side reaches the target (both at
    once: side 0, as the match game decides)."""
    t = rules.target
    u = np.zeros(N_OUTCOMES)
    for code in codes:
        g0, g1 = gains_of(int(code))
        a, b = score0 + g0, score1 + g1
        u[code] = 1.0 if a >= t else 0.0 if b >= t else value(a, b)
    return u


def outcome_codes(tree: VectorTree) -> np.ndarray:
    """The distinct outcome codes at the tree's terminals."""
    return np.unique(tree.node_outcome[tree.node_outcome >= 0])


# ---- labels and OpenSpiel routing ------------------------------------------------------------------------
TABLE_SCHEMA_NAME = "truco_argentino"
TABLE_COLUMNS = {
    "score0": "player 0's score at the start of the hand", "score1": "player 1's score at the start of the hand",
    "dealer": "the dealing player (the other one is mano)",
    "hand": "the acting player's three cards (Spanish notation, as dealt)",
    "history": "public actions so far, 'player:action', comma-separated; 'shows N' is a player's envido "
               "points compared in the open after quiero, 'has flor' / 'no flor' what each hand is "
               "(revealed first; 'flor' is then the announcement)",
    "action": "the action, in Argentine notation",
}


def _reveal_str(node_action: int, parent_envido: bool) -> str:
    v = node_action - REVEAL
    if parent_envido:
        return f"shows {v}"
    return "has flor" if v else "no flor"


def argentine_labels(tree: VectorTree) -> dict:
    """Per information set ``player``, ``hand`` and ``history`` (codes and categories); per slot ``action``."""
    cell: ArgentineCell = tree.source
    if tree.index.labels is None:
        rules = cell.rules
        hands = argentine_hands(rules)
        hand_names = np.array([" ".join(rules.card_str(int(c)) for c in h) for h in hands.cards], dtype=object)
        parent = np.asarray(tree.node_parent)
        actor = tree.node_actor
        act = np.asarray(tree.node_action[1:]).astype(np.int32)
        # flor is revealed at the root and its children only (an envido needs a call and quiero first)
        pdepth = np.where(parent[1:] == 0, 0, np.where(parent[np.maximum(parent[1:], 0)] == 0, 1, 2))
        flor_reveal = (act >= REVEAL) & (pdepth <= 1) & bool(rules.flor)
        key = actor[parent[1:]].astype(np.int32) * 65536 + act + 2 * 256 * flor_reveal
        uniq, inv = small_unique(key, 2 * 65536)
        tok = np.zeros(tree.num_nodes, np.int32)
        tok[1:] = inv

        def token(k: int) -> str:
            p, a = divmod(int(k), 65536)
            if a >= 512:
                return f"{p}:{_reveal_str(a - 512, False)}"
            if a >= REVEAL:
                return f"{p}:{_reveal_str(a, True)}"
            return f"{p}:{rules.action_str(a)}"

        tokens = [token(k) for k in uniq]
        node = tree.infoset_node()
        player = actor[node].astype(np.int8)
        elem = tree.node_list[node, player] + (np.arange(tree.num_infosets) - tree.node_infoset[node])
        codes, cats = slot_action_strings(tree)
        tree.index.labels = {
            "player": player,
            "hand": (tree.elem_hand[elem], hand_names),
            "history": (node.astype(np.int32), NodeHistories(parent, tok, tokens)),
            "action": (codes, cats),
        }
    out = dict(tree.index.labels)
    out["constants"] = {"score0": np.int8(cell.score0), "score1": np.int8(cell.score1),
                        "dealer": np.int8(cell.dealer)}
    return out


def slot_action_strings(tree: VectorTree) -> tuple[np.ndarray, np.ndarray]:
    """(codes per slot, notation per code) of every slot's action."""
    rules = tree.source.rules
    uniq, inv = small_unique(np.asarray(tree.entry_action).astype(np.int64), 32768)
    names = np.array([f"shows {c - REVEAL}" if c >= REVEAL else rules.action_str(int(c)) for c in uniq], dtype=object)
    return inv.astype(np.int16), names


def _is_reveal(tree: VectorTree, n: int) -> bool:
    c = int(tree.node_child[n])
    return int(tree.node_nchild[n]) > 0 and int(tree.node_action[c]) >= REVEAL


def locate(tree: VectorTree, player: int, deal: list[int], actions: list[tuple[int, int]]) -> int:
    """Information set of ``player`` after ``actions`` ([(player, action id)]) when the deal was ``deal``
    (player 0's three cards, then player 1's): reveals are passed by what the deal shows."""
    hands = argentine_hands(tree.source.rules)
    hs = [hands.index[tuple(sorted(int(c) for c in deal[3 * p:3 * p + 3]))] for p in (0, 1)]
    elem = hs[player] + player * tree.num_hands
    n, k = 0, 0
    while True:
        if tree.node_actor[n] < 0:
            raise ValueError("the hand is over")
        if _is_reveal(tree, n):
            q = int(tree.node_actor[n])
            flor = tree.source.rules.flor and (n == 0 or int(tree.node_parent[n]) == 0)
            v = int(hands.flor[hs[q]] if flor else hands.envido[hs[q]])
            want = REVEAL + v
            priv = want
        elif k == len(actions):
            break
        else:
            q, a = actions[k]
            k += 1
            if tree.node_actor[n] != q:
                raise ValueError(f"{tree.source.rules.action_str(a)!r} by player {q} out of turn")
            want = priv = a
        c0 = int(tree.node_child[n])
        child = next((c for c in range(c0, c0 + int(tree.node_nchild[n])) if int(tree.node_action[c]) == want), None)
        if child is None:
            raise KeyError(f"action {want} is not in the tree")
        if q == player:
            i = int(tree.node_infoset[n]) + elem - int(tree.node_list[n, q])
            o = int(tree.infoset_offset[i])
            slots = [o + x for x in range(int(tree.infoset_nact[i])) if int(tree.entry_action[o + x]) == priv]
            if not slots:
                raise KeyError(f"action {want} is not in the tree for this hand")
            elem = int(tree.entry_child[slots[0]])
        n = child
    if tree.node_actor[n] != player:
        raise ValueError(f"player {player} is not to act after these actions")
    return int(tree.node_infoset[n]) + elem - int(tree.node_list[n, player])


def argentine_route(tree: VectorTree, state) -> dict[int, int] | None:
    """For a ``truco_argentino`` state of this cell: OpenSpiel action -> slot."""
    cell: ArgentineCell = tree.source
    if (state.dealer, *state.start_score) != (cell.dealer, cell.score0, cell.score1):
        return None
    p = state.current_player()
    i = locate(tree, p, state.deal, state.hand_actions)
    o = int(tree.infoset_offset[i])
    by_code = {int(tree.entry_action[o + x]): o + x for x in range(int(tree.infoset_nact[i]))}
    return {a: by_code.get(int(a), -1) for a in state.legal_actions()}


def native_parts(game) -> list[tuple[float, ArgentineCell]]:
    """The native builder of ``truco_argentino`` hands: one tree (suits matter, so no chance card splits it)."""
    cfg = game.cfg
    if cfg.match:
        raise ValueError("the native builder covers single hands (truco_argentino), not matches")
    p = game.params
    return [(1.0, ArgentineCell(cfg.rules, int(p["score0"]), int(p["score1"]), int(p["dealer"])))]


TABLE_SCHEMA = TableSchema(TABLE_SCHEMA_NAME, key_columns=("score0", "score1", "dealer", "player", "hand", "history"),
                           columns=TABLE_COLUMNS, categories=("hand", "history"))
"""Argentine tables: looked up by key columns (``StrategyTable.filter``), hands as dealt."""


# ---- the size of trees too big to build ----------------------------------------------------------------
@dataclass
class TreeSize:
    """Estimated size of a native Argentine cell (Knuth's estimator over its public tree)."""

    nodes: float
    infosets: float
    entries: float  # information-set actions (slots): what the solver stores per iteration
    probes: int
    hands: int
    entries_se: float = 0.0  # standard error of the entries' estimate (Knuth's estimator is heavy-tailed)

    def row(self) -> dict:
        return vars(self).copy()


@dataclass(frozen=True)
class PrivateStates:
    """What the builder and the estimator read of the players' private states: the real hands, or an
    abstraction's classes (:mod:`truco_lab.abstraction.argentine_abstract`)."""

    masks: np.ndarray  # int64 [2, H]: deck positions state h holds as player p
    envido: np.ndarray  # int32 [H]
    flor: np.ndarray  # int32 [H]
    deck: np.ndarray  # int32 [C]: card id at each position
    prev: np.ndarray  # int32 [2, C]: the position player p plays before this one (-1: none)
    cards: np.ndarray  # int32 [H, 3]: a real hand of each state (its flor kind seeds the roots)

    @classmethod
    def of_hands(cls, hands: ArgentineHands) -> PrivateStates:
        return cls(np.stack([hands.mask, hands.mask]), hands.envido, hands.flor, hands.deck,
                   np.full((2, len(hands.deck)), -1, np.int32), hands.cards)


def estimate_cell_size(rules: RuleSet, score0: int = 0, score1: int = 0, dealer: int = 1, probes: int = 400,
                       seed: int = 0, states: PrivateStates | None = None) -> TreeSize:
    """Knuth's unbiased estimate of the nodes, information sets and entries of the cell's native tree, from
    ``probes`` random root-to-leaf walks of its public tree (each node's lists counted exactly, with numpy
    over every hand): for decks whose tree is too big to build. It follows the builder's rules: reveals
    branch on the values the actor's possible hands show, card plays on the cards any of them may play.
    ``states``: an abstraction's private states (default: the real hands)."""
    check_start(rules, score0, score1, dealer)
    st = PrivateStates.of_hands(argentine_hands(rules)) if states is None else states
    r = rules.to_array()
    roots = roots_of(rules, st.cards, st.flor, score0, score1, dealer)
    pos = {int(c): i for i, c in enumerate(st.deck)}
    rng = np.random.default_rng(seed)
    buf = np.empty(E.MAX_LEGAL, np.int32)
    samples = np.array([_probe(r, rules, st, roots, pos, rng, buf) for _ in range(probes)])
    n, i, e = samples.mean(axis=0)
    se = float(samples[:, 2].std(ddof=1) / np.sqrt(probes)) if probes > 1 else float("nan")
    return TreeSize(float(n), float(i), float(e), int(probes), int(st.masks.shape[1]), se)


def _playable_np(rem: np.ndarray, prev: np.ndarray) -> np.ndarray:
    """:func:`_playable` over an array of remaining-card masks."""
    m = rem.copy()
    for i in np.flatnonzero(prev >= 0):
        m &= ~(((rem >> i) & (rem >> int(prev[i])) & 1) << i)
    return m


def _popcount(x: np.ndarray) -> np.ndarray:
    return np.unpackbits(x.astype("<u8").view(np.uint8).reshape(-1, 8), axis=1).sum(axis=1)


def _probe(r, rules, st, roots, pos, rng, buf) -> np.ndarray:
    """One random walk: sum over its nodes of (weight x (1, information sets, entries))."""
    H = int(st.masks.shape[1])
    alive = [np.ones(H, bool), np.ones(H, bool)]
    played = [0, 0]
    s = roots[0].copy()
    phase = PH_FLOR0 if rules.flor else PH_PLAY
    flor0 = 0
    weight, out = 1.0, np.zeros(3)
    while True:
        out[0] += weight
        if phase == PH_PLAY and E.winner(s) >= 0:
            return out
        p = int(E.actor(s)) if phase == PH_PLAY else (0 if phase in (PH_ENV0, PH_FLOR0) else 1)
        mask = st.masks[p]
        possible = alive[p] & ((mask & played[1 - p]) == 0)
        npos = int(possible.sum())
        out[1] += weight * int(alive[p].sum())
        if phase != PH_PLAY:
            vals = (st.envido if phase <= PH_ENV1 else st.flor)
            choices = np.unique(vals[possible])
            out[2] += weight * npos
            v = int(rng.choice(choices))
            weight *= len(choices)
            alive[p] = possible & (vals == v)  # impossible hands get no slot, so no successor
            if phase == PH_FLOR0:
                phase, flor0 = PH_FLOR1, v
            elif phase == PH_FLOR1:
                s, phase = roots[2 * flor0 + v].copy(), PH_PLAY
            elif phase == PH_ENV0:
                E.set_envido_of(s, 0, v)
                phase = PH_ENV1
            else:
                E.set_envido_of(s, 1, v)
                E.apply_unchecked(s, r, A_ACCEPT)
                phase = PH_PLAY
            continue
        k = int(E.legal_actions(s, r, buf, True))
        fixed = [int(a) for a in buf[:k]]
        cards = []
        if E.plays_allowed(s):
            can = _playable_np(mask[possible] & ~np.int64(played[p]), st.prev[p])
            union = int(np.bitwise_or.reduce(can)) if npos else 0
            cards = [int(c) for c in st.deck if (union >> pos[int(c)]) & 1]
            out[2] += weight * (npos * k + int(_popcount(can).sum()))
        else:
            out[2] += weight * npos * k
        acts = fixed + [A_UP + c for c in cards]
        a = acts[int(rng.integers(len(acts)))]
        weight *= len(acts)
        if a < A_DOWN:
            c = a - A_UP
            alive[p] = possible & ((mask >> pos[c]) & 1 == 1)
            played[p] |= 1 << pos[c]
            E.give_card(s, p, c)
            E.apply_unchecked(s, r, a)
        else:
            alive[p] = possible
            if a == A_ACCEPT and E.envido_pending(s) != 0:
                phase = PH_ENV0
            else:
                E.apply_unchecked(s, r, a)
