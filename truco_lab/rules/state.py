"""Python face of the engine: :class:`HandState`, truco-spec JSON, errors.

A ``HandState`` owns one int32 engine array (see ``truco_lab.rules.engine``) plus
the string ids of the cards, so states loaded from truco-spec JSON export
back with the same ids. Everything rule-related is delegated to the engine.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from truco_lab.rules import engine as E
from truco_lab.rules.cards import (
    A_DOWN,
    A_UP,
    RANKS,
    SUIT_NAMES,
    card_str,
    parse_action,
    raise_action,
)
from truco_lab.rules.ruleset import PAULISTA, RuleSet, check_start


class TrucoError(ValueError):
    """A rejected action or state, carrying a stable truco-spec error ``code``."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code


def _invalid(message: str) -> TrucoError:
    return TrucoError("INVALID_INITIAL_STATE", message)


def card_json(cid: int, sid: str | None = None) -> dict:
    d = {"rank": RANKS[cid >> 2], "suit": SUIT_NAMES[cid & 3]}
    return d if sid is None else {"id": sid, **d}


def card_from_json(obj: Any, where: str) -> int:
    try:
        rank, suit = obj["rank"], obj["suit"]
        return 4 * RANKS.index(rank) + SUIT_NAMES.index(suit)
    except (KeyError, TypeError, ValueError):
        raise _invalid(f"{where}: expected a card like {{'rank': '7', 'suit': 'CLUBS'}}, got {obj!r}") from None


