"""The heuristic players of Argentine truco (seed 004 §9): what a player at the table knows, and two levels.

* ``low``: basic hand strength (the mean trick strength of its three cards) for the envido, the truco and
  the card it plays.
* ``high``: the exposed cards, the envido points both players announce once an envido is accepted (seed 004
  §6: compared in the open) and the unseen cards: it estimates each trick against the cards the opponent can
  still hold, given what they played and announced, conserves its strong cards (the cheapest winner, a
  middle lead as mano) and weighs raises by its chance of winning the deal; it sings the envido by its
  points and the mano's tie advantage.

Both read the state only through :func:`arg_view`: their own cards and public information, so changing the
opponent's hidden cards changes no decision (tested).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from truco_lab.rules import engine as E
from truco_lab.rules.cards import (
    A_ACCEPT,
    A_CONCEDE,
    A_ENVIDO,
    A_FALTA_ENVIDO,
    A_FLOR,
    A_FOLD,
    A_RAISE,
    A_REAL_ENVIDO,
    A_UP,
)
from truco_lab.rules.spanish import TRICK_STRENGTH, envido_points

TOP = max(TRICK_STRENGTH)


@dataclass(frozen=True)
class ArgView:
    """What the Argentine player to act knows."""

    player: int
    dealt: tuple[int, ...]  # own three cards
    held: tuple[int, ...]  # own cards not played yet
    opp_up: tuple[int, ...]  # the opponent's played cards
    rounds: tuple[int, ...]  # finished tricks' winners (0, 1 or E.TIE)
    led: int  # the card to beat in this trick (-1: we lead)
    value: int  # the accepted truco stake
    pending_to: int  # a truco raise we must answer (0: none)
    envido_to: int  # an envido we must answer (0: none)
    my_envido: int
    opp_envido: int  # announced once an envido was accepted (-1: not known)
    mano: bool  # we led the first trick (ties of the envido are ours)
    first_leader: int
    score: tuple[int, int]  # (ours, theirs)
    target: int
    legal: tuple[int, ...]
    deck: tuple[int, ...]
    all_tied_mode: int


def arg_view(state) -> ArgView:
    """The acting player's view of an Argentine OpenSpiel state."""
    s = state.s
    p = int(E.actor(s))
    held = tuple(int(E.held_card(s, p, i)) for i in range(3) if E.held_card(s, p, i) >= 0)
    own, opp = [], []
    for x in range(int(E.nplays(s))):
        (own if int(E.play_owner(s, x)) == p else opp).append(int(E.play_card(s, x)))
    nr = int(E.nrounds(s))
    led = int(E.play_card(s, 2 * nr)) if int(E.round_plays(s)) == 1 else -1
    dealt = tuple(sorted(held + tuple(own)))
    r = state.rules.to_array()
    return ArgView(
        player=p, dealt=dealt, held=held, opp_up=tuple(opp), rounds=tuple(int(E.round_winner(s, k)) for k in range(nr)),
        led=led, value=int(E.value(s)), pending_to=int(E.pending_to(s)) if int(E.pending_by(s)) != p else 0,
        envido_to=int(E.envido_pending(s)) if int(E.envido_by(s)) not in (p, -1) else 0,
        my_envido=envido_points(list(dealt)), opp_envido=int(E.envido_of(s, 1 - p)) if E.envido_seen(s) else -1,
        mano=int(E.round_leader(s, 0)) == p, first_leader=int(E.round_leader(s, 0)),
        score=(int(E.score(s, p)), int(E.score(s, 1 - p))), target=int(state.rules.target),
        legal=tuple(int(a) for a in state.legal_actions()), deck=tuple(int(c) for c in state.deck_list),
        all_tied_mode=int(E.rule_all_tied(r)),
    )


def power(c: int) -> int:
    return int(TRICK_STRENGTH[c])


def hand_strength(v: ArgView) -> float:
    """Low: the mean trick strength of the three dealt cards (0..1)."""
    return float(np.mean([power(c) for c in v.dealt])) / TOP


def opponent_pool(v: ArgView) -> np.ndarray:
    """Probability of each card id being among the opponent's unplayed cards: the unseen cards, weighted by
    the hands consistent with what the opponent played and (once announced) their envido points."""
    unseen = [c for c in v.deck if c not in v.dealt and c not in v.opp_up]
    k = 3 - len(v.opp_up)
    out = np.zeros(40)
    if k <= 0 or not unseen:
        return out
    if v.opp_envido < 0:
        out[unseen] = k / len(unseen)
        return out
    return _consistent_pool(tuple(unseen), v.opp_up, k, v.opp_envido)


