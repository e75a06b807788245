"""Two-player zero-sum game trees as flat arrays (the solvers' only view of a game).

Nodes are numbered breadth-first from the root (0), so every parent precedes
its children and a node's children are contiguous: child ``a`` of node ``n``
is node ``child_start[n] + a``. Numba kernels walk these arrays forwards
(reach probabilities) and backwards (values) without recursion or Python
objects. Information sets own a contiguous block of action slots starting at
``infoset_offset[I]``; regrets and strategy sums are arrays over slots.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

import numpy as np

TERMINAL = 0
CHANCE = 1
DECISION = 2


@dataclass
class GameTree:
    """A flat game tree. ``utility`` is player 0's payoff at terminals."""

    node_type: np.ndarray  # int8 [N]
    node_player: np.ndarray  # int8 [N], -1 for chance/terminal
    node_infoset: np.ndarray  # int32 [N], -1 for chance/terminal
    child_start: np.ndarray  # int32 [N]
    num_children: np.ndarray  # int32 [N]
    chance_prob: np.ndarray  # float64 [N]: probability of the edge into the node (1 below decisions)
    utility: np.ndarray  # float64 [N]
    infoset_player: np.ndarray  # int8 [M]
    infoset_offset: np.ndarray  # int32 [M]
    infoset_nact: np.ndarray  # int32 [M]
    # Python-side metadata (not used by kernels)
    infoset_keys: list = field(default_factory=list)
    infoset_actions: list = field(default_factory=list)
    source: str = ""

    @property
    def num_nodes(self) -> int:
        return int(self.node_type.shape[0])

    @property
    def num_infosets(self) -> int:
        return int(self.infoset_player.shape[0])

    @property
    def num_slots(self) -> int:
        """Information-set actions (table entries)."""
        return int(self.infoset_nact.sum())

    def nbytes(self) -> int:
        return sum(
            a.nbytes
            for a in (
                self.node_type, self.node_player, self.node_infoset, self.child_start, self.num_children,
                self.chance_prob, self.utility, self.infoset_player, self.infoset_offset, self.infoset_nact,
            )
        )


def build_openspiel_tree(game, progress: bool = False) -> GameTree:
    """Walk an OpenSpiel game once, breadth-first, into a :class:`GameTree`.

    For validation and for users' own games; large games belong to native builders.
    """
    import pyspiel

    gt = game.get_type()
    if game.num_players() != 2 or gt.utility not in (pyspiel.GameType.Utility.ZERO_SUM, pyspiel.GameType.Utility.CONSTANT_SUM):
        raise ValueError(f"solvers need a two-player zero-sum game, got {gt.short_name} ({game.num_players()} players, {gt.utility})")
    ntype, nplayer, ninfo, cstart, nchild, cprob, util = [], [], [], [], [], [], []
    info_index: dict[str, int] = {}
    keys: list[str] = []
    actions: list[list[int]] = []
    iplayer: list[int] = []
    queue = deque([(game.new_initial_state(), 1.0)])
    next_id = 1
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(desc="walking tree", unit=" nodes")
    while queue:
        state, p = queue.popleft()
        cprob.append(p)
        if state.is_terminal():
            ntype.append(TERMINAL)
            nplayer.append(-1)
            ninfo.append(-1)
            cstart.append(0)
            nchild.append(0)
            util.append(state.returns()[0])
        elif state.is_chance_node():
            outs = state.chance_outcomes()
            ntype.append(CHANCE)
            nplayer.append(-1)
            ninfo.append(-1)
            cstart.append(next_id)
            nchild.append(len(outs))
            util.append(0.0)
            next_id += len(outs)
            for a, q in outs:
                queue.append((state.child(a), q))
        else:
            pl = state.current_player()
            key = state.information_state_string(pl)
            legal = state.legal_actions()
            if key not in info_index:
                info_index[key] = len(keys)
                keys.append(key)
                actions.append(list(legal))
                iplayer.append(pl)
            elif actions[info_index[key]] != list(legal):
                raise ValueError(f"information set {key!r} has different legal actions in different states")
            ntype.append(DECISION)
            nplayer.append(pl)
            ninfo.append(info_index[key])
            cstart.append(next_id)
            nchild.append(len(legal))
            util.append(0.0)
            next_id += len(legal)
            for a in legal:
                queue.append((state.child(a), 1.0))
        if bar is not None:
            bar.update(1)
    if bar is not None:
        bar.close()
    nact = np.array([len(a) for a in actions], np.int32)
    offset = np.zeros(len(actions), np.int32)
    if len(actions):
        offset[1:] = np.cumsum(nact)[:-1]
    return GameTree(
        node_type=np.array(ntype, np.int8),
        node_player=np.array(nplayer, np.int8),
        node_infoset=np.array(ninfo, np.int32),
        child_start=np.array(cstart, np.int32),
        num_children=np.array(nchild, np.int32),
        chance_prob=np.array(cprob, np.float64),
        utility=np.array(util, np.float64),
        infoset_player=np.array(iplayer, np.int8),
        infoset_offset=offset,
        infoset_nact=nact,
        infoset_keys=keys,
        infoset_actions=actions,
        source=str(game),
    )
