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
from solvers.vector import VectorSolver
from truco_lab import engine as E
from truco_lab.bots import BotBase, HeuristicBot, RandomBot, SolvedBot, view_of
from truco_lab.cards import A_DOWN, A_RAISE, A_UP
from truco_lab.public_tree import DROP_CONCEDE, HIDDEN, build_cell, vira_classes
from truco_lab.rules import RuleSet

RESULT_COLUMNS = ("bot_a", "bot_b", "match", "seat_a", "winner_is_a", "hands", "points_a", "points_b")


# ---- matches ------------------------------------------------------------------------------------------
def _deal(rng: np.random.Generator, deck: tuple, size: int = 7) -> list[int]:
    """A deal as the game's chance nodes would make it: each player's three in increasing id, then the
    vira (``size`` 7; 6 in rule sets without a vira)."""
    cards = [int(c) for c in rng.choice(np.asarray(deck), size, replace=False)]
    return sorted(cards[:3]) + sorted(cards[3:6]) + cards[6:]


def play_match(game, bots: tuple[BotBase, BotBase], deal_seed: int) -> tuple[int, int, list[int]]:
    """One match, ``bots[p]`` in seat ``p``: (winner seat, hands played, points scored per seat)."""
    st = game.new_initial_state()
    rng = np.random.default_rng(deal_seed)
    deck = st._g.deck_list
    hands = 0
    while not st.is_terminal():
        if st.is_chance_node():
            hands += 1
            for c in _deal(rng, deck, st._g.deal_size):
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
    def half_width(self) -> float:
        """95% normal-approximation interval of the win rate."""
        p = self.win_rate
        return 1.96 * math.sqrt(max(p * (1 - p), 1e-12) / self.matches)

    @property
    def points_per_hand(self) -> float:
        """A's points minus B's, per hand."""
        return (self.points_a - self.points_b) / max(self.hands, 1)

    def line(self) -> str:
        return (f"{self.a} vs {self.b}: {self.a} wins {self.win_rate:.3f} ± {self.half_width:.3f} (95%), "
                f"points per hand {self.points_per_hand:+.3f}, {self.matches} matches, {self.hands} hands")