@lru_cache(maxsize=4096)
def _consistent_pool(unseen: tuple[int, ...], opp_up: tuple[int, ...], k: int, announced: int) -> np.ndarray:
    out = np.zeros(40)
    n = 0
    for rest in itertools.combinations(unseen, k):
        if envido_points([*opp_up, *rest]) == announced:
            out[list(rest)] += 1
            n += 1
    if n == 0:  # cannot happen with an honest announcement; fall back to the unseen cards
        out[list(unseen)] = k / len(unseen)
        return out
    return out / n


def win_probability(v: ArgView) -> float:
    """High: the chance of winning the deal, each remaining trick our card (strongest first) against a card
    of the opponent's pool, the tricks combined by the rules (two wins; pardas; three pardas: mano)."""
    pool = opponent_pool(v)
    total_w = pool.sum()
    mine = sorted(v.held, key=power, reverse=True)
    probs = []
    if v.led != -1 and mine:
        best = mine.pop(0)
        pb, pl = power(best), power(v.led)
        probs.append((1.0, 0.0, 0.0) if pb > pl else (0.0, 1.0, 0.0) if pb == pl else (0.0, 0.0, 1.0))
    pw = np.array([power(c) for c in range(40)])
    for c in mine:
        if total_w <= 0:
            probs.append((0.5, 0.0, 0.5))
            continue
        w = float(pool[pw < power(c)].sum() / total_w)
        t = float(pool[pw == power(c)].sum() / total_w)
        probs.append((w, t, max(0.0, 1.0 - w - t)))
    me, opp = v.player, 1 - v.player
    total = 0.0
    for outcome in itertools.product(range(3), repeat=len(probs)):
        pr = float(np.prod([probs[i][o] for i, o in enumerate(outcome)]))
        if pr == 0.0:
            continue
        rw = list(v.rounds) + [me if o == 0 else E.TIE if o == 1 else opp for o in outcome]
        arr = np.array(rw + [0] * (3 - len(rw)), np.int32)
        res = -1
        for n in range(len(v.rounds) + 1, len(rw) + 1):
            res = int(E.hand_result(arr, n, v.first_leader, v.all_tied_mode))
            if res >= 0:
                break
        total += pr if res == me else 0.5 * pr if res in (-1, E.DRAW) else 0.0
    return total


# ---- the two levels ---------------------------------------------------------------------------------------
_TRUCO_BAR = {2: 0.45, 3: 0.5, 4: 0.55}  # low: hand strength needed to accept truco, retruco, vale cuatro


def argentine_probabilities(v: ArgView, level: str) -> dict[int, float]:
    """Action probabilities of the Argentine heuristic player at ``v`` (``level``: "low" or "high")."""
    legal = set(v.legal)
    if A_FLOR in legal:
        return {A_FLOR: 1.0}  # with flor in play, a flor is always sung
    if v.envido_to:
        return _answer_envido(v, level, legal)
    x = hand_strength(v) if level == "low" else win_probability(v)
    raises = sorted(a for a in legal if A_RAISE <= a < A_ACCEPT)
    if v.pending_to:
        if level == "low":
            bar = _TRUCO_BAR.get(v.pending_to, 0.55)
        else:  # the pot odds (a fold loses the accepted stake), plus a margin: a raise shows strength
            bar = (1.0 - v.value / v.pending_to) / 2 + 0.15
        if raises and x >= max(bar, 0.5) + 0.25:
            return {raises[0]: 1.0}
        return {A_ACCEPT: 1.0} if x >= bar else {A_FOLD: 1.0}
    out: dict[int, float] = {}
    sing = _sing_envido(v, level, legal)
    if sing is not None:
        return {sing: 1.0}
    if raises:
        if x >= 0.75 and (v.value < 3 or x >= 0.85):
            out[raises[0]] = 0.9 if level == "low" else 1.0
        elif level == "high" and x < 0.15 and v.value == 1:
            out[raises[0]] = 0.3  # a bluff with a hopeless hand, first raise only
    rest = 1.0 - sum(out.values())
    if rest > 0:
        out[_card_play(v, level)] = rest
    return out


def _envido_bar(v: ArgView, level: str) -> int:
    """Points from which the player sings (or accepts) the envido."""
    if level == "low":
        return 28
    return 27 if v.mano else 28  # the mano wins ties


def _sing_envido(v: ArgView, level: str, legal: set[int]) -> int | None:
    if A_ENVIDO not in legal and A_REAL_ENVIDO not in legal:
        return None
    bar = _envido_bar(v, level)
    if level == "high" and v.my_envido >= 31 and A_FALTA_ENVIDO in legal and v.score[1] >= v.target - 6:
        return A_FALTA_ENVIDO  # the opponent is near the end: the falta costs us little and may end it
    if level == "high" and v.my_envido >= 31 and A_REAL_ENVIDO in legal:
        return A_REAL_ENVIDO
    if v.my_envido >= bar and A_ENVIDO in legal:
        return A_ENVIDO
    return None