class HandState:
    """One hand of truco: deal, act, inspect, serialize.

    >>> h = HandState.new(hands=("3d Qs 5c", "4s 7h Ac"), vira="4c")
    >>> h.legal_action_strings()[:2]
    ['play_face_up 5c', 'play_face_up Qs']
    """

    def __init__(self, s: np.ndarray, rules: RuleSet = PAULISTA, ids: dict[int, str] | None = None) -> None:
        self.s = s
        self.rules = rules
        self._r = rules.to_array()
        self.ids: dict[int, str] = ids if ids is not None else {}
        if ids is None:
            for p in range(rules.seats):
                for i in range(3):
                    c = int(E.dealt_card(s, p, i))
                    if c >= 0:
                        self.ids[c] = f"p{p}c{i}"

    # ---- construction -------------------------------------------------
    @classmethod
    def new(
        cls,
        hands: tuple[str | list[str], ...],
        vira: str | None = None,
        dealer: int = 1,
        score: tuple[int, int] = (0, 0),
        rules: RuleSet = PAULISTA,
    ) -> HandState:
        """Deal a hand from card literals (each seat's three cards, then the vira; no vira in rule sets that
        turn none, such as Mineiro). Two against two (``rules=PAULISTA_2V2`` or ``MINEIRO_2V2``) takes four
        hands, seats 0 and 2 against 1 and 3; ``score`` is then the sides' and ``dealer`` a seat 0..3."""
        if not isinstance(score, (tuple, list)) or len(score) != 2:
            raise ValueError(f"score must be two integers (side 0's, side 1's), got {score!r}")
        check_start(rules, score[0], score[1], dealer)
        if not isinstance(hands, (tuple, list)) or len(hands) != rules.seats:
            raise ValueError(f"rule set {rules.name!r} deals {rules.seats} hands, got "
                             f"{len(hands) if isinstance(hands, (tuple, list)) else hands!r}")
        dealt = [rules.parse_cards(h) for h in hands]
        for p, h in enumerate(dealt):
            if len(h) != 3:
                raise ValueError(f"player {p} must be dealt 3 cards, got {len(h)}: {hands[p]!r}")
        if rules.vira and vira is None:
            raise ValueError(f"rule set {rules.name!r} turns a vira: pass vira='...' (e.g. '4c')")
        if not rules.vira and vira is not None:
            raise ValueError(f"rule set {rules.name!r} turns no vira (its manilhas are fixed), got vira={vira!r}")
        cards = rules.parse_cards([rules.card_str(c) for h in dealt for c in h] + ([vira] if rules.vira else []))
        deck = set(rules.deck.tolist())
        for c in cards:
            if c not in deck:
                raise ValueError(f"card {rules.card_str(c)!r} is not in the deck of ranks={rules.ranks!r}, suits={rules.suits!r}")
        s = np.zeros(E.STATE_SIZE, np.int32)
        m = 3 * rules.seats
        E.new_hand(s, rules.to_array(), dealer, int(score[0]), int(score[1]), np.array(cards[:m], np.int32),
                   cards[m] if rules.vira else -1)
        return cls(s, rules)

    def copy(self) -> HandState:
        return HandState(self.s.copy(), self.rules, dict(self.ids))

    # ---- queries ------------------------------------------------------
    @property
    def actor(self) -> int | None:
        """Player to act now, or None when the hand is over."""
        a = int(E.actor(self.s))
        return None if a < 0 else a

    @property
    def is_over(self) -> bool:
        return bool(E.winner(self.s) >= 0)

    @property
    def winner(self) -> int | None:
        w = int(E.winner(self.s))
        return w if w in (0, 1) else None

    @property
    def score(self) -> tuple[int, int]:
        return int(E.score(self.s, 0)), int(E.score(self.s, 1))

    @property
    def hand_value(self) -> int:
        return int(E.value(self.s))

    @property
    def points(self) -> int:
        """Points the winner scored (after the cap); 0 while live."""
        return int(E.points(self.s))

    def returns(self) -> list[float]:
        """Points won/lost by each player (zero-sum, after the cap): each player's points this hand minus
        the opponent's (envido and flor included in Argentine truco)."""
        if not self.is_over:
            return [0.0] * self.rules.seats
        d = float(E.gain(self.s, 0) - E.gain(self.s, 1))
        return [d if p % 2 == 0 else -d for p in range(self.rules.seats)]  # partners share their side's

    @property
    def gains(self) -> tuple[int, int]:
        """Points each player scored this hand so far (envido and flor at once, truco when it ends)."""
        return int(E.gain(self.s, 0)), int(E.gain(self.s, 1))

    def envido(self, player: int) -> int:
        """``player``'s envido points (seed 004 §5), from the dealt cards."""
        return int(E.envido_of(self.s, player))

    def hand(self, player: int) -> list[int]:
        """Cards ``player`` still holds (ids)."""
        out = []
        for i in range(3):
            c = int(E.held_card(self.s, player, i))
            if c >= 0:
                out.append(c)
        return out

    def legal_actions(self, with_concede: bool = True) -> list[int]:
        buf = np.empty(E.MAX_LEGAL, np.int32)
        n = E.legal_actions(self.s, self._r, buf, with_concede)
        return buf[:n].tolist()

    def legal_action_strings(self, with_concede: bool = True) -> list[str]:
        return [self.action_str(a) for a in self.legal_actions(with_concede)]

    def action_str(self, action: int) -> str:
        """An action id in this rule set's notation (Mineiro's raises are ``raise 4`` .. ``raise 12``)."""
        try:
            return self.rules.action_str(action)
        except ValueError:
            return f"action {action}"

    def _action_id(self, action) -> int:
        if isinstance(action, str):
            return self.rules.parse_action(action)
        if isinstance(action, bool) or not isinstance(action, (int, np.integer)):
            raise ValueError(f"action must be an action id (int) or notation (str, e.g. 'raise 3'), got {action!r}")
        return int(action)

    def check(self, action: int | str, player: int | None = None) -> str | None:
        """The truco-spec error code ``action`` would get, or None if legal."""
        a = self._action_id(action)
        p = self.actor if player is None else player
        if p is None:
            return "HAND_ALREADY_DECIDED"
        err = int(E.check_action(self.s, self._r, p, a))
        return None if err == E.OK else E.ERROR_NAMES[err]

    def apply(self, action: int | str, player: int | None = None) -> HandState:
        """Apply an action (id or notation) for ``player`` (default: the actor).

        Raises :class:`TrucoError` with the truco-spec code when it is illegal.
        """
        a = self._action_id(action)
        p = self.actor if player is None else player
        if p is None:
            raise TrucoError("HAND_ALREADY_DECIDED", f"the hand is over; cannot apply {self.action_str(a)!r}")
        err = int(E.apply_action(self.s, self._r, p, a))
        if err != E.OK:
            raise TrucoError(E.ERROR_NAMES[err], f"player {p} cannot {self.action_str(a)!r} now")
        return self

    # ---- truco-spec JSON ----------------------------------------------
    def _sid(self, cid: int) -> str:
        if cid not in self.ids:
            self.ids[cid] = f"x{card_str(cid)}"
        return self.ids[cid]

    def _play_json(self, rnd: int, k: int, leader: int, private: bool) -> dict | None:
        x = int(E.seats(self.s)) * rnd + k  # the play's index in the hand (four seats play four per round)
        c = int(E.play_card(self.s, x))
        down = bool(E.play_down(self.s, x))
        player = int(E.play_owner(self.s, x))
        d: dict[str, Any] = {"player": player, "visibility": "down" if down else "up"}
        if private:
            if c < 0:
                return None
            d["card"] = card_json(c, self._sid(c))
        elif not down:
            d["card"] = card_json(c)
        return d

    def _rounds_json(self, private: bool) -> list[dict]:
        out = []
        for i in range(int(E.nrounds(self.s))):
            w = int(E.round_winner(self.s, i))
            lead = int(E.round_leader(self.s, i))
            d: dict[str, Any] = {"leader": lead, "winner": None if w == E.TIE else w}
            if private:
                plays = [self._play_json(i, k, lead, True) for k in range(int(E.seats(self.s)))]
                if all(p is not None for p in plays):
                    d["plays"] = plays
            out.append(d)
        return out

    def _current_json(self, private: bool) -> dict:
        k = int(E.nrounds(self.s))
        lead = int(E.round_leader(self.s, k))
        plays = []
        if k < 3:
            for j in range(int(E.round_play_count(self.s))):
                plays.append(self._play_json(k, j, lead, private))
        return {"leader": lead, "plays": plays}

    def _pending_json(self) -> tuple[dict | None, dict | None]:
        s = self.s
        pr = None
        if E.pending_to(s) != 0:
            pr = {"raised_by": int(E.pending_by(s)), "to": int(E.pending_to(s)),
                  "previous_value": int(E.pending_previous(s))}
        pd = None
        if E.eleven_decider(s) >= 0:
            pd = {"type": "mao_de_onze", "player": int(E.eleven_decider(s))}
        return pr, pd

    @property
    def match_winner(self) -> int | None:
        for p in range(2):
            if self.score[p] >= self.rules.target:
                return p
        return None

    def public_state(self) -> dict:
        """The truco-spec normalized public state (hides face-down cards)."""
        pr, pd = self._pending_json()
        sc = self.score
        return {
            "next_player": self.actor,
            "hand_value": self.hand_value,
            "hand_winner": self.winner,
            "match_winner": self.match_winner,
            "score": {"0": sc[0], "1": sc[1]},
            "completed_rounds": self._rounds_json(False),
            "current_round": self._current_json(False),
            "pending_raise": pr,
            "pending_decision": pd,
        }

    def to_json(self) -> dict:
        """The exact private state as truco-spec ``game-state`` JSON."""
        if self.rules.pack != "french" or self.rules.seats != 2:
            raise ValueError(f"the truco-spec game-state JSON describes heads-up French-pack rule sets; rule set "
                             f"{self.rules.name!r} has no JSON form yet (use repr, or the OpenSpiel game's "
                             "serialize())")
        pr, pd = self._pending_json()
        sc = self.score
        lr = int(E.last_raiser(self.s))
        return {
            "dealer": int(E.dealer(self.s)),
            "next_player": self.actor,
            "score": {"0": sc[0], "1": sc[1]},
            "hand_value": self.hand_value,
            "turnup": card_json(int(E.vira(self.s))) if self.rules.vira else None,
            "hands": {str(p): [card_json(c, self._sid(c)) for c in self.hand(p)] for p in range(2)},
            "completed_rounds": self._rounds_json(True),
            "current_round": self._current_json(True),
            "last_raised_by": None if lr < 0 else lr,
            "pending_raise": pr,
            "pending_decision": pd,
        }

    def export(self) -> dict:
        """The state with its outcome (truco-spec match-state ``engineState``)."""
        return {"state": self.to_json(), "hand_winner": self.winner, "match_winner": self.match_winner}

    @classmethod
    def load(cls, obj: dict, rules: RuleSet = PAULISTA, *, start_score: tuple[int, int] | None = None) -> HandState:
        """Load truco-spec ``game-state`` JSON (or an ``engineState`` wrapper).

        Rejects impossible states with :class:`TrucoError` (``INVALID_INITIAL_STATE``
        or ``HAND_ALREADY_DECIDED``) and a message naming the inconsistency; any malformed value is a
        ``TrucoError`` too. The hand's starting score (what ``gains`` and returns count from) is the score
        of a live hand; a finished hand's JSON holds the score after the award, so its start is inferred
        (``start_score=`` gives it where the award was capped at the target).
        """
        try:
            if isinstance(obj, dict) and "state" in obj and "hand_winner" in obj:
                return _load(obj["state"], rules, obj.get("hand_winner"), start_score)
            return _load(obj, rules, None, start_score)
        except TrucoError:
            raise
        except (AttributeError, KeyError, TypeError, ValueError, IndexError) as e:  # a value of the wrong shape
            raise _invalid(f"malformed game state ({type(e).__name__}: {e})") from None

    def action_from_json(self, action: dict, player: int) -> int:
        """truco-spec action object -> action id (card ids resolved for ``player``)."""
        t = action.get("type") if isinstance(action, dict) else None
        if t in ("play_face_up", "play_face_down"):
            sid = action.get("card_id")
            by_sid = {v: k for k, v in self.ids.items()}
            if sid not in by_sid:
                raise TrucoError("CARD_NOT_IN_HAND", f"no card with id {sid!r} in this hand")
            return (A_UP if t == "play_face_up" else A_DOWN) + by_sid[sid]
        if t == "raise":
            return raise_action(action.get("to"), self.rules.raise_targets)
        return parse_action(str(t), self.rules.raise_targets)

    def __repr__(self) -> str:
        hands = " | ".join(" ".join(self.rules.card_str(c) for c in self.hand(p)) for p in range(self.rules.seats))
        return (
            f"HandState(vira={card_str(int(E.vira(self.s))) if self.rules.vira else None}, hands=[{hands}], "
            f"value={self.hand_value}, "
            f"score={self.score}, actor={self.actor}, winner={self.winner})"
        )


