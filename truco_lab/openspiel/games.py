"""OpenSpiel games: ``truco_paulista`` (one hand) and ``truco_paulista_match``.

Registered on ``import truco_lab``. The rules run in the numba engine; these
classes only translate between OpenSpiel's API and the engine arrays, so
OpenSpiel algorithms and tools work on the exact seed-000 rules. Use them for
interop, tests and bots, not inside a solver's inner loop.
"""

from __future__ import annotations

from dataclasses import dataclass
from math import comb

import numpy as np
import pyspiel

from truco_lab.rules import engine as E
from truco_lab.rules.cards import A_CONCEDE, A_DOWN, A_RAISE, A_UP, N_CARDS
from truco_lab.rules.ruleset import ARGENTINO, PAULISTA, RuleSet, check_start, sees_own_cards, sees_partner

MAX_HAND_ACTIONS = 16  # eleven decision or 4 raises + 4 answers, 6 cards, 1 fold/concede
# Argentine hands add two flor announcements and up to four envido calls and their answer
MAX_HAND_ACTIONS_ENVIDO = MAX_HAND_ACTIONS + 7
ENVIDO_MAX = 33  # the highest envido (7 and 6 of a suit)


MAX_HAND_ACTIONS_TEAMS = MAX_HAND_ACTIONS + 6  # six more cards with four seats


def max_hand_actions(rules: RuleSet) -> int:
    if rules.seats == 4:
        return MAX_HAND_ACTIONS_TEAMS
    return MAX_HAND_ACTIONS_ENVIDO if (rules.envido or rules.flor) else MAX_HAND_ACTIONS


def max_hands(rules: RuleSet) -> int:
    """Every hand pays at least 1 point, so a match to ``t`` lasts at most 2(t-1)+1 hands (23 to 12)."""
    return 2 * (rules.target - 1) + 1

_PARAMS = {
    "dealer": 1,
    "score0": 0,
    "score1": 0,
    "strategic": True,
    "ranks": PAULISTA.ranks,
    "suits": PAULISTA.suits,
    "max_stake": 12,
    "rules": "paulista",
}
_ARG_PARAMS = {
    "dealer": 1,
    "score0": 0,
    "score1": 0,
    "flor": False,
    "target": ARGENTINO.target,
    "deck_penalty": False,
    "ranks": ARGENTINO.ranks,  # rank codes 1-7, S (10), C (11), R (12); "1 2 3 12" is accepted too
    "suits": ARGENTINO.suits,
    "max_stake": 4,
    "strategic": True,
}
_ARG_MATCH_PARAMS = {k: v for k, v in _ARG_PARAMS.items() if k not in ("dealer", "score0", "score1")}
_TEAM_PARAMS = {"dealer": 3, "score0": 0, "score1": 0, "strategic": True, "ranks": PAULISTA.ranks,
                "suits": PAULISTA.suits, "max_stake": 12}
_TEAM_MATCH_PARAMS = {k: v for k, v in _TEAM_PARAMS.items() if k not in ("dealer", "score0", "score1")}
_LEGAL_BUF = np.empty(E.MAX_LEGAL, np.int32)  # scratch; the jitted call holds the GIL
_COMB = [[comb(n, k) for k in range(4)] for n in range(41)]
_MATCH_PARAMS = {k: v for k, v in _PARAMS.items() if k not in ("dealer", "score0", "score1")}


def _game_type(short: str, long: str, params: dict, players: int = 2) -> pyspiel.GameType:
    return pyspiel.GameType(
        short_name=short,
        long_name=long,
        dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
        chance_mode=pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC,
        information=pyspiel.GameType.Information.IMPERFECT_INFORMATION,
        utility=pyspiel.GameType.Utility.ZERO_SUM,
        reward_model=pyspiel.GameType.RewardModel.TERMINAL,
        max_num_players=players,
        min_num_players=players,
        provides_information_state_string=True,
        provides_information_state_tensor=True,
        provides_observation_string=True,
        provides_observation_tensor=True,
        parameter_specification=params,
    )


