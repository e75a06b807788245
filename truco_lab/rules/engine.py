"""The numba rules engine: one hand of truco on a flat int32 state array.

Everything here is jitted and works on small integer arrays: ``s`` is a hand
state (layout below), ``r`` is a rules array from :meth:`RuleSet.to_array`.
Python-facing wrappers (JSON, notation, errors as text) live in
``truco_lab.rules.state``; this module is the single place where rules are coded.
"""

from __future__ import annotations

import numba as nb
import numpy as np

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
    N_ACTIONS_ALL,
)
from truco_lab.rules.ruleset import (
    ALL_TIED_DRAW,
    R_ALL_TIED,
    R_BLIND_IRON,
    R_DECK,
    R_DECK_EXTRA,
    R_ELEVEN_ELEVEN_VALUE,
    R_ELEVEN_FOLD,
    R_ELEVEN_ON,
    R_ELEVEN_VALUE,
    R_ENV_VAL,
    R_ENVIDO,
    R_FACEDOWN_FROM,
    R_FIXED,
    R_FLOR,
    R_LADDER,
    R_NEXT_RANK,
    R_NLADDER,
    R_RAISE_TO_WIN,
    R_RERAISE,
    R_SEATS,
    R_STRENGTH,
    R_TABLE,
    R_TARGET,
    R_VIRA,
)
from truco_lab.rules.spanish import envido_rule

# ---- state layout -------------------------------------------------------
# Seats: 2 (heads-up) or 4 (two against two, partners facing: teams 0+2 and 1+3). Per-seat blocks have
# room for four seats; a seat's side (team) is ``seat & 1``, so with two seats a side is a player.
DEALER = 0
SCORE = 1  # 2 slots, each side's score at the start of the hand (updated when it ends)
VALUE = 3  # accepted hand value
VIRA = 4  # vira card id
MANILHA = 5  # manilha rank index
HAND = 6  # 12 slots: seat p's cards at HAND + 3p .. +2 (-1 = unknown)
PLAYED = 18  # 4 slots: bitmask of played hand slots per seat
NROUNDS = 22  # completed rounds
RWIN = 23  # 3 slots: round winner side (0, 1, TIE)
RLEAD = 26  # 3 slots: round leader seat
PCARD = 29  # 12 slots: card of the x-th play of the hand, x = seats * round + k (-1 unknown)
PDOWN = 41  # 12 slots: 1 if that play was face down
CUR_LEADER = 53
CUR_N = 54  # plays made in the current round (0 .. seats - 1)
PEND_TO = 55  # pending raise target (0 = none)
PEND_PREV = 56  # value a fold would pay
PEND_BY = 57  # seat of the pending raise's raiser
LAST_RAISER = 58  # seat of the last raiser (-1 = nobody raised yet); its side may not raise next
DECISION = 59  # seat that owes the mão de onze decision (-1 = none)
LOCKED = 60  # raises locked for the whole hand
WINNER = 61  # -1 live, 0/1 winning side, DRAW
POINTS = 62  # points the winner got (after the cap)
AWARDED = 63  # points the hand paid before the cap
# Argentine truco (seed 004): envido and flor points are scored apart from the truco award
START = 64  # 2 slots: scores when the hand started (SCORE moves when it ends)
BONUS = 66  # 2 slots: envido and flor points each player earned this hand (scored before the truco award)
ENV_OPEN = 68  # 1 while an envido may still be sung
ENV_TO = 69  # pending envido stake (0 = no envido pending)
ENV_PREV = 70  # what "no quiero" pays the caller of the pending envido
ENV_BY = 71  # caller of the pending envido (-1 = none)
ENV_CALLS = 72  # 3 slots: envidos, real envidos and falta envidos sung this hand
ENV_WIN = 75  # player who scored the envido (-1 = none)
ENV_SEEN = 76  # 1 once an envido was accepted: both envidos were compared, in the open
ENVP = 77  # 2 slots: each player's envido points
FLOR = 79  # bitmask of players holding a flor
FLOR_TODO = 80  # bitmask of flor holders yet to announce it
EXTRA_SEATS = 81  # seats beyond two (0 heads-up, 2 for two against two): a zeroed state is heads-up
STATE_SIZE = 82

TIE = 2
DRAW = 2

# ---- error codes (stable, mapped to the truco-spec names in ERROR_NAMES) --
OK = 0
E_HAND_ALREADY_DECIDED = 1
E_ACT_OUT_OF_TURN = 2
E_CARD_NOT_IN_HAND = 3
E_HIDE_NOT_ALLOWED_IN_FIRST_ROUND = 4
E_RAISE_NOT_ALLOWED = 5
E_INVALID_RAISE_TARGET = 6
E_NO_PENDING_RAISE = 7
E_NO_PENDING_ELEVEN_DECISION = 8
E_RAISE_PENDING = 9
E_DECISION_PENDING = 10
E_INVALID_PLAYER = 11
E_UNKNOWN_ACTION = 12
E_BLIND_PLAY = 13  # house rules' iron hand: cards are flipped blind, in the dealt order
E_ENVIDO_NOT_ALLOWED = 14
E_ENVIDO_PENDING = 15
E_FLOR_PENDING = 16

