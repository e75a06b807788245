"""Helpers shared by the rule-set tests: actions in notation, random playouts through the OpenSpiel games."""

from __future__ import annotations

import random
from collections.abc import Callable


def play_randomly(state, rng: random.Random, each: Callable | None = None):
    """Play ``state`` to its end: chance outcomes by their probabilities, players uniformly over their legal
    actions; ``each(state, was_chance)`` is called before every step. Returns the terminal state."""
    while not state.is_terminal():
        chance = state.is_chance_node()
        if each is not None:
            each(state, chance)
        if chance:
            outs = state.chance_outcomes()
            state.apply_action(rng.choices([a for a, _ in outs], [p for _, p in outs])[0])
        else:
            state.apply_action(rng.choice(state.legal_actions()))
    return state


def play(h, *actions):
    """Apply ``actions`` (notation) to a ``HandState`` in turn; returns it."""
    for a in actions:
        h.apply(a)
    return h