def _answer_envido(v: ArgView, level: str, legal: set[int]) -> dict[int, float]:
    bar = _envido_bar(v, level) - (1 if level == "high" and v.envido_to <= 2 else 0)
    if level == "high" and v.envido_to >= 5:
        bar += 2  # they raised: a raise is rarely sung without points
    if v.my_envido >= bar + 4:
        for a in (A_REAL_ENVIDO, A_ENVIDO):
            if a in legal:
                return {a: 1.0}
    return {A_ACCEPT: 1.0} if v.my_envido >= bar or A_FOLD not in legal else {A_FOLD: 1.0}


def _card_play(v: ArgView, level: str) -> int:
    cards = sorted(v.held, key=power)  # weakest first
    up = [c for c in cards if A_UP + c in v.legal]
    if not up:
        return next(a for a in v.legal if a != A_CONCEDE)
    if v.led != -1:
        winners = [c for c in up if power(c) > power(v.led)]
        if winners:
            return A_UP + winners[0]  # the cheapest card that wins: keep the strong ones
        if level == "high":
            ties = [c for c in up if power(c) == power(v.led)]
            rest = [c for c in up if c not in ties]
            if ties and rest and power(rest[-1]) >= TRICK_STRENGTH[4 * 2]:  # a parda, then a 3 or better wins
                return A_UP + ties[0]
        return A_UP + up[0]
    won = sum(1 for w in v.rounds if w == v.player)
    if level == "high" and not v.rounds and len(up) == 3 and power(up[-1]) >= TOP - 3:
        return A_UP + up[1]  # mano with a top card: lead the middle one, keep the top for later
    if not v.rounds or won == 0:
        return A_UP + up[-1]
    return A_UP + up[0]


def argentine_hand_state(rules, score: tuple[int, int], dealer: int, hand, history=""):
    """A ``truco_argentino`` state where the player to act holds ``hand`` (Spanish notation) after
    ``history`` (comma-separated actions in Argentine notation). The opponent's unplayed cards are any that
    fit what was public; after an accepted envido both players' points were shown, so the opponent's must be
    given as ``shows N`` (a history item after the quiero). ``ValueError`` naming what does not fit."""
    import pyspiel

    from truco_lab.openspiel.games import openspiel_hand

    try:
        mine = rules.parse_cards(hand)
    except ValueError as e:
        raise ValueError(f"--hand: {e}") from None
    deck = [int(c) for c in rules.deck]
    if len(mine) != 3 or len(set(mine)) != 3 or any(c not in deck for c in mine):
        raise ValueError(f"--hand needs three different cards of this deck ({' '.join(rules.card_str(c) for c in deck)})")
    items = [x.strip() for x in history.split(",")] if isinstance(history, str) else list(history)
    acts, shows = [], None
    for x in (x for x in items if x):
        if x.lower().startswith("shows "):
            try:
                shows = int(x.split()[1])
            except ValueError:
                raise ValueError(f"history item {x!r}: 'shows N' takes the opponent's envido points") from None
            continue
        try:
            acts.append(rules.parse_action(x))
        except ValueError as e:
            raise ValueError(f"history item {x!r}: {e}") from None
    theirs = sorted({a - A_UP for a in acts if A_UP <= a < A_UP + 40} - set(mine))
    rest = [c for c in deck if c not in mine and c not in theirs]
    if len(theirs) > 3:
        raise ValueError(f"the history plays {len(theirs)} cards that are not yours: the opponent holds three")
    game = pyspiel.load_game(*openspiel_hand(rules, score[0], score[1], dealer))
    why = "no deal of the opponent's cards makes this history legal with you to act"
    for seat in (0, 1):
        for fill in itertools.combinations(rest, 3 - len(theirs)):
            opp = sorted(theirs + list(fill))
            st = _replayed(game, seat, mine, opp, acts)
            if st is None or st.current_player() != seat:
                continue
            if E.envido_seen(st.s):
                if shows is None:
                    why = "an envido was accepted, so both points were shown: add 'shows N' (the opponent's)"
                    continue
                if int(E.envido_of(st.s, 1 - seat)) != shows:
                    why = f"no opponent hand that fits the history shows {shows} points of envido"
                    continue
            return st
    raise ValueError(why)


def _replayed(game, seat: int, mine: list[int], opp: list[int], acts: list[int]):
    """The state after dealing ``mine`` to ``seat`` and ``opp`` to the other and playing ``acts`` (None if
    an action is illegal there)."""
    st = game.new_initial_state()
    for c in (sorted(mine) + opp if seat == 0 else opp + sorted(mine)):
        st.apply_action(c)
    for a in acts:
        if st.is_terminal() or a not in st.legal_actions():
            return None
        st.apply_action(a)
    return None if st.is_terminal() else st