ERROR_NAMES = {
    E_HAND_ALREADY_DECIDED: "HAND_ALREADY_DECIDED",
    E_ACT_OUT_OF_TURN: "ACT_OUT_OF_TURN",
    E_CARD_NOT_IN_HAND: "CARD_NOT_IN_HAND",
    E_HIDE_NOT_ALLOWED_IN_FIRST_ROUND: "HIDE_NOT_ALLOWED_IN_FIRST_ROUND",
    E_RAISE_NOT_ALLOWED: "RAISE_NOT_ALLOWED",
    E_INVALID_RAISE_TARGET: "INVALID_RAISE_TARGET",
    E_NO_PENDING_RAISE: "NO_PENDING_RAISE",
    E_NO_PENDING_ELEVEN_DECISION: "NO_PENDING_ELEVEN_DECISION",
    E_RAISE_PENDING: "RAISE_PENDING",
    E_DECISION_PENDING: "DECISION_PENDING",
    E_INVALID_PLAYER: "INVALID_PLAYER",
    E_UNKNOWN_ACTION: "UNKNOWN_ACTION",
    E_BLIND_PLAY: "BLIND_PLAY_IN_DEALT_ORDER",
    E_ENVIDO_NOT_ALLOWED: "ENVIDO_NOT_ALLOWED",
    E_ENVIDO_PENDING: "ENVIDO_PENDING",
    E_FLOR_PENDING: "FLOR_PENDING",
}

MAX_LEGAL = 16  # more than the most legal actions any state has (3 up + 3 down + raise + concede + 3 envido)


# ---- named accessors: the only way code outside this module reads a state ----
@nb.njit(cache=True, inline="always")
def winner(s) -> int:
    """-1 while the hand is live, else 0, 1 or DRAW."""
    return s[WINNER]


@nb.njit(cache=True, inline="always")
def awarded(s) -> int:
    """Points the finished hand paid before the cap."""
    return s[AWARDED]


@nb.njit(cache=True, inline="always")
def points(s) -> int:
    """Points the winner scored (after the cap); 0 while live."""
    return s[POINTS]


@nb.njit(cache=True, inline="always")
def score(s, p) -> int:
    """Player ``p``'s score (at the start of the hand; after the award once it ends)."""
    return s[SCORE + p]


@nb.njit(cache=True, inline="always")
def value(s) -> int:
    """The accepted hand value."""
    return s[VALUE]


@nb.njit(cache=True, inline="always")
def stake(s) -> int:
    """What the hand is worth if the pending raise (if any) is accepted."""
    return s[PEND_TO] if s[PEND_TO] != 0 else s[VALUE]


@nb.njit(cache=True, inline="always")
def pending_to(s) -> int:
    """Target of the pending raise (0: none)."""
    return s[PEND_TO]


@nb.njit(cache=True, inline="always")
def pending_by(s) -> int:
    return s[PEND_BY]


@nb.njit(cache=True, inline="always")
def last_raiser(s) -> int:
    return s[LAST_RAISER]


@nb.njit(cache=True, inline="always")
def eleven_decider(s) -> int:
    """The player owing the mão de onze decision (-1: none)."""
    return s[DECISION]


@nb.njit(cache=True, inline="always")
def vira(s) -> int:
    return s[VIRA]


@nb.njit(cache=True, inline="always")
def manilha(s) -> int:
    """Rank index of this hand's manilhas."""
    return s[MANILHA]


@nb.njit(cache=True, inline="always")
def nrounds(s) -> int:
    """Completed rounds."""
    return s[NROUNDS]


@nb.njit(cache=True, inline="always")
def round_plays(s) -> int:
    """Cards played in the current round (0 or 1)."""
    return s[CUR_N]


@nb.njit(cache=True, inline="always")
def seats(s) -> int:
    """Seats at the table: 2, or 4 when two play against two."""
    return 2 + s[EXTRA_SEATS]


@nb.njit(cache=True, inline="always")
def side(seat) -> int:
    """The side (team) of a seat: partners face each other, so seats 0 and 2 are side 0."""
    return seat & 1


@nb.njit(cache=True, inline="always")
def nplays(s) -> int:
    """Cards played in the hand so far."""
    return seats(s) * s[NROUNDS] + s[CUR_N]


@nb.njit(cache=True, inline="always")
def play_card(s, x) -> int:
    """Card of the ``x``-th play of the hand (-1 if unknown)."""
    return s[PCARD + x]


@nb.njit(cache=True, inline="always")
def gain(s, p) -> int:
    """Points player ``p`` scored in this hand so far (envido and flor included; truco once it ends)."""
    if s[WINNER] >= 0:
        return s[SCORE + p] - s[START + p]
    return s[BONUS + p]


@nb.njit(cache=True, inline="always")
def envido_pending(s) -> int:
    """Stake of the pending envido (0: none)."""
    return s[ENV_TO]


