"""The people layer: bots, best-response bots, the arena, the solution's advice, the terminal table."""
