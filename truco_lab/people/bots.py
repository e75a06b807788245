"""Bots: players for ``truco_paulista`` / ``truco_paulista_match`` states.

A :class:`Bot` answers ``probabilities(state)`` (action -> probability) and
``act(state)`` (an action sampled with the bot's own seeded generator). Every
bot is also an OpenSpiel policy (:meth:`BotBase.as_policy`), so OpenSpiel's
tools (``exploitability``, ``expected_game_score``) run on it.

* ``random``: uniform over the legal actions.
* ``heuristic-low`` / ``heuristic-high``: hand-strength players in the spirit
  of seeds 001 and 004. Low looks only at its own three cards against the vira;
  high also counts the cards already seen (its own, the vira, every card played
  face up) and estimates, over the unseen cards, the chance of winning the hand
  from the tricks already played; it bluffs with hopeless hands, respects the
  raise ladder and kills tricks with a tie when its last card wins.
* ``solved``: the certified strategy of a match run (:class:`SolvedBot`).
* a best response to any of them in one cell: :func:`truco_lab.people.arena.best_response_bot`.

Heuristics read the state only through :func:`view_of` (the player's information:
what a human at the table knows), so the same decision can be asked at a
solved tree's information sets (:mod:`truco_lab.people.arena`).
"""

from __future__ import annotations

import itertools
import sys
from dataclasses import dataclass, replace
from typing import Protocol, runtime_checkable

import numpy as np

from truco_lab.people.strategy import Strategy
from truco_lab.rules import engine as E
from truco_lab.rules.cards import A_ACCEPT, A_ACCEPT_ELEVEN, A_CONCEDE, A_FOLD, A_FOLD_ELEVEN, A_RAISE, A_UP
from truco_lab.rules.ruleset import PAULISTA, RuleSet, sees_partner


@runtime_checkable
class Bot(Protocol):
    """A player: ``act(state) -> action`` for the player to move at an OpenSpiel truco state."""

    name: str

    def act(self, state) -> int: ...

    def probabilities(self, state) -> dict[int, float]: ...


@dataclass(frozen=True)
class View:
    """What the player to act knows (their information state), in plain numbers."""

    player: int
    dealt: tuple[int, ...]  # own three cards
    held: tuple[int, ...]  # own cards not played yet
    vira: int  # -1 in rule sets without a vira
    manilha: int  # the manilha rank index (-1 without a vira: then ``fixed`` holds the manilhas)
    deck: tuple[int, ...]
    seen: frozenset  # cards whose identity the player knows
    rounds: tuple[int, ...]  # completed rounds' winners (0, 1, or E.TIE)
    led: int  # the card to beat in this round (-1: we lead, -2: led face down)
    value: int  # accepted hand value
    pending_to: int  # raise we must answer (0: none)
    eleven: bool  # we owe the mão de onze decision
    score: tuple[int, int]  # (ours, theirs) at the start of the hand
    legal: tuple[int, ...]
    fixed: tuple[int, ...] = ()  # fixed manilhas, weakest first (rule sets without a vira)
    raise_targets: tuple[int, ...] = (3, 6, 9, 12)
    first_leader: int = 0  # the side that led round 1 (three tied rounds go to it under seed 000)
    all_tied_mode: int = 0  # the rules' all-tied mode, as the engine reads it (house rules: a draw)
    seats: int = 2  # four: two against two, partners facing (seats p and p + 2 are one side)
    partner: int = -1  # two against two: the partner's face-up card in this round (-1: none yet)
    partner_cards: tuple[int, ...] = ()  # two against two, a side on eleven: the partner's cards (seed 003)
    on_table: int = -1  # our own card in this round when we act again in it (answering a raise): -2 face down

    @property
    def side(self) -> int:
        """The player's side: rounds, scores and results are the side's (heads-up: the player)."""
        return self.player & 1

    def power(self, card: int) -> int:
        """Trick strength of ``card`` played face up (the engine's ``strength``)."""
        return int(_powers(self.manilha, self.fixed)[card])


