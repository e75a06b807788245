"""The bots by name, as the CLI, the arena and the tables take them."""

from __future__ import annotations

from pathlib import Path

from truco_lab.lab.policy import MatchStrategy
from truco_lab.people.bots import BotBase, HeuristicBot, RandomBot, SolvedBot
from truco_lab.people.responses import CellResponseBot, ResponseBot

BOT_NAMES = ("solved", "heuristic-low", "heuristic-high", "random", "mccfr")
BR_NAMES = ("heuristic", "br-solved", "br-heuristic-high", "br-heuristic-low", "br-random")


def make_bot(name: str, seed: int | None = 0, solved=None, notify=None, *, rules=None, cell=None,
             equity=None, mccfr=None) -> BotBase:
    """A bot by name: ``solved`` (needs ``solved``: a match run folder or a MatchStrategy),
    ``heuristic-low``, ``heuristic-high`` (``heuristic`` = high), ``random``; ``br-solved`` (the
    match-wide best response to the solved bot) or ``br-<bot>`` for a heuristic or random bot (the exact
    best response to it in ``cell`` = (score0, score1, dealer) under ``rules``, playing like it elsewhere);
    ``mccfr`` (needs ``mccfr``: loaded ``truco-lab mccfr`` runs, one per dealer)."""
    key = name.strip().lower()
    if key == "mccfr":
        if not mccfr:
            raise ValueError("bot 'mccfr' needs truco-lab mccfr runs (--mccfr DIR)")
        from truco_lab.people.mccfr_bot import MCCFRBot

        return MCCFRBot(mccfr, HeuristicBot("high", seed), seed, notify)
    if key == "random":
        return RandomBot(seed)
    if key in ("heuristic", "heuristic-high", "heuristic-low"):
        return HeuristicBot("low" if key.endswith("low") else "high", seed)
    if key in ("solved", "br-solved"):
        if solved is None:
            raise ValueError(f"bot {name!r} needs a solved match run (--solved DIR)")
        strat = solved if not isinstance(solved, (str, Path)) else MatchStrategy(solved)
        bot = SolvedBot(strat, seed=seed, notify=notify)
        return bot if key == "solved" else ResponseBot(bot, seed)
    if key.startswith("br-") and key[3:] in ("heuristic", "heuristic-high", "heuristic-low", "random"):
        if rules is None or cell is None:
            raise ValueError(f"bot {name!r} needs rules and a cell (score0, score1, dealer)")
        return CellResponseBot(make_bot(key[3:], seed), rules, cell[:2], cell[2], equity=equity, seed=seed)
    raise ValueError(f"unknown bot {name!r}; expected one of {', '.join(BOT_NAMES)}, heuristic, br-solved or "
                     "br-<heuristic-high|heuristic-low|random>")
