"""``truco-lab play``: a terminal table against a bot, one hand or a whole match to 12.

A thin layer over the OpenSpiel games (the engine) and the bots: :class:`Table`
reads lines through ``read`` and prints through ``write``, so tests drive it
with scripted input and no terminal. Keys: the number of a listed action, or
the action in notation (``play_face_up 3d``, ``raise 3``, ``accept_raise``,
...), ``?`` for help, ``q`` (or Ctrl-C / end of input) to leave.
"""

from __future__ import annotations

import numpy as np
import pyspiel

from truco_lab.openspiel.games import random_deal
from truco_lab.rules import engine as E
from truco_lab.rules.cards import (
    A_DOWN,
    A_RAISE,
    RANKS,
)
from truco_lab.rules.spanish import envido_points


def table_game(rules, match: bool = True, score: tuple[int, int] = (0, 0), dealer: int = 1):
    """The OpenSpiel game a table plays: the match to the target, or one hand at ``score`` with ``dealer``."""
    # strategic=False: conceding the hand is a move of the game (seed 000: any turn but the hand of
    # eleven's decision; seed 004: going to the deck), offered at the table though the solved trees drop it
    if rules.seats == 4:  # two against two: the team games (their rule set is in the name)
        params = {"ranks": rules.ranks, "suits": rules.suits, "max_stake": max(rules.ladder), "strategic": False}
        if match:
            return pyspiel.load_game(f"truco_{rules.name}_match", params)
        return pyspiel.load_game(f"truco_{rules.name}", dict(params, score0=score[0], score1=score[1], dealer=dealer))
    if rules.pack == "spanish":
        from truco_lab.openspiel.games import openspiel_hand

        name, hand = openspiel_hand(rules, score[0], score[1], dealer)
        if match:
            return pyspiel.load_game("truco_argentino_match", {k: v for k, v in hand.items()
                                                               if k not in ("score0", "score1", "dealer")}
                                     | {"strategic": False})
        return pyspiel.load_game(name, dict(hand, strategic=False))
    params = {"ranks": rules.ranks, "suits": rules.suits, "max_stake": max(rules.ladder),
              "rules": rules.name, "strategic": False}
    if match:
        return pyspiel.load_game("truco_paulista_match", params)
    return pyspiel.load_game("truco_paulista", dict(params, score0=score[0], score1=score[1], dealer=dealer))


def bot_says(a: int, words) -> str:
    """What the table shows of a bot's move in ``words`` (:func:`~truco_lab.people.words.words_for`; a
    face-down card stays unnamed)."""
    return words.act(a) if not (A_DOWN <= a < A_RAISE) else "plays a card face down"