@nb.njit(cache=True, inline="always")
def envido_by(s) -> int:
    """Caller of the pending envido (-1: none)."""
    return s[ENV_BY]


@nb.njit(cache=True, inline="always")
def envido_calls(s, k) -> int:
    """How many envidos (k=0), real envidos (1) and falta envidos (2) were sung this hand."""
    return s[ENV_CALLS + k]


@nb.njit(cache=True, inline="always")
def envido_winner(s) -> int:
    """Player who scored the envido (-1: not scored)."""
    return s[ENV_WIN]


@nb.njit(cache=True, inline="always")
def envido_seen(s) -> bool:
    """Whether an envido was accepted, so both players' envido points were compared in the open."""
    return s[ENV_SEEN] != 0


@nb.njit(cache=True, inline="always")
def envido_of(s, p) -> int:
    """Player ``p``'s envido points (private until an envido is accepted)."""
    return s[ENVP + p]


@nb.njit(cache=True, inline="always")
def bonus(s, p) -> int:
    """Envido and flor points ``p`` earned this hand."""
    return s[BONUS + p]


@nb.njit(cache=True, inline="always")
def play_down(s, x) -> bool:
    """Whether the ``x``-th play was face down."""
    return s[PDOWN + x] != 0


@nb.njit(cache=True, inline="always")
def round_leader(s, k) -> int:
    """Leader of round ``k`` (completed or current)."""
    return s[RLEAD + k] if k < s[NROUNDS] else s[CUR_LEADER]


@nb.njit(cache=True, inline="always")
def round_winner(s, k) -> int:
    """Winner of completed round ``k``: 0, 1 or TIE."""
    return s[RWIN + k]


