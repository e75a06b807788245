"""Native truco trees: one score cell and vira class as a :class:`solvers.tree.VectorTree`.

This is the documented tree-building interface between the rules and the
solvers. The tree is built from the numba engine itself (no rule is coded
here): a public node carries a representative engine state whose hands are
filled in lazily with a card of each level as it is played, so round
winners, raises, payouts and the cap all come from ``truco_lab.rules.engine``.

The lossless quotient (DESIGN-NOTES §1-2):

* a card is its **strength level** under the vira (9 plain levels + 4
  manilhas in the full deck); suits of plain cards never matter and a
  face-down card is anonymous;
* the vira matters only through the **multiplicity** of each level (which
  plain level it depletes): viras with the same multiplicities form one
  **vira class**, solved once;
* a private state is a canonical hand (sorted levels) plus the levels the
  player has hidden, so perfect recall is kept.

Value-preserving prunes (each a flag, each tested to leave the value unchanged):

* ``drop_concede``: no ``concede_hand`` (dominated by playing on / folding);
* ``drop_dominated_hide``: no face-down play when responding in a round, nor
  as round-3 leader when the opponent can no longer raise;
* ``cap_raises``: no raise once ``min(score) + stake >= target`` (the capped
  payoff can no longer change).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numba as nb
import numpy as np

from solvers.signals import deferred_signals
from solvers.tables import TableSchema, present_codes, small_unique
from solvers.tree import FORCED, VectorTree
from truco_lab.abstraction.levels import (
    ViraClass,
    _hands,
    _levels,
    deal_weights,
    hand_levels,
    level_names,
    vira_class_of,
    vira_classes,
    vira_name,
)
from truco_lab.abstraction.payoff import outcome_code
from truco_lab.rules import engine as E
from truco_lab.rules.cards import A_ACCEPT, A_DOWN, A_RAISE, A_UP, N_ACTIONS, card_str
from truco_lab.rules.ruleset import PAULISTA, RuleSet, check_start, sees_own_cards

HIDDEN = N_ACTIONS  # public code of "a card played face down" (identity not public)

# prune flags (bit mask)
DROP_CONCEDE = 1
DROP_DOMINATED_HIDE = 2
CAP_RAISES = 4
# A raise by a player whose own win at the stake standing would already win the match, once someone has raised
# (so no one else may raise after it is declined): it cannot gain, and pruning it keeps the game's value when
# the payoffs rise with the winner's points (README, *Implementation notes*, "Stop 44").
CAP_OWN_RAISES = 8
ALL_PRUNES = DROP_CONCEDE | DROP_DOMINATED_HIDE | CAP_RAISES | CAP_OWN_RAISES
PRUNE_NAMES = {"drop_concede": DROP_CONCEDE, "drop_dominated_hide": DROP_DOMINATED_HIDE, "cap_raises": CAP_RAISES,
               "cap_own_raises": CAP_OWN_RAISES}


@nb.njit(cache=True, inline="always")
def _own_capped(s, player, target) -> bool:
    """Whether CAP_OWN_RAISES takes ``player``'s raises away at state ``s``: someone has raised (so if
    ``player`` does not raise, no one raises again) and ``player`` winning at the stake standing wins the match."""
    return E.last_raiser(s) >= 0 and E.score(s, player) + E.stake(s) >= target


@nb.njit(cache=True)
def _grow(a, need):
    if need <= a.shape[0]:
        return a
    b = np.empty(max(need, 2 * a.shape[0]), a.dtype)
    b[: a.shape[0]] = a
    return b


@nb.njit(cache=True, inline="always")
def _slot(e, d, src, rem, code, el_hand, el_rem, el_entry, e_child, e_action):
    """Slot ``e`` (private action ``code``) of element ``src`` leads to new element ``d`` holding ``rem``."""
    el_hand[d] = el_hand[src]
    el_rem[d] = rem
    el_entry[d] = e
    e_child[e] = d
    e_action[e] = code


def _build(*args):
    """:func:`_build_kernel`, with Ctrl-C and SIGTERM held until its arrays are returned (a signal raising while
    numba boxes them crashed the process: :mod:`solvers.signals`)."""
    with deferred_signals():
        return _build_kernel(*args)


@nb.njit(cache=True)
def _build_kernel(r, root, lvl_cards, card_level, hand_packed, nlev, prunes, root_hand, root_rem, len0, max_depth):
    """Expand the public tree from state ``root`` whose players' lists are ``root_hand``/``root_rem``
    (player 0's first ``len0`` elements, then player 1's). Non-terminal nodes at depth ``max_depth``
    are left unexpanded (actor -1, outcome -1: a *frontier*); their numbers and states are returned
    last, with every element's remaining-cards word, so each can be built on its own later."""
    cap = 1 << 16
    n_actor = np.empty(cap, np.int8)
    n_outc = np.empty(cap, np.int16)
    n_parent = np.empty(cap, np.int32)
    n_paction = np.empty(cap, np.int16)
    n_ls0 = np.empty(cap, np.int32)
    n_ls1 = np.empty(cap, np.int32)
    n_ln0 = np.empty(cap, np.int32)
    n_ln1 = np.empty(cap, np.int32)
    n_info = np.empty(cap, np.int32)
    n_child = np.empty(cap, np.int32)
    n_nchild = np.empty(cap, np.int16)
    i_off = np.empty(cap, np.int64)
    i_nact = np.empty(cap, np.int8)
    e_child = np.empty(cap, np.int32)
    e_action = np.empty(cap, np.int16)
    el_hand = np.empty(cap, np.int16)
    el_rem = np.empty(cap, np.int64)
    el_entry = np.empty(cap, np.int32)
    nroot = root_hand.shape[0]
    el_hand = _grow(el_hand, nroot)
    el_rem = _grow(el_rem, nroot)
    el_entry = _grow(el_entry, nroot)
    for i in range(nroot):
        el_hand[i] = root_hand[i]
        el_rem[i] = root_rem[i]
        el_entry[i] = -1
    nel = nroot
    fr_node = np.empty(64, np.int32)
    fr_state = np.empty((64, root.shape[0]), np.int32)
    nfr = 0
    nnodes = 1
    ninfo = 0
    nent = 0
    n_parent[0] = -1
    n_paction[0] = -1
    n_ls0[0] = 0
    n_ln0[0] = len0
    n_ls1[0] = len0
    n_ln1[0] = nroot - len0
    st_node = np.empty(4096, np.int32)
    st_depth = np.empty(4096, np.int32)
    st_state = np.empty((4096, root.shape[0]), np.int32)
    st_node[0] = 0
    st_depth[0] = 0
    st_state[0] = root
    sp = 1
    buf = np.empty(E.MAX_LEGAL, np.int32)
    pub = np.empty(64, np.int32)  # public action codes of the node
    pcount = np.empty(64, np.int64)
    pfill = np.empty(64, np.int64)  # next free element of each child's new list
    up_slot = np.empty(32, np.int32)  # public index of "play level l face up"
    used_lv = np.zeros(32, np.int32)  # copies of each level already face up
    opp_up = np.zeros(32, np.int32)
    possible = np.zeros(1024, np.bool_)
    mult = np.zeros(32, np.int32)
    for lv in range(nlev):
        for x in range(lvl_cards.shape[1]):
            if lvl_cards[lv, x] >= 0:
                mult[lv] += 1
    target = E.rule_target(r)
    s = np.empty(root.shape[0], np.int32)  # the popped state (its stack row is a child's next)
    while sp > 0:
        sp -= 1
        n = st_node[sp]
        s[:] = st_state[sp]
        n_child[n] = 0
        n_nchild[n] = 0
        n_info[n] = -1
        if E.winner(s) >= 0:
            n_actor[n] = -1
            n_outc[n] = outcome_code(E.winner(s), E.awarded(s))
            continue
        depth = st_depth[sp]
        if depth >= max_depth:
            n_actor[n] = -1
            n_outc[n] = -1
            if nfr == fr_node.shape[0]:
                fr_node = _grow(fr_node, 2 * nfr)
                fs = np.empty((2 * nfr, root.shape[0]), np.int32)
                fs[:nfr] = fr_state[:nfr]
                fr_state = fs
            fr_node[nfr] = n
            fr_state[nfr] = s
            nfr += 1
            continue
        p = E.actor(s)
        q = 1 - p
        n_actor[n] = p
        n_outc[n] = -1
        ls = n_ls0[n] if p == 0 else n_ls1[n]
        ln = n_ln0[n] if p == 0 else n_ln1[n]
        lowscore = min(E.score(s, 0), E.score(s, 1))
        # public actions that do not depend on the private hand
        k = E.legal_actions(s, r, buf, (prunes & DROP_CONCEDE) == 0)
        npub = 0
        for j in range(k):
            a = buf[j]
            if a >= A_RAISE and a < A_RAISE + 4 and (prunes & CAP_RAISES) != 0:
                if lowscore + E.stake(s) >= target:
                    continue
            if a >= A_RAISE and a < A_RAISE + 4 and (prunes & CAP_OWN_RAISES) != 0 and _own_capped(s, p, target):
                continue
            pub[npub] = a
            npub += 1
        nfixed = npub
        for lv in range(nlev):
            up_slot[lv] = -1
        hide = False
        if E.plays_allowed(s):
            union = np.int64(0)
            for t in range(ln):
                union |= el_rem[ls + t]
            for lv in range(nlev):
                used_lv[lv] = 0
            for x in range(E.nplays(s)):
                c = E.play_card(s, x)
                if c >= 0 and not E.play_down(s, x) and card_level[c] >= 0:
                    used_lv[card_level[c]] += 1
            for lv in range(nlev):
                # a level whose every copy is already face up cannot be played (such hands are impossible)
                if (union >> (2 * lv)) & 3 and used_lv[lv] < mult[lv]:
                    up_slot[lv] = npub
                    pub[npub] = A_UP + lv  # level, mapped to a card below
                    npub += 1
            hide = E.hide_allowed(s, r)
            if hide and (prunes & DROP_DOMINATED_HIDE) != 0:
                if E.round_plays(s) == 1:
                    hide = False
                elif E.nrounds(s) == 2:
                    opp_can = E.next_raise_index(s, r, q) > 0
                    if opp_can and (prunes & CAP_RAISES) != 0 and lowscore + E.value(s) >= target:
                        opp_can = False
                    if opp_can and (prunes & CAP_OWN_RAISES) != 0 and _own_capped(s, q, target):
                        opp_can = False
                    if not opp_can:
                        hide = False
            if hide:
                pub[npub] = HIDDEN
                npub += 1
        # hands made impossible by the opponent's face-up cards get no actions (and no successors)
        for lv in range(nlev):
            opp_up[lv] = 0
        for x in range(E.nplays(s)):
            c = E.play_card(s, x)
            if E.play_owner(s, x) == q and c >= 0 and not E.play_down(s, x) and card_level[c] >= 0:
                opp_up[card_level[c]] += 1
        if ln > possible.shape[0]:
            possible = np.zeros(2 * ln, np.bool_)
        for t in range(ln):
            hp = hand_packed[el_hand[ls + t]]
            ok = True
            for lv in range(nlev):
                if ((hp >> (2 * lv)) & 3) + opp_up[lv] > mult[lv]:
                    ok = False
            possible[t] = ok
        # count private successors per public action
        for j in range(npub):
            pcount[j] = 0
        ient = 0
        for t in range(ln):
            if not possible[t]:
                continue
            rem = el_rem[ls + t]
            for j in range(nfixed):
                pcount[j] += 1
            ient += nfixed
            for lv in range(nlev):
                if (rem >> (2 * lv)) & 3:
                    if up_slot[lv] >= 0:
                        pcount[up_slot[lv]] += 1
                        ient += 1
                    if hide:
                        pcount[npub - 1] += 1
                        ient += 1
        # allocate children, their lists and this node's information sets
        c0 = nnodes
        nnodes += npub
        if nnodes > n_actor.shape[0]:
            need = nnodes
            n_actor = _grow(n_actor, need)
            n_outc = _grow(n_outc, need)
            n_parent = _grow(n_parent, need)
            n_paction = _grow(n_paction, need)
            n_ls0 = _grow(n_ls0, need)
            n_ls1 = _grow(n_ls1, need)
            n_ln0 = _grow(n_ln0, need)
            n_ln1 = _grow(n_ln1, need)
            n_info = _grow(n_info, need)
            n_child = _grow(n_child, need)
            n_nchild = _grow(n_nchild, need)
        n_child[n] = c0
        n_nchild[n] = npub
        for j in range(npub):
            pfill[j] = nel
            c = c0 + j
            n_parent[c] = n
            if p == 0:
                n_ls0[c] = nel
                n_ln0[c] = pcount[j]
                n_ls1[c] = n_ls1[n]
                n_ln1[c] = n_ln1[n]
            else:
                n_ls1[c] = nel
                n_ln1[c] = pcount[j]
                n_ls0[c] = n_ls0[n]
                n_ln0[c] = n_ln0[n]
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
            rem = el_rem[src]
            i_off[i0 + t] = nent
            m = 0
            if not possible[t]:
                i_nact[i0 + t] = 0
                continue
            # slots in order: public actions, face-up levels, face-down levels
            for j in range(nfixed):
                _slot(nent + m, pfill[j], src, rem, pub[j], el_hand, el_rem, el_entry, e_child, e_action)
                pfill[j] += 1
                m += 1
            for lv in range(nlev):
                if (rem >> (2 * lv)) & 3 and up_slot[lv] >= 0:
                    j = up_slot[lv]
                    _slot(nent + m, pfill[j], src, rem - (np.int64(1) << (2 * lv)), A_UP + lvl_cards[lv, 0],
                          el_hand, el_rem, el_entry, e_child, e_action)
                    pfill[j] += 1
                    m += 1
            for lv in range(nlev if hide else 0):
                if (rem >> (2 * lv)) & 3:
                    _slot(nent + m, pfill[npub - 1], src, rem - (np.int64(1) << (2 * lv)), A_DOWN + lvl_cards[lv, 0],
                          el_hand, el_rem, el_entry, e_child, e_action)
                    pfill[npub - 1] += 1
                    m += 1
            i_nact[i0 + t] = m
            nent += m
        # child states, pushed for expansion
        if sp + npub > st_node.shape[0]:
            raise ValueError("public tree deeper than the builder's stack")
        for j in range(npub):
            c = c0 + j
            a = pub[j]
            child = st_state[sp]  # the child's state is made in its stack row (no copy per node)
            child[:] = s
            if a == HIDDEN or a < A_RAISE:
                if a == HIDDEN:
                    card = max(E.vira(s), 0)  # identity never consulted
                    code = A_DOWN + card
                else:
                    lv = a - A_UP
                    card = lvl_cards[lv, used_lv[lv]]
                    code = A_UP + card
                E.give_card(child, p, card)
                E.apply_unchecked(child, r, code)
                n_paction[c] = HIDDEN if a == HIDDEN else code
            else:
                E.apply_unchecked(child, r, a)
                n_paction[c] = a
            if E.winner(child) >= 0:
                # a terminal is finished here, as its pop would (it allocates nothing, so every number stays
                # the same): ~90% of a real-deck tree's nodes are terminals, never pushed or copied now
                n_child[c] = 0
                n_nchild[c] = 0
                n_info[c] = -1
                n_actor[c] = -1
                n_outc[c] = outcome_code(E.winner(child), E.awarded(child))
                continue
            st_node[sp] = c
            st_depth[sp] = depth + 1
            sp += 1
    return (n_actor[:nnodes], n_outc[:nnodes], n_parent[:nnodes], n_paction[:nnodes], n_ls0[:nnodes],
            n_ls1[:nnodes], n_ln0[:nnodes], n_ln1[:nnodes], n_info[:nnodes], n_child[:nnodes],
            n_nchild[:nnodes], i_off[:ninfo], i_nact[:ninfo], e_child[:nent], e_action[:nent],
            el_hand[:nel], el_entry[:nel], fr_node[:nfr], fr_state[:nfr], el_rem[:nel])