class Table:
    """One human (seat ``seat``) against ``bot``; ``hints`` (a MatchStrategy) shows the solution."""

    def __init__(self, rules, bot, *, match: bool = True, seat: int = 0, seed: int = 0, hints=None,
                 score: tuple[int, int] = (0, 0), dealer: int = 1, read=None, write=print) -> None:
        self.game = table_game(rules, match, score, dealer)
        from truco_lab.people.words import words_for

        self.rules, self.bot, self.seat, self.hints, self.match = rules, bot, seat, hints, match
        self.side = seat & 1  # scores, rounds and results are the side's (heads-up: the seat)
        self.w = words_for(rules)
        self._envido_told = -1  # the hand whose envido result was told
        self.rt = rules.raise_targets
        self.rng = np.random.default_rng(seed)
        self.read = read or (lambda prompt: input(prompt))  # looked up at call time (tests patch it)
        self.write = write
        self.lost: list[tuple[str, str, float]] = []  # (your action, the solution's best, value lost)
        self.hands = 0

    # ---- display -------------------------------------------------------------------------------
    def _who(self, p: int) -> str:
        return "you" if p == self.seat else "bot"

    def _score_line(self, s) -> str:
        return f"score you {self.w.score(int(E.score(s, self.side)))}, bot {self.w.score(int(E.score(s, 1 - self.side)))}"

    def _show(self, st) -> None:
        s, me = st.s, self.seat
        stake = f"stake {int(E.value(s))}"
        if int(E.pending_to(s)):
            stake += f" ({self._who(int(E.pending_by(s)))} asked {int(E.pending_to(s))})"
        if int(E.envido_pending(s)):
            stake += f" · {self._who(int(E.envido_by(s)))} sang envido for {int(E.envido_pending(s))}"
        self.write("-" * 60)
        self.write(f"hand {self.hands} · {self._score_line(s)} · {self._who(st.dealer)} {'deal' if st.dealer == self.seat else 'deals'} · {stake}")
        if self.rules.pack == "spanish":
            order = (" · trick order: 1 de espadas > 1 de bastos > 7 de espadas > 7 de oros > 3s > 2s > "
                     "1 de copas/oros > 12s > 11s > 10s > 7 de copas/bastos > 6s > 5s > 4s"
                     if int(E.nplays(s)) == 0 else "")  # once a hand, before its first card
            self.write(f"your envido: {envido_points(self._dealt(st))}{order}")
        elif int(E.vira(s)) >= 0:
            manilha = RANKS[int(E.manilha(s))]
            self.write(f"vira {self.w.card(int(E.vira(s)))} → manilhas are the {manilha}s (♣ > ♥ > ♠ > ♦)")
        else:
            fixed = self.rules.fixed_manilha_ids()[::-1]
            every = " > ".join(self.rules.fixed_manilhas.split()[::-1])
            self.write("no vira: the manilhas are always " + " > ".join(self.w.card(c) for c in fixed) if fixed else
                       f"no vira, and none of the fixed manilhas ({every}) is in this deck: plain ranks decide")
        self.write("table: " + self._tricks(st))
        held = [int(E.held_card(s, me, i)) for i in range(3)]
        self.write("your cards: " + " ".join(self.w.card(c) for c in held if c >= 0))
        self._show_more(st)

    def _show_more(self, st) -> None:
        """What else the seat sees (two against two: the partner's cards on a hand of eleven)."""

    def _dealt(self, st) -> list[int]:
        return [int(c) for c in st.deal[3 * self.seat:3 * self.seat + 3]]

    def _envido_news(self, st) -> None:
        """Seed 004 §6: once an envido is settled, what each side announced (mano first; mano wins ties) and who
        scored, told once per hand."""
        if self.rules.pack != "spanish" or self._envido_told == self.hands:
            return
        s = st.s
        w = int(E.envido_winner(s))
        if w < 0:
            return
        self._envido_told = self.hands
        mano = int(E.round_leader(s, 0))
        if E.envido_seen(s):
            said = f"{self._who(mano)} (mano) {int(E.envido_of(s, mano))}, {self._who(1 - mano)} " \
                   f"{int(E.envido_of(s, 1 - mano))}"
            self.write(f"envido: quiero. announced: {said} → {self._scores(w, int(E.bonus(s, w)))}"
                       f"{' (mano wins ties)' if E.envido_of(s, 0) == E.envido_of(s, 1) else ''}")
        else:
            self.write(f"envido: no quiero → {self._scores(w, int(E.bonus(s, w)))}")

    def _scores(self, p: int, n: int) -> str:
        return f"you score {n}" if p == self.seat else f"the bot scores {n}"

    def _tricks(self, st) -> str:
        """The cards on the table round by round (the bot's face-down cards as ??), with each round's winner."""
        s = st.s
        ns = int(E.seats(s))
        rounds = []
        for x in range(int(E.nplays(s))):
            owner = int(E.play_owner(s, x))
            who = self._who(owner)
            c = int(E.play_card(s, x))
            shown = "??" if E.play_down(s, x) and owner != self.seat else self.w.card(c) + (
                " (down)" if E.play_down(s, x) else "")
            if x % ns == 0:
                rounds.append(f"round {x // ns + 1}: {who} {shown}")
            else:
                rounds[-1] += f", {who} {shown}"
            if x % ns == ns - 1:
                w = int(E.round_winner(s, x // ns)) if x // ns < int(E.nrounds(s)) else -1
                rounds[-1] += "" if w < 0 else " → tie" if w == E.TIE else f" → {self._side_name(w)}"
        return " | ".join(rounds) if rounds else "(no cards played yet)"

    def _hint(self, st) -> dict[int, float] | None:
        """Print the solution's advice; returns action -> value (None without a hint)."""
        if self.hints is None:
            return None
        from truco_lab.people.advice import advise

        try:
            adv = advise(self.hints, st)
        except KeyError as e:
            self.write(f"hint: none here ({str(e).strip(chr(39))})")
            return None
        if not adv.reached:  # its probabilities here would be an even split that means nothing
            self.write("hint: the solution never reaches this decision (an earlier move it never makes); no advice")
            return None
        parts = []
        for r in adv.actions.itertuples():
            what = self.w.act(self.w.parse(r.action))
            parts.append(f"{what} {r.probability:.0%} (worth {r.value:.3f})" if r.value == r.value
                         else f"{what}: never (dominated)")
        self.write("hint: " + "; ".join(parts) + "   [worth: your match-win probability]")
        vals = {self.w.parse(r.action): (r.probability, r.value) for r in adv.actions.itertuples()
                if r.value == r.value}
        return vals

    # ---- input ---------------------------------------------------------------------------------
    def _ask(self, st, legal: list[int]) -> int | None:
        """The human's action (None: leave): a menu number, the menu's own words (``play 2h``, ``2h``,
        ``truco``, ``accept``), or an action in notation."""
        for i, a in enumerate(legal, 1):
            self.write(f"  {i}) {self.w.act(a)}")
        while True:
            try:
                text = self.read("your move> ").strip()
            except EOFError:
                return None
            if text.lower() in ("q", "quit", "exit"):
                return None
            if text in ("?", "h", "help"):
                self.write(f"type 1-{len(legal)}, the move's words (e.g. '{self.w.act(legal[0])}'), "
                           f"an action in notation (e.g. '{self.w.notation(legal[0])}'), or q to leave")
                continue
            if text.isdigit():
                if 1 <= int(text) <= len(legal):
                    return legal[int(text) - 1]
                self.write(f"'{text}' is not one of the choices: type 1-{len(legal)}, ? for help, q to leave")
                continue
            a = self._words(text, legal)
            if a is None:
                try:
                    a = self.w.parse(text)
                except ValueError as e:
                    self.write(f"'{text}' is not a move: {e}. Type 1-{len(legal)}, ? for help, q to leave")
                    continue
            if a not in legal:
                self.write(f"'{text}' is not legal now: {self._why_not(st, a)}. Choose 1-{len(legal)}")
                continue
            return a

    def _words(self, text: str, legal: list[int]) -> int | None:
        """The legal action the menu's own words name (``play 2h``, ``2h``, ``truco``, ``accept``), if any."""
        t = " ".join(text.lower().replace("!", "").split())
        for a in legal:
            words = self.w.act(a).lower().replace("!", "")
            short = words.split(" (")[0]
            lit = self.w.notation(a).split()[-1].lower()  # the card's literal: "2h", "7o"
            if t in (words, short) or (a < A_DOWN and t in (lit, f"play {lit}")):
                return a
        starts = [a for a in legal if self.w.act(a).lower().startswith(t + " ")]
        return starts[0] if len(starts) == 1 else None  # "accept", "fold", "concede": unambiguous first words

    def _why_not(self, st, a: int) -> str:
        """Why the engine refuses ``a`` here, in words."""
        code = int(E.check_action(st.s, st.rules.to_array(), st.current_player(), a))
        name = E.ERROR_NAMES.get(code, "not legal") if code != E.OK else "a move the table does not offer"
        return {"CARD_NOT_IN_HAND": "that card is not in your hand",
                "HIDE_NOT_ALLOWED_IN_FIRST_ROUND": "face-down plays start in round 2",
                "RAISE_NOT_ALLOWED": "you may not raise now (you raised last, raises are locked, or the stake is at "
                                     "its top)",
                "RAISE_PENDING": "a raise is pending: accept, fold or raise again",
                "DECISION_PENDING": "the hand of eleven must be decided first",
                "NO_PENDING_RAISE": "nobody has raised",
                "NO_PENDING_ELEVEN_DECISION": "there is no hand of eleven to decide",
                "BLIND_PLAY": "the iron hand is played blind"}.get(name, name.lower().replace("_", " "))

    # ---- the game loop ----------------------------------------------------------------------------
    def run(self) -> int:
        """Play until the game ends or the human leaves; returns 0."""
        st = self.state = self.game.new_initial_state()  # kept: what was played (tests read it)
        self.write(self._intro())
        try:
            while not st.is_terminal():
                if st.is_chance_node():
                    self.hands += 1
                    before = len(st.past) if hasattr(st, "past") else 0
                    cards = random_deal(self.rng, st.deck_list, st.deal_size)
                    for c in cards:
                        st.apply_action(c)
                    if st.is_terminal() or (hasattr(st, "past") and len(st.past) > before):
                        me = self.seat
                        mine = cards[3 * me:3 * me + 3]
                        self.write("the iron hand is played blind: both flip their cards in dealt order; yours were "
                                   + " ".join(self.w.card(c) for c in mine))
                        self.write("table: " + self._tricks(st))
                        self._hand_over(st, cards)  # decided at the deal (house rules' iron hand)
                    continue
                p = st.current_player()
                before = len(st.past) if hasattr(st, "past") else 0
                if p == self.seat:
                    self._show(st)
                    vals = self._hint(st)
                    a = self._ask(st, st.legal_actions())
                    if a is None:
                        self.write(f"you left the table ({self._score_line(st.s)}).")
                        return 0
                    if vals:
                        best = sum(pr * v for pr, v in vals.values())
                        top = max(vals, key=lambda k: vals[k][1])
                        if a not in vals:  # a dominated move the solved tree prunes
                            self.lost.append((self.w.act(a), top, float("nan")))
                        elif best - vals[a][1] > 5e-4:
                            self.lost.append((self.w.act(a), top, best - vals[a][1]))
                else:
                    a = self._bot_move(st, p)
                deal = list(st.deal)
                st.apply_action(a)
                self._envido_news(st)
                if st.is_terminal() or (hasattr(st, "past") and len(st.past) > before):
                    self._hand_over(st, deal)
        except KeyboardInterrupt:
            self.write("\nyou left the table.")
            return 0
        self._final(st.returns()[self.seat])
        return 0

    def _intro(self) -> str:
        return f"truco ({self.rules.name}) against the {self.bot.name} bot; you are player {self.seat}. q leaves, ? helps."

    def _final(self, r: float) -> None:
        if self.match:
            self.write("you win the match!" if r > 0 else "the bot wins." if r < 0 else "a draw.")
        else:  # one hand: its points, not a match
            self.write(f"you win the hand (+{r:g} points)." if r > 0 else
                       f"the bot wins the hand (+{-r:g} points)." if r < 0 else "the hand is a draw.")

    def _bot_move(self, st, p: int) -> int:
        """The bot's action at seat ``p``, told at the table."""
        a = self.bot.act(st)
        self.write(f"bot: {bot_says(a, self.w)}")
        return a

    def _side_name(self, side: int) -> str:
        """Who a round or hand went to (heads-up a side is a seat)."""
        return self._who(side)

    def _hand_over(self, st, deal) -> None:
        me = self.seat
        # the finished hand's engine state stays in place until the next deal: scores after the award
        sc = (int(E.score(st.s, 0)), int(E.score(st.s, 1)))
        # seed 000: a face-down card is never revealed, not even when the hand is over
        down = {int(E.play_card(st.s, x)) for x in range(int(E.nplays(st.s))) if E.play_down(st.s, x)}
        bot_cards = [self.w.card(c) if c not in down else "??" for c in deal[3 * (1 - me):3 * (1 - me) + 3]]
        self.write(f"hand over. bot held {', '.join(bot_cards)}. score you {self.w.score(sc[me])}, "
                   f"bot {self.w.score(sc[1 - me])}")
        if self.hints is not None:
            if self.lost:
                for mine, best, loss in self.lost:
                    cost = f"-{loss:.3f} match-win probability" if loss == loss else "a dominated move"
                    self.write(f"  value lost: you chose {mine}; the solution prefers {self.w.act(best)} "
                               f"({cost})")
            else:
                self.write("  you lost no value against the solution this hand.")
            self.lost = []