@nb.njit(cache=True, inline="always")
def play_owner(s, x) -> int:
    """The seat that made the ``x``-th play."""
    ns = seats(s)
    lead = round_leader(s, x // ns)
    return (lead + x % ns) % ns


@nb.njit(cache=True, inline="always")
def held_card(s, p, i) -> int:
    """Card in player ``p``'s hand slot ``i``, or -1 if played or unknown."""
    if (s[PLAYED + p] >> i) & 1:
        return -1
    return s[HAND + 3 * p + i]


@nb.njit(cache=True, inline="always")
def dealt_card(s, p, i) -> int:
    """Card dealt to seat ``p`` in hand slot ``i``, played or not (-1 if unknown)."""
    return s[HAND + 3 * p + i]


@nb.njit(cache=True, inline="always")
def dealer(s) -> int:
    """The dealing seat."""
    return s[DEALER]


@nb.njit(cache=True, inline="always")
def start_score(s, p) -> int:
    """Side ``p``'s score when the hand started (``score`` moves when it ends)."""
    return s[START + p]


@nb.njit(cache=True, inline="always")
def pending_previous(s) -> int:
    """What declining the pending raise pays its raiser."""
    return s[PEND_PREV]


@nb.njit(cache=True, inline="always")
def raises_locked(s) -> bool:
    """Whether raises are locked for the whole hand (the hand of eleven, or a capped stake)."""
    return s[LOCKED] != 0


@nb.njit(cache=True, inline="always")
def round_play_count(s) -> int:
    """Plays made in the current round (0 .. seats - 1)."""
    return s[CUR_N]


# ---- the rules array's switches, by name (its offsets stay private to the rules layer) ----------
@nb.njit(cache=True, inline="always")
def rule_seats(r) -> int:
    """2 heads-up, 4 for two against two."""
    return r[R_SEATS]


@nb.njit(cache=True, inline="always")
def rule_turns_vira(r) -> bool:
    """Whether a vira is turned (it names the manilha rank)."""
    return r[R_VIRA] != 0


@nb.njit(cache=True, inline="always")
def rule_target(r) -> int:
    """The match target (scores cap here)."""
    return r[R_TARGET]


@nb.njit(cache=True, inline="always")
def rule_eleven(r) -> bool:
    """Whether the hand of eleven (mão de onze) is played."""
    return r[R_ELEVEN_ON] != 0


@nb.njit(cache=True, inline="always")
def rule_all_tied(r) -> int:
    """What three tied tricks give: ALL_TIED_LEADER (the first leader wins) or ALL_TIED_DRAW."""
    return r[R_ALL_TIED]


def strength_rules(fixed: tuple[int, ...] = ()) -> np.ndarray:
    """A rules array that only :func:`strength` reads: the fixed manilhas of a rule set without a vira
    (empty: the vira names them). For tables of card strength outside the engine."""
    from truco_lab.rules.ruleset import R_SIZE

    r = np.full(R_SIZE, -1, np.int32)
    r[R_FIXED:R_FIXED + len(fixed)] = fixed
    return r


@nb.njit(cache=True)
def give_card(s, p, card) -> None:
    """Put ``card`` into player ``p``'s first unknown, unplayed hand slot (lazy deals of public trees)."""
    for i in range(3):
        if s[HAND + 3 * p + i] < 0 and (s[PLAYED + p] >> i) & 1 == 0:
            s[HAND + 3 * p + i] = card
            return


@nb.njit(cache=True, inline="always")
def flor_dealt(s, p) -> bool:
    """Whether player ``p`` was dealt a flor (rule sets with flor)."""
    return (s[FLOR] >> p) & 1 == 1


@nb.njit(cache=True)
def forget_hands(s) -> None:
    """Blank every unplayed card of both hands (a public tree's representative state: cards are then put
    back by :func:`give_card` as they are played)."""
    for p in range(2):
        for i in range(3):
            if (s[PLAYED + p] >> i) & 1 == 0:
                s[HAND + 3 * p + i] = -1


@nb.njit(cache=True, inline="always")
def set_envido_of(s, p, points) -> None:
    """Player ``p``'s envido points (a public tree writes them where they are shown, before an accepted
    envido compares them)."""
    s[ENVP + p] = points


@nb.njit(cache=True, inline="always")
def strength(card: int, down: int, manilha: int, r) -> int:
    """Round strength of a played card: face down < any face up; manilhas above every plain card, by
    suit under a vira (``manilha``: the hand's manilha rank), or in the rules' fixed order when no
    vira is turned (``manilha`` < 0)."""
    if down:
        return -1
    if r[R_TABLE] == 1:  # a pack with its own fixed order (the Spanish pack)
        return r[R_STRENGTH + card]
    rank = card >> 2
    if manilha >= 0:
        if rank == manilha:
            return 100 + (card & 3)
        return rank
    for i in range(4):
        if r[R_FIXED + i] == card:
            return 100 + i
    return rank


@nb.njit(cache=True)
def new_hand(s, r, dealer, score0, score1, cards, vira):
    """Start a hand: ``cards`` holds player 0's three then player 1's three."""
    s[:] = 0
    ns = r[R_SEATS]
    s[EXTRA_SEATS] = ns - 2
    s[DEALER] = dealer
    s[SCORE] = score0
    s[SCORE + 1] = score1
    if r[R_VIRA] != 0:
        s[VIRA] = vira
        s[MANILHA] = r[R_NEXT_RANK + (vira >> 2)]
    else:  # no vira turned: manilhas are the rules' fixed cards
        s[VIRA] = -1
        s[MANILHA] = -1
    for i in range(3 * ns):
        s[HAND + i] = cards[i]
    for i in range(12):
        s[PCARD + i] = -1
    mano = (dealer + 1) % ns
    s[CUR_LEADER] = mano
    s[LAST_RAISER] = -1
    s[DECISION] = -1
    s[WINNER] = -1
    s[VALUE] = r[R_LADDER]  # the base value (the ladder's first rung)
    eleven = r[R_TARGET] - 1
    if r[R_ELEVEN_ON] != 0:
        if score0 == eleven and score1 == eleven:
            s[VALUE] = r[R_ELEVEN_ELEVEN_VALUE]
            s[LOCKED] = 1
        elif score0 == eleven:  # the side's first seat in play order decides, having seen its partner's cards
            s[DECISION] = mano if side(mano) == 0 else (mano + 1) % ns
            s[LOCKED] = 1
        elif score1 == eleven:
            s[DECISION] = mano if side(mano) == 1 else (mano + 1) % ns
            s[LOCKED] = 1
    if r[R_NLADDER] <= 1:
        s[LOCKED] = 1
    s[START] = score0
    s[START + 1] = score1
    s[ENV_BY] = -1
    s[ENV_WIN] = -1
    if r[R_ENVIDO] != 0:
        s[ENV_OPEN] = 1
        for p in range(2):
            s[ENVP + p] = envido_points(cards[3 * p], cards[3 * p + 1], cards[3 * p + 2], r)
    if r[R_FLOR] != 0:
        for p in range(2):
            a = cards[3 * p] & 3
            if cards[3 * p + 1] & 3 == a and cards[3 * p + 2] & 3 == a:
                s[FLOR] |= 1 << p
        if s[FLOR] != 0:  # seed 003: with a flor dealt there is no envido
            s[FLOR_TODO] = s[FLOR]
            s[ENV_OPEN] = 0


@nb.njit(cache=True)
def restore(s, r, dealer, score, start, value, vira, rlead, rwin, nrounds, pcard, pdown, cur_leader, cur_n,
            hands, played, pending, last_raiser, decision, locked, winner) -> None:
    """Write a whole heads-up-or-team state from its parts (the one way a loaded state reaches the slots):
    ``score``/``start`` per side, round leaders and winners (``rwin``: 0, 1 or TIE), ``pcard``/``pdown``
    per play in hand order, ``hands`` per seat slot (played cards first), ``played`` a bit mask per seat,
    ``pending`` = (raise target, what a fold pays, raiser) with target 0 for none."""
    s[:] = 0
    ns = r[R_SEATS]
    s[EXTRA_SEATS] = ns - 2
    s[DEALER] = dealer
    for p in range(2):
        s[SCORE + p] = score[p]
        s[START + p] = start[p]
    s[VALUE] = value
    s[VIRA] = vira if r[R_VIRA] != 0 else -1
    s[MANILHA] = manilha_for(r, vira)
    for i in range(3):
        s[RLEAD + i] = rlead[i]
        s[RWIN + i] = rwin[i]
    s[NROUNDS] = nrounds
    for i in range(12):
        s[PCARD + i] = pcard[i] if i < pcard.shape[0] else -1
        s[PDOWN + i] = pdown[i] if i < pdown.shape[0] else 0
    s[CUR_LEADER] = cur_leader
    s[CUR_N] = cur_n
    for i in range(hands.shape[0]):
        s[HAND + i] = hands[i]
    for p in range(played.shape[0]):
        s[PLAYED + p] = played[p]
    s[PEND_TO] = pending[0]
    s[PEND_PREV] = pending[1]
    s[PEND_BY] = pending[2]
    s[LAST_RAISER] = last_raiser
    s[DECISION] = decision
    s[LOCKED] = locked
    s[WINNER] = winner
    s[ENV_BY] = -1
    s[ENV_WIN] = -1


@nb.njit(cache=True, inline="always")
def manilha_for(r, vira) -> int:
    """The manilha rank a vira names (-1 in rule sets without a vira: their manilhas are fixed cards)."""
    if r[R_VIRA] == 0:
        return -1
    return r[R_NEXT_RANK + (vira >> 2)]


@nb.njit(cache=True)
def envido_points(a, b, c, r) -> int:
    """Seed 004 §5: two cards of one suit score their values plus 20 (three of a suit: the best two);
    with no two of a suit, the highest single value. Values come from the rules' table."""
    return envido_rule(a, b, c, r[R_ENV_VAL + a], r[R_ENV_VAL + b], r[R_ENV_VAL + c])


@nb.njit(cache=True, inline="always")
def is_over(s) -> bool:
    return s[WINNER] >= 0


@nb.njit(cache=True)
def actor(s) -> int:
    """The player who must act now (-1 when the hand is over)."""
    if s[WINNER] >= 0:
        return -1
    if s[FLOR_TODO] != 0:  # flor holders announce first, mano first
        mano = 1 - s[DEALER]
        return mano if (s[FLOR_TODO] >> mano) & 1 else 1 - mano
    if s[DECISION] >= 0:
        return s[DECISION]
    if s[ENV_TO] != 0:  # an envido is answered first, even over a pending truco (seed 004 §8)
        return 1 - s[ENV_BY]
    ns = seats(s)
    if s[PEND_TO] != 0:  # "the next player, on the other side" answers
        return (s[PEND_BY] + 1) % ns
    return (s[CUR_LEADER] + s[CUR_N]) % ns


@nb.njit(cache=True, inline="always")
def plays_allowed(s) -> bool:
    """Whether the actor may play a card now (no decision, raise, envido or flor pending)."""
    return s[WINNER] < 0 and s[DECISION] < 0 and s[PEND_TO] == 0 and s[ENV_TO] == 0 and s[FLOR_TODO] == 0


@nb.njit(cache=True, inline="always")
def hide_allowed(s, r) -> bool:
    """Whether a card play now may be face down (the round rule only)."""
    return s[NROUNDS] >= r[R_FACEDOWN_FROM]


@nb.njit(cache=True, inline="always")
def _ladder_index(r, value) -> int:
    for i in range(r[R_NLADDER]):
        if r[R_LADDER + i] == value:
            return i
    return -1


@nb.njit(cache=True, inline="always")
def blind(s, r) -> bool:
    """Whether this hand is played blind (the house rules' iron hand at 11 x 11)."""
    t = r[R_TARGET] - 1
    return r[R_BLIND_IRON] != 0 and s[SCORE] == t and s[SCORE + 1] == t


@nb.njit(cache=True, inline="always")
def blind_card(s, p) -> int:
    """The card ``p`` flips next in a blind hand: the first unplayed one in dealt order."""
    for i in range(3):
        if (s[PLAYED + p] >> i) & 1 == 0:
            return s[HAND + 3 * p + i]
    return -1


@nb.njit(cache=True)
def next_raise_index(s, r, player) -> int:
    """Ladder index ``player`` may raise to now, or -1 (ignores whose turn it is)."""
    if s[LOCKED] != 0 or s[DECISION] >= 0 or s[ENV_TO] != 0 or s[FLOR_TODO] != 0:
        return -1
    if s[LAST_RAISER] >= 0 and side(s[LAST_RAISER]) == side(player):
        return -1  # only the side that accepted may raise next
    if s[PEND_TO] != 0 and r[R_RERAISE] == 0:
        return -1  # seed 004 §7: a truco is answered by quiero or no quiero; the accepter raises later
    cur = s[PEND_TO] if s[PEND_TO] != 0 else s[VALUE]
    if r[R_RAISE_TO_WIN] == 0 and s[SCORE + side(player)] + cur >= r[R_TARGET]:
        return -1  # seed 001: accepting the stake would already give the raiser the match
    i = _ladder_index(r, cur)
    if i < 0 or i + 1 >= r[R_NLADDER]:
        return -1
    return i + 1


@nb.njit(cache=True)
def envido_call_ok(s, r, player, action) -> int:
    """0 if ``player`` may sing ``action`` (envido, real envido, falta envido) now, else an error code.

    Seed 004 §5-6, §8: sung in the first trick by a player who has not played a card yet, before a truco
    is accepted (an envido may answer a pending truco: envido first); once per hand. A pending envido is
    raised by its answerer: envido cannot follow real envido, falta cannot be raised. Where the seed is
    silent, the standard calls bound the chain: at most two envidos and one real envido."""
    if r[R_ENVIDO] == 0:
        return E_ENVIDO_NOT_ALLOWED
    if s[FLOR_TODO] != 0:
        return E_FLOR_PENDING
    if s[ENV_TO] == 0:  # an opening call
        if s[ENV_OPEN] == 0 or s[NROUNDS] > 0 or s[PLAYED + player] != 0:
            return E_ENVIDO_NOT_ALLOWED
        return OK
    ne = s[ENV_CALLS]
    nr = s[ENV_CALLS + 1]
    nf = s[ENV_CALLS + 2]
    if nf > 0:
        return E_ENVIDO_NOT_ALLOWED
    if action == A_ENVIDO and (ne >= 2 or nr > 0):
        return E_ENVIDO_NOT_ALLOWED
    if action == A_REAL_ENVIDO and nr > 0:
        return E_ENVIDO_NOT_ALLOWED
    return OK


@nb.njit(cache=True, inline="always")
def falta_value(s, r) -> int:
    """Falta envido: the points the match leader still needs (seed 004 §5)."""
    return r[R_TARGET] - max(s[SCORE] + s[BONUS], s[SCORE + 1] + s[BONUS + 1])


@nb.njit(cache=True)
def _score_bonus(s, r, p, pts):
    """Envido or flor points are scored at once; reaching the target ends the match before the truco is
    scored (seed 004 §8)."""
    s[BONUS + p] += pts
    if s[SCORE + p] + s[BONUS + p] >= r[R_TARGET]:
        _finish(s, r, p, 0)


@nb.njit(cache=True)
def award(r, score0, score1, winner, points):
    """Scores after ``winner`` (0, 1 or DRAW) is awarded ``points``: the score caps at the target."""
    if winner == DRAW:
        return score0, score1
    t = r[R_TARGET]
    if winner == 0:
        return min(score0 + points, t), score1
    return score0, min(score1 + points, t)


@nb.njit(cache=True)
def _finish(s, r, winner, points):
    s[WINNER] = winner
    s[AWARDED] = points
    if s[BONUS] != 0 or s[BONUS + 1] != 0:  # envido and flor first; a match they end pays no truco
        t = r[R_TARGET]
        s[SCORE] = min(s[SCORE] + s[BONUS], t)
        s[SCORE + 1] = min(s[SCORE + 1] + s[BONUS + 1], t)
        if s[SCORE] >= t or s[SCORE + 1] >= t:
            points = 0
    before = s[SCORE + winner] if winner != DRAW else 0
    s[SCORE], s[SCORE + 1] = award(r, s[SCORE], s[SCORE + 1], winner, points)
    s[POINTS] = s[SCORE + winner] - before if winner != DRAW else 0


@nb.njit(cache=True)
def hand_result(rwin, nrounds, first_leader, all_tied_mode) -> int:
    """Winner fixed by the rounds so far (0/1/DRAW), or -1 if the hand goes on.

    Implements seed 000's table: two wins; a win plus a tie (either order);
    1-1 then a tie goes to the first non-tied round's winner; three ties go
    to the round-1 leader (or a draw under house rules).
    """
    w0 = 0
    w1 = 0
    ties = 0
    first = -1
    for i in range(nrounds):
        w = rwin[i]
        if w == TIE:
            ties += 1
        else:
            if first < 0:
                first = w
            if w == 0:
                w0 += 1
            else:
                w1 += 1
    if w0 >= 2:
        return 0
    if w1 >= 2:
        return 1
    if ties >= 1 and w0 != w1:
        return 0 if w0 > w1 else 1
    if nrounds == 3:
        if first >= 0:
            return first
        if all_tied_mode == ALL_TIED_DRAW:
            return DRAW
        return first_leader
    return -1


@nb.njit(cache=True)
def _resolve_round(s, r):
    k = s[NROUNDS]
    lead = s[CUR_LEADER]
    ns = seats(s)
    best = -2
    top = -1  # first seat, in play order, with the strongest card
    sides = 0  # bitmask of the sides holding the strongest card
    for j in range(ns):
        x = strength(s[PCARD + ns * k + j], s[PDOWN + ns * k + j], s[MANILHA], r)
        seat = (lead + j) % ns
        if x > best:
            best = x
            top = seat
            sides = 1 << side(seat)
        elif x == best:
            sides |= 1 << side(seat)
    # "two equal cards from the two sides tie the trick"; partners tying at the top still take it
    w = TIE if sides == 3 else side(top)
    s[RWIN + k] = w
    s[RLEAD + k] = lead
    s[NROUNDS] = k + 1
    s[CUR_N] = 0
    if w != TIE:
        s[CUR_LEADER] = top  # the strongest card leads next; after a tie the same seat leads again
    res = hand_result(s[RWIN : RWIN + 3], k + 1, side((s[DEALER] + 1) % ns), r[R_ALL_TIED])
    if res >= 0:
        _finish(s, r, res, s[VALUE])


@nb.njit(cache=True)
def check_action(s, r, player, action) -> int:
    """0 if ``player`` may take ``action`` now, else a stable error code."""
    if s[WINNER] >= 0:
        return E_HAND_ALREADY_DECIDED
    if player < 0 or player >= seats(s):
        return E_INVALID_PLAYER
    if player != actor(s):
        return E_ACT_OUT_OF_TURN
    if action < 0 or action >= N_ACTIONS_ALL:
        return E_UNKNOWN_ACTION
    if action == A_FLOR:
        if (s[FLOR_TODO] >> player) & 1 == 0:
            return E_ENVIDO_NOT_ALLOWED  # nothing to announce
        return OK
    if s[FLOR_TODO] != 0:
        return E_FLOR_PENDING
    if action >= A_ENVIDO:
        return envido_call_ok(s, r, player, action)
    if s[ENV_TO] != 0 and action != A_ACCEPT and action != A_FOLD:
        return E_ENVIDO_PENDING
    if action < A_RAISE:  # a card play
        if s[DECISION] >= 0:
            return E_DECISION_PENDING
        if s[PEND_TO] != 0:
            return E_RAISE_PENDING
        down = action >= A_DOWN
        card = action - A_DOWN if down else action - A_UP
        held = False
        for i in range(3):
            if s[HAND + 3 * player + i] == card and (s[PLAYED + player] >> i) & 1 == 0:
                held = True
        if not held:
            return E_CARD_NOT_IN_HAND
        if blind(s, r) and (down or card != blind_card(s, player)):
            return E_BLIND_PLAY
        if down and not hide_allowed(s, r):
            return E_HIDE_NOT_ALLOWED_IN_FIRST_ROUND
        return OK
    if action < A_ACCEPT:  # a raise
        nxt = next_raise_index(s, r, player)
        if nxt < 0:
            return E_RAISE_NOT_ALLOWED
        if action - A_RAISE + 1 != nxt:
            return E_INVALID_RAISE_TARGET
        return OK
    if action == A_ACCEPT or action == A_FOLD:
        if s[PEND_TO] == 0 and s[ENV_TO] == 0:
            return E_NO_PENDING_RAISE
        return OK
    if action == A_CONCEDE:
        if s[DECISION] >= 0:
            return E_DECISION_PENDING
        if r[R_DECK] != 0 and s[PEND_TO] != 0:
            return E_RAISE_PENDING  # seed 004 §7: a pending bid is declined, not folded
        return OK
    # accept_eleven / fold_eleven
    if s[DECISION] != player:
        return E_NO_PENDING_ELEVEN_DECISION
    return OK


@nb.njit(cache=True)
def apply_unchecked(s, r, action):
    """Apply a legal action for the current actor (no checks: hot path)."""
    p = actor(s)
    if action < A_RAISE:
        down = 1 if action >= A_DOWN else 0
        card = action - A_DOWN if down else action - A_UP
        for i in range(3):
            if s[HAND + 3 * p + i] == card:
                s[PLAYED + p] |= 1 << i
        k = s[NROUNDS]
        ns = seats(s)
        j = ns * k + s[CUR_N]
        s[PCARD + j] = card
        s[PDOWN + j] = down
        if s[CUR_N] < ns - 1:
            s[CUR_N] += 1
        else:
            _resolve_round(s, r)
    elif action < A_ACCEPT:
        to = r[R_LADDER + action - A_RAISE + 1]
        if s[PEND_TO] != 0:  # a re-raise accepts the pending offer
            s[PEND_PREV] = s[PEND_TO]
        else:
            s[PEND_PREV] = s[VALUE]
        s[PEND_TO] = to
        s[PEND_BY] = p
        s[LAST_RAISER] = p
    elif action >= A_ENVIDO:
        _apply_call(s, r, p, action)
    elif s[ENV_TO] != 0:  # quiero / no quiero to the pending envido
        _answer_envido(s, r, p, action == A_ACCEPT)
    elif action == A_ACCEPT:
        s[VALUE] = s[PEND_TO]
        s[PEND_TO] = 0
        s[ENV_OPEN] = 0  # seed 004 §8: accepting truco closes new envido betting
    elif action == A_FOLD:
        prev = s[PEND_PREV]
        s[PEND_TO] = 0
        _finish(s, r, 1 - side(p), prev)
    elif action == A_CONCEDE:
        if r[R_DECK] != 0:
            # seed 003: going to the deck in the first trick before the envido is sung costs one more
            extra = r[R_DECK_EXTRA] if s[NROUNDS] == 0 and s[ENV_OPEN] != 0 else 0
            _finish(s, r, 1 - side(p), s[VALUE] + extra)
        elif s[PEND_TO] != 0:
            prev = s[PEND_PREV]
            s[PEND_TO] = 0
            _finish(s, r, 1 - side(p), prev)
        else:
            _finish(s, r, 1 - side(p), s[VALUE])
    elif action == A_ACCEPT_ELEVEN:
        s[VALUE] = r[R_ELEVEN_VALUE]
        s[DECISION] = -1
    else:  # A_FOLD_ELEVEN
        s[DECISION] = -1
        _finish(s, r, 1 - side(p), r[R_ELEVEN_FOLD])


@nb.njit(cache=True)
def _apply_call(s, r, p, action):
    """Flor, or an envido call (opening or raising the pending one)."""
    if action == A_FLOR:
        s[FLOR_TODO] &= ~(1 << p)
        _score_bonus(s, r, p, r[R_FLOR])
        return
    if s[ENV_TO] == 0:
        s[ENV_PREV] = 1  # seed 004 §6: "no quiero" to an opening bid pays 1
        cur = 0
    else:
        s[ENV_PREV] = s[ENV_TO]  # after a raise, the previously accepted amount
        cur = s[ENV_TO]
    if action == A_ENVIDO:
        s[ENV_TO] = cur + 2
        s[ENV_CALLS] += 1
    elif action == A_REAL_ENVIDO:
        s[ENV_TO] = cur + 3
        s[ENV_CALLS + 1] += 1
    else:
        s[ENV_TO] = falta_value(s, r)
        s[ENV_CALLS + 2] += 1
    s[ENV_BY] = p


@nb.njit(cache=True)
def _answer_envido(s, r, p, accept):
    stake = s[ENV_TO]
    caller = s[ENV_BY]
    s[ENV_TO] = 0
    s[ENV_OPEN] = 0  # seed 004 §6: accepting or declining closes envido
    if accept:  # compare the dealt hands' envidos; mano wins a tie
        mano = 1 - s[DEALER]
        e0 = s[ENVP]
        e1 = s[ENVP + 1]
        w = 0 if e0 > e1 else 1 if e1 > e0 else mano
        s[ENV_SEEN] = 1
        s[ENV_WIN] = w
        _score_bonus(s, r, w, stake)
    else:
        s[ENV_WIN] = caller
        _score_bonus(s, r, caller, s[ENV_PREV])


@nb.njit(cache=True)
def apply_action(s, r, player, action) -> int:
    """Check then apply; returns 0 or an error code (state unchanged on error)."""
    err = check_action(s, r, player, action)
    if err == OK:
        apply_unchecked(s, r, action)
    return err


@nb.njit(cache=True)
def legal_actions(s, r, out, with_concede) -> int:
    """Write the current actor's legal action ids (ascending) to ``out``; return the count."""
    n = 0
    if s[WINNER] >= 0:
        return 0
    p = actor(s)
    if s[FLOR_TODO] != 0:
        out[0] = A_FLOR
        return 1
    if s[DECISION] >= 0:
        out[0] = A_ACCEPT_ELEVEN
        out[1] = A_FOLD_ELEVEN
        return 2
    if plays_allowed(s) and blind(s, r):
        out[n] = A_UP + blind_card(s, p)
        n += 1
    elif plays_allowed(s):
        # Card ids are not sorted by slot: collect, then sort the few entries.
        for i in range(3):
            if (s[PLAYED + p] >> i) & 1 == 0 and s[HAND + 3 * p + i] >= 0:
                out[n] = A_UP + s[HAND + 3 * p + i]
                n += 1
        if hide_allowed(s, r):
            m = n
            for i in range(m):
                out[n] = out[i] - A_UP + A_DOWN
                n += 1
        # insertion sort (at most 6 entries)
        for i in range(1, n):
            x = out[i]
            j = i - 1
            while j >= 0 and out[j] > x:
                out[j + 1] = out[j]
                j -= 1
            out[j + 1] = x
    nxt = next_raise_index(s, r, p)
    if nxt > 0:
        out[n] = A_RAISE + nxt - 1
        n += 1
    if s[PEND_TO] != 0 or s[ENV_TO] != 0:
        out[n] = A_ACCEPT
        out[n + 1] = A_FOLD
        n += 2
    if r[R_DECK] != 0:
        if s[PEND_TO] == 0 and s[ENV_TO] == 0:
            out[n] = A_CONCEDE  # going to the deck
            n += 1
    elif with_concede:
        out[n] = A_CONCEDE
        n += 1
    for a in range(A_ENVIDO, A_FALTA_ENVIDO + 1):
        if r[R_ENVIDO] != 0 and envido_call_ok(s, r, p, a) == OK:
            out[n] = a
            n += 1
    return n