_POWER_CACHE: dict[tuple, np.ndarray] = {}


def _powers(manilha: int, fixed: tuple[int, ...] = ()) -> np.ndarray:
    """Face-up strength of every card id under a manilha rank, or with fixed manilhas (from the
    engine's ``strength``)."""
    key = (manilha, fixed)
    pw = _POWER_CACHE.get(key)
    if pw is None:
        r = E.strength_rules(fixed)
        pw = _POWER_CACHE[key] = np.array([E.strength(c, 0, manilha, r) for c in range(40)], np.int32)
    return pw


def view_of(s: np.ndarray, deck, legal, rules: RuleSet = PAULISTA) -> View:
    """The acting player's view of engine state ``s`` (``deck``: the game's card ids); two against two too."""
    p = int(E.actor(s))
    ns = int(E.seats(s))
    me = int(E.side(p))
    held = tuple(int(E.held_card(s, p, i)) for i in range(3) if E.held_card(s, p, i) >= 0)
    manilha, fixed = int(E.manilha(s)), rules.fixed_manilha_ids()
    pw = _powers(manilha, fixed)
    own_played, others_up = [], []
    nr = int(E.nrounds(s))
    led, partner, best, on_table = -1, -1, -1, -1
    for x in range(int(E.nplays(s))):
        c = int(E.play_card(s, x))
        q = int(E.play_owner(s, x))
        down = bool(E.play_down(s, x))
        if q == p:
            own_played.append(c)
        elif not down and c >= 0:
            others_up.append(c)
        if x < ns * nr:
            continue
        if q == p:  # we played in this round already and answer a raise before it ends
            on_table = -2 if down else c
            continue
        if int(E.side(q)) == me:  # (two against two) the partner's card in this round
            partner = c if not down else partner
        elif down:
            led = -2 if led == -1 else led  # anything face up beats a face-down card
        elif pw[c] > best:
            led, best = c, int(pw[c])  # the strongest opposing card is the one to beat
    dealt = held + tuple(own_played)
    mate = ()
    if ns == 4 and sees_partner(rules, (int(E.score(s, 0)), int(E.score(s, 1))), p):
        q = (p + 2) % ns
        mate = tuple(int(E.dealt_card(s, q, i)) for i in range(3))
    vira = int(E.vira(s))
    return View(
        player=p, dealt=dealt, held=held, vira=vira, manilha=manilha, deck=tuple(int(c) for c in deck),
        seen=frozenset((*dealt, *([vira] if vira >= 0 else []), *others_up, *mate)),
        rounds=tuple(int(E.round_winner(s, k)) for k in range(nr)), led=led, value=int(E.value(s)),
        pending_to=int(E.pending_to(s)) if int(E.side(int(E.pending_by(s)))) != me else 0,
        eleven=int(E.eleven_decider(s)) == p, score=(int(E.score(s, me)), int(E.score(s, 1 - me))),
        legal=tuple(int(a) for a in legal), fixed=fixed, raise_targets=rules.raise_targets,
        first_leader=int(E.side(int(E.round_leader(s, 0)))), all_tied_mode=int(E.rule_all_tied(rules.to_array())),
        seats=ns, partner=partner, partner_cards=mate, on_table=on_table,
    )


# ---- hand strength -----------------------------------------------------------------------------
def card_strength(v: View, card: int, pool=None) -> float:
    """Probability that ``card`` beats a random card of ``pool`` (default: the deck minus the
    vira and the card), ties counting half."""
    pw = _powers(v.manilha, v.fixed)
    pool = [c for c in v.deck if c != card and c != v.vira] if pool is None else pool
    if not len(pool):
        return 1.0
    other = pw[np.asarray(pool)]
    me = pw[card]
    return float(((other < me).sum() + 0.5 * (other == me).sum()) / len(pool))