@dataclass
class _Parts:
    """A game-state JSON's values, checked one rule at a time, as :func:`engine.restore` writes them."""

    rules: RuleSet
    r: np.ndarray
    dealer: int = 0
    score: tuple[int, int] = (0, 0)
    live: bool = True
    value: int = 1
    vira: int = -1
    rlead: np.ndarray = field(default_factory=lambda: np.zeros(3, np.int32))
    rwin: np.ndarray = field(default_factory=lambda: np.zeros(3, np.int32))
    nrounds: int = 0
    pcard: np.ndarray = field(default_factory=lambda: np.full(6, -1, np.int32))
    pdown: np.ndarray = field(default_factory=lambda: np.zeros(6, np.int32))
    cur_leader: int = 0
    cur_n: int = 0
    hands: np.ndarray = field(default_factory=lambda: np.full(6, -1, np.int32))
    played_mask: np.ndarray = field(default_factory=lambda: np.zeros(2, np.int32))
    pending: np.ndarray = field(default_factory=lambda: np.zeros(3, np.int32))
    last_raiser: int = -1
    decision: int = -1
    locked: int = 0
    decided: int = -1
    ids: dict = field(default_factory=dict)
    owner: dict = field(default_factory=dict)
    seen_sid: dict = field(default_factory=dict)
    played: list = field(default_factory=lambda: [[], []])

    def note(self, c: int, sid: str, where: str, player: int) -> None:
        """Record card ``c`` (JSON id ``sid``) for ``player``; refuse a card seen twice or outside the deck."""
        if c in self.owner and self.owner[c] != player:
            raise _invalid(f"{where}: {card_str(c)} (id {sid!r}) is held by both players")
        self.owner[c] = player
        if c not in set(self.rules.deck.tolist()):
            raise _invalid(f"{where}: {card_str(c)} is not in this deck")
        if sid in self.seen_sid and self.seen_sid[sid] != c:
            raise _invalid(f"{where}: card id {sid!r} names two different cards")
        if c in self.ids and self.ids[c] != sid:
            raise _invalid(f"{where}: {card_str(c)} appears twice (ids {self.ids[c]!r} and {sid!r})")
        if c == self.vira:
            raise _invalid(f"{where}: {card_str(c)} is the turnup")
        self.seen_sid[sid] = c
        self.ids[c] = sid