HAND_GAME_TYPE = _game_type("truco_paulista", "Truco Paulista (one hand)", _PARAMS)
MATCH_GAME_TYPE = _game_type("truco_paulista_match", "Truco Paulista (match to 12)", _MATCH_PARAMS)
ARG_HAND_GAME_TYPE = _game_type("truco_argentino", "Truco Argentino (one hand, seed 004)", _ARG_PARAMS)
ARG_MATCH_GAME_TYPE = _game_type("truco_argentino_match", "Truco Argentino (match to 30, seed 004)",
                                 _ARG_MATCH_PARAMS)


TEAM_GAMES = {}  # short name -> (rule set name, match?)
for _rs in ("paulista", "mineiro"):
    for _match in (False, True):
        _name = f"truco_{_rs}_2v2" + ("_match" if _match else "")
        TEAM_GAMES[_name] = (_rs, _match)
TEAM_GAME_TYPES = {
    name: _game_type(name, f"Truco {rs.capitalize()} two against two ({'match to 12' if m else 'one hand'})",
                     _TEAM_MATCH_PARAMS if m else _TEAM_PARAMS, players=4)
    for name, (rs, m) in TEAM_GAMES.items()
}


def rules_from_params(params: dict) -> RuleSet:
    """RuleSet for the game parameters: ``rules`` (a named rule set, default paulista) on the deck
    ``ranks`` x ``suits`` with the ladder cut at ``max_stake``. The Argentine games name their rule set
    by their own parameters: ``flor``, ``target``, ``deck_penalty``."""
    name = f"{params['rules']}_2v2" if "seats" in params else ("argentino" if "flor" in params
                                                              else params.get("rules", "paulista"))
    extra = {"flor": bool(params["flor"]), "target": params["target"], "deck_penalty": bool(params["deck_penalty"])} \
        if "flor" in params else {}
    try:
        return RuleSet.from_options(name, ranks=params["ranks"], suits=params["suits"],
                                    max_stake=int(params["max_stake"]), **extra)
    except ValueError as e:  # the games' parameters are not CLI options: name them as parameters
        msg = str(e).replace("argument --ranks/--suits: ", "").replace("argument --max-stake: ", "max_stake must be ")
        raise ValueError(msg.replace("argument --target: an integer", "truco_argentino: target must be an integer")
                         ) from None


def openspiel_hand(rules: RuleSet, score0: int, score1: int, dealer: int) -> tuple[str, dict]:
    """The OpenSpiel hand game (name, params) of a heads-up rule set at a score."""
    base = {"score0": score0, "score1": score1, "dealer": dealer, "ranks": rules.ranks, "suits": rules.suits,
            "max_stake": rules.max_stake}
    if rules.pack == "spanish":
        return "truco_argentino", {**base, "flor": rules.flor, "target": rules.target,
                                   "deck_penalty": rules.deck_extra > 0}
    return "truco_paulista", {**base, "rules": rules.name}


def random_deal(rng: np.random.Generator, deck, size: int = 7) -> list[int]:
    """A deal as the games' chance nodes make it: each seat's three cards in increasing id, seat by seat,
    then the vira (``size``: :attr:`TrucoState.deal_size`)."""
    cards = [int(c) for c in rng.choice(np.asarray(deck), size, replace=False)]
    seats = size // 3
    hands = [sorted(cards[3 * i:3 * i + 3]) for i in range(seats)]
    return [c for h in hands for c in h] + cards[3 * seats:]


def _check_hand_params(p: dict, rules: RuleSet) -> None:
    check_start(rules, p["score0"], p["score1"], p["dealer"], f"{p.get('_name', 'truco_paulista')}: ")


@dataclass(frozen=True)
class _Config:
    """What a state needs of its game; plain data, because OpenSpiel pickles
    a Python state's ``__dict__`` to serialize it (a pickled game loses its
    Python attributes)."""

    rules: RuleSet
    rules_array: np.ndarray
    deck: np.ndarray
    strategic: bool
    match: bool
    deck_set: frozenset
    deck_list: tuple
    deal_size: int  # 7 with a vira, 6 without (Mineiro)

    def astr(self, action: int) -> str:
        """An action in this rule set's notation."""
        return self.rules.action_str(action)

    def cstr(self, card: int) -> str:
        """A card in this rule set's pack's notation."""
        return self.rules.card_str(card)

    def __deepcopy__(self, memo):  # immutable: states share it (cheap clones)
        return self