def run_pair(game, make, a: str, b: str, matches: int, seed: int, progress=None) -> tuple[PairResult, list[dict]]:
    """``matches`` matches of bot ``a`` against ``b`` (``make(name, seed)`` builds a bot)."""
    rows = []
    bot_a, bot_b = make(a, seed), make(b, seed + 1)
    for m in range(matches):
        seat_a = m % 2
        pair = (bot_a, bot_b) if seat_a == 0 else (bot_b, bot_a)
        winner, hands, pts = play_match(game, pair, deal_seed=hash((seed, m // 2)) & 0x7FFFFFFF)
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
    meta = {b"truco_lab.arena": stable_hash(key).encode(), b"truco_lab.arena.run": repr(key).encode()}
    table = table.replace_schema_metadata({**(table.schema.metadata or {}), **meta})
    atomic_write(path, lambda tmp: pq.write_table(table, tmp))
    return path


# ---- a bot's strategy on a native tree ------------------------------------------------------------------
def _node_paths(tree) -> list[list[tuple[int, int]]]:
    """Public path (actor, public action code) from the root to every node."""
    paths: list[list[tuple[int, int]] | None] = [None] * tree.num_nodes
    paths[0] = []
    for n in range(1, tree.num_nodes):
        par = int(tree.node_parent[n])
        paths[n] = [*paths[par], (int(tree.node_actor[par]), int(tree.node_action[n]))]
    return paths


def _own_private(tree, elem: int) -> list[int]:
    """The player's own private action codes (oldest first) that led to ``elem``."""
    out = []
    if "_slot_owner" not in tree.meta:  # slot -> its information set, once per tree (a search per step costs ms)
        tree.meta["_slot_owner"] = np.repeat(np.arange(tree.num_infosets, dtype=np.int32),
                                             tree.infoset_nact.astype(np.int64))
    slot_owner = tree.meta["_slot_owner"]
    e = int(tree.elem_entry[elem])
    while e >= 0:
        out.append(int(tree.entry_action[e]))
        owner = int(slot_owner[e])
        node = tree.meta["_infoset_node"][owner]
        p = int(tree.node_actor[node])
        elem = int(tree.node_list[node, p]) + owner - int(tree.node_infoset[node])
        e = int(tree.elem_entry[elem])
    return out[::-1]


def _state_at(tree, rules_array, paths, info: int) -> np.ndarray | None:
    """An engine state consistent with information set ``info``: its own cards and actions as the
    tree holds them (the element chain gives the private ones), the opponent's face-up plays from
    the public path, and their other cards filled in from what is left."""
    cell = tree.source
    node = int(tree.meta["_infoset_node"][info])
    p = int(tree.node_actor[node])
    elem = int(tree.node_list[node, p]) + info - int(tree.node_infoset[node])
    lvl_cards, card_level = tree.meta["lvl_cards"], tree.meta["card_level"]
    free = {lv: [int(c) for c in lvl_cards[lv] if c >= 0] for lv in range(lvl_cards.shape[0])}
    own = [free[int(lv)].pop(0) for lv in tree.meta["hands"][int(tree.elem_hand[elem])]]
    path = paths[node]
    try:
        opp_up = [free[int(card_level[a - A_UP])].pop(0) for q, a in path if q != p and a < A_DOWN]
    except IndexError:
        return None  # the opponent showed a card this hand holds: the set is never reached
    filler = [c for lv in sorted(free) for c in free[lv]][: 3 - len(opp_up)]
    cards = own + opp_up + filler if p == 0 else opp_up + filler + own
    s = np.zeros(E.STATE_SIZE, np.int32)
    E.new_hand(s, rules_array, cell.dealer, cell.score0, cell.score1, np.array(cards, np.int32),
               cell.vira_class.vira)
    private = iter(_own_private(tree, elem))
    own_left, up_left = list(own), list(opp_up)
    for q, a in path:
        if q == p:
            a = next(private)  # the element chain holds every own action, cards with their level
            if a < A_RAISE:
                base = A_UP if a < A_DOWN else A_DOWN
                c = next(x for x in own_left if card_level[x] == card_level[a - base])
                own_left.remove(c)
                a = base + c
        elif a < A_DOWN:
            a = A_UP + up_left.pop(0)
        elif a == HIDDEN:
            a = A_DOWN + filler.pop(0)
        E.apply_unchecked(s, rules_array, a)
    return s


def tree_strategy(tree, probabilities_at) -> np.ndarray:
    """A bot's behaviour strategy over ``tree``'s slots: ``probabilities_at(view)`` at every
    information set (same-level cards share a slot and their probabilities add up)."""
    if "_infoset_node" not in tree.meta:
        tree.meta["_infoset_node"] = tree.infoset_node()
    r = tree.source.rules.to_array()
    paths = _node_paths(tree)
    deck = [c for c in range(40) if tree.meta["card_level"][c] >= 0 or c == tree.source.vira_class.vira]
    lvl_cards, card_level = tree.meta["lvl_cards"], tree.meta["card_level"]
    strat = np.zeros(tree.num_slots, np.float32)
    buf = np.empty(E.MAX_LEGAL, np.int32)
    for i in range(tree.num_infosets):
        o, m = int(tree.infoset_offset[i]), int(tree.infoset_nact[i])
        if m <= 1:
            strat[o:o + m] = 1.0
            continue
        s = _state_at(tree, r, paths, i)
        if s is None:  # unreachable (card removal): any strategy will do
            strat[o:o + m] = 1.0 / m
            continue
        n = E.legal_actions(s, r, buf, False)
        probs = probabilities_at(view_of(s, deck, buf[:n].tolist(), tree.source.rules))
        by_code = {int(tree.entry_action[o + k]): o + k for k in range(m)}
        for a, pr in probs.items():
            if a < A_DOWN:
                code = A_UP + int(lvl_cards[card_level[a - A_UP], 0])
            elif a < A_RAISE:
                code = A_DOWN + int(lvl_cards[card_level[a - A_DOWN], 0])
            else:
                code = a
            if code not in by_code:
                raise KeyError(f"information set {i}: the bot's action {a} has no slot in the tree")
            strat[by_code[code]] += pr
    return strat


def _view_policy(bot: BotBase):
    """``view -> probabilities`` of a bot that decides from its view (heuristic, random)."""
    if isinstance(bot, HeuristicBot):
        return bot.probabilities_at
    if isinstance(bot, RandomBot):
        return lambda v: {a: 1.0 / len(v.legal) for a in v.legal}
    raise TypeError(f"{bot.name}: this needs a bot that decides from its view (heuristic, random); the solved "
                    "bot's exploitability is its certificate and its best response is br-solved")


def _cell_trees(rules: RuleSet, score: tuple[int, int], dealer: int, equity=None):
    """(vira class, tree) of one cell, every legal action of the strategic game kept."""
    for vc in vira_classes(rules):
        yield vc, build_cell(rules, score[0], score[1], dealer, vc, DROP_CONCEDE,
                             payoff="equity" if equity is not None else "points", equity=equity)


def bot_exploitability(bot: BotBase, rules: RuleSet, score: tuple[int, int], dealer: int, equity=None) -> float:
    """The exact exploitability (NashConv / 2) of ``bot`` playing both seats of one cell, weighted
    over vira classes: match-win probability with an equity table, else points per hand."""
    at = _view_policy(bot)
    total = 0.0
    for vc, tree in _cell_trees(rules, score, dealer, equity):
        total += vc.weight * VectorSolver(tree, "cfr").exploitability(tree_strategy(tree, at))
    return total


class CellResponseBot(BotBase):
    """The exact best response to ``target`` in one score cell (computed on the cell's native trees
    against the target's strategy there); in other cells it plays like ``target``."""

    def __init__(self, target: BotBase, rules: RuleSet, score: tuple[int, int], dealer: int, equity=None,
                 seed: int | None = 0) -> None:
        super().__init__(seed)
        self.target, self.rules = target, rules
        self.cell = (int(score[0]), int(score[1]), int(dealer))
        self.name = f"best-response({target.name}, {score[0]}x{score[1]} d{dealer})"
        at = _view_policy(target)
        self.parts = {}
        self.values = [0.0, 0.0]  # each seat's best-response value (the cell's units)
        for vc, tree in _cell_trees(rules, score, dealer, equity):
            strat = tree_strategy(tree, at)
            solver = VectorSolver(tree, "cfr")
            b0, b1 = solver.best_response_values(strat)
            self.values[0] += vc.weight * b0
            self.values[1] += vc.weight * b1
            self.parts[vc.index] = (tree, {p: solver.best_response_actions(p, strat) for p in (0, 1)})

    def probabilities(self, state) -> dict[int, float]:
        from truco_lab.public_tree import openspiel_route, vira_class_of

        if (state.start_score[0], state.start_score[1], state.dealer) != self.cell:
            return self.target.probabilities(state)
        tree, br = self.parts[vira_class_of(self.rules, state.vira).index]
        route = openspiel_route(tree, state)
        slots = [s for s in route.values() if s >= 0]
        info = int(tree.meta["_slot_owner"][min(slots)]) if "_slot_owner" in tree.meta else int(
            np.searchsorted(tree.infoset_offset, min(slots), side="right") - 1)
        best = int(tree.infoset_offset[info]) + int(br[state.current_player()][info])
        return {next(a for a, s in route.items() if s == best): 1.0}


def solved_exploitability(bot: SolvedBot, score: tuple[int, int], dealer: int) -> float:
    """The solved bot's certified exploitability in a cell (from its match run's summary)."""
    from truco_lab.lab.match import canonical

    cell, _ = canonical((score[0], score[1], dealer))
    row = bot.strategy.equity.rows.get(cell) or {}
    if "exploitability" not in row:
        raise KeyError(f"cell {score[0]}x{score[1]} dealer {dealer} is not solved in {bot.strategy.out}")
    return float(row["exploitability"])


def timed(f, *a, **k):
    t = time.perf_counter()
    out = f(*a, **k)
    return out, time.perf_counter() - t


def load_match_game(rules: RuleSet):
    params = {"ranks": rules.ranks, "suits": rules.suits, "max_stake": max(rules.ladder), "rules": rules.name}
    return pyspiel.load_game("truco_paulista_match", params)


def value_loss(strategy, bot: BotBase, opponent: BotBase, matches: int, seed: int = 0) -> pd.DataFrame:
    """Where ``bot`` loses value against the solution: one row per decision of ``bot`` in ``matches``
    matches against ``opponent`` — ``kind`` (hand of eleven, answering a raise, round 1-3), the value of
    the solution's mix there minus the value of the bot's action, in the bot's match-win probability
    (both continuing as the solution would). Decisions in unsolved cells or off the solved tree are skipped."""
    from truco_lab.advice import advise
    from truco_lab.bots import view_of

    game = load_match_game(strategy.rules)
    rows = []
    for m in range(matches):
        seat = m % 2
        st = game.new_initial_state()
        rng = np.random.default_rng(hash((seed, m // 2)) & 0x7FFFFFFF)
        while not st.is_terminal():
            if st.is_chance_node():
                for c in _deal(rng, st._g.deck_list, st._g.deal_size):
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
                from truco_lab.cards import action_str

                mine = vals.get(action_str(a))
                if mine is not None:
                    v = view_of(st.s, st._g.deck_list, st.legal_actions(), st._g.rules)
                    kind = ("hand of eleven" if v.eleven else "answer a raise" if v.pending_to
                            else f"round {len(v.rounds) + 1}")
                    best = sum(pr * x for pr, x in vals.values())
                    rows.append({"match": m, "kind": kind, "action": action_str(a), "loss": best - mine[1]})
            st.apply_action(a)
    return pd.DataFrame(rows, columns=["match", "kind", "action", "loss"])
