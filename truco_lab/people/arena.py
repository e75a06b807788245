"""The bot arena: whole matches between bots, and each bot's exact exploitability in one cell.

Matches run through ``truco_paulista_match`` (the engine underneath is the numba
one; the bots are Python). Pairs play ``matches`` matches each; match ``2k`` and
``2k + 1`` use the same deals with the seats swapped (duplicate play), so the
deal's luck cancels and each bot deals first half the time.

A bot's exploitability in a cell is exact: its strategy is read at every
information set of the cell's native tree (built without prunes, so every legal
action has a slot) and the best response is computed on that tree, in the
cell's payoff units (match-win probability when a match run's equity table is
given, else points per hand).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import pyspiel

from solvers.storage import atomic_write, stable_hash
from truco_lab.openspiel.games import random_deal
from truco_lab.people.bots import BotBase, SolvedBot, view_of
from truco_lab.people.responses import bot_exploitability, solved_exploitability
from truco_lab.people.roster import make_bot
from truco_lab.rules import engine as E
from truco_lab.rules.ruleset import RuleSet

RESULT_COLUMNS = ("bot_a", "bot_b", "match", "seat_a", "winner_is_a", "hands", "points_a", "points_b")


# ---- matches ------------------------------------------------------------------------------------------
def play_match(game, bots: tuple[BotBase, ...], rng: np.random.Generator) -> tuple[int, int, list[int]]:
    """One match, ``bots[p]`` in seat ``p`` (four seats two against two), deals drawn from ``rng``: (winning
    side, hands played, points scored per side). Heads-up a side is a seat."""
    st = game.new_initial_state()
    deck = st.deck_list
    hands = 0
    while not st.is_terminal():
        if st.is_chance_node():
            hands += 1
            for c in random_deal(rng, deck, st.deal_size):
                st.apply_action(c)
            continue
        p = st.current_player()
        st.apply_action(bots[p].act(st))
    final = [int(E.score(st.s, 0)), int(E.score(st.s, 1))]
    return (0 if st.returns()[0] > 0 else 1), hands, final


@dataclass
class PairResult:
    a: str
    b: str
    matches: int
    wins_a: int
    hands: int
    points_a: int
    points_b: int

    @property
    def win_rate(self) -> float:
        return self.wins_a / self.matches

    @property
    def interval(self) -> tuple[float, float]:
        """95% Wilson score interval of the win rate: right near 0 and 1 too, where the normal
        approximation claims ``1.000 ± 0.000`` from a hundred matches."""
        return wilson_interval(self.wins_a, self.matches)

    @property
    def half_width(self) -> float:
        """Half the Wilson interval's width."""
        lo, hi = self.interval
        return (hi - lo) / 2

    @property
    def points_per_hand(self) -> float:
        """A's points minus B's, per hand."""
        return (self.points_a - self.points_b) / max(self.hands, 1)

    def line(self) -> str:
        # ± is half the Wilson interval (its ends are in arena.json): never ± 0.000 at 0 or 1
        return (f"{self.a} vs {self.b}: {self.a} wins {self.win_rate:.3f} ± {self.half_width:.3f} (95%), "
                f"points per hand {self.points_per_hand:+.3f}, {self.matches} matches, {self.hands} hands")


