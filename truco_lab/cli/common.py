"""What every command shares: the parser that fails in one line, argument types, the rule-set options and
their one reading into a :class:`RuleSet`, signals."""

from __future__ import annotations

import argparse
import math
import sys

from truco_lab.rules import RULE_SETS, TEAM_RULE_SETS, RuleSet

SEED_MAX = 2**63 - 1  # seeds feed 64-bit generators


class Parser(argparse.ArgumentParser):
    """Bad arguments: one line naming the argument and what is accepted, exit code 2."""

    def error(self, message: str):
        self.exit(2, f"{self.prog}: error: {message}\n")


class CliError(Exception):
    """A command's one-line refusal (exit 2 unless ``code`` says otherwise)."""

    def __init__(self, message: str, code: int = 2) -> None:
        super().__init__(message)
        self.code = code


def err(prog: str, msg: str, code: int = 2) -> int:
    """Print ``prog: error: msg`` (first line only) on stderr and return ``code``."""
    print(f"{prog}: error: {msg.splitlines()[0] if msg else msg}", file=sys.stderr)
    return code


def nonneg_int(text: str) -> int:
    try:
        v = int(text)
    except ValueError:
        v = -1
    if v < 0:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 0, got {text!r}")
    return v


def seed(text: str) -> int:
    """A random seed: a whole number 0 .. 2**63 - 1."""
    try:
        v = int(text)
    except ValueError:
        v = -1
    if not 0 <= v <= SEED_MAX:
        raise argparse.ArgumentTypeError(f"expected a whole number in 0..{SEED_MAX}, got {text!r}")
    return v


def positive_int(text: str) -> int:
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if v <= 0:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return v


def positive_float(text: str) -> float:
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive number, got {text!r}") from None
    if not (v > 0 and math.isfinite(v)):
        raise argparse.ArgumentTypeError(f"expected a positive finite number, got {text!r}")
    return v


def nonnegative_float(text: str) -> float:
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number >= 0, got {text!r}") from None
    if not (v >= 0 and math.isfinite(v)):
        raise argparse.ArgumentTypeError(f"expected a finite number >= 0, got {text!r}")
    return v


def prob(text: str) -> float:
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a probability in [0, 1), got {text!r}") from None
    if not 0 <= v < 1:
        raise argparse.ArgumentTypeError(f"expected a probability in [0, 1), got {text!r}")
    return v