def hand_strength(v: View) -> float:
    """Low level: the mean strength of the three dealt cards against the vira (0..1)."""
    return float(np.mean([card_strength(v, c) for c in v.dealt]))


def win_probability(v: View) -> float:
    """High level: the chance of winning the hand from here, treating each remaining trick as our
    card (strongest first) against a random unseen card, with the seed's trick rules."""
    unseen = [c for c in v.deck if c not in v.seen]
    rounds = list(v.rounds)
    mine = sorted(v.held, key=v.power, reverse=True)
    probs = []
    pu = _powers(v.manilha, v.fixed)[np.asarray(unseen, np.int64)]
    if v.on_table != -1:
        # our card of this round is on the table already (we answer a raise before the round ends)
        pm = -1 if v.on_table == -2 else v.power(v.on_table)
        probs.append(_trick(v, pm, pu) if v.led == -1 else _known(pm, 0 if v.led == -2 else v.power(v.led)))
    elif v.led != -1 and mine:
        # this trick is against a known card (or a face-down one, which anything face up beats)
        best = max(mine, key=v.power)
        probs.append(_known(v.power(best), 0 if v.led == -2 else v.power(v.led)))
        mine = [c for c in mine if c != best]
    for c in mine:
        probs.append(_trick(v, v.power(c), pu))
    me, opp = v.side, 1 - v.side
    total = 0.0
    for outcome in itertools.product(range(3), repeat=len(probs)):
        pr = 1.0
        rw = list(rounds)
        for k, o in enumerate(outcome):
            pr *= probs[k][o]
            rw.append(me if o == 0 else E.TIE if o == 1 else opp)
        if pr == 0.0:
            continue
        arr = np.array(rw + [0] * (3 - len(rw)), np.int32)
        res = -1
        for n in range(len(rounds) + 1, len(rw) + 1):
            res = int(E.hand_result(arr, n, v.first_leader, v.all_tied_mode))
            if res >= 0:
                break
        if res == me:
            total += pr
        elif res == -1 or res == E.DRAW:
            total += 0.5 * pr
    return total


def _known(mine: int, theirs: int) -> tuple[float, float, float]:
    return (1.0, 0.0, 0.0) if mine > theirs else (0.0, 1.0, 0.0) if mine == theirs else (0.0, 0.0, 1.0)


def _trick(v: View, mine: int, pu: np.ndarray) -> tuple[float, float, float]:
    """(win, tie, loss) of a trick we play with a card of power ``mine`` against random unseen cards."""
    if not len(pu):
        return 0.5, 0.0, 0.5
    return _team_trick(mine, pu) if v.seats == 4 else _duel_trick(mine, pu)


def _duel_trick(mine: int, pu: np.ndarray) -> tuple[float, float, float]:
    """(win, tie, loss) of a card of power ``mine`` against one random card of powers ``pu``."""
    w = float((pu < mine).mean())
    t = float((pu == mine).mean())
    return w, t, 1.0 - w - t


def _team_trick(mine: int, pu: np.ndarray) -> tuple[float, float, float]:
    """Two against two: (win, tie, loss) of the side whose best card is the better of ``mine`` and the
    partner's, against the better of the two opponents' (all three random cards of powers ``pu``, drawn
    independently: a heuristic's approximation)."""
    levels = np.union1d(pu, [mine])
    f = np.array([(pu <= m).mean() for m in levels])  # P(a random card <= level)
    f_below = np.concatenate([[0.0], f[:-1]])
    ours = np.where(levels >= mine, f, 0.0)  # P(max(mine, partner) <= level)
    ours_below = np.concatenate([[0.0], ours[:-1]])
    p_ours = ours - ours_below
    win = float((p_ours * f_below**2).sum())
    tie = float((p_ours * (f**2 - f_below**2)).sum())
    return win, tie, max(0.0, 1.0 - win - tie)