def own_capped_stakes(rules: RuleSet, score0: int, score1: int, prunes: int = ALL_PRUNES) -> tuple[int, ...]:
    """The stakes from which :data:`CAP_OWN_RAISES` takes the leading player's raises away at this start
    (those the lower score's cap leaves and the rules allow): empty where that prune changes nothing."""
    t = rules.target
    if not prunes & CAP_OWN_RAISES or not rules.raise_to_win or (rules.mao_de_onze and t - 1 in (score0, score1)):
        return ()
    low, high = min(score0, score1), max(score0, score1)
    # a stake after a raise, with a rung above it, that the lower score's cap leaves open (else no one raises)
    open_ = [s for s in rules.ladder[1:-1] if not (prunes & CAP_RAISES and low + s >= t)]
    return tuple(s for s in open_ if high + s >= t)


def raise_rights(rules: RuleSet, score0: int, score1: int, prunes: int = ALL_PRUNES) -> tuple:
    """Who may raise from which stake, over every raise state a hand starting at this score can reach:
    ``(rung, last raiser or -1, player, may)`` rows. Outside the hand of eleven the builder reads the scores
    only through these (the rules' ``raise_to_win``, :data:`CAP_RAISES`, :data:`CAP_OWN_RAISES`; outcome
    codes carry the points before the cap), so two starts with equal rights build identical trees."""
    t, lad, sc, low = rules.target, rules.ladder, (score0, score1), min(score0, score1)

    def may(p: int, i: int, last: int) -> bool:  # the builder's tests on a raise from stake lad[i]
        if i + 1 >= len(lad) or (not rules.raise_to_win and sc[p] + lad[i] >= t):
            return False
        if prunes & CAP_RAISES and low + lad[i] >= t:
            return False
        return not (prunes & CAP_OWN_RAISES and last >= 0 and sc[p] + lad[i] >= t)

    rows, todo, seen = set(), [(0, -1)], set()
    while todo:  # raises alternate: the last raiser may not raise again
        i, last = todo.pop()
        if (i, last) in seen:
            continue
        seen.add((i, last))
        for p in (0, 1):
            if p != last:
                ok = may(p, i, last)
                rows.add((i, last, p, ok))
                if ok:
                    todo.append((i + 1, p))
    return tuple(sorted(rows))