class _TrucoGameBase(pyspiel.Game):
    match = False
    _extra: dict = {}  # parameters fixed by the game's name (the two-against-two games: seats and rules)

    def __init__(self, game_type: pyspiel.GameType, defaults: dict, params: dict | None) -> None:
        p = dict(defaults)
        p.update(params or {})
        self.params = p
        self.rules = rules_from_params({**p, **type(self)._extra})
        if self.rules.pack == "spanish":
            p["ranks"] = self.rules.ranks  # canonical codes: game strings must round-trip (no commas)
        self.rules_array = self.rules.to_array()
        self.deck = self.rules.deck
        self.strategic = bool(p["strategic"])
        if not self.match:
            _check_hand_params(p, self.rules)
        hi = float(self.rules.target)
        info = pyspiel.GameInfo(
            num_distinct_actions=self.rules.n_actions,
            max_chance_outcomes=N_CARDS,
            num_players=self.rules.seats,
            min_utility=-1.0 if self.match else -hi,
            max_utility=1.0 if self.match else hi,
            utility_sum=0.0,
            max_game_length=(max_hands(self.rules) if self.match else 1) * (max_hand_actions(self.rules) + 7),
        )
        super().__init__(game_type, info, p)
        self.cfg = _Config(
            self.rules, self.rules_array, self.deck, self.strategic, self.match,
            frozenset(self.deck.tolist()), tuple(self.deck.tolist()), self.rules.deal_size,
        )

    def make_py_observer(self, iig_obs_type=None, params=None):
        if params:
            raise ValueError(f"truco observers take no parameters, got {params}")
        return TrucoObserver(self.cfg, iig_obs_type or pyspiel.IIGObservationType(perfect_recall=False))


class TrucoHandGame(_TrucoGameBase):
    """One hand of truco paulista at a given score and dealer."""

    def __init__(self, params: dict | None = None) -> None:
        super().__init__(HAND_GAME_TYPE, _PARAMS, params)

    def new_initial_state(self) -> TrucoState:
        p = self.params
        return TrucoState(self, int(p["dealer"]), int(p["score0"]), int(p["score1"]))


class TrucoMatchGame(_TrucoGameBase):
    """A whole match to 12: player 1 deals first, the deal alternates."""

    match = True

    def __init__(self, params: dict | None = None) -> None:
        super().__init__(MATCH_GAME_TYPE, _MATCH_PARAMS, params)

    def new_initial_state(self) -> TrucoState:
        return TrucoState(self, 1, 0, 0)


class ArgentinoHandGame(TrucoHandGame):
    """One hand of two-player Argentine truco (seed 004) at a given score and dealer."""

    def __init__(self, params: dict | None = None) -> None:
        _TrucoGameBase.__init__(self, ARG_HAND_GAME_TYPE, _ARG_PARAMS, params)


class ArgentinoMatchGame(TrucoMatchGame):
    """A whole Argentine match (to ``target``, 30 by default): player 1 deals first, the deal alternates."""

    def __init__(self, params: dict | None = None) -> None:
        _TrucoGameBase.__init__(self, ARG_MATCH_GAME_TYPE, _ARG_MATCH_PARAMS, params)


def _team_game(name: str):
    rs, match = TEAM_GAMES[name]
    defaults = _TEAM_MATCH_PARAMS if match else _TEAM_PARAMS

    class TeamGame(TrucoMatchGame if match else TrucoHandGame):
        _extra = {"seats": 4, "rules": rs}

        __doc__ = (f"Truco {rs} two against two (seed 003): partners facing, seats 0 and 2 against 1 and 3, "
                   + ("a whole match to 12; seat 3 deals first." if match else "one hand at a given score."))

        def __init__(self, params: dict | None = None) -> None:
            _TrucoGameBase.__init__(self, TEAM_GAME_TYPES[name], defaults, params)

        def new_initial_state(self) -> TrucoState:
            if match:
                return TrucoState(self, 3, 0, 0)
            p = self.params
            return TrucoState(self, int(p["dealer"]), int(p["score0"]), int(p["score1"]))

    TeamGame.__name__ = TeamGame.__qualname__ = "".join(w.capitalize() for w in name.split("_")) + "Game"
    return TeamGame