def _load(d: dict, rules: RuleSet, hand_winner: int | None, start_score=None) -> HandState:
    if rules.seats != 2 or rules.pack != "french":
        raise _invalid(f"the truco-spec game-state JSON is a heads-up French-pack hand; rule set {rules.name!r} "
                       f"({rules.seats} seats, {rules.pack} pack) has no JSON form")
    if not isinstance(d, dict):
        raise _invalid(f"a game state must be a JSON object, got {type(d).__name__}")
    req = ["dealer", "next_player", "score", "hand_value", "turnup", "hands", "completed_rounds", "current_round",
           "pending_raise"]
    missing = [k for k in req if k not in d]
    if missing:
        raise _invalid(f"missing field(s) {missing}")
    f = _Parts(rules, rules.to_array())
    _load_header(d, f)
    _load_rounds(d, f)
    _load_hands(d, f)
    _load_raises(d, f)
    winner = -1
    if not f.live:
        winner = f.decided if f.decided >= 0 else hand_winner
        if winner not in (0, 1, E.DRAW):
            raise _invalid("next_player is null but the rounds do not decide the hand and no hand_winner is given")
    start = _start_score(f, winner, d["pending_raise"], start_score)
    s = np.zeros(E.STATE_SIZE, np.int32)
    E.restore(s, f.r, f.dealer, np.array(f.score, np.int32), np.array(start, np.int32), f.value, f.vira, f.rlead,
              f.rwin, f.nrounds, f.pcard, f.pdown, f.cur_leader, f.cur_n, f.hands, f.played_mask, f.pending,
              f.last_raiser, f.decision, f.locked, winner)
    st = HandState(s, rules, f.ids)
    if f.live and st.actor != d["next_player"]:
        raise _invalid(f"next_player is {d['next_player']}, but the state says player {st.actor} acts next")
    return st