def effective_prunes(rules: RuleSet, score0: int, score1: int, prunes: int) -> int:
    """``prunes`` without :data:`CAP_OWN_RAISES` where it changes nothing (cells it does not touch keep the
    keys they had before that prune existed)."""
    return prunes if own_capped_stakes(rules, score0, score1, prunes) else prunes & ~CAP_OWN_RAISES


def _prune_mask(prunes: dict) -> int:
    bad = set(prunes) - set(PRUNE_NAMES)
    if bad:
        raise ValueError(f"unknown prune(s) {sorted(bad)}; known: {sorted(PRUNE_NAMES)}")
    mask = ALL_PRUNES
    for k, on in prunes.items():
        mask = (mask | PRUNE_NAMES[k]) if on else (mask & ~PRUNE_NAMES[k])
    return mask


@dataclass(frozen=True)
class Subgame:
    """One native subgame: a score cell, a dealer and a vira class under a rule set.

    It is the trees' :class:`solvers.tree.TreeSource`: it labels table rows,
    routes OpenSpiel states to slots and describes itself for table metadata.
    """

    rules: RuleSet
    score0: int
    score1: int
    dealer: int
    vira_class: ViraClass
    prunes: int = ALL_PRUNES
    payoff: str = "points"

    def __call__(self) -> VectorTree:
        """Build this cell's tree (a Subgame is also the picklable builder of lazy subgames)."""
        return build_cell(self.rules, self.score0, self.score1, self.dealer, self.vira_class, self.prunes,
                          payoff=self.payoff)

    def labels(self, tree: VectorTree, min_actions: int = 0) -> dict:
        return table_labels(tree, min_actions=min_actions)

    def route(self, tree: VectorTree, state) -> dict[int, int] | None:
        return openspiel_route(tree, state)

    def metadata(self) -> dict:
        from truco_lab.abstraction.payoff import units

        return {"rules": self.rules.to_dict(), "score": [self.score0, self.score1], "dealer": self.dealer,
                "vira_class": self.vira_class.index, "vira": self.vira_class.name, "prunes": self.prunes,
                "payoff": self.payoff, "units": units(self.payoff), "schema": TABLE_SCHEMA_NAME}


def check_cell_args(rules: RuleSet, score0, score1, dealer) -> None:
    """A cell's start, validated by the one rule (:func:`truco_lab.rules.check_start`)."""
    check_start(rules, score0, score1, dealer)


def vira_class_at(rules: RuleSet, vira_class: int | ViraClass) -> ViraClass:
    """A class index (or a class) -> the :class:`ViraClass` (a vira *card* is :func:`vira_class_of`'s)."""
    if isinstance(vira_class, ViraClass):
        return vira_class
    classes = vira_classes(rules)
    if isinstance(vira_class, bool) or not isinstance(vira_class, (int, np.integer)) or not 0 <= vira_class < len(classes):
        raise ValueError(f"vira class must be 0..{len(classes) - 1}, got {vira_class!r}")
    return classes[int(vira_class)]


def build_cell(rules: RuleSet = PAULISTA, score0: int = 0, score1: int = 0, dealer: int = 1,
               vira_class: int | ViraClass = 0, prunes: int | dict = ALL_PRUNES, payoff: str = "points",
               equity=None, utilities: np.ndarray | None = None) -> VectorTree:
    """The vector-form tree of one cell: ``vira_class`` is a class index or a :class:`ViraClass`.

    ``prunes`` is a bit mask (``ALL_PRUNES`` default, 0 = the full game) or a
    dict of :data:`PRUNE_NAMES` to bools (names not given stay on). Terminals
    record their outcome; ``payoff`` (``points``, or ``equity`` with an
    :class:`truco_lab.lab.equity.EquityTable`, or explicit ``utilities`` per
    outcome code) sets the utilities, and
    ``tree.set_payoff`` can change them later without rebuilding.
    """
    from truco_lab.abstraction.payoff import objective_utilities

    prunes, vc, inputs = _cell_inputs(rules, score0, score1, dealer, vira_class, prunes, payoff)
    r, root, lvl_cards, card_level, hands, packed, nlev = inputs
    rh = np.concatenate([np.arange(len(hands)), np.arange(len(hands))]).astype(np.int16)
    arrs = list(_build(r, root, lvl_cards, card_level, packed, nlev, prunes, rh, packed[rh], len(hands),
                       1 << 30)[:17])
    tree = _assemble(arrs, vc, hands, lvl_cards, card_level)
    tree.source = Subgame(rules, int(score0), int(score1), int(dealer), vc, int(prunes), payoff)
    if utilities is None:
        utilities = objective_utilities(rules, score0, score1, dealer, outcome_codes(tree), payoff, equity)
    tree.set_payoff(utilities)
    return tree


def _cell_inputs(rules: RuleSet, score0, score1, dealer, vira_class, prunes, payoff):
    """Validated arguments of a cell and the builder's inputs."""
    if isinstance(prunes, dict):
        prunes = _prune_mask(prunes)
    check_cell_args(rules, score0, score1, dealer)
    prunes = effective_prunes(rules, score0, score1, prunes)
    if not sees_own_cards(rules, (score0, score1)):
        raise ValueError(f"{rules.name} {score0}x{score1}: the iron hand is played blind (no decisions, cards "
                         "flipped in dealt order); there is nothing to solve, its value is the deal's chance")
    vc = vira_class_at(rules, vira_class)
    if payoff not in ("points", "equity"):
        raise ValueError(f"payoff must be 'points' or 'equity', got {payoff!r}")
    r = rules.to_array()
    nlev = len(vc.level_cards)
    if nlev > 31:
        raise ValueError(f"{nlev} strength levels: the packed hand format holds at most 31")
    lv = hand_levels(vc)
    lvl_cards, card_level = lv.lvl_cards.copy(), lv.card_level.copy()  # the builder's own (it may write them)
    hands, packed = _hands(vc.multiplicity)
    root = np.zeros(E.STATE_SIZE, np.int32)
    E.new_hand(root, r, dealer, score0, score1, np.full(6, -1, np.int32), vc.vira)
    return int(prunes), vc, (r, root, lvl_cards, card_level, hands, packed, nlev)