def score_pair(text: str) -> tuple[int, int]:
    """``A,B``: two integers. Their range depends on the rule set's target, so :func:`check_score` checks
    it once the rules are known (argparse's type runs before)."""
    try:
        a, b = (int(x) for x in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected A,B with two integers, got {text!r}") from None
    return a, b


def check_score(rules: RuleSet, score: tuple[int, int] | None, option: str = "--score") -> None:
    """``CliError`` unless both scores are live under ``rules`` (0 .. target - 1)."""
    if score is None:
        return
    a, b = score
    t = rules.target
    if not (0 <= a < t and 0 <= b < t):
        raise CliError(f"argument {option}: expected A,B with integers 0..{t - 1} ({rules.name} plays to {t}), "
                       f"got '{a},{b}'")


def add_rules_options(p: argparse.ArgumentParser, *, team: bool = False, argentine_options: bool = False) -> None:
    """``--rules``, ``--ranks``, ``--suits``, ``--max-stake`` (and argentino's ``--flor``, ``--deck-penalty``)."""
    names = tuple(RULE_SETS) + (tuple(TEAM_RULE_SETS) if team else ())
    p.add_argument("--rules", choices=names, default="paulista",
                   help="rule set: " + ", ".join(names) + " (paulista: seed 000, the default; paulista_house: seed "
                        "001's table; mineiro: seed 003; argentino: seed 004; *_2v2: two against two)")
    p.add_argument("--ranks", default=None, help="deck ranks (small variants; default the rule set's whole pack; "
                                                 "argentino: numbers, e.g. '1 7 12')")
    p.add_argument("--suits", default=None, help="deck suits (small variants; argentino: e b o c)")
    stakes = sorted({v for rs in RULE_SETS.values() for v in rs.ladder})
    p.add_argument("--max-stake", type=int, choices=stakes, default=None, metavar="{" + ",".join(map(str, stakes)) + "}",
                   help="top of the raise ladder, a rung of the rules' ladder (default its top: paulista 1 3 6 9 12, "
                        "mineiro 2 4 8 10 12, argentino 1 2 3 4)")
    if argentine_options:
        p.add_argument("--flor", action="store_true", help="argentino: play with flor (seed 003's option)")
        p.add_argument("--deck-penalty", action="store_true",
                       help="argentino: going to the deck in the first trick before the envido costs one more "
                            "(seed 003)")
        p.add_argument("--target", type=int, default=None, dest="match_target",
                       help="argentino: points that win the match (default 30; a solved small-deck match may be "
                            "shorter)")


def rules_from_args(args: argparse.Namespace, any_pack: bool = False) -> RuleSet:
    """The rule set the options name (:meth:`RuleSet.from_options`); ``CliError`` naming the option. Without
    ``any_pack`` only the French-pack rule sets (the native trees, bots and tables) are accepted."""
    try:
        rules = RuleSet.from_options(args.rules, ranks=args.ranks, suits=args.suits, max_stake=args.max_stake,
                                     flor=getattr(args, "flor", False),
                                     deck_penalty=getattr(args, "deck_penalty", False),
                                     target=getattr(args, "match_target", None))
    except ValueError as e:
        raise CliError(str(e)) from None
    if rules.pack != "french" and not any_pack:
        raise CliError(f"argument --rules: rule set {rules.name} works with `truco-lab solve`, `mccfr`, `play`, "
                       "`arena` and its OpenSpiel games so far (its match on small decks: python "
                       "experiments/argentine_match.py); this command covers paulista, paulista_house and mineiro")
    return rules


def load_mccfr_option(folders: list[str] | None, rules: RuleSet, needed: bool) -> list | None:
    """``--mccfr``'s runs, checked against ``--rules`` (``CliError`` naming what is wrong)."""
    if not folders:
        if needed:
            raise CliError("--bots mccfr needs --mccfr DIR (truco-lab mccfr runs of these rules, one per dealer)")
        return None
    from truco_lab.people.mccfr_bot import load_runs

    try:
        runs = load_runs(folders)
    except ValueError as e:
        raise CliError(f"argument --mccfr: {e}") from None
    if runs[0].rules.to_dict() != rules.to_dict():
        raise CliError(f"argument --mccfr: the runs were trained under '{runs[0].rules.cli_options() or '(defaults)'}',"
                       f" not these rules ('{rules.cli_options() or '(defaults)'}'): give the same rule options")
    return runs


def sigterm_as_interrupt():
    """A cluster's preemption (SIGTERM) is handled like Ctrl-C inside the block: checkpoint, one line, exit 130.
    Both go through :func:`solvers.signals.interrupts`: an interrupt is never lost in a finalizer or a weakref
    callback (where Python would drop it), and the handlers before are restored afterwards (``main`` called
    in-process leaves none behind)."""
    from solvers.signals import interrupts

    return interrupts()


def join_negative_values(argv: list[str]) -> list[str]:
    """``--score -1,0`` (and ``--seed -1``) reach their checks (argparse would take ``-1,0`` for an option)."""
    out = []
    i = 0
    while i < len(argv):
        if argv[i] in ("--score", "--cell", "--cells", "--seed") and i + 1 < len(argv) and argv[i + 1][:1] == "-" \
                and argv[i + 1][1:2].isdigit():
            out.append(f"{argv[i]}={argv[i + 1]}")
            i += 2
            continue
        out.append(argv[i])
        i += 1
    return out