def _start_score(f: _Parts, winner: int, pending, given) -> tuple[int, int]:
    """The scores when the hand started: a live hand's scores have not moved yet; a finished hand's JSON holds
    the scores after the award, so its winner's start is the hand's value less (``given`` overrides: the JSON
    cannot tell a capped award, 12 from 9 or 10 with a hand worth 3, nor a fold after a re-raise, whose
    raise is no longer pending)."""
    if given is not None:
        a, b = (int(x) for x in given)
        return a, b
    if f.live or winner not in (0, 1):
        return f.score
    paid = f.value
    if pending is not None and isinstance(pending, dict) and "previous_value" in pending:
        paid = int(pending["previous_value"])
    start = list(f.score)
    start[winner] = max(0, start[winner] - paid)
    return start[0], start[1]


def _load_header(d: dict, f: _Parts) -> None:
    rules = f.rules
    if d["dealer"] not in (0, 1) or isinstance(d["dealer"], bool):
        raise _invalid(f"dealer must be 0 or 1, got {d['dealer']!r}")
    f.dealer = d["dealer"]
    try:
        f.score = (int(d["score"]["0"]), int(d["score"]["1"]))
    except (KeyError, TypeError, ValueError):
        raise _invalid(f"score must be {{'0': int, '1': int}}, got {d['score']!r}") from None
    f.live = d["next_player"] is not None
    target = rules.target
    if any(not 0 <= x <= target for x in f.score):
        raise _invalid(f"scores must be in 0..{target}, got {f.score}")
    if f.live and max(f.score) >= target:
        raise _invalid(f"a live hand cannot exist: a player already has {max(f.score)} >= {target} points")
    if d["hand_value"] not in rules.ladder:
        raise _invalid(f"hand_value must be a ladder value {list(rules.ladder)}, got {d['hand_value']!r}")
    f.value = d["hand_value"]
    if rules.vira:
        f.vira = card_from_json(d["turnup"], "turnup")
        if f.vira not in set(rules.deck.tolist()):
            raise _invalid(f"turnup {card_str(f.vira)} is not in this deck")
    elif d["turnup"] is not None:
        raise _invalid(f"rule set {rules.name!r} turns no vira: turnup must be null, got {d['turnup']!r}")


def _card_id(cj, c: int) -> str:
    return cj.get("id", f"x{card_str(c)}") if isinstance(cj, dict) else f"x{card_str(c)}"