def _assemble(arrs: list, vc: ViraClass, hands, lvl_cards, card_level, weights: bool = True) -> VectorTree:
    """A VectorTree from the builder's first 17 arrays (consumed: ``arrs`` is emptied)."""
    # The builder returns views of grown buffers: copy each to its size (freeing the slack, one array
    # at a time) and narrow what fits: slot offsets to int32 below 2**31 slots, action counts to int8.
    nslots = arrs[13].shape[0]
    narrow = {11: np.int32 if nslots < 2**31 - 1 else np.int64, 12: np.int8}
    for i in range(len(arrs)):
        a = arrs[i]
        arrs[i] = None
        arrs[i] = a.astype(narrow.get(i, a.dtype), copy=True)
        del a
    (actor, outc, parent, paction, ls0, ls1, ln0, ln1, info, child, nchild, ioff, inact, echild, eaction,
     ehand, eentry) = arrs
    arrs.clear()
    return VectorTree(
        node_actor=actor, node_util=None, node_list=np.stack([ls0, ls1], axis=1),
        node_len=np.stack([ln0, ln1], axis=1), node_infoset=info,
        infoset_offset=ioff, infoset_nact=inact, entry_child=echild, elem_hand=ehand,
        deal_weight=deal_weights(vc.multiplicity, hands) if weights else np.zeros((0, 0)), num_hands=len(hands),
        node_parent=parent, node_action=paction, node_child=child, node_nchild=nchild,
        entry_action=eaction, elem_entry=eentry, node_outcome=outc,
    )


def build_split(folder, rules: RuleSet = PAULISTA, score0: int = 0, score1: int = 0, dealer: int = 1,
                vira_class: int | ViraClass = 0, prunes: int | dict = ALL_PRUNES, payoff: str = "points",
                equity=None, depth: int = 3, progress: bool = False, utilities: np.ndarray | None = None):
    """The cell's tree cut at public depth ``depth`` (:class:`solvers.streamed.SplitTree`): the trunk in
    memory, each subtree below the cut built on its own and written to ``folder`` (so the build's
    peak is the largest subtree's, not the whole tree's). Parts already in ``folder`` from an
    interrupted build of the same cell are kept (the folder's ``split.json`` names the cell)."""
    from solvers.streamed import PartStore, SplitTree, part_arrays
    from truco_lab.abstraction.payoff import objective_utilities

    prunes, vc, inputs = _cell_inputs(rules, score0, score1, dealer, vira_class, prunes, payoff)
    r, root, lvl_cards, card_level, hands, packed, nlev = inputs
    if isinstance(depth, bool) or not isinstance(depth, int) or depth < 1:
        raise ValueError(f"split depth must be a positive integer, got {depth!r}")
    key = {"rules": rules.to_dict(), "score": [int(score0), int(score1)], "dealer": int(dealer),
           "vira_class": vc.index, "prunes": prunes, "depth": depth}
    store = PartStore(folder)
    marker = store.folder / "build.json"
    if marker.exists():
        from solvers.storage import read_json

        old = read_json(marker, "split marker")
        if old != key:
            raise ValueError(f"{folder} holds the split of another cell ({old}); use another folder")
    else:
        from solvers.storage import write_json

        write_json(marker, key)
    trunk, fr_node, fr_state, el_rem = _split_trunk(inputs, vc, prunes, depth)
    P = len(fr_node)
    slots = np.zeros(P, np.int64)
    infosets = np.zeros(P, np.int64)
    nodes = np.zeros(P, np.int64)
    elems = np.zeros(P, np.int64)
    codes = set(np.unique(trunk.node_outcome[trunk.node_outcome >= 0]).tolist())
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=P, desc="building parts", unit=" part")
    for i in range(P):
        if store.has(i):
            a = store.load(i)
        else:
            part = _split_part(inputs, vc, prunes, trunk, int(fr_node[i]), fr_state[i], el_rem)
            store.save_navigation(i, part)  # first: a part on disk has its navigation, unless built before this
            a = part_arrays(part)
            store.save(i, a)
            del part
        slots[i] = a["entry_child"].shape[0]
        infosets[i] = a["infoset_offset"].shape[0]
        nodes[i] = a["node_actor"].shape[0]
        elems[i] = a["elem_hand"].shape[0]
        o = a["node_outcome"]
        codes.update(np.unique(o[o >= 0]).tolist())
        del a
        if bar is not None:
            bar.update(1)
    if bar is not None:
        bar.close()
    utility = (objective_utilities(rules, score0, score1, dealer, sorted(codes), payoff, equity)
               if utilities is None else np.asarray(utilities, np.float64))
    trunk.set_payoff(utility)
    trunk.source = Subgame(rules, int(score0), int(score1), int(dealer), vc, int(prunes), payoff)
    split = SplitTree(trunk, fr_node.astype(np.int32),
                      np.concatenate([[trunk.num_slots], trunk.num_slots + np.cumsum(slots)]).astype(np.int64),
                      np.concatenate([[trunk.num_infosets], trunk.num_infosets + np.cumsum(infosets)]).astype(np.int64),
                      nodes, elems, store, np.asarray(utility, np.float64))
    split.save_index({"cell": key, "payoff": payoff})
    return split


def _split_trunk(inputs, vc: ViraClass, prunes: int, depth: int):
    """The trunk of a cell cut at public depth ``depth`` (navigation arrays included) and, per
    frontier node, its engine state and its elements' remaining-card masks."""
    r, root, lvl_cards, card_level, hands, packed, nlev = inputs
    rh = np.concatenate([np.arange(len(hands)), np.arange(len(hands))]).astype(np.int16)
    out = _build(r, root, lvl_cards, card_level, packed, nlev, prunes, rh, packed[rh], len(hands), depth)
    fr_node, fr_state, el_rem = out[17], out[18], out[19]
    trunk = _assemble(list(out[:17]), vc, hands, lvl_cards, card_level)
    return trunk, fr_node, fr_state, el_rem


def _split_part(inputs, vc: ViraClass, prunes: int, trunk: VectorTree, f: int, state: np.ndarray,
                el_rem: np.ndarray) -> VectorTree:
    """The subtree below trunk node ``f`` (engine state ``state``), built on its own: its root lists
    are the trunk's lists at ``f`` (player 0's first). No deal weights (the trunk's serve)."""
    r, root, lvl_cards, card_level, hands, packed, nlev = inputs
    l0, n0 = trunk.node_list[f, 0], trunk.node_len[f, 0]
    l1, n1 = trunk.node_list[f, 1], trunk.node_len[f, 1]
    idx = np.concatenate([np.arange(l0, l0 + n0), np.arange(l1, l1 + n1)])
    parr = list(_build(r, state.copy(), lvl_cards, card_level, packed, nlev, prunes,
                       trunk.elem_hand[idx].astype(np.int16), el_rem[idx], int(n0), 1 << 30)[:17])
    return _assemble(parr, vc, hands, lvl_cards, card_level, weights=False)