class TrucoState(pyspiel.State):
    """A hand (or match) in progress: dealing by chance, then engine play."""

    def __init__(self, game: _TrucoGameBase, dealer: int, score0: int, score1: int) -> None:
        super().__init__(game)
        self._g = game.cfg
        self.dealer = dealer
        self.start_score = (score0, score1)
        self.deal: list[int] = []
        self.s = np.zeros(E.STATE_SIZE, np.int32)
        self.hand_actions: list[tuple[int, int]] = []  # (player, action) this hand
        self.past: list[tuple[int, tuple[int, int], list[int], list[tuple[int, int]]]] = []  # finished hands
        self.match_winner = -1
        self._legal_cache: list[int] | None = None

    # ---- OpenSpiel API --------------------------------------------------
    def current_player(self) -> int:
        if self.match_winner >= 0 or (not self._g.match and len(self.deal) == self._g.deal_size
                                      and E.winner(self.s) >= 0):
            return pyspiel.PlayerId.TERMINAL
        if len(self.deal) < self._g.deal_size:
            return pyspiel.PlayerId.CHANCE
        return int(E.actor(self.s))

    def is_terminal(self) -> bool:
        return self.current_player() == pyspiel.PlayerId.TERMINAL

    def _legal_actions(self, player: int) -> list[int]:
        if self._legal_cache is None:
            n = E.legal_actions(self.s, self._g.rules_array, _LEGAL_BUF, not self._g.strategic)
            self._legal_cache = _LEGAL_BUF[:n].tolist()
        return self._legal_cache

    def chance_outcomes(self) -> list[tuple[int, float]]:
        k = len(self.deal)
        used = self.deal
        if k == 3 * self._g.rules.seats:  # the vira
            rest = [c for c in self._g.deck_list if c not in used]
            p = 1.0 / len(rest)
            return [(c, p) for c in rest]
        if not sees_own_cards(self._g.rules, self.start_score):
            # a blind hand is flipped in dealt order, so the order is dealt too: every card uniform
            rest = [c for c in self._g.deck_list if c not in used]
            return [(c, 1.0 / len(rest)) for c in rest]
        lo = used[-1] if k % 3 else -1  # each player's cards come in increasing id
        avail = [c for c in self._g.deck_list if c > lo and c not in used]
        m = 3 - k % 3  # cards this player still receives, this one included
        n = len(avail)
        total = _COMB[n][m]
        # P(next card = the i-th lowest available) = C(#above it, m - 1) / C(n, m)
        return [(c, _COMB[n - i - 1][m - 1] / total) for i, c in enumerate(avail[: n - m + 1])]

    def _apply_action(self, action: int) -> None:
        self._legal_cache = None
        if len(self.deal) < self._g.deal_size:
            k = len(self.deal)
            ordered = sees_own_cards(self._g.rules, self.start_score)
            if action in self.deal or action not in self._g.deck_set or (
                    ordered and k % 3 and k < 3 * self._g.rules.seats and action < self.deal[-1]):
                raise ValueError(
                    f"chance outcome {self._g.cstr(action)} is impossible here: each player's cards are dealt "
                    f"in increasing id, from the deck, without repeats (dealt so far: {self.deal})"
                )
            self.deal.append(int(action))
            if len(self.deal) == self._g.deal_size:
                m = 3 * self._g.rules.seats
                E.new_hand(
                    self.s, self._g.rules_array, self.dealer, self.start_score[0], self.start_score[1],
                    np.array(self.deal[:m], np.int32), self.deal[m] if self._g.deal_size > m else -1,
                )
                if not sees_own_cards(self._g.rules, self.start_score):
                    self._play_blind()
            return
        p = int(E.actor(self.s))
        a = int(action)
        # OpenSpiel's convention: an illegal action raises. The engine's check gives the truco-spec code.
        n_actions = self._g.rules.n_actions
        err = int(E.check_action(self.s, self._g.rules_array, p, a)) if 0 <= a < n_actions else E.E_UNKNOWN_ACTION
        if err == E.OK and self._g.strategic and a == A_CONCEDE and not self._g.rules.deck_action:
            err = E.E_UNKNOWN_ACTION  # strategic games have no concede_hand (going to the deck is a real action)
        if err != E.OK:
            from truco_lab.rules.state import TrucoError

            raise TrucoError(E.ERROR_NAMES[err], f"player {p} cannot take action {a} "
                             f"({self._g.astr(a) if 0 <= a < n_actions else 'unknown'}) now")
        E.apply_unchecked(self.s, self._g.rules_array, a)
        self.hand_actions.append((p, a))
        self._after_hand()

    def _after_hand(self) -> None:
        """In the match game, a finished hand moves the match on (next deal, or the match's end)."""
        if self._g.match and E.winner(self.s) >= 0:
            sc = (int(E.score(self.s, 0)), int(E.score(self.s, 1)))
            target = self._g.rules.target
            self.past.append((self.dealer, self.start_score, self.deal, self.hand_actions))
            if max(sc) >= target:
                self.match_winner = 0 if sc[0] >= target else 1
            else:
                self.dealer = (self.dealer + 1) % self._g.rules.seats  # the deal passes round the table
                self.start_score = sc
                self.deal = []
                self.hand_actions = []

    def _play_blind(self) -> None:
        """A blind hand (seed 001's iron hand) has no decisions: both players flip their cards in dealt
        order, so it is decided at the deal and no information state is ever asked for."""
        r = self._g.rules_array
        while E.winner(self.s) < 0:
            p = int(E.actor(self.s))
            a = A_UP + int(E.blind_card(self.s, p))
            E.apply_unchecked(self.s, r, a)
            self.hand_actions.append((p, a))
        self._after_hand()

    def _action_to_string(self, player: int, action: int) -> str:
        if player == pyspiel.PlayerId.CHANCE:
            return self._g.cstr(action)
        return self._g.astr(action)

    def returns(self) -> list[float]:
        ns = self._g.rules.seats
        if self._g.match:
            if self.match_winner < 0:
                return [0.0] * ns
            d = 1.0 if self.match_winner == 0 else -1.0
        elif len(self.deal) < self._g.deal_size or E.winner(self.s) < 0:
            return [0.0] * ns
        else:
            d = float(E.gain(self.s, 0) - E.gain(self.s, 1))  # envido and flor points included
        return [d if seat % 2 == 0 else -d for seat in range(ns)]  # partners share their side's result

    def __str__(self) -> str:
        parts = []
        for dealer, score, deal, acts in self.past:
            parts.append(_hand_str(self._g, dealer, score, deal, acts))
        parts.append(_hand_str(self._g, self.dealer, self.start_score, self.deal, self.hand_actions))
        return "\n".join(parts)

    @property
    def vira(self) -> int:
        """This hand's vira card id (-1 before it is dealt, and always in rule sets without a vira)."""
        m = 3 * self._g.rules.seats
        return self.deal[m] if len(self.deal) == m + 1 else -1

    @property
    def rules(self) -> RuleSet:
        """The game's rule set (deck and ladder included)."""
        return self._g.rules

    @property
    def deck_list(self) -> tuple:
        """The game's card ids, in increasing order."""
        return self._g.deck_list

    @property
    def deal_size(self) -> int:
        """Chance actions of a deal: three cards per seat, then the vira where one is turned."""
        return self._g.deal_size

    # ---- helpers for observers ---------------------------------------
    def hand_blocks(self):
        """(dealer, start score, deal, actions) for every hand so far, current last."""
        if self.match_winner >= 0:  # the last hand is already in `past`
            return list(self.past)
        return [*self.past, (self.dealer, self.start_score, self.deal, self.hand_actions)]


