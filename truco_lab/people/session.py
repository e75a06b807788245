"""A table driven one click at a time: the browser table's game (``truco-lab play --browser``).

The terminal :class:`truco_lab.people.play.Table` runs its own loop and asks for input; a page cannot be
asked, so :class:`TableSession` holds the game between requests: :meth:`act` applies the human's move and
lets the bot play until the human is to act again, the hand ends (then :meth:`next_hand` deals the next
one) or the game is over. :meth:`view` is everything the human may see and nothing more: their own cards,
the cards on the table (the bot's face-down cards as ``??``, never named, not even after the hand), the
score, the stake, the legal moves, and with hints the solution's advice and the cost of the last move.
The bot's face-up cards that were never played are shown when the hand is over, as at the terminal.
"""

from __future__ import annotations

import threading

import numpy as np

from truco_lab.openspiel.games import random_deal
from truco_lab.people.play import bot_says, table_game
from truco_lab.rules import engine as E
from truco_lab.rules.cards import RANKS
from truco_lab.rules.ruleset import sees_partner


class SessionError(ValueError):
    """A move the table refuses (one line: the value, and what is accepted)."""


class TableSession:
    """One human (``seat``) against ``bot``; a match to the target, or one hand at ``score``."""

    def __init__(self, rules, bot, *, match: bool = True, seat: int = 0, seed: int = 0, hints=None,
                 score: tuple[int, int] = (0, 0), dealer: int = 1) -> None:
        self.rules, self.bot, self.seat, self.hints, self.match = rules, bot, seat, hints, match
        self.side = seat & 1  # scores are the side's (heads-up: the seat's)
        from truco_lab.people.words import words_for

        self.rt = rules.raise_targets
        self.w = words_for(rules)
        self.st = table_game(rules, match, score, dealer).new_initial_state()
        self.rng = np.random.default_rng(seed)
        self.lock = threading.Lock()  # one request at a time per table
        self.hands = 0
        self.events: list[str] = []  # what happened since the human's last move
        self.last_move: dict | None = None  # the human's last move and its cost against the solution
        self.finished: dict | None = None  # the hand just over (waiting for next_hand), or None
        self._deal()
        self._advance()

    # ---- the game ------------------------------------------------------------------------------------
    def _deal(self) -> None:
        self.hands += 1
        self.deal = random_deal(self.rng, self.st.deck_list, self.st.deal_size)
        past = len(self.st.past) if hasattr(self.st, "past") else 0
        for c in self.deal:
            self.st.apply_action(c)
        if self.st.is_terminal() or (hasattr(self.st, "past") and len(self.st.past) > past):
            self.events.append("the iron hand is played blind: both flip their cards in dealt order")
            self._hand_over()

    def _apply(self, a: int) -> None:
        past = len(self.st.past) if hasattr(self.st, "past") else 0
        deal = list(self.st.deal)
        self.st.apply_action(a)
        if self.st.is_terminal() or (hasattr(self.st, "past") and len(self.st.past) > past):
            self.deal = deal
            self._hand_over()

    def _advance(self) -> None:
        """The bot plays until the human is to act, the hand is over or the game ends."""
        while not self.st.is_terminal() and self.finished is None and self.st.current_player() != self.seat:
            if self.st.is_chance_node():
                self._deal()
                continue
            p = self.st.current_player()
            a = self._bot_at(p).act(self.st)
            self.events.append(f"{self._who(p)}: {bot_says(a, self.w)}")
            self._apply(a)

    def _bot_at(self, p: int):
        """The bot playing seat ``p`` (heads-up: the one bot)."""
        return self.bot

    def _who(self, p: int) -> str:
        """How the page names seat ``p``."""
        return "you" if p == self.seat else "bot"

    def _hand_over(self) -> None:
        s, me = self.st.s, self.seat
        down = {int(E.play_card(s, x)) for x in range(int(E.nplays(s))) if E.play_down(s, x)}
        bot = [self.w.card(c) if c not in down else "??" for c in self.deal[3 * (1 - me):3 * (1 - me) + 3]]
        self.finished = {"hand": self.hands, "bot_cards": bot, "score": [int(E.score(s, me)), int(E.score(s, 1 - me))],
                         "game_over": bool(self.st.is_terminal())}

    def act(self, code: int) -> None:
        """The human's move (an action code from :meth:`view`'s ``legal``)."""
        if self.finished is not None or self.st.is_terminal():
            raise SessionError("the hand is over: ask for the next hand (or a new table when the game is over)")
        legal = self.st.legal_actions()
        if code not in legal:
            raise SessionError(f"action {code} is not legal now (legal: {', '.join(str(a) for a in legal)})")
        advice = self._advice()
        self.last_move = {"action": self.w.act(code), "cost": None, "best": None}
        if advice:
            best = max(advice, key=lambda r: r["value"])
            mine = next((r for r in advice if r["code"] == code), None)
            self.last_move.update(best=best["action"], cost=None if mine is None else max(best["value"] - mine["value"], 0))
        self.events = []
        self._apply(code)
        self._advance()

    def next_hand(self) -> None:
        """Deal the next hand of the match (after a hand is over)."""
        if self.finished is None:
            raise SessionError("the hand is still being played: finish it first")
        if self.finished["game_over"]:
            raise SessionError("the game is over: start a new table")
        self.finished, self.events, self.last_move = None, [], None
        self._advance()  # deals (a chance node) and lets the bot open if it leads

    # ---- what the human sees ---------------------------------------------------------------------------
    def _advice(self) -> list[dict] | None:
        if self.hints is None:
            return None
        from truco_lab.people.advice import advise

        parse_action = self.rules.parse_action  # advice is in the rule set's own notation
        try:
            adv = advise(self.hints, self.st)
        except KeyError:
            return None
        if not adv.reached:
            return None
        return [{"code": parse_action(r.action), "action": self.w.act(parse_action(r.action)),
                 "probability": float(r.probability), "value": float(r.value)}
                for r in adv.actions.itertuples() if r.value == r.value]

    def view(self) -> dict:
        """The table as the human may see it (JSON-able)."""
        s, me, side = self.st.s, self.seat, self.side
        ns = int(E.seats(s))  # cards per round
        plays = []
        for x in range(int(E.nplays(s))):
            who = int(E.play_owner(s, x))
            down = bool(E.play_down(s, x))
            c = int(E.play_card(s, x))
            card, shown = (self.w.literal(c), self.w.card(c)) if (who == me or not down) else ("??", "??")
            plays.append({"round": x // ns + 1, "who": self._who(who), "card": card, "shown": shown, "down": down})
        turn = not self.st.is_terminal() and self.finished is None and self.st.current_player() == me
        vira = int(E.vira(s))
        held = [c for c in (int(E.held_card(s, me, i)) for i in range(3)) if c >= 0]
        out = {
            "rules": self.rules.name, "bot": self.bot.name, "seat": me, "match": self.match, "hand": self.hands,
            "against": self._against(), "sides": self._sides(),
            "score": {"you": int(E.score(s, side)), "bot": int(E.score(s, 1 - side))},
            "dealer": self._who(self.st.dealer), "stake": int(E.value(s)),
            "pending_raise": int(E.pending_to(s)) or None,
            "vira": self.w.literal(vira) if vira >= 0 else None,
            "manilha": RANKS[int(E.manilha(s))] if vira >= 0 else None,
            "cards": [self.w.literal(c) for c in held], "cards_shown": [self.w.card(c) for c in held],
            "vira_shown": self.w.card(vira) if vira >= 0 else None, "deck": self.rules.pack,
            "score_words": {"you": self.w.score(int(E.score(s, side))), "bot": self.w.score(int(E.score(s, 1 - side)))},
            "table": plays, "your_turn": turn, "events": list(self.events), "last_move": self.last_move,
            "legal": [{"code": int(a), "label": self.w.act(a)} for a in self.st.legal_actions()]
            if turn else [],
            "hints": self._advice() if turn else None, "hand_over": self.finished,
            "game_over": bool(self.st.is_terminal()),
        }
        if out["game_over"]:
            r = self.st.returns()[me]
            out["result"] = self._result(r)
        return out

    def _against(self) -> str:
        return f"the {self.bot.name} bot"

    def _sides(self) -> dict[str, str]:
        """The score line's names of the human's side and the other."""
        return {"you": "you", "them": "bot"}

    def _result(self, r: float) -> str:
        return "you win" if r > 0 else "the bot wins" if r < 0 else "a draw"


class TeamSession(TableSession):
    """Two against two (seed 003): the human at ``seat`` with the bot ``partner`` opposite, against ``rivals``
    (two bots, the seats after the human's and after the partner's). The page sees what a player at the table
    sees: its own cards, every card played face up (the partner's included), and the partner's hand only
    when seed 003 shows it (a side on eleven decides "after seeing its cards and its partner's"). The other
    seats' face-down and unplayed cards are never shown, not even when the hand is over."""

    def __init__(self, rules, partner, rivals, *, match: bool = True, seat: int = 0, seed: int = 0,
                 score: tuple[int, int] = (0, 0), dealer: int = 3) -> None:
        if rules.seats != 4:
            raise ValueError(f"rule set {rules.name} is heads-up; the team table seats two against two")
        self.bots = {(seat + 2) % 4: partner, (seat + 1) % 4: rivals[0], (seat + 3) % 4: rivals[1]}
        super().__init__(rules, partner, match=match, seat=seat, seed=seed, score=score, dealer=dealer)

    def _bot_at(self, p: int):
        return self.bots[p]

    def _who(self, p: int) -> str:
        if p == self.seat:
            return "you"
        return "partner" if p == (self.seat + 2) % 4 else f"rival {p}"

    def _hand_over(self) -> None:
        s = self.st.s
        self.finished = {"hand": self.hands, "bot_cards": [], "score": [int(E.score(s, self.side)),
                         int(E.score(s, 1 - self.side))], "game_over": bool(self.st.is_terminal())}

    def _against(self) -> str:
        r1, r3 = self.bots[(self.seat + 1) % 4], self.bots[(self.seat + 3) % 4]
        rivals = r1.name if r1.name == r3.name else f"{r1.name} and {r3.name}"
        return f"{rivals} rivals, with a {self.bots[(self.seat + 2) % 4].name} partner"

    def _sides(self) -> dict[str, str]:
        return {"you": "us", "them": "them"}

    def _result(self, r: float) -> str:
        return "your side wins" if r > 0 else "the other side wins" if r < 0 else "a draw"

    def view(self) -> dict:
        out = super().view()
        out["partner_cards"] = None
        if self.finished is None and sees_partner(self.rules, self.st.start_score, self.seat):
            q = (self.seat + 2) % 4
            out["partner_cards"] = [self.w.card(int(c)) for c in self.deal[3 * q:3 * q + 3]]
        return out


__all__ = ["SessionError", "TableSession", "TeamSession"]