class SplitLabels:
    """The labelled trees of a split cell, for its strategy table: the trunk and each part rebuilt
    with the navigation arrays the part files leave out, and their rows' labels, each part's
    history prefixed by its frontier node's and its face-down cards continuing the trunk's.
    (:func:`solvers.tables.write_split_table`'s ``source``.)"""

    def __init__(self, split, rules: RuleSet, score0: int, score1: int, dealer: int, vira_class, prunes,
                 payoff: str, depth: int) -> None:
        prunes, vc, self._inputs = _cell_inputs(rules, score0, score1, dealer, vira_class, prunes, payoff)
        self._vc, self._prunes = vc, prunes
        self.cell = Subgame(rules, int(score0), int(score1), int(dealer), vc, int(prunes), payoff)
        trunk, fr_node, self._fr_state, self._el_rem = _split_trunk(self._inputs, vc, prunes, depth)
        if not np.array_equal(fr_node, split.frontier) or trunk.num_slots != split.slot_start[0]:
            raise ValueError("the split on disk is not this cell's at this depth: rebuild it")
        self._split = split
        trunk.source = self.cell
        trunk.set_payoff(split.utility)
        self.trunk = trunk
        self._trunk_hist = infoset_labels(trunk)["history"][1]
        self._trunk_hidden = _element_hidden(trunk)

    def tree(self, i: int) -> VectorTree:
        """Part ``i`` (``-1``: the trunk) with navigation arrays, payoffs and deal weights."""
        if i < 0:
            return self.trunk
        sp = self._split
        nav = sp.store.load_navigation(i)
        if nav is not None:  # saved with the part: the part as built, without building it again
            t = sp.part(i)
            for k, v in nav.items():
                setattr(t, k, v)
            t.source = self.cell
            return t
        f = int(sp.frontier[i])
        t = _split_part(self._inputs, self._vc, self._prunes, self.trunk, f, self._fr_state[i], self._el_rem)
        if t.num_slots != sp.slot_start[i + 1] - sp.slot_start[i] or t.num_nodes != sp.node_count[i]:
            raise ValueError(f"part {i} rebuilt differs from the one on disk: rebuild the split")
        t.deal_weight = self.trunk.deal_weight
        t.source = self.cell
        t.set_payoff(sp.utility)
        return t

    def labels(self, i: int, tree: VectorTree, min_actions: int = 0) -> dict:
        """What a strategy table needs to label ``tree``'s rows (``tree`` = :meth:`tree` ``(i)``; ``min_actions``:
        see :func:`table_labels`)."""
        if i < 0:
            return table_labels(tree, min_actions=min_actions)
        f = int(self._split.frontier[i])
        tr = self.trunk
        l0, n0 = tr.node_list[f, 0], tr.node_len[f, 0]
        l1, n1 = tr.node_list[f, 1], tr.node_len[f, 1]
        root_hidden = np.concatenate([self._trunk_hidden[l0:l0 + n0], self._trunk_hidden[l1:l1 + n1]])
        return table_labels(tree, prefix=str(self._trunk_hist[f][0]), root_hidden=root_hidden, min_actions=min_actions)


def outcome_codes(tree: VectorTree) -> np.ndarray:
    """The distinct outcome codes at the tree's terminals."""
    return np.unique(tree.node_outcome[tree.node_outcome >= 0])


# ---- labels, lookups and OpenSpiel routing --------------------------------
def _token(code: int, names: list[str], card_level: np.ndarray, targets: tuple[int, ...]) -> str:
    from truco_lab.rules.cards import action_str

    if code == HIDDEN:
        return "hidden"
    if code < A_DOWN:
        return names[card_level[code - A_UP]]
    if code < A_RAISE:
        return "hide " + names[card_level[code - A_DOWN]]
    return action_str(code, targets)


def slot_action_strings(tree: VectorTree) -> tuple[np.ndarray, np.ndarray]:
    """Notation of every slot's action (cards as the level's representative card), as
    (codes per slot, category strings)."""
    from truco_lab.rules.cards import action_str

    targets = tree.source.rules.raise_targets
    uniq, inv = small_unique(np.asarray(tree.entry_action), 32768)
    return inv.astype(_code_type(len(uniq))), np.array([action_str(int(c), targets) for c in uniq], dtype=object)


def action_names(tree: VectorTree) -> tuple[np.ndarray, np.ndarray]:
    """The tree's distinct slot action codes (ascending) and their notation, found without a per-slot array."""
    from truco_lab.rules.cards import action_str

    codes = present_codes(np.asarray(tree.entry_action), 32768)
    targets = tree.source.rules.raise_targets
    return codes, np.array([action_str(int(c), targets) for c in codes], dtype=object)


def _code_type(categories: int) -> type:
    """The narrowest signed integer type for codes of ``categories`` categories."""
    return np.int8 if categories <= 127 else np.int16 if categories <= 32767 else np.int32


@nb.njit(cache=True, nogil=True)
def _path_strings(parent, tok, nodes, tok_bytes, tok_off, head, sep):
    """Each node's public history as UTF-8 bytes, ``head`` (the part above the tree, may be empty) then its
    tokens root first, joined by ``sep``: (offsets [len(nodes) + 1], bytes). Walks each path twice (its
    length, then its bytes written from the end), so no per-node buffer or Python string is made."""
    m = nodes.shape[0]
    off = np.zeros(m + 1, np.int64)
    for i in range(m):
        size = head.shape[0]
        n = nodes[i]
        while n > 0:
            t = tok[n]
            size += tok_off[t + 1] - tok_off[t]
            if parent[n] > 0 or head.shape[0] > 0:
                size += sep.shape[0]
            n = parent[n]
        off[i + 1] = off[i] + size
    data = np.empty(off[m], np.uint8)
    for i in range(m):
        end = off[i + 1]
        n = nodes[i]
        while n > 0:
            t = tok[n]
            w = tok_off[t + 1] - tok_off[t]
            data[end - w:end] = tok_bytes[tok_off[t]:tok_off[t + 1]]
            end -= w
            if parent[n] > 0 or head.shape[0] > 0:
                data[end - sep.shape[0]:end] = sep
                end -= sep.shape[0]
            n = parent[n]
        data[off[i]:off[i] + head.shape[0]] = head
    return off, data