def _vira_str(g: _Config, deal) -> str:
    m = 3 * g.rules.seats
    if g.deal_size == m:
        return "none"
    return g.cstr(deal[m]) if len(deal) == m + 1 else "?"


def _hand_str(g: _Config, dealer, score, deal, acts) -> str:
    hands = " ".join(f"p{i} [{' '.join(g.cstr(c) for c in deal[3 * i:3 * i + 3])}]" for i in range(g.rules.seats))
    hist = ", ".join(f"p{p}:{g.astr(a)}" for p, a in acts)
    sc = f"{score[0]}-{score[1]}"
    if g.rules.pack == "spanish":
        from truco_lab.rules.spanish import score_str

        sc += f" ({score_str(score[0])} - {score_str(score[1])})"
    return f"dealer {dealer} score {sc} | {hands} vira {_vira_str(g, deal)} | {hist}"


def _public_action(g: _Config, player: int, action: int, viewer: int) -> str:
    if A_DOWN <= action < A_RAISE and player != viewer:
        return f"p{player}:play_face_down ??"
    return f"p{player}:{g.astr(action)}"


# ---- observation tensor layout -------------------------------------------
def _obs_pieces(rules: RuleSet) -> list[tuple[str, int]]:
    ns = rules.seats
    pieces = [
        ("player", ns),
        ("dealer", ns),
        ("score", 2 * (rules.target + 1)),
        ("vira", N_CARDS),
        ("hand", N_CARDS),  # cards still held (observation) or dealt (information state)
        ("value", 5),
        ("pending_to", 5),
        ("pending_by", ns),
        ("last_raiser", ns),
        ("decision", ns),
        ("rounds", 3 * (ns + 3 + ns * (N_CARDS + 1))),
    ]
    if ns == 4:
        pieces.append(("partner", N_CARDS))
    if rules.envido or rules.flor:
        pieces += [("envido_pending", 2 * (rules.target + 1)), ("envido_by", 2), ("envido_calls", 9),
                   ("bonus", 2 * (rules.target + 1)), ("envidos_shown", 2 * (ENVIDO_MAX + 1))]
    return pieces


