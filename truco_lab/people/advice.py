"""What the solution says at a decision: its probabilities, each action's value, the opponent's range.

:func:`advise` answers at an OpenSpiel ``truco_paulista(_match)`` state (``play --hints``);
:func:`explain` answers from what a player would type (score, dealer, vira, hand,
history), building a consistent state first and naming what is wrong when it
cannot (a card seen twice, an impossible history, an unsolved cell with the
command that would solve it).

Values are the acting player's match-win probability if they take the action and
both sides then follow the solution (the run's cells are solved in match equity).
The opponent's range is the equilibrium probability of each opponent hand (its
three dealt cards, by strength class) given everything public and the player's
own cards (card removal).
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd
import pyspiel

from truco_lab.abstraction.levels import vira_name
from truco_lab.lab.match_run import default_solved_dir, ensure_solved, match_command
from truco_lab.lab.policy import MatchStrategy
from truco_lab.people.strategy import Strategy
from truco_lab.rules.cards import A_DOWN, A_RAISE, card_str, parse_action, parse_cards
from truco_lab.rules.ruleset import PAULISTA, check_start


class ExplainError(ValueError):
    """The question cannot be answered as asked (one line naming what is wrong)."""


@dataclass
class Advice:
    """The solution at one decision (player ``player``'s view)."""

    score: tuple[int, int]
    dealer: int
    player: int
    vira: str
    hand: list[str]
    history: list[str]
    actions: pd.DataFrame  # action, probability, value
    opponent_range: pd.DataFrame  # hand (strength classes), probability
    reach: float = 1.0  # the player's own probability of playing to this decision under the solution
    reached: bool = True  # False: the solution never reaches this decision (its numbers mean nothing)
    units: str = "match-win probability of the player to act"

    def __str__(self) -> str:
        lines = [f"score {self.score[0]}x{self.score[1]}, dealer {self.dealer}, player {self.player} to act; "
                 f"vira {self.vira}; hand {' '.join(self.hand)}",
                 f"history: {', '.join(self.history) if self.history else '(none)'}"]
        if not self.reached:
            lines.append("the solution never reaches this decision (an earlier move has zero probability under it, "
                         "or no opponent hand it plays gets here): it gives no advice here")
            return "\n".join(lines)
        lines.append(f"{'action':<24} {'prob':>6} {'value':>8}   (value: {self.units})")
        for r in self.actions.itertuples():
            lines.append(f"{r.action:<24} {r.probability:>6.3f} {r.value:>8.4f}")
        lines.append("opponent's range (equilibrium, given everything public):")
        top = self.opponent_range.head(12)
        for r in top.itertuples():
            lines.append(f"  {r.hand:<22} {r.probability:>6.3f}")
        if len(self.opponent_range) > len(top):
            lines.append(f"  ... {len(self.opponent_range) - len(top)} more classes, "
                         f"{self.opponent_range.probability.iloc[len(top):].sum():.3f} in all")
        return "\n".join(lines)


def advise(strategy: Strategy, state) -> Advice:
    """The solution's advice for the player to act at ``state`` (``KeyError`` if its cell is unsolved or
    the hand left the solved tree)."""
    dec = strategy.decision(state)
    p = dec.player
    rules = strategy.rules  # each rule set's own notation (Argentine actions and Spanish cards included)
    actions = pd.DataFrame([{"action": rules.action_str(a), "probability": pr, "value": v}
                            for a, pr, v in dec.actions], columns=["action", "probability", "value"])
    rng = pd.DataFrame(dec.opponent_range, columns=["hand", "probability"])
    hist = [rules.action_str(a) if not (A_DOWN <= a < A_RAISE and q != p) else "play_face_down ??"
            for q, a in state.hand_actions]
    return Advice(score=tuple(state.start_score), dealer=state.dealer, player=p,
                  vira=vira_name(state.vira) if rules.vira else "none",
                  hand=[rules.card_str(c) for c in state.deal[3 * p:3 * p + 3]], history=hist, actions=actions,
                  opponent_range=rng, reach=dec.reach, reached=dec.reached)


def hand_state(rules, score: tuple[int, int], dealer: int, vira: str, hand: str | list[str], history) -> object:
    """A ``truco_paulista`` state where the player to act holds ``hand`` after ``history`` (a comma
    list or a list of actions in notation; the opponent's face-down cards may be written ``play_face_down``)."""
    from truco_lab.openspiel.games import rules_from_params  # noqa: F401  (registers the games)

    if not rules.vira and vira not in (None, "", "none"):
        raise ExplainError(f"rule set {rules.name} turns no vira (its manilhas are fixed): leave --vira out")
    try:
        vira_id = parse_cards([vira])[0] if rules.vira else None
        mine = parse_cards(hand)
    except ValueError as e:
        raise ExplainError(str(e)) from None
    if len(mine) != 3:
        raise ExplainError(f"--hand needs three cards, got {len(mine)}")
    if vira_id in mine:
        raise ExplainError(f"card {card_str(vira_id)} is both the vira and in the hand")
    deck = [c for c in range(40) if "4567QJKA23"[c >> 2] in rules.ranks and "dshc"[c & 3] in rules.suits]
    for c in (*mine, *([] if vira_id is None else [vira_id])):
        if c not in deck:
            raise ExplainError(f"card {card_str(c)} is not in this deck (ranks {rules.ranks}, suits {rules.suits})")
    items = [x.strip() for x in history.split(",")] if isinstance(history, str) else list(history)
    items = [x for x in items if x]
    acts: list[int | None] = []
    for x in items:
        if x.lower() in ("play_face_down", "play_face_down ??", "hide"):
            acts.append(None)  # an opponent's face-down card: identity unknown
            continue
        try:
            acts.append(parse_action(x, rules.raise_targets))
        except ValueError as e:
            raise ExplainError(f"history item {x!r}: {e}") from None
    shown = [a % 40 for a in acts if a is not None and a < A_RAISE]
    seen = set(mine) | ({vira_id} if vira_id is not None else set())
    errors = []
    for seat in (0, 1):
        try:
            return _replay(rules, score, dealer, vira_id, mine, acts, items, seat, deck, seen, shown)
        except ExplainError as e:
            errors.append(str(e))
    raise ExplainError(min(errors, key=len))


def _replay(rules, score, dealer, vira_id, mine, acts, items, seat, deck, seen, shown):
    for c in shown:
        if c == vira_id:
            raise ExplainError(f"card {card_str(c)} is the vira: it cannot be played")
    # the opponent's cards: the ones they play in the history, then any unseen cards
    game = pyspiel.load_game("truco_paulista", {"score0": score[0], "score1": score[1], "dealer": dealer,
                                                 "ranks": rules.ranks, "suits": rules.suits,
                                                 "max_stake": max(rules.ladder), "rules": rules.name})
    # who plays each history card: replay once with a provisional deal to learn the actors
    probe_rest = [c for c in deck if c not in seen and c not in shown]
    own = set(mine)
    opp_shown = [c for c in shown if c not in own]
    if len(set(opp_shown)) != len(opp_shown):
        dup = next(c for c in opp_shown if opp_shown.count(c) > 1)
        raise ExplainError(f"card {card_str(dup)} is played twice in the history")
    if len(opp_shown) > 3:
        raise ExplainError("the history plays more than three opponent cards")
    opp = opp_shown + probe_rest[: 3 - len(opp_shown)]
    deal = (sorted(mine) + sorted(opp)) if seat == 0 else (sorted(opp) + sorted(mine))
    st = game.new_initial_state()
    for c in [*deal, *([] if vira_id is None else [vira_id])]:
        st.apply_action(c)
    hidden_pool = [c for c in opp if c not in opp_shown]
    for a, text in zip(acts, items, strict=True):
        p = st.current_player()
        if p < 0:
            raise ExplainError(f"the hand is already over before {text!r}")
        if a is None:
            if p == seat:
                raise ExplainError(f"{text!r}: your own face-down card must be named, e.g. 'play_face_down 4d'")
            if not hidden_pool:
                raise ExplainError(f"{text!r}: the opponent has no unseen card left to play face down")
            a = A_DOWN + hidden_pool.pop(0)
        elif a < A_RAISE and p != seat and (a % 40) in own:
            raise ExplainError(f"{text!r}: card {card_str(a % 40)} is in your hand, the opponent cannot play it")
        elif a < A_RAISE and p == seat and (a % 40) not in own:
            raise ExplainError(f"{text!r}: card {card_str(a % 40)} is not in your hand (it is your turn)")
        try:
            st.apply_action(a)
        except ValueError as e:
            raise ExplainError(f"impossible history at {text!r}: {e}") from None
    if st.is_terminal():
        raise ExplainError("the hand is over after this history: nothing to decide")
    if st.current_player() != seat:
        raise ExplainError(f"after this history the other player (player {st.current_player()}) acts, not the "
                           "holder of --hand")
    return st


def explain(score: tuple[int, int], dealer: int, vira: str, hand, history="", *, solved=None, rules=None,
            on_demand: bool = True) -> Advice:
    """The solution's advice at a described decision (see :class:`Advice`). Without ``solved`` (a
    match run folder or a MatchStrategy) the rule set's own run is used, solved on demand when the
    cell is one such a solve covers (``on_demand``)."""
    rules = rules or PAULISTA
    try:
        check_start(rules, score[0], score[1], dealer)
    except ValueError as e:
        raise ExplainError(str(e)) from None
    strategy = solved if isinstance(solved, MatchStrategy) else None
    small = len(rules.ranks) * len(rules.suits) <= 10
    if strategy is None and on_demand and not small and rules.target - 1 not in score:
        on_demand = False  # an on-demand solve covers the eleven row only: do not start it for another cell
    if strategy is None:
        out = ensure_solved(rules, solved, on_demand=on_demand)
        if out is None:
            where = default_solved_dir(rules)
            raise ExplainError(f"no solved match run for these rules in {where}: run "
                               f"{match_command(rules, [(min(score), max(score))], where)} (or pass --solved DIR)")
        strategy = MatchStrategy(out)
    st = hand_state(rules, score, dealer, vira, hand, history)
    if not strategy.covers(st):
        more = f"{strategy.out}-{min(score)}-{max(score)}"
        raise ExplainError(f"cell {score[0]}x{score[1]} dealer {dealer} is not solved in {strategy.out}: solve it "
                           f"with: {match_command(rules, [(min(score), max(score))], more)}")
    try:
        return advise(strategy, st)
    except KeyError as e:
        raise ExplainError(f"{str(e).strip(chr(39))}: the solution never reaches this point (a pruned, dominated "
                           "action in the history)") from None