def _utf8(texts: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """``texts`` encoded and concatenated: (bytes, offsets [len(texts) + 1])."""
    enc = [t.encode() for t in texts]
    off = np.zeros(len(enc) + 1, np.int64)
    off[1:] = np.cumsum([len(b) for b in enc])
    return np.frombuffer(b"".join(enc), np.uint8).copy(), off


class NodeHistories:
    """Public history strings of a tree's nodes (``0:3d, 1:raise 3, ...``), built on demand: a table
    asks for the nodes its rows use, one row group at a time. Building every node's string up front
    (the first version) cost 35-50 s and ~5 GB at 10x10, more than writing the table; joining them in Python
    per group was 0.9 s of a 10x10 table's 8.6, so :meth:`arrow` writes their bytes in numba."""

    def __init__(self, parent: np.ndarray, tok: np.ndarray, tokens: list[str], prefix: str = "") -> None:
        self.parent, self.tok, self.tokens = parent, tok, tokens
        self.prefix = prefix  # the history above this tree's root (a part of a split cell)
        self._bytes, self._off = _utf8(tokens)

    def __len__(self) -> int:
        return int(self.parent.shape[0])

    def arrow(self, nodes):
        """The histories of ``nodes`` as an Arrow string array (what a table's dictionary holds)."""
        import pyarrow as pa

        nodes = np.atleast_1d(np.asarray(nodes, np.int64))
        with deferred_signals():  # a kernel returning a tuple of arrays, as _build (solvers.signals)
            off, data = _path_strings(np.asarray(self.parent), self.tok, nodes, self._bytes, self._off,
                                      np.frombuffer(self.prefix.encode(), np.uint8), np.frombuffer(b", ", np.uint8))
        if off[-1] < 2**31:  # the type tables store
            return pa.Array.from_buffers(pa.string(), len(nodes), [None, pa.py_buffer(off.astype(np.int32)),
                                                                   pa.py_buffer(data)])
        return pa.Array.from_buffers(pa.large_string(), len(nodes), [None, pa.py_buffer(off), pa.py_buffer(data)])

    def __getitem__(self, nodes) -> np.ndarray:
        return np.asarray(self.arrow(nodes).to_pylist(), dtype=object)


def infoset_labels(tree: VectorTree, prefix: str = "", root_hidden: np.ndarray | None = None,
                   min_actions: int = 0) -> dict:
    """Per information set of at least ``min_actions`` actions (in number order; 0: every set): ``player``
    (int8) and ``hand``, ``history``, ``hidden`` as (codes per set, categories), so no per-row strings are
    built; history strings come from :class:`NodeHistories` on demand. For a subtree of a split cell,
    ``prefix`` is the history above its root and ``root_hidden`` its root elements' face-down codes."""
    cell: Subgame = tree.source
    names = level_names(cell.rules, cell.vira_class)
    card_level = hand_levels(tree.source.vira_class).card_level
    hand_names = _hand_names(cell.rules, cell.vira_class)
    # one token per (acting player, public action) pair; a node's history is its path of tokens
    parent = np.asarray(tree.node_parent)
    actor = tree.node_actor
    key = actor[parent[1:]].astype(np.int32) * 65536 + np.asarray(tree.node_action[1:]).astype(np.int32) + 32768
    uniq, inv = small_unique(key, 2 * 65536)
    tok = np.zeros(tree.num_nodes, np.int32)  # the root has no token
    tok[1:] = inv
    del key, inv
    tokens = [f"{int(k) // 65536}:{_token(int(k) % 65536 - 32768, names, card_level, cell.rules.raise_targets)}"
              for k in uniq]
    nact = np.asarray(tree.infoset_nact)
    m = tree.num_infosets if min_actions <= 0 else int(np.count_nonzero(nact >= min_actions))
    node = np.empty(m, np.int32)
    player = np.empty(m, np.int8)
    hand = np.empty(m, tree.elem_hand.dtype)
    ehid = np.empty(m, np.uint16)
    elem_hid = _element_hidden(tree, root_hidden)
    j = 0
    for part in tree.slices(tree.decision_order()):
        j = _infoset_rows(part, j, actor, tree.node_infoset, nact, min_actions, tree.node_list, tree.node_len,
                          tree.elem_hand, elem_hid, node, player, hand, ehid)
        tree.drop_mapped_pages()
    del elem_hid
    # a few face-down cards of 5 bits each: codes small enough to index (no hash or sort of 40 M codes;
    # pandas' factorize was 0.5 s of a 10x10 table)
    top = int(ehid.max(initial=0)) + 1
    huniq, inv = small_unique(ehid, top) if top <= 1 << 20 else np.unique(ehid, return_inverse=True)
    del ehid
    hid_names = []
    for code in huniq:
        parts = []
        code = int(code)
        while code:
            parts.append(names[(code & 31) - 1])
            code >>= 5
        hid_names.append(" ".join(reversed(parts)))
    return {
        "min_actions": min_actions,  # the sets these arrays describe (0: all)
        "player": player,
        # codes as narrow as their categories allow: a table writer holds every information set's at once
        "hand": (hand, hand_names),
        "history": (node, NodeHistories(parent, tok, tokens, prefix)),
        "hidden": (inv.astype(_code_type(len(hid_names))), np.array(hid_names, dtype=object)),
    }


@nb.njit(cache=True, nogil=True)
def _infoset_rows(order, j, actor, infoset, inact, min_actions, nlist, nlen, ehand, ehid, node, player, hand, hid):
    """Per information set of at least ``min_actions`` actions, its decision node, acting player, and its
    element's hand and face-down code, in one pass over the decision nodes in ``order`` (their sets' number
    order: :meth:`solvers.tree.VectorTree.decision_order`), so the arrays hold only the sets a table writes
    (numpy's gathers over 10x10's 39 M information sets were ~1.3 s of labelling a table). ``j``: the first
    row to write; returns the next."""
    for x in range(order.shape[0]):
        n = order[x]
        p = actor[n]
        i0 = infoset[n]
        e0 = nlist[n, p]
        for k in range(nlen[n, p]):
            if inact[i0 + k] < min_actions:
                continue
            node[j] = n
            player[j] = p
            hand[j] = ehand[e0 + k]
            hid[j] = ehid[e0 + k]
            j += 1
    return j


@lru_cache(maxsize=64)
def _hand_names(rules: RuleSet, vc: ViraClass) -> np.ndarray:
    """Each hand of the class as its levels' names, strongest first: the same for every part of a split
    cell, where building it per part was a tenth of the table pass."""
    names = level_names(rules, vc)
    out = np.array([" ".join(names[x] for x in sorted(h, reverse=True)) for h in hand_levels(vc).hands], dtype=object)
    out.flags.writeable = False  # shared by every caller
    return out


def _element_hidden(tree: VectorTree, root_hidden: np.ndarray | None = None) -> np.ndarray:
    """Per element, its owner's face-down cards so far, packed 5 bits per card (the latest lowest),
    in one pass; ``root_hidden`` seeds the root elements (a part below a trunk)."""
    ehid = np.zeros(tree.num_elements, np.uint16)  # at most three cards, 15 bits (2 bytes per element held)
    if root_hidden is not None:
        ehid[: len(root_hidden)] = root_hidden
    card_level = hand_levels(tree.source.vira_class).card_level.astype(np.int64)
    # sets are numbered as nodes are expanded, parents first, so the decision order is a parents-first order too;
    # its slices read the slot index in stretches whose file pages are dropped after each
    for part in tree.slices(tree.decision_order()):
        _hidden_walk(part, tree.node_actor, tree.node_list, tree.node_len, tree.node_infoset, tree.infoset_offset,
                     tree.infoset_nact, tree.entry_child, tree.elem_entry, tree.entry_action, card_level, ehid)
        tree.drop_mapped_pages()
    return ehid


@nb.njit(cache=True, nogil=True)
def _hidden_walk(order, actor, nlist, nlen, ninfo, ioff, inact, echild, elem_entry, entry_action, card_level, hid):
    """For every element a slot of the decision nodes ``order`` creates, its owner's face-down cards so far: the
    slot's own element's code shifted by 5 bits plus the level (+1) of the card it plays face down. Called in a
    parents-first order, so every code is read after it is written (a pass in element order through a
    per-slot owner array was 1.1 s of a 10x10 table)."""
    for x in range(order.shape[0]):
        n = order[x]
        p = actor[n]
        ls = nlist[n, p]
        i0 = ninfo[n]
        for k in range(nlen[n, p]):
            h = hid[ls + k]
            o = ioff[i0 + k]
            for a in range(inact[i0 + k]):
                e = o + a
                c = echild[e]
                if c < 0 or elem_entry[c] != e:
                    continue  # the slot creates no element (its child keeps the parent's)
                code = entry_action[e]
                hid[c] = (h << 5) + card_level[code - A_DOWN] + 1 if A_DOWN <= code < A_RAISE else h


class PrunedRaise(Exception):
    """The player to act faces a raise the solved tree prunes (``cap_raises`` / ``cap_own_raises``): one no
    player gains by, so the solution's extension accepts it and plays on as if it had not been made."""


def _is_raise(a: int) -> bool:
    return A_RAISE <= a < A_RAISE + 4


def locate(tree: VectorTree, player: int, cards, actions) -> int:
    """Information set of ``player`` holding ``cards`` (ids) after ``actions`` ([(player, action id)]).

    A raise the tree prunes as one no player gains by (``cap_raises``, ``cap_own_raises``) is read as not
    made (as accepting the raise it answered, if one was pending) and its acceptance as not needed: the
    solution's extension off the tree, which those prunes' argument shows loses nothing. Raises
    :class:`PrunedRaise` when ``player`` must answer such a raise (the extension accepts), ``KeyError``
    naming the first action the solved tree does not contain (another pruned, dominated action) and
    ``ValueError`` for inconsistent input.
    """
    card_level = hand_levels(tree.source.vira_class).card_level
    lvl_cards = hand_levels(tree.source.vira_class).lvl_cards
    index = hand_levels(tree.source.vira_class).hand_index
    levels = tuple(sorted(int(card_level[c]) for c in cards))
    if -1 in levels or levels not in index:
        raise ValueError(f"cards {[card_str(c) for c in cards]} are not a hand under this vira class")
    elem = index[levels] + player * tree.num_hands
    n = 0
    unanswered = -1  # the player who made a pruned raise that is still to be accepted
    for p, a in actions:
        if unanswered >= 0:
            if p != 1 - unanswered or a != A_ACCEPT:
                raise KeyError(f"{tree.source.rules.action_str(a)!r} answers a raise the solved tree prunes "
                               "(the solution accepts it)")
            unanswered = -1
            continue
        if tree.node_actor[n] != p:
            raise ValueError(f"{tree.source.rules.action_str(a)!r} by player {p} out of turn (player "
                             f"{tree.node_actor[n]} acts)")
        c0 = int(tree.node_child[n])
        kids = range(c0, c0 + int(tree.node_nchild[n]))
        if _is_raise(a) and tree.source.prunes & (CAP_RAISES | CAP_OWN_RAISES) \
                and not any(int(tree.node_action[c]) == a for c in kids):
            unanswered = p
            if not any(int(tree.node_action[c]) == A_ACCEPT for c in kids):
                continue  # nothing pending: as if not raised
            a = A_ACCEPT  # answering a pending raise: as accepting it
        n, elem = _step(tree, n, p, a, player, elem, card_level, lvl_cards)
    if unanswered >= 0:
        if unanswered == player:
            raise ValueError(f"player {player} is not to act after these actions")
        raise PrunedRaise()
    if tree.node_actor[n] != player:
        raise ValueError(f"player {player} is not to act after these actions")
    return int(tree.node_infoset[n]) + elem - int(tree.node_list[n, player])


def _step(tree: VectorTree, n: int, p: int, a: int, player: int, elem: int, card_level, lvl_cards) -> tuple[int, int]:
    """(child node, ``player``'s element there) after action ``a`` by ``p`` at node ``n``."""
    if a < A_DOWN:
        lv = card_level[a - A_UP]
        want = lambda c, lv=lv: c < A_DOWN and card_level[c - A_UP] == lv  # noqa: E731
        private = A_UP + lvl_cards[lv, 0]
    elif a < A_RAISE:
        want = lambda c: c == HIDDEN  # noqa: E731
        private = A_DOWN + lvl_cards[card_level[a - A_DOWN], 0]
    else:
        want = lambda c, a=a: c == a  # noqa: E731
        private = a
    c0 = int(tree.node_child[n])
    child = next((c for c in range(c0, c0 + int(tree.node_nchild[n])) if want(int(tree.node_action[c]))), None)
    if child is None:
        raise KeyError(f"{tree.source.rules.action_str(a)!r} is not in the solved tree (a dominated move it "
                       "prunes, or impossible)")
    if p == player:
        i = int(tree.node_infoset[n]) + elem - int(tree.node_list[n, p])
        o = int(tree.infoset_offset[i])
        slots = [o + k for k in range(int(tree.infoset_nact[i])) if tree.entry_action[o + k] == private]
        if not slots:
            raise KeyError(f"{tree.source.rules.action_str(a)!r} is not in the solved tree for this hand")
        elem = int(tree.entry_child[slots[0]])
    return child, elem


def openspiel_route(tree: VectorTree, state) -> dict[int, int] | None:
    """For a ``truco_paulista`` state in this tree's subgame: OpenSpiel action -> slot (None if elsewhere)."""
    cell: Subgame = tree.source
    v = state.deal[6] if cell.rules.vira else -1
    if v not in cell.vira_class.viras:
        return None
    p = state.current_player()
    # real cards of a class member map to the representative through levels
    cards = [_to_rep(cell, v, c) for c in state.deal[3 * p:3 * p + 3]]
    acts = [(q, _to_rep_action(cell, v, a)) for q, a in state.hand_actions]
    try:
        i = locate(tree, p, cards, acts)
    except PrunedRaise:  # the extension off the tree: accept, never fold or raise back
        return {a: FORCED if a == A_ACCEPT else -1 for a in state.legal_actions()}
    o = int(tree.infoset_offset[i])
    by_code = {int(tree.entry_action[o + k]): o + k for k in range(int(tree.infoset_nact[i]))}
    card_level = hand_levels(tree.source.vira_class).card_level
    lvl_cards = hand_levels(tree.source.vira_class).lvl_cards
    out = {}
    for a in state.legal_actions():
        rep = _to_rep_action(cell, v, a)
        if rep < A_DOWN:
            code = A_UP + lvl_cards[card_level[rep - A_UP], 0]
        elif rep < A_RAISE:
            code = A_DOWN + lvl_cards[card_level[rep - A_DOWN], 0]
        else:
            code = rep
        # two cards of one level share their slot; players split its probability evenly between them
        # (:func:`slot_probabilities`): always playing the same copy first would tell the opponent which
        # copies the player does not hold, which the level quotient assumes nobody learns
        out[a] = by_code.get(int(code), -1)
    return out


def slot_probabilities(route: dict[int, int], probs) -> dict[int, float]:
    """OpenSpiel action -> probability from a route and per-slot probabilities: actions sharing a slot
    (cards of one level) split it evenly, actions without a slot get 0."""
    share: dict[int, int] = {}
    for s in route.values():
        share[s] = share.get(s, 0) + 1
    return {a: float(probs[s]) / share[s] if s >= 0 else (1.0 if s == FORCED else 0.0) for a, s in route.items()}


def _level_map(cell: Subgame, vira: int) -> dict[int, int]:
    """Card of a class member's deal -> card of the same level (and copy) under the representative vira."""
    return _level_map_of(cell.rules, cell.vira_class, vira)


@lru_cache(maxsize=1024)
def _level_map_of(rules: RuleSet, vc: ViraClass, vira: int) -> dict[int, int]:
    if vira == vc.vira:
        return {}
    own = _levels(rules, vira)
    rep = vc.level_cards
    return {c: rep[lv][k] for lv, cards in enumerate(own) for k, c in enumerate(cards)}


def _to_rep(cell: Subgame, vira: int, card: int) -> int:
    return _level_map(cell, vira).get(card, card)


def _to_rep_action(cell: Subgame, vira: int, a: int) -> int:
    if a < A_DOWN:
        return A_UP + _to_rep(cell, vira, a - A_UP)
    if a < A_RAISE:
        return A_DOWN + _to_rep(cell, vira, a - A_DOWN)
    return a


def native_parts(game, prunes: int | dict = ALL_PRUNES) -> list[tuple[float, Subgame]]:
    """The native builder for ``truco_paulista`` games: one subgame per vira class, as lazy
    builders (each :class:`Subgame` builds its tree when called), so ``solve()`` holds one tree at a time.

    ``prunes=0`` keeps every action of the game (concede too unless the game is
    ``strategic``), so an exported policy covers every OpenSpiel state; with
    prunes, states after a pruned action are outside the tree and exported as
    uniform play.
    """
    cfg = game.cfg
    if cfg.match:
        raise ValueError("the native builder covers single hands (truco_paulista), not matches")
    if isinstance(prunes, dict):
        prunes = _prune_mask(prunes)
    if cfg.strategic:
        prunes |= DROP_CONCEDE  # the game itself has no concede_hand
    p = game.params
    out = []
    check_cell_args(cfg.rules, int(p["score0"]), int(p["score1"]), int(p["dealer"]))
    for vc in vira_classes(cfg.rules):
        out.append((vc.weight, Subgame(cfg.rules, int(p["score0"]), int(p["score1"]), int(p["dealer"]), vc, prunes)))
    return out


def table_labels(tree: VectorTree, prefix: str = "", root_hidden: np.ndarray | None = None,
                 min_actions: int = 0) -> dict:
    """Everything a strategy table needs to label this tree's rows (``prefix``, ``root_hidden``: a
    subtree's, see :func:`infoset_labels`). With ``min_actions`` the per-set arrays hold only the sets of at
    least that many actions, and ``action_names`` (the tree's action codes and their notation) replaces the
    per-slot ``action`` codes: a writer given the rows' own action codes needs nothing per slot."""
    cell: Subgame = tree.source
    cached = tree.index.labels
    if cached is None or cached["min_actions"] != min_actions:  # cells sharing a tree share its labels
        sets = infoset_labels(tree, prefix, root_hidden, min_actions)
        tree.index.labels = dict(sets, **({"action": slot_action_strings(tree)} if min_actions <= 0
                                          else {"action_names": action_names(tree)}))
    out = dict(tree.index.labels)
    out["constants"] = {
        "vira": cell.vira_class.name, "vira_class": np.int8(cell.vira_class.index),
        "score0": np.int8(cell.score0), "score1": np.int8(cell.score1), "dealer": np.int8(cell.dealer),
    }
    return out


def canonical_key(rules, vira: str, cards: str, history: str | list[str] = "", *, dealer: int,
                  score: tuple[int, int], player: int | None = None) -> dict:
    """Map real cards and a history (notation) to a strategy table's key columns."""
    from truco_lab.rules.cards import parse_action, parse_card, parse_cards

    rules = RuleSet.from_dict(rules)
    if not rules.vira:
        if vira not in (None, "", "none", -1):
            raise ValueError(f"rule set {rules.name!r} turns no vira (its manilhas are fixed), got vira {vira!r}")
        v = -1
    else:
        v = parse_card(vira) if isinstance(vira, str) else int(vira)
    vc = vira_class_of(rules, v)
    cell = Subgame(rules, score[0], score[1], dealer, vc)
    names = level_names(rules, vc)
    rep_level = {c: lv for lv, cs in enumerate(vc.level_cards) for c in cs}
    level = {c: rep_level[_to_rep(cell, v, c)] for c in rules.deck.tolist() if c != v}
    own = parse_cards(cards if isinstance(cards, str) else [card_str(c) if not isinstance(c, str) else c
                                                             for c in cards])
    if len(own) != 3 or len(set(own)) != 3:
        raise ValueError(f"cards must be three distinct cards, got {cards!r}")
    for c in own:
        if c not in level:
            raise ValueError(f"card {card_str(c)} is not in play under vira {vira_name(v)} with this deck")
    items = [h.strip() for h in (history.split(",") if isinstance(history, str) else history) if h.strip()]
    r = rules.to_array()
    s = np.zeros(E.STATE_SIZE, np.int32)
    E.new_hand(s, r, dealer, score[0], score[1], np.full(6, -1, np.int32), v)
    toks: list[tuple[int, str, int]] = []  # (actor, token, hidden level or -1)
    played: list[tuple[int, int]] = []  # (actor, card) of every card play with a known card
    for text in items:
        p = int(E.actor(s))
        if p < 0:
            raise ValueError(f"history continues after the hand is over: {text!r}")
        if text.replace(" ", "") in ("play_face_down?", "hidden"):
            code = A_DOWN + max(v, 0)  # an unknown card; its identity is never consulted
            lv = -1
        else:
            code = parse_action(text, rules.raise_targets)
            lv = level[code - A_UP] if code < A_DOWN else (level[code - A_DOWN] if code < A_RAISE else -1)
        if code < A_RAISE:
            card = code - (A_DOWN if code >= A_DOWN else A_UP)
            E.give_card(s, p, card)
            if lv >= 0:
                played.append((p, card))
        err = E.check_action(s, r, p, code)
        if err:
            raise ValueError(f"history action {text!r} is illegal here: {E.ERROR_NAMES[err]}")
        E.apply_unchecked(s, r, code)
        if code < A_DOWN:
            toks.append((p, names[lv], -1))
        elif code < A_RAISE:
            toks.append((p, "hidden", lv))
        else:
            from truco_lab.rules.cards import action_str

            toks.append((p, action_str(code, rules.raise_targets), -1))
    me = int(E.actor(s)) if player is None else int(player)
    if me < 0:
        raise ValueError("the hand is over after this history: no information set")
    for p, card in played:
        if p == me and card not in own:
            raise ValueError(f"player {me} played {card_str(card)}, which is not among the cards {cards!r}")
        if p != me and card in own:
            raise ValueError(f"player {p} played {card_str(card)}, which is among player {me}'s cards {cards!r}")
    hidden = [names[lv] for p, _, lv in toks if p == me and lv >= 0]
    hand = " ".join(names[x] for x in sorted((level[c] for c in own), reverse=True))
    # the table shows cards as each level's representative; map them back to the user's own cards
    still = [c for c in own if (me, c) not in set(played)]
    by_level = {}
    for c in sorted(still):
        by_level.setdefault(level[c], card_str(c))
    card_map = {card_str(vc.level_cards[lv][0]): mine for lv, mine in by_level.items()}
    return {
        "vira_class": vc.index, "player": me, "hand": hand,
        "history": ", ".join(f"{p}:{tok}" for p, tok, _ in toks), "hidden": " ".join(hidden),
        "_cards": card_map,
    }


# ---- the table schema: truco's key columns and lookups by real cards ------------------------------------
TABLE_SCHEMA_NAME = "truco_paulista"
TABLE_COLUMNS = {
    "vira": "representative vira card of the vira class (level names below are under this vira)",
    "vira_class": "index of the vira class (viras inducing the same card-strength multiplicities)",
    "score0": "player 0's score at the start of the hand", "score1": "player 1's score at the start of the hand",
    "dealer": "the dealing player (the other one leads the first round)",
    "hand": "the acting player's three cards as strength levels, strongest first (manilhas by name: Zap, Copas, "
            "Espadilha, Ouros)",
    "history": "public actions so far, 'player:action', comma-separated; a face-down card shows as 'hidden'",
    "hidden": "the acting player's own face-down cards (part of their information set)",
    "action": "the action, in notation (cards as the level's representative card)",
}


def table_lookup(table, vira: str, cards: str, history: str | list[str] = "", *, player: int | None = None,
                 score: tuple[int, int] | None = None, dealer: int | None = None):
    """The rows of one information set, given real cards.

    ``vira`` and ``cards`` in notation (``"7c"``, ``"3d 2c Ah"``); ``history``
    is the hand's actions so far as notation strings, comma-separated or a
    list (``"play_face_up 4c, play_face_up 5h, play_face_down 7d"``); the
    opponent's face-down card may be written ``play_face_down ?``. Cards may be a
    list of literals; action names are case-insensitive. The rows' actions are in the
    user's own cards. No row: ``LookupError`` saying why (another score or dealer,
    another vira class, not this player's turn, a forced move).
    """
    df = table.df
    sc = score if score is not None else (int(df["score0"].iloc[0]), int(df["score1"].iloc[0]))
    dl = dealer if dealer is not None else int(df["dealer"].iloc[0])
    meta = table.metadata if "parts" not in table.metadata else table.metadata["parts"][0]
    key = canonical_key(meta.get("rules"), vira, cards, history, dealer=dl, score=sc, player=player)
    cards_map = key.pop("_cards", {})
    rows = table.filter(score0=sc[0], score1=sc[1], dealer=dl, **key).df.copy()
    if rows.empty:
        raise LookupError(_why_empty(df, key, sc, dl))
    # answer in the user's own cards, not the level representatives the table stores
    rows["action"] = [_swap_card(a, cards_map) for a in rows["action"].astype(str)]
    return rows


def _why_empty(df, key: dict, sc, dl) -> str:
    if not ((df["score0"] == sc[0]) & (df["score1"] == sc[1]) & (df["dealer"] == dl)).any():
        have = df[["score0", "score1", "dealer"]].drop_duplicates().head(3).values.tolist()
        return f"this table holds no score {sc[0]}x{sc[1]} with dealer {dl} (it holds e.g. {have})"
    if not (df["vira_class"] == key["vira_class"]).any():
        return (f"this table holds no rows of vira class {key['vira_class']} (classes here: "
                f"{sorted(df['vira_class'].unique().tolist())})")
    same = df[(df["player"] == key["player"]) & (df["history"].astype(str) == key["history"])]
    if same.empty:
        return (f"no information set of player {key['player']} after history {key['history']!r}: the history "
                "is off the solved tree (a pruned, dominated action) or the equilibrium never reaches it")
    return (f"no row for hand {key['hand']!r} there: a forced move (one legal action; tables leave those out) "
            "or a hand the public cards make impossible")


def _swap_card(action: str, cards: dict) -> str:
    parts = action.split()
    if len(parts) == 2 and parts[1] in cards:
        return f"{parts[0]} {cards[parts[1]]}"
    return action


TABLE_SCHEMA = TableSchema(
    TABLE_SCHEMA_NAME, key_columns=("vira_class", "score0", "score1", "dealer", "player", "hand", "history", "hidden"),
    columns=TABLE_COLUMNS, categories=("vira", "hand", "history", "hidden"), lookup=table_lookup,
    aliases=("truco_lab.public_tree:canonical_key",),  # what tables written before issue 17 name
)