def _load_rounds(d: dict, f: _Parts) -> None:
    """Completed rounds (each agreeing with its cards) and the current one; plays before hands, so a card
    both played and (redundantly) listed in hand is one card."""
    r = f.r
    completed, cur = d["completed_rounds"], d["current_round"]
    if not isinstance(completed, list) or len(completed) > 3:
        raise _invalid("completed_rounds must be a list of at most 3 rounds")
    f.nrounds = nr = len(completed)
    manilha = E.manilha_for(r, f.vira)
    first_leader = 1 - f.dealer
    expect = first_leader
    for i, rd in enumerate(completed):
        if not isinstance(rd, dict):
            raise _invalid(f"completed round {i + 1} must be an object, got {rd!r}")
        lead, win = rd.get("leader"), rd.get("winner")
        if lead not in (0, 1) or win not in (0, 1, None):
            raise _invalid(f"completed round {i + 1}: leader must be 0/1 and winner 0/1/null, got {rd!r}")
        if lead != expect:
            why = "the dealer cannot lead round 1" if i == 0 else \
                "a round is led by the previous round's winner (its leader after a tie)"
            raise _invalid(f"completed round {i + 1} is led by player {lead}, expected {expect}: {why}")
        f.rlead[i], f.rwin[i] = lead, E.TIE if win is None else win
        expect = lead if win is None else win
        plays = rd.get("plays")
        if plays and (not isinstance(plays, list) or len(plays) != 2):
            raise _invalid(f"completed round {i + 1}: plays must be the leader's then the follower's")
        for k in range(2):
            p = lead if k == 0 else 1 - lead
            if plays:
                f.pcard[2 * i + k], f.pdown[2 * i + k] = _play(plays[k], p, i, f, f"round {i + 1}")
            f.played[p].append(int(f.pcard[2 * i + k]))
        if plays:  # a recorded round must agree with its cards
            a = E.strength(f.pcard[2 * i], f.pdown[2 * i], manilha, r)
            b = E.strength(f.pcard[2 * i + 1], f.pdown[2 * i + 1], manilha, r)
            if (E.TIE if a == b else (lead if a > b else 1 - lead)) != f.rwin[i]:
                raise _invalid(f"completed round {i + 1}: the cards played do not give winner {win!r}")
    f.decided = int(E.hand_result(f.rwin, nr, first_leader, E.rule_all_tied(r)))
    if f.live and (f.decided >= 0 or nr >= 3):
        raise TrucoError("HAND_ALREADY_DECIDED", f"the completed rounds {completed} already decide the hand, but "
                                                 f"next_player is {d['next_player']}")
    if not isinstance(cur, dict) or cur.get("leader") not in (0, 1) or not isinstance(cur.get("plays"), list):
        raise _invalid(f"current_round must be {{'leader': 0|1, 'plays': [...]}}, got {cur!r}")
    if cur["leader"] != expect:
        raise _invalid(f"current_round is led by player {cur['leader']}, but the round history says {expect}")
    if len(cur["plays"]) > 1:
        raise _invalid("the current round can hold at most one play (a full round is resolved at once)")
    f.cur_leader, f.cur_n = expect, len(cur["plays"])
    for k, pl in enumerate(cur["plays"]):
        if nr >= 3:
            raise _invalid("a current round after three completed rounds")
        f.pcard[2 * nr + k], f.pdown[2 * nr + k] = _play(pl, expect, nr, f, "current round")
        f.played[expect].append(int(f.pcard[2 * nr + k]))


def _play(pl, player: int, rnd: int, f: _Parts, where: str) -> tuple[int, int]:
    """(card, face down) of one play object by ``player`` in round ``rnd`` (0-based), checked."""
    if not isinstance(pl, dict) or pl.get("player") != player:
        raise _invalid(f"{where}: the plays must be the leader's then the follower's (player {player} here), "
                       f"got {pl!r}")
    c = card_from_json(pl.get("card"), f"{where} play")
    f.note(c, _card_id(pl.get("card"), c), where, player)
    down = pl.get("visibility") == "down"
    if down and rnd < f.rules.face_down_from_round - 1:
        raise _invalid(f"{where}: face-down plays are not allowed before round {f.rules.face_down_from_round}")
    return c, int(down)