# ---- the heuristic policy -----------------------------------------------------------------------
# strength needed to accept a raise to the ladder's first, second, ... rung (paulista 3, 6, 9, 12; mineiro
# 4, 8, 10, 12): by rung, so a ladder that starts higher is not answered as if it were at its top
_ACCEPT_BARS = (0.55, 0.65, 0.72, 0.8)


def heuristic_probabilities(v: View, level: str) -> dict[int, float]:
    """Action probabilities of the heuristic player at ``v`` (``level``: "low" or "high")."""
    legal = set(v.legal)
    x = hand_strength(v) if level == "low" else win_probability(v)
    out: dict[int, float] = {}
    if v.eleven:
        if v.partner_cards:  # two against two: the side plays the better of its two hands
            mate = replace(v, dealt=v.partner_cards, held=v.partner_cards, player=(v.player + 2) % 4)
            x = max(x, hand_strength(mate) if level == "low" else win_probability(mate))
        return {A_ACCEPT_ELEVEN: 1.0} if x >= (0.6 if level == "low" else 0.55) else {A_FOLD_ELEVEN: 1.0}
    raises = [a for a in legal if A_RAISE <= a < A_ACCEPT]
    if v.pending_to:
        rung = v.raise_targets.index(v.pending_to) if v.pending_to in v.raise_targets else len(_ACCEPT_BARS) - 1
        bar = _ACCEPT_BARS[min(rung, len(_ACCEPT_BARS) - 1)]
        if v.seats == 4:
            # two against two the side's chances are averaged over the partner's unseen hand, so they sit near
            # one half: answer by pot odds (folding loses the stake, accepting risks the raise) plus a margin
            bar = (1 - v.value / v.pending_to) / 2 + (0.2 if level == "low" else 0.1)
        if level == "high" and rung >= 1:
            bar += 0.05  # respect the raise ladder: a re-raise is rarely a bluff
        if raises and x >= bar + 0.2:
            return {raises[0]: 1.0}
        return {A_ACCEPT: 1.0} if x >= bar else {A_FOLD: 1.0}
    if raises:
        # truco from strength or total weakness (high only bluffs, and only the first raise)
        first = v.value < v.raise_targets[0]  # nobody raised yet
        if x >= 0.75 and (first or x >= 0.85):
            out[raises[0]] = 0.9 if level == "low" else 1.0
        elif level == "high" and x < 0.15 and first:
            out[raises[0]] = 0.35
    rest = 1.0 - sum(out.values())
    if rest > 0:
        out[_card_play(v, level)] = rest
    return out


def _card_play(v: View, level: str) -> int:
    cards = sorted(v.held, key=v.power)  # weakest first
    up = [c for c in cards if A_UP + c in v.legal]
    if not up:
        return next(a for a in v.legal if a < A_RAISE)
    if v.partner >= 0 and (v.led == -2 or (v.led >= 0 and v.power(v.partner) > v.power(v.led))):
        return A_UP + up[0]  # two against two: the partner holds the trick, so keep the strength
    if v.led != -1:
        beat = 0 if v.led == -2 else v.power(v.led)
        winners = [c for c in up if v.power(c) > beat]
        if winners:
            return A_UP + winners[0]  # the cheapest card that wins the trick
        if level == "high":
            ties = [c for c in up if v.power(c) == beat]
            rest = [c for c in up if c not in ties]
            # use ties on purpose: kill the trick when what is left wins the next one
            if ties and rest and card_strength(v, rest[-1]) >= 0.85:
                return A_UP + ties[0]
        return A_UP + up[0]
    won = sum(1 for w in v.rounds if w == v.side)
    if not v.rounds or won == 0:
        return A_UP + up[-1]  # the first trick is the hand: lead strength
    return A_UP + up[0]  # ahead: dump the weakest, keep the winner


