"""Best-response bots and exact bot exploitability: a bot's strategy read at every information set of a
cell's native tree (built without prunes, so every legal action has a slot), the exact best response to
it there, and the backward-induction best response to the solved bot (the match certificate's)."""

from __future__ import annotations

import numpy as np

from solvers.vector import VectorSolver
from truco_lab.abstraction.levels import hand_levels, vira_class_of, vira_classes
from truco_lab.abstraction.tree import DROP_CONCEDE, HIDDEN, build_cell, openspiel_route
from truco_lab.lab.match import canonical
from truco_lab.people.bots import BotBase, HeuristicBot, RandomBot, SolvedBot, view_of
from truco_lab.rules import engine as E
from truco_lab.rules.cards import A_DOWN, A_RAISE, A_UP
from truco_lab.rules.ruleset import RuleSet


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
    slot_owner = tree.slot_infosets()  # once per tree (a search per step costs ms)
    e = int(tree.elem_entry[elem])
    while e >= 0:
        out.append(int(tree.entry_action[e]))
        owner = int(slot_owner[e])
        node = tree.infoset_nodes()[owner]
        p = int(tree.node_actor[node])
        elem = int(tree.node_list[node, p]) + owner - int(tree.node_infoset[node])
        e = int(tree.elem_entry[elem])
    return out[::-1]


def _state_at(tree, rules_array, paths, info: int) -> np.ndarray | None:
    """An engine state consistent with information set ``info``: its own cards and actions as the
    tree holds them (the element chain gives the private ones), the opponent's face-up plays from
    the public path, and their other cards filled in from what is left."""
    cell = tree.source
    node = int(tree.infoset_nodes()[info])
    p = int(tree.node_actor[node])
    elem = int(tree.node_list[node, p]) + info - int(tree.node_infoset[node])
    lvl_cards, card_level = hand_levels(tree.source.vira_class).lvl_cards, hand_levels(tree.source.vira_class).card_level
    free = {lv: [int(c) for c in lvl_cards[lv] if c >= 0] for lv in range(lvl_cards.shape[0])}
    own = [free[int(lv)].pop(0) for lv in hand_levels(tree.source.vira_class).hands[int(tree.elem_hand[elem])]]
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
    r = tree.source.rules.to_array()
    paths = _node_paths(tree)
    deck = [c for c in range(40) if hand_levels(tree.source.vira_class).card_level[c] >= 0 or c == tree.source.vira_class.vira]
    lvl_cards, card_level = hand_levels(tree.source.vira_class).lvl_cards, hand_levels(tree.source.vira_class).card_level
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

        if (state.start_score[0], state.start_score[1], state.dealer) != self.cell:
            return self.target.probabilities(state)
        tree, br = self.parts[vira_class_of(self.rules, state.vira).index]
        route = openspiel_route(tree, state)
        slots = [s for s in route.values() if s >= 0]
        info = int(tree.slot_infosets()[min(slots)])
        best = int(tree.infoset_offset[info]) + int(br[state.current_player()][info])
        return {next(a for a, s in route.items() if s == best): 1.0}


def solved_exploitability(bot: SolvedBot, score: tuple[int, int], dealer: int) -> float:
    """The solved bot's certified exploitability in a cell (from its match run's summary)."""

    cell, _ = canonical((score[0], score[1], dealer))
    row = bot.strategy.equity.rows.get(cell) or {}
    if "exploitability" not in row:
        raise KeyError(f"cell {score[0]}x{score[1]} dealer {dealer} is not solved in {bot.strategy.out}")
    return float(row["exploitability"])


class ResponseBot(BotBase):
    """The backward-induction best response to a :class:`SolvedBot`'s strategy (what the match
    certificate measured); elsewhere it plays like the solved bot's fallback."""

    def __init__(self, target: SolvedBot, seed: int | None = 0) -> None:
        super().__init__(seed)
        self.target = target
        self.name = f"best-response({target.name})"
        self.off_tree = 0  # decisions off the solved tree, played by the fallback (said once, counted)

    def probabilities(self, state) -> dict[int, float]:
        if self.target.covers(state):
            try:
                return {self.target.strategy.best_response_action(state): 1.0}
            except KeyError as e:  # off the solved tree (a pruned move earlier this hand)
                if not self.off_tree:
                    self.target.notify(f"{self.name}: {str(e).strip(chr(39))}; {self.target.fallback.name} plays "
                                       "such decisions (counted in off_tree)")
                self.off_tree += 1
        return self.target.fallback.probabilities(state)