def _load_hands(d: dict, f: _Parts) -> None:
    hands = d["hands"]
    if not isinstance(hands, dict):
        raise _invalid(f"hands must be an object {{'0': [...], '1': [...]}}, got {hands!r}")
    for p in range(2):
        held = []
        listed = hands.get(str(p), [])
        if not isinstance(listed, list):
            raise _invalid(f"hands[{p}] must be a list of cards, got {listed!r}")
        for cj in listed:
            c = card_from_json(cj, f"hands[{p}]")
            sid = _card_id(cj, c)
            if c in f.played[p] and f.ids.get(c) == sid:
                continue  # the played card also listed in hand: same physical card
            f.note(c, sid, f"hands[{p}]", p)
            held.append(c)
        if len(held) + len(f.played[p]) != 3:
            raise _invalid(f"player {p} holds {len(held)} card(s) after playing {len(f.played[p])}: a hand deals "
                           "exactly 3")
        f.hands[3 * p:3 * p + 3] = f.played[p] + held
        f.played_mask[p] = (1 << len(f.played[p])) - 1


def _load_raises(d: dict, f: _Parts) -> None:
    """The pending raise, the last raiser and the hand of eleven, each against the ladder and the score."""
    rules, value = f.rules, f.value
    eleven = rules.target - 1
    on11 = [p for p in range(2) if f.score[p] == eleven and rules.mao_de_onze]
    pr, pdec, lr = d["pending_raise"], d.get("pending_decision"), d.get("last_raised_by")
    if lr not in (0, 1, None):
        raise _invalid(f"last_raised_by must be 0, 1 or null, got {lr!r}")
    f.last_raiser = -1 if lr is None else lr
    if pr is not None:
        try:
            by, to, prev = pr["raised_by"], pr["to"], pr["previous_value"]
        except (KeyError, TypeError):
            raise _invalid(f"pending_raise must have raised_by, to, previous_value, got {pr!r}") from None
        lad = list(rules.ladder)
        if by not in (0, 1) or prev not in lad or lad.index(prev) + 1 >= len(lad) or lad[lad.index(prev) + 1] != to:
            raise _invalid(f"pending_raise {pr!r} is not one rung up the ladder {lad}")
        if prev < value:
            raise _invalid(f"pending_raise previous_value {prev} is below the accepted hand value {value}")
        if lr is not None and lr != by:
            raise _invalid(f"last_raised_by {lr} disagrees with the pending raise by {by}")
        f.pending[:] = (to, prev, by)
        f.last_raiser = by
    f.locked = int(len(rules.ladder) <= 1)
    if f.live:  # a finished hand's JSON carries the score after the award: these checks are for live hands
        _check_eleven(f, on11, pdec, pr, lr)
    if pr is not None and pdec is not None:
        raise _invalid("a pending raise and a pending mão de onze decision cannot coexist")


def _check_eleven(f: _Parts, on11: list[int], pdec, pr, lr) -> None:
    rules, value, eleven = f.rules, f.value, f.rules.target - 1
    if len(on11) == 2:
        f.locked = 1
        if value != rules.eleven_eleven_value:
            raise _invalid(f"at {eleven} x {eleven} the hand is worth {rules.eleven_eleven_value}, got hand_value {value}")
        if pdec is not None:
            raise _invalid(f"at {eleven} x {eleven} there is no mão de onze decision")
    elif len(on11) == 1:
        f.locked = 1
        p11 = on11[0]
        if pdec is not None:
            if not isinstance(pdec, dict) or pdec.get("type") != "mao_de_onze" or pdec.get("player") != p11:
                raise _invalid(f"the mão de onze decision belongs to player {p11} (on {eleven}), got {pdec!r}")
            if value != 1 or f.nrounds or f.cur_n:
                raise _invalid("a pending mão de onze decision comes before any card, at hand value 1")
            f.decision = p11
        elif value != rules.eleven_value:
            raise _invalid(f"a mão de onze hand is worth {rules.eleven_value} once accepted; at {value} the decision "
                           "must be pending")
    elif pdec is not None:
        raise _invalid(f"a mão de onze decision needs exactly one player on {eleven}, scores are {f.score}")
    if f.locked and (pr is not None or (lr is not None and len(rules.ladder) > 1)):
        raise _invalid("raises are locked in this hand (a player is on 11), yet a raise is recorded")
    if not f.locked and value > 1 and pr is None and lr is None:
        raise _invalid(f"hand_value {value} means someone raised, but last_raised_by is null")