def _act_width(rules: RuleSet) -> int:
    return rules.seats + rules.n_actions + 1  # actor, action, "hidden face-down card" flag


def _ladder_slot(rules: RuleSet, value: int) -> int:
    return rules.ladder.index(value)


def envidos_shown(state: TrucoState, acts, deal) -> str:
    """``" envidos:p0=33 p1=27"`` once an envido of this hand was accepted (both are compared in the open,
    seed 004 §6), else ``""``. Computed from the hand's public actions and its deal."""
    from truco_lab.rules.cards import A_ACCEPT, A_ENVIDO

    pending = False
    for _, a in acts:
        if a >= A_ENVIDO and a != A_ACCEPT:
            pending = a <= A_ENVIDO + 2
        elif pending and a == A_ACCEPT:
            from truco_lab.rules.spanish import envido_points

            return f" envidos:p0={envido_points(deal[0:3])} p1={envido_points(deal[3:6])}"
        else:
            pending = False
    return ""


class TrucoObserver:
    """Observer for every game here (PyObserver protocol).

    Never reveals the opponent's held cards or the identity of their face-down
    plays. With ``perfect_recall`` the information state adds the player's dealt
    cards and the public action history (of every hand, in the match game).
    Argentine games add the envido: what is pending, the points scored, and both
    players' envido points once an envido was accepted (compared in the open).
    """

    def __init__(self, game: _Config, iig_obs_type) -> None:
        self.game = game
        rules = game.rules
        self.perfect_recall = bool(iig_obs_type.perfect_recall)
        self.private = iig_obs_type.private_info == pyspiel.PrivateInfoType.SINGLE_PLAYER
        self.public = bool(iig_obs_type.public_info)
        self.envido = rules.envido or rules.flor
        self.sw = rules.target + 1  # score one-hot width per player
        pieces = _obs_pieces(rules)
        if self.perfect_recall:
            nh = max_hands(rules) if game.match else 1
            extra = [("shown", 2 * (ENVIDO_MAX + 1))] if self.envido else []
            if rules.seats == 4:
                extra.append(("partner", N_CARDS))
            ns = rules.seats
            pieces = [("player", ns)] + [
                (f"h{i}_{name}", size) for i in range(nh) for name, size in
                [("dealer", ns), ("score", 2 * self.sw), ("vira", N_CARDS), ("dealt", N_CARDS),
                 ("history", max_hand_actions(rules) * _act_width(rules)), *extra]
            ]
        total = sum(n for _, n in pieces)
        self.tensor = np.zeros(total, np.float32)
        self.dict = {}
        i = 0
        for name, n in pieces:
            self.dict[name] = self.tensor[i : i + n]
            i += n

    def set_from(self, state: TrucoState, player: int) -> None:
        t = self.tensor
        t.fill(0)
        d = self.dict
        sw = self.sw
        d["player"][player] = 1
        rules = self.game.rules
        ns = rules.seats
        if self.perfect_recall:
            na = rules.n_actions
            for i, (dealer, score, deal, acts) in enumerate(state.hand_blocks()):
                d[f"h{i}_dealer"][dealer] = 1
                d[f"h{i}_score"][score[0]] = 1
                d[f"h{i}_score"][sw + score[1]] = 1
                m = 3 * ns
                if len(deal) == m + 1 and self.game.deal_size == m + 1 and self.public:
                    d[f"h{i}_vira"][deal[m]] = 1
                if self.private and sees_own_cards(rules, score):
                    for c in deal[3 * player : 3 * player + 3]:
                        d[f"h{i}_dealt"][c] = 1
                if self.private and sees_partner(rules, score, player):
                    q = (player + 2) % ns
                    for c in deal[3 * q : 3 * q + 3]:
                        d[f"h{i}_partner"][c] = 1
                h = d[f"h{i}_history"].reshape(max_hand_actions(rules), _act_width(rules))
                for j, (p, a) in enumerate(acts):
                    h[j, p] = 1
                    if A_DOWN <= a < A_RAISE and p != player:
                        h[j, ns + na] = 1
                    else:
                        h[j, ns + a] = 1
                if self.envido and self.public and envidos_shown(state, acts, deal):
                    from truco_lab.rules.spanish import envido_points

                    d[f"h{i}_shown"][envido_points(deal[0:3])] = 1
                    d[f"h{i}_shown"][ENVIDO_MAX + 1 + envido_points(deal[3:6])] = 1
            return
        s = state.s
        sc = state.start_score
        d["dealer"][state.dealer] = 1
        d["score"][sc[0]] = 1
        d["score"][sw + sc[1]] = 1
        sees = sees_own_cards(rules, sc)
        if len(state.deal) < self.game.deal_size:
            if self.private and sees:
                for c in state.deal[3 * player : 3 * player + 3]:
                    d["hand"][c] = 1
            return
        if rules.vira:
            d["vira"][E.vira(s)] = 1
        if self.private and sees:
            for i in range(3):
                c = E.held_card(s, player, i)
                if c >= 0:
                    d["hand"][c] = 1
        if self.private and sees_partner(rules, sc, player):
            for i in range(3):
                c = E.held_card(s, (player + 2) % ns, i)
                if c >= 0:
                    d["partner"][c] = 1
        d["value"][_ladder_slot(rules, int(E.value(s)))] = 1
        if E.pending_to(s):
            d["pending_to"][_ladder_slot(rules, int(E.pending_to(s)))] = 1
            d["pending_by"][E.pending_by(s)] = 1
        if E.last_raiser(s) >= 0:
            d["last_raiser"][E.last_raiser(s)] = 1
        if E.eleven_decider(s) >= 0:
            d["decision"][E.eleven_decider(s)] = 1
        if self.envido:
            if E.envido_pending(s):
                d["envido_pending"][min(int(E.envido_pending(s)), rules.target)] = 1
                d["envido_by"][E.envido_by(s)] = 1
            for k in range(3):
                d["envido_calls"][3 * k + min(int(E.envido_calls(s, k)), 2)] = 1
            for p in range(2):
                d["bonus"][p * sw + min(int(E.bonus(s, p)), rules.target)] = 1
            if E.envido_seen(s) and self.public:
                d["envidos_shown"][int(E.envido_of(s, 0))] = 1
                d["envidos_shown"][ENVIDO_MAX + 1 + int(E.envido_of(s, 1))] = 1
        rounds = d["rounds"].reshape(3, ns + 3 + ns * (N_CARDS + 1))
        for k in range(min(3, int(E.nrounds(s)) + 1)):
            done = k < E.nrounds(s)
            lead = int(E.round_leader(s, k))
            rounds[k, lead] = 1
            if done:
                rounds[k, ns + int(E.round_winner(s, k))] = 1
            nplays = ns if done else int(E.round_plays(s))
            for j in range(nplays):
                c = int(E.play_card(s, ns * k + j))
                who = (lead + j) % ns
                base = ns + 3 + j * (N_CARDS + 1)
                if E.play_down(s, ns * k + j):
                    rounds[k, base + N_CARDS] = 1
                    if who == player and self.private:
                        rounds[k, base + c] = 1
                else:
                    rounds[k, base + c] = 1

    def string_from(self, state: TrucoState, player: int) -> str:
        if self.perfect_recall:
            out = [f"p{player}"]
            for dealer, score, deal, acts in state.hand_blocks():
                mine = " ".join(self.game.cstr(c) for c in deal[3 * player : 3 * player + 3]) \
                    if self.private and sees_own_cards(self.game.rules, score) else "blind" if self.private else ""
                if self.private and sees_partner(self.game.rules, score, player):
                    q = (player + 2) % self.game.rules.seats
                    mine += " partner:" + " ".join(self.game.cstr(c) for c in deal[3 * q : 3 * q + 3])
                hist = " ".join(_public_action(self.game, p, a, player) for p, a in acts)
                shown = envidos_shown(state, acts, deal) if self.envido and self.public else ""
                out.append(f"[d{dealer} {score[0]}-{score[1]} hand:{mine} vira:{_vira_str(self.game, deal)} | "
                           f"{hist}{shown}]")
            return " ".join(out)
        s = state.s
        sc = state.start_score
        parts = [f"p{player} d{state.dealer} {sc[0]}-{sc[1]}"]
        sees = sees_own_cards(self.game.rules, sc)
        if len(state.deal) < self.game.deal_size:
            if self.private and sees:
                parts.append("dealt:" + " ".join(self.game.cstr(c) for c in state.deal[3 * player : 3 * player + 3]))
            return " ".join(parts)
        if self.private and not sees:
            parts.append("hand:blind")
        elif self.private:
            held = [int(c) for c in (E.held_card(s, player, i) for i in range(3)) if c >= 0]
            parts.append("hand:" + " ".join(self.game.cstr(c) for c in sorted(held)))
            if sees_partner(self.game.rules, sc, player):
                q = (player + 2) % self.game.rules.seats
                held = [int(c) for c in (E.held_card(s, q, i) for i in range(3)) if c >= 0]
                parts.append("partner:" + " ".join(self.game.cstr(c) for c in sorted(held)))
        vira = self.game.cstr(int(E.vira(s))) if self.game.rules.vira else "none"
        parts.append(f"vira:{vira} value:{int(E.value(s))}")
        if E.pending_to(s):
            parts.append(f"pending:p{int(E.pending_by(s))}->{int(E.pending_to(s))}")
        if E.last_raiser(s) >= 0:
            parts.append(f"last_raiser:p{int(E.last_raiser(s))}")
        if E.eleven_decider(s) >= 0:
            parts.append(f"eleven:p{int(E.eleven_decider(s))}")
        if self.envido:
            if E.envido_pending(s):
                parts.append(f"envido:p{int(E.envido_by(s))}->{int(E.envido_pending(s))}")
            calls = [int(E.envido_calls(s, k)) for k in range(3)]
            if any(calls):
                parts.append("sung:E{}R{}F{}".format(*calls))
            if E.bonus(s, 0) or E.bonus(s, 1):
                parts.append(f"bonus:{int(E.bonus(s, 0))}-{int(E.bonus(s, 1))}")
            if E.envido_seen(s) and self.public:
                parts.append(f"envidos:p0={int(E.envido_of(s, 0))} p1={int(E.envido_of(s, 1))}")
        ns = self.game.rules.seats
        for k in range(min(3, int(E.nrounds(s)) + 1)):
            done = k < E.nrounds(s)
            lead = int(E.round_leader(s, k))
            cards = []
            for j in range(ns if done else int(E.round_plays(s))):
                who = (lead + j) % ns
                c = int(E.play_card(s, ns * k + j))
                if E.play_down(s, ns * k + j):
                    cards.append(f"p{who}:v{self.game.cstr(c)}" if who == player and self.private else f"p{who}:v??")
                else:
                    cards.append(f"p{who}:{self.game.cstr(c)}")
            res = ""
            if done:
                w = int(E.round_winner(s, k))
                res = "=tie" if w == E.TIE else f"=p{w}"
            parts.append(f"r{k + 1}[{' '.join(cards)}]{res}")
        return " ".join(parts)


pyspiel.register_game(HAND_GAME_TYPE, TrucoHandGame)
pyspiel.register_game(MATCH_GAME_TYPE, TrucoMatchGame)
pyspiel.register_game(ARG_HAND_GAME_TYPE, ArgentinoHandGame)
pyspiel.register_game(ARG_MATCH_GAME_TYPE, ArgentinoMatchGame)
for _name in TEAM_GAMES:
    pyspiel.register_game(TEAM_GAME_TYPES[_name], _team_game(_name))

__all__ = ["ArgentinoHandGame", "ArgentinoMatchGame", "TrucoHandGame", "TrucoMatchGame", "TrucoObserver",
           "TrucoState", "rules_from_params"]
