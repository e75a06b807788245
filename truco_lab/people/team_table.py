"""``truco-lab play`` two against two (seed 003): you and a bot partner against two bots, at the terminal.

The table shows what a player at a real table sees: your own cards, every card played face up (your
partner's included), and your partner's hand only when seed 003 shows it (a side on eleven decides "after
seeing its cards and its partner's"). Face-down cards of the other three stay hidden, even when the hand is
over (what is left in their hands is never shown).
"""

from __future__ import annotations

from truco_lab.people.bots import BotBase
from truco_lab.people.play import Table, bot_says
from truco_lab.rules import engine as E
from truco_lab.rules.ruleset import sees_partner


class TeamTable(Table):
    """The human at ``seat``; ``partner`` plays the facing seat, ``rivals`` (two bots) the other two."""

    def __init__(self, rules, partner: BotBase, rivals: tuple[BotBase, BotBase], **kw) -> None:
        if rules.seats != 4:
            raise ValueError(f"rule set {rules.name} is heads-up; the team table seats two against two")
        if kw.get("hints") is not None:
            raise ValueError("a team game has no solved strategy to hint from")
        super().__init__(rules, partner, **kw)
        s = self.seat
        self.bots = {(s + 2) % 4: partner, (s + 1) % 4: rivals[0], (s + 3) % 4: rivals[1]}

    def _who(self, p: int) -> str:
        if p == self.seat:
            return "you"
        return "partner" if p == (self.seat + 2) % 4 else f"rival {p}"

    def _side_name(self, side: int) -> str:
        return "us" if side == self.side else "them"

    def _score_line(self, s) -> str:
        return f"score us {int(E.score(s, self.side))}, them {int(E.score(s, 1 - self.side))}"

    def _intro(self) -> str:
        s = self.seat
        mate, r1, r3 = self.bots[(s + 2) % 4], self.bots[(s + 1) % 4], self.bots[(s + 3) % 4]
        return (f"truco ({self.rules.name}), two against two: you (seat {s}) and your partner (seat {(s + 2) % 4}, "
                f"{mate.name}) against seats {(s + 1) % 4} ({r1.name}) and {(s + 3) % 4} ({r3.name}); play goes "
                "0 → 1 → 2 → 3. q leaves, ? helps.")

    def _show_more(self, st) -> None:
        if sees_partner(self.rules, st.start_score, self.seat):
            q = (self.seat + 2) % 4
            self.write("your partner's cards (a side on eleven sees them): "
                       + " ".join(self.w.card(int(c)) for c in st.deal[3 * q:3 * q + 3]))

    def _bot_move(self, st, p: int) -> int:
        a = self.bots[p].act(st)
        self.write(f"{self._who(p)}: {bot_says(a, self.w)}")
        return a

    def _hand_over(self, st, deal) -> None:
        # the other seats' unplayed and face-down cards stay unseen, as at a real table (seed 003 shows a
        # partner's hand only on a hand of eleven): what was played is the whole story
        self.write(f"hand over. table: {self._tricks(st)}. {self._score_line(st.s)}")

    def _final(self, r: float) -> None:
        if self.match:
            self.write("your side wins the match!" if r > 0 else "the other side wins." if r < 0 else "a draw.")
        else:
            self.write(f"your side wins the hand (+{r:g} points)." if r > 0 else
                       f"the other side wins the hand (+{-r:g} points)." if r < 0 else "the hand is a draw.")