def wilson_interval(wins: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """The Wilson score interval of a binomial proportion ``wins / n``."""
    if n <= 0:
        return 0.0, 1.0
    p = wins / n
    d = 1 + z * z / n
    mid = (p + z * z / (2 * n)) / d
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / d
    return max(0.0, mid - half), min(1.0, mid + half)


def deal_seed(seed: int, k: int) -> np.random.Generator:
    """The generator of duplicate deal ``k`` of an arena seeded ``seed`` (stable across Python runs)."""
    return np.random.default_rng([seed, k])


def run_pair(game, make, a: str, b: str, matches: int, seed: int, progress=None) -> tuple[PairResult, list[dict]]:
    """``matches`` matches of bot ``a`` against ``b`` (``make(name, seed)`` builds a bot). Two against two, each
    side is two copies of its bot (seeded apart). Matches ``2k`` and ``2k + 1`` deal the same cards with the
    sides swapped (``seat_a``: the side of ``a``), so the deals' luck cancels and each side deals first once."""
    rows = []
    seats = game.num_players()
    side_a = [make(a, seed + 2 * i) for i in range(seats // 2)]
    side_b = [make(b, seed + 1 + 2 * i) for i in range(seats // 2)]
    for m in range(matches):
        seat_a = m % 2
        team = (side_a, side_b) if seat_a == 0 else (side_b, side_a)
        pair = tuple(team[q % 2][q // 2] for q in range(seats))
        winner, hands, pts = play_match(game, pair, deal_seed(seed, m // 2))
        rows.append({"bot_a": a, "bot_b": b, "match": m, "seat_a": seat_a, "winner_is_a": winner == seat_a,
                     "hands": hands, "points_a": pts[seat_a], "points_b": pts[1 - seat_a]})
        if progress is not None:
            progress(1)
    df = pd.DataFrame(rows)
    res = PairResult(a, b, matches, int(df.winner_is_a.sum()), int(df.hands.sum()), int(df.points_a.sum()),
                     int(df.points_b.sum()))
    return res, rows


def write_results(rows: list[dict], path: Path, key: dict) -> Path:
    """The per-match results as Parquet (atomic), keyed by what produced them."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pa.Table.from_pandas(pd.DataFrame(rows, columns=list(RESULT_COLUMNS)), preserve_index=False)
    meta = {b"truco_lab.people.arena": stable_hash(key).encode(), b"truco_lab.arena.run": repr(key).encode()}
    table = table.replace_schema_metadata({**(table.schema.metadata or {}), **meta})
    atomic_write(path, lambda tmp: pq.write_table(table, tmp))
    return path


def timed(f, *a, **k):
    t = time.perf_counter()
    out = f(*a, **k)
    return out, time.perf_counter() - t


def load_match_game(rules: RuleSet):
    """The match game the arena plays under ``rules`` (to 12, or Argentine truco's 30; four seats two against
    two)."""
    if rules.seats == 4:
        params = {"ranks": rules.ranks, "suits": rules.suits, "max_stake": max(rules.ladder)}
        return pyspiel.load_game(f"truco_{rules.name}_match", params)
    if rules.pack == "spanish":
        from truco_lab.openspiel.games import openspiel_hand

        _, hand = openspiel_hand(rules, 0, 0, 1)
        return pyspiel.load_game("truco_argentino_match", {k: v for k, v in hand.items()
                                                           if k not in ("score0", "score1", "dealer")})
    params = {"ranks": rules.ranks, "suits": rules.suits, "max_stake": max(rules.ladder), "rules": rules.name}
    return pyspiel.load_game("truco_paulista_match", params)


def value_loss(strategy, bot: BotBase, opponent: BotBase, matches: int, seed: int = 0) -> pd.DataFrame:
    """Where ``bot`` loses value against the solution: one row per decision of ``bot`` in ``matches``
    matches against ``opponent`` — ``kind`` (hand of eleven, answering a raise, round 1-3), the value of
    the solution's mix there minus the value of the bot's action, in the bot's match-win probability
    (both continuing as the solution would). Decisions in unsolved cells or off the solved tree are skipped."""
    from truco_lab.people.advice import advise

    game = load_match_game(strategy.rules)
    rows = []
    for m in range(matches):
        seat = m % 2
        st = game.new_initial_state()
        rng = deal_seed(seed, m // 2)
        while not st.is_terminal():
            if st.is_chance_node():
                for c in random_deal(rng, st.deck_list, st.deal_size):
                    st.apply_action(c)
                continue
            p = st.current_player()
            if p != seat:
                st.apply_action(opponent.act(st))
                continue
            a = bot.act(st)
            try:
                adv = advise(strategy, st)
            except KeyError:
                adv = None
            if adv is not None:
                vals = {pa: (pr, v) for pa, pr, v in zip(adv.actions.action, adv.actions.probability,
                                                         adv.actions.value, strict=True) if v == v}
                from truco_lab.rules.cards import action_str

                mine = vals.get(action_str(a))
                if mine is not None:
                    v = view_of(st.s, st.deck_list, st.legal_actions(), st.rules)
                    kind = ("hand of eleven" if v.eleven else "answer a raise" if v.pending_to
                            else f"round {len(v.rounds) + 1}")
                    best = sum(pr * x for pr, x in vals.values())
                    rows.append({"match": m, "kind": kind, "action": action_str(a), "loss": best - mine[1]})
            st.apply_action(a)
    return pd.DataFrame(rows, columns=["match", "kind", "action", "loss"])


class ArenaBots:
    """The arena's bots by name for one rule set: ``make(name, seed)`` builds a bot (a best response to a
    heuristic costs tree walks, so it is built once and re-seeded as a fresh bot would be)."""

    def __init__(self, rules: RuleSet, solved=None, cell: tuple[int, int, int] = (11, 11, 1), notify=None,
                 mccfr=None) -> None:
        self.rules, self.solved, self.cell, self.notify, self.mccfr = rules, solved, cell, notify, mccfr
        self.equity = solved.equity if solved is not None else None
        self._built: dict[tuple[str, int], BotBase] = {}
        self.made: list[BotBase] = []  # every bot built, for the fallback counts of those that have one

    def make(self, name: str, seed: int) -> BotBase:
        if name.startswith("br-") and name != "br-solved":
            bot = self._built.get((name, seed))
            if bot is None:
                bot = self._built[(name, seed)] = self._new(name, seed)
            bot.rng = np.random.default_rng(seed)
            return bot
        return self._new(name, seed)

    def fallback_lines(self) -> list[str]:
        """Per bot name with a fallback (mccfr, solved): how many of its decisions the fallback played."""
        out = []
        for name in dict.fromkeys(b.name for b in self.made if hasattr(b, "fallback_decisions")):
            bs = [b for b in self.made if b.name == name and hasattr(b, "fallback_decisions")]
            n, f = sum(b.decisions for b in bs), sum(b.fallback_decisions for b in bs)
            if n:
                out.append(f"{name}: {f:,} of its {n:,} decisions ({f / n:.1%}) played by its fallback "
                           f"({bs[0].fallback.name}: a state its strategy does not hold)")
        return out

    def _new(self, name: str, seed: int) -> BotBase:
        bot = self._make(name, seed)
        self.made.append(bot)
        return bot

    def _make(self, name: str, seed: int) -> BotBase:
        return make_bot(name, seed, self.solved, notify=self.notify, rules=self.rules, cell=self.cell,
                        equity=self.equity, mccfr=self.mccfr)

    @property
    def units(self) -> str:
        """The exploitability's units: match-win probability when a solution gives the equity table (every
        bot then, whichever are listed), else points per hand."""
        return "match-win probability" if self.equity is not None else "points per hand"


def exploitability_table(bots: ArenaBots, names: list[str], say) -> tuple[dict[str, float], str]:
    """Each listed bot's exact exploitability in ``bots.cell`` (best responses are skipped: theirs is not
    a question the arena answers), all in one unit; ``say`` gets one line per bot."""
    a, b, d = bots.cell
    out: dict[str, float] = {}
    for name in dict.fromkeys(names):
        if name.startswith("br-"):
            continue
        bot = make_bot(name, 0, bots.solved, notify=bots.notify)
        try:
            if isinstance(bot, SolvedBot):
                v = solved_exploitability(bot, (a, b), d)
            else:
                v = bot_exploitability(bot, bots.rules, (a, b), d, equity=bots.equity)
        except (KeyError, TypeError, ValueError) as e:
            say(f"{name}: exploitability not computed ({str(e).strip(chr(39))})")
            continue
        out[name] = v
        say(f"{name}: exploitability {v:.4f} ({bots.units}) in cell {a}x{b} dealer {d}")
    return out, bots.units
