"""The MCCFR average strategy as a bot, and what it says at one decision (``explain`` for team games).

A ``truco-lab mccfr`` run holds one hand's table (one score, one dealer), keyed by hashes of information
states (:func:`truco_lab.openspiel.sampled.state_key`). The key is the player's cards (by strength where
only strength tells them apart), the vira and the public actions: it does not hold the score, so a run trained at one score answers the same information
states at every score of a match (its strategy is the points-per-hand one of its training hand; a side on
eleven, which has seen its partner's cards, meets states no 0×0 run trained). A match rotates the deal, so
the bot takes one run per dealer; where it has no run, or the run never visited the state, it plays its
fallback and counts the decision (``fallback_decisions``), never silently.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from solvers.mccfr import MCCFRSolver
from solvers.storage import read_json
from truco_lab.openspiel.sampled import sampled_game, state_key, strength_keys
from truco_lab.people.bots import BotBase, HeuristicBot
from truco_lab.rules.cards import A_CONCEDE
from truco_lab.rules.ruleset import RuleSet


@dataclass
class MCCFRRun:
    """One finished or checkpointed ``truco-lab mccfr`` run, loaded."""

    folder: Path
    rules: RuleSet
    score: tuple[int, int]
    dealer: int
    iterations: int
    solver: MCCFRSolver
    keys: str = "cards"  # how its information sets are keyed (truco_lab.openspiel.sampled.key_kind)

    @classmethod
    def load(cls, folder: str | Path) -> MCCFRRun:
        """``ValueError`` naming the folder when it holds no readable mccfr run."""
        folder = Path(folder)
        stamp = folder / "run.json"
        if not stamp.is_file():
            raise ValueError(f"{folder} holds no run.json: not a truco-lab mccfr run")
        run = read_json(stamp, "run file")
        if run.get("kind") != "mccfr":
            raise ValueError(f"{folder} is a {run.get('kind')!r} run, not a truco-lab mccfr run")
        d = run["describe"]
        rules = RuleSet.from_dict(d["rules"])
        keys = d.get("keys", "cards")
        if strength_keys(rules) and keys == "cards":
            raise ValueError(f"{folder} was trained with keys that name cards by suit, before strength keys: "
                             "its table answers no state now; train it again (truco-lab mccfr ... --fresh)")
        score = (int(d["score"][0]), int(d["score"][1]))
        game = sampled_game(rules, score, int(d["dealer"]), keys)
        solver = MCCFRSolver(game, sampling=d["sampling"], capacity=int(d["capacity"]), seed=int(d["seed"]))
        ck = folder / "checkpoints" / "mccfr.npz"
        if not ck.is_file():
            raise ValueError(f"{folder} has no checkpoint yet (checkpoints/mccfr.npz): run it first")
        solver.load(ck, run["key"])
        return cls(folder, rules, score, int(d["dealer"]), solver.iteration, solver, keys)


def load_runs(folders: list[str | Path]) -> list[MCCFRRun]:
    """Runs from folders; a folder that is not a run itself contributes its sub-folders that are (so one
    folder can hold a run per dealer). ``ValueError`` when none is found or two share a dealer and score."""
    runs: list[MCCFRRun] = []
    for f in map(Path, folders):
        if (f / "run.json").is_file():
            runs.append(MCCFRRun.load(f))
            continue
        subs = sorted(p for p in f.iterdir() if (p / "run.json").is_file()) if f.is_dir() else []
        if not subs:
            raise ValueError(f"{f} is neither a truco-lab mccfr run nor a folder of runs")
        runs += [MCCFRRun.load(p) for p in subs]
    seen: dict[int, Path] = {}
    for r in runs:
        if r.dealer in seen:
            raise ValueError(f"two runs for dealer {r.dealer} ({seen[r.dealer]} and {r.folder}): give one per dealer")
        seen[r.dealer] = r.folder
    if any(r.rules.to_dict() != runs[0].rules.to_dict() for r in runs):
        raise ValueError("the mccfr runs were trained under different rules: give runs of one rule set")
    return runs


def strategic_legal(state) -> list[int]:
    """The legal actions MCCFR's table indexes: the strategic game's. Conceding, offered at the table, is left
    out, except where going to the deck is a move of the game (argentino: the engine's legal actions hold it)."""
    legal = state.legal_actions()
    return legal if state.rules.deck_action else [a for a in legal if a != A_CONCEDE]


class MCCFRBot(BotBase):
    """Samples the MCCFR average strategy of the run for the hand's dealer (see the module docstring)."""

    name = "mccfr"

    def __init__(self, runs: list[MCCFRRun], fallback: BotBase | None = None, seed: int | None = 0,
                 notify=None, min_visits: int = 1) -> None:
        super().__init__(seed)
        if min_visits < 1:
            raise ValueError(f"min_visits must be at least 1, got {min_visits}")
        self.min_visits = int(min_visits)
        if not runs:
            raise ValueError("the mccfr bot needs at least one truco-lab mccfr run")
        self.runs = {r.dealer: r for r in runs}
        self.rules = runs[0].rules
        self.fallback = fallback or HeuristicBot("high", seed)
        self.notify = notify if notify is not None else (lambda msg: print(msg, file=sys.stderr))
        self.decisions = 0
        self.fallback_decisions = 0
        self._told: set[int] = set()

    def lookup(self, state) -> tuple[dict[int, float], int] | None:
        """(the average strategy here, the visits it was learnt from), or None without a run or with fewer than
        ``min_visits`` visits (a set met a few times holds an average of a few near-uniform strategies)."""
        run = self.runs.get(int(state.dealer))
        if run is None:
            return None
        legal = strategic_legal(state)
        p = state.current_player()
        probs, visits = run.solver.lookup(state_key(state, p, run.keys), len(legal))
        if visits < self.min_visits:
            return None
        return {a: float(x) for a, x in zip(legal, probs, strict=True)}, visits

    def probabilities(self, state) -> dict[int, float]:
        self.decisions += 1
        found = self.lookup(state)
        if found is not None:
            return found[0]
        d = int(state.dealer)
        if d not in self.runs and d not in self._told:
            self._told.add(d)
            self.notify(f"mccfr bot: no run for dealer {d}; playing {self.fallback.name} in those hands (train one: "
                        f"truco-lab mccfr --rules {self.rules.name} --score 0,0 --dealer {d} ...)")
        self.fallback_decisions += 1
        return self.fallback.probabilities(state)


@dataclass
class TeamAdvice:
    """The MCCFR average strategy at one decision of a team game."""

    score: tuple[int, int]
    dealer: int
    player: int
    hand: list[str]
    history: list[str]
    actions: list[tuple[str, float]]
    visits: int
    run: Path | None

    def __str__(self) -> str:
        lines = [f"score {self.score[0]}x{self.score[1]}, dealer {self.dealer}, seat {self.player} to act (side "
                 f"{self.player % 2}); hand {' '.join(self.hand)}",
                 f"history: {', '.join(self.history) if self.history else '(none)'}"]
        if self.run is None:
            lines.append("no mccfr run for this dealer: nothing to say")
            return "\n".join(lines)
        if not self.visits:
            lines.append(f"the mccfr run ({self.run}) never visited this information set: it has no strategy here "
                         "(it would play uniformly)")
            return "\n".join(lines)
        visits = f"{self.visits:,} visit{'s' if self.visits != 1 else ''}"
        lines.append(f"MCCFR average strategy ({self.run}), learnt from {visits} of this information set (a team "
                     "game: no equilibrium guarantee, see the arena for how it plays):")
        lines += [f"  {a:<24} {pr:>6.3f}" for a, pr in self.actions]
        return "\n".join(lines)


def team_advice(runs: list[MCCFRRun], state) -> TeamAdvice:
    """What the runs' average strategy says at ``state`` (the player to act)."""
    from truco_lab.rules.cards import A_DOWN, A_RAISE, action_str, card_str

    p = state.current_player()
    targets = state.rules.raise_targets
    run = {r.dealer: r for r in runs}.get(int(state.dealer))
    legal = strategic_legal(state)
    probs, visits = (run.solver.lookup(state_key(state, p, run.keys), len(legal)) if run is not None
                     else (np.full(len(legal), 1.0 / len(legal)), 0))
    hist = [action_str(a, targets) if not (A_DOWN <= a < A_RAISE and q != p) else "play_face_down ??"
            for q, a in state.hand_actions]
    return TeamAdvice(tuple(state.start_score), int(state.dealer), p,
                      [card_str(c) for c in state.deal[3 * p:3 * p + 3]], hist,
                      [(action_str(a, targets), float(x)) for a, x in zip(legal, probs, strict=True)], visits,
                      run.folder if run is not None else None)


def team_hand_state(rules: RuleSet, score: tuple[int, int], dealer: int, vira: str | None, hand, history):
    """A two-against-two hand state where the seat to act holds ``hand`` after ``history`` (a comma list of
    actions in notation; other seats' face-down cards as ``play_face_down``). The other seats hold the cards
    the history shows them playing, then unseen cards: the key MCCFR reads is the actor's own cards, the vira
    and the public actions, so any consistent deal gives the same answer. ``ExplainError`` names what is wrong."""
    import pyspiel

    from truco_lab.people.advice import ExplainError
    from truco_lab.rules.cards import card_str, parse_action, parse_cards

    try:
        vira_id = parse_cards([vira])[0] if rules.vira else None
        mine = parse_cards(hand)
    except (ValueError, IndexError) as e:
        raise ExplainError(str(e) or "--vira: give the turned-up card") from None
    if len(mine) != 3 or len(set(mine)) != 3:
        raise ExplainError(f"--hand needs three different cards, got {len(mine)}")
    deck = [int(c) for c in rules.deck]
    for c in (*mine, *([] if vira_id is None else [vira_id])):
        if c not in deck:
            raise ExplainError(f"card {card_str(c)} is not in this deck (ranks {rules.ranks}, suits {rules.suits})")
    items = [x.strip() for x in (history.split(",") if isinstance(history, str) else history) if x.strip()]
    acts: list[int | None] = []
    for x in items:
        if x.lower() in ("play_face_down", "play_face_down ??", "hide"):
            acts.append(None)
            continue
        try:
            acts.append(parse_action(x, rules.raise_targets))
        except ValueError as e:
            raise ExplainError(f"history item {x!r}: {e}") from None
    game = pyspiel.load_game(f"truco_{rules.name}", {"score0": score[0], "score1": score[1], "dealer": dealer,
                                                      "ranks": rules.ranks, "suits": rules.suits,
                                                      "max_stake": max(rules.ladder)})
    errors = []
    for seat in range(4):
        try:
            return _team_replay(game, mine, vira_id, deck, acts, items, seat)
        except ExplainError as e:
            errors.append(str(e))
    raise ExplainError(min(errors, key=len))


def _team_replay(game, mine, vira_id, deck, acts, items, seat):
    """Replay with ``mine`` at ``seat``, moving each card the history plays into its player's hand (and
    starting again) until the deal is consistent."""
    from truco_lab.people.advice import ExplainError
    from truco_lab.rules.cards import A_DOWN, A_RAISE, card_str

    rest = [c for c in deck if c not in mine and c != vira_id]
    hands = {q: ([*mine] if q == seat else [rest.pop(0) for _ in range(3)]) for q in range(4)}
    for _ in range(13):  # each pass fixes one card's owner
        st = game.new_initial_state()
        for q in range(4):
            for c in sorted(hands[q]):
                st.apply_action(c)
        if vira_id is not None:
            st.apply_action(vira_id)
        played = {q: set() for q in range(4)}
        moved = False
        for a, text in zip(acts, items, strict=True):
            p = st.current_player()
            if p < 0:
                raise ExplainError(f"the hand is already over before {text!r}")
            if a is None:
                if p == seat:
                    raise ExplainError(f"{text!r}: your own face-down card must be named, e.g. 'play_face_down 4d'")
                free = [c for c in hands[p] if c not in played[p]]
                a = A_DOWN + free[0]
            elif a < A_RAISE and (a % 40) not in hands[p]:
                c = a % 40
                if p == seat or c in mine:
                    raise ExplainError(f"{text!r}: card {card_str(c)} is not in the hand of seat {p}")
                owner = next((q for q in range(4) if c in hands[q]), None)
                if owner is not None and c in played[owner]:
                    raise ExplainError(f"card {card_str(c)} is played twice in the history")
                free = [x for x in hands[p] if x not in played[p]]
                if not free:
                    raise ExplainError(f"{text!r}: seat {p} has no card left")
                if owner is None:  # an undealt card: swap it in
                    rest.append(free[0])
                    rest.remove(c)
                else:
                    hands[owner][hands[owner].index(c)] = free[0]
                hands[p][hands[p].index(free[0])] = c
                moved = True
                break
            if a < A_RAISE:
                played[p].add(a % 40)
            try:
                st.apply_action(a)
            except ValueError as e:
                raise ExplainError(f"impossible history at {text!r}: {e}") from None
        if moved:
            continue
        if st.is_terminal():
            raise ExplainError("the hand is over after this history: nothing to decide")
        if st.current_player() != seat:
            raise ExplainError(f"after this history seat {st.current_player()} acts, not the holder of --hand")
        return st
    raise ExplainError("the history's cards cannot be dealt consistently")