# ---- bots ------------------------------------------------------------------------------------------
class BotBase:
    """Sampling and OpenSpiel-policy plumbing shared by every bot."""

    name = "bot"

    def __init__(self, seed: int | None = 0) -> None:
        self.rng = np.random.default_rng(seed)

    def probabilities(self, state) -> dict[int, float]:
        raise NotImplementedError

    def act(self, state) -> int:
        probs = self.probabilities(state)
        acts = list(probs)
        p = np.array([probs[a] for a in acts], np.float64)
        return int(acts[int(self.rng.choice(len(acts), p=p / p.sum()))])

    def as_policy(self, game):
        """This bot as an ``open_spiel.python.policy.Policy`` for both players."""
        from open_spiel.python import policy as osp

        bot = self

        class _BotPolicy(osp.Policy):
            def __init__(self) -> None:
                super().__init__(game, [0, 1])

            def action_probabilities(self, state, player_id=None):
                return bot.probabilities(state)

        return _BotPolicy()


class RandomBot(BotBase):
    name = "random"

    def probabilities(self, state) -> dict[int, float]:
        # the strategic game's actions: conceding (offered at the table) is dominated, and no bot takes it
        legal = [a for a in state.legal_actions() if a != A_CONCEDE] or state.legal_actions()
        return {a: 1.0 / len(legal) for a in legal}


class HeuristicBot(BotBase):
    """The heuristic player (``level`` "low" or "high")."""

    def __init__(self, level: str = "high", seed: int | None = 0) -> None:
        if level not in ("low", "high"):
            raise ValueError(f"heuristic level must be 'low' or 'high', got {level!r}")
        super().__init__(seed)
        self.level = level
        self.name = f"heuristic-{level}"

    def probabilities(self, state) -> dict[int, float]:
        if state.rules.pack == "spanish":  # Argentine truco: its own view and levels (seed 004 §9)
            from truco_lab.people.argentine import arg_view, argentine_probabilities

            return argentine_probabilities(arg_view(state), self.level)
        return self.probabilities_at(view_of(state.s, state.deck_list, state.legal_actions(), state.rules))

    def probabilities_at(self, v: View) -> dict[int, float]:
        return heuristic_probabilities(v, self.level)


class SolvedBot(BotBase):
    """Samples a match run's certified strategy. In a cell the run has not solved it plays
    ``fallback`` there and says so once per cell (through ``notify``), never silently."""

    name = "solved"

    def __init__(self, strategy: Strategy, fallback: BotBase | None = None, seed: int | None = 0, notify=None) -> None:
        super().__init__(seed)
        self.strategy = strategy
        self.fallback = fallback or HeuristicBot("high", seed)
        self.notify = notify if notify is not None else (lambda msg: print(msg, file=sys.stderr))
        self.missing: set[tuple[int, int, int]] = set()
        self.decisions = 0
        self.fallback_decisions = 0
        self.off_tree = 0


    def covers(self, state) -> bool:
        """Whether the run solved the cell of ``state``'s hand."""
        return self.strategy.covers(state)

    def probabilities(self, state) -> dict[int, float]:
        self.decisions += 1
        if self.covers(state):
            try:
                return self.strategy.action_probabilities(state)
            except KeyError as e:
                # the opponent took an action the solved tree prunes (dominated): the solution never
                # meets this state, so the fallback finishes the hand
                if not self.off_tree:
                    self.notify(f"solved bot: {str(e).strip(chr(39))} after the opponent's dominated move; "
                                f"{self.fallback.name} finishes such hands (counted in off_tree)")
                self.off_tree += 1
                return self.fallback.probabilities(state)
        cell = (state.start_score[0], state.start_score[1], state.dealer)
        if cell not in self.missing:
            self.missing.add(cell)
            a, b, d = cell
            self.notify(f"solved bot: cell {a}x{b} dealer {d} is not solved in {self.strategy.out}; playing "
                        f"{self.fallback.name} there (solve it: truco-lab match --cells {min(a, b)},{max(a, b)} "
                        f"--out {self.strategy.out}-more {self.strategy.rules.cli_options()})".rstrip())
        self.fallback_decisions += 1
        return self.fallback.probabilities(state)
