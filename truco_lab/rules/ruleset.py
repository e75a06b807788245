"""Rules as data: one :class:`RuleSet` describes a truco system.

The numba engine never sees this class; it reads the flat ``int32`` array
produced by :meth:`RuleSet.to_array`, so adding a rule set (house rules,
Mineiro, ...) is new data here plus engine code only where a rule is new.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

from truco_lab.rules.cards import RANKS, SUITS

# Layout of the rules array read by the engine (indices are a private ABI
# between this module and truco_lab.rules.engine).
R_LADDER = 0  # 5 slots: ladder values, 0-padded
R_NLADDER = 5  # number of live ladder entries (1 = no raises)
R_TARGET = 6  # match target (scores cap here)
R_ELEVEN_ON = 7  # mão de onze enabled
R_ELEVEN_VALUE = 8  # value of an accepted mão de onze
R_ELEVEN_FOLD = 9  # points the opponent gets when the player on 11 folds
R_ELEVEN_ELEVEN_VALUE = 10  # value of the 11 x 11 hand
R_FACEDOWN_FROM = 11  # first round index (0-based) where face-down is legal
R_ALL_TIED = 12  # ALL_TIED_LEADER or ALL_TIED_DRAW
R_SPLIT_TIE = 13  # SPLIT_TIE_FIRST_WINNER (only mode so far)
R_NEXT_RANK = 14  # 10 slots: manilha rank for each vira rank (-1: rank unused)
R_RAISE_TO_WIN = 24  # 1: a raise is allowed even when accepting the stake would already win the match
R_BLIND_IRON = 25  # 1: the 11 x 11 hand is played blind (cards flipped in dealt order, unseen)
R_VIRA = 26  # 1: a vira is turned and names the manilha rank; 0: no vira (Mineiro)
R_FIXED = 27  # 4 slots: fixed manilha card ids, weakest first (-1: none), for rule sets without a vira
# added for seed 004's Argentine truco (issue 9); zero for every earlier rule set except R_RERAISE
R_TABLE = 31  # 1: trick strength read from the R_STRENGTH table (the Spanish pack's fixed order)
R_STRENGTH = 32  # 40 slots: trick strength of each card id (higher wins, equal ties)
R_ENVIDO = 72  # 1: envido betting in the first trick (seed 004 §5-6)
R_FLOR = 73  # points of a flor (three of a suit, scored when dealt; then no envido), 0: no flor
R_DECK = 74  # 1: going to the deck is an action of the game (legal whenever no bid is pending)
R_DECK_EXTRA = 75  # extra points for going to the deck in the first trick before the envido is sung
R_RERAISE = 76  # 1: a raise may answer a pending raise (paulista); 0: only accept or decline it (argentino)
R_ENV_VAL = 77  # 40 slots: envido value of each card id
R_SEATS = 117  # 2 (heads-up) or 4 (two against two, partners facing; seed 003)
R_SIZE = 118

ALL_TIED_LEADER = 0
ALL_TIED_DRAW = 1
SPLIT_TIE_FIRST_WINNER = 0

FULL_LADDER = (1, 3, 6, 9, 12)
FLOR_POINTS = 3  # seed 003: "three cards of one suit score 3 as soon as they are dealt"
SPANISH_RANK_CODES = "1234567SCR"  # the Spanish pack's ranks 1-7, 10 (sota), 11 (caballo), 12 (rey)
PACKS = {"french": (RANKS, SUITS), "spanish": (SPANISH_RANK_CODES, "eboc")}


@dataclass(frozen=True)
class RuleSet:
    """A truco rule set. The defaults are seed 000 (heads-up truco paulista)."""

    name: str = "paulista"
    ladder: tuple[int, ...] = FULL_LADDER
    target: int = 12
    mao_de_onze: bool = True
    eleven_value: int = 3
    eleven_fold_points: int = 1
    eleven_eleven_value: int = 3
    face_down_from_round: int = 2  # 1-based, as the seed says "from round 2 on"
    all_tied: str = "leader"  # "leader" (seed 000) or "draw" (seed 001)
    split_then_tie: str = "first_winner"
    ranks: str = "4567QJKA23"  # ranks in the deck, weakest first
    suits: str = "dshc"  # suits in the deck, manilha order weakest first
    extra: dict = field(default_factory=dict, compare=False, repr=False)
    # added for seed 001's house rules; serialized only when they differ from these defaults, so the
    # hashes of every earlier paulista run stay valid
    raise_to_win: bool = True  # seed 001: no raise when accepting the stake would already win the match
    blind_iron_hand: bool = False  # seed 001: at 11 x 11 nobody sees their cards; they are flipped blind
    # added for seed 003's Mineiro (same rule: serialized only when not the default)
    vira: bool = True  # False: no card is turned; the manilhas are ``fixed_manilhas``
    fixed_manilhas: str = ""  # card literals, weakest first (Mineiro: "7d As 7h 4c")
    # added for seed 004's Argentine truco (same rule: serialized only when not the default)
    pack: str = "french"  # "spanish": the 40-card Spanish pack, its notation (1e, 12c) and fixed trick order
    envido: bool = False  # envido betting in the first trick (seed 004 §5-6, §8)
    flor: bool = False  # seed 003's option: three of a suit score 3 when dealt, and then there is no envido
    deck_action: bool = False  # going to the deck (giving the hand up) is an action of the game
    deck_extra: int = 0  # seed 003's option: going to the deck in the first trick before the envido costs 1 more
    reraise: bool = True  # False: a raise is answered only by accepting or declining (seed 004 §7)
    seats: int = 2  # 4: two against two, partners facing (seed 003)

    def __post_init__(self) -> None:
        if not self.ladder or not isinstance(self.ladder[0], int) or self.ladder[0] < 1:
            raise ValueError(f"ladder must start at the hand's base value (>= 1), got {self.ladder!r}")
        if list(self.ladder) != sorted(set(self.ladder)) or len(self.ladder) > 5:
            raise ValueError(f"ladder must be increasing with at most 5 rungs, got {self.ladder!r}")
        if self.all_tied not in ("leader", "draw"):
            raise ValueError(f"all_tied must be 'leader' or 'draw', got {self.all_tied!r}")
        if self.split_then_tie != "first_winner":
            raise ValueError(f"split_then_tie must be 'first_winner', got {self.split_then_tie!r}")
        if self.face_down_from_round not in (1, 2, 3, 4):
            raise ValueError(
                f"face_down_from_round must be 1..3 (4 = never), got {self.face_down_from_round!r}"
            )
        if self.seats not in (2, 4):
            raise ValueError(f"seats must be 2 or 4, got {self.seats!r}")
        if self.seats == 4 and (self.envido or self.flor or self.blind_iron_hand):
            raise ValueError("two against two covers paulista and mineiro (no envido, flor or blind iron hand)")
        if self.pack not in PACKS:
            raise ValueError(f"pack must be one of {', '.join(PACKS)}, got {self.pack!r}")
        _check_subset("ranks", self.ranks, PACKS[self.pack][0])
        _check_subset("suits", self.suits, PACKS[self.pack][1])
        if len(self.ranks) * len(self.suits) < self.deal_size:
            raise ValueError(
                f"a deck of ranks={self.ranks!r} x suits={self.suits!r} has "
                f"{len(self.ranks) * len(self.suits)} cards; a hand needs at least {self.deal_size}"
            )
        if self.pack == "spanish" and (self.vira or self.fixed_manilhas):
            raise ValueError("the Spanish pack has its own fixed trick order: no vira and no fixed manilhas "
                             f"(vira={self.vira!r}, fixed_manilhas={self.fixed_manilhas!r})")
        if self.pack == "french" and self.vira == bool(self.fixed_manilhas.split()):
            raise ValueError("a rule set has either a vira or fixed manilhas, not both and not neither "
                             f"(vira={self.vira!r}, fixed_manilhas={self.fixed_manilhas!r})")
        if len(self.fixed_manilhas.split()) > 4:
            raise ValueError(f"at most 4 fixed manilhas, got {self.fixed_manilhas!r}")

    def with_max_stake(self, max_stake: int) -> RuleSet:
        """The same rules with the ladder cut at ``max_stake`` (1 = no raises)."""
        if max_stake not in self.ladder:
            raise ValueError(f"max_stake must be one of {list(self.ladder)}, got {max_stake!r}")
        return replace(self, ladder=tuple(v for v in self.ladder if v <= max_stake))

    def with_deck(self, ranks: str | None = None, suits: str | None = None) -> RuleSet:
        """The same rules on a smaller deck (ranks/suits are subsets, any order). The Spanish pack's ranks
        are numbers: ``"1 2 3 7 12"`` or ``"1,2,3,7,12"`` (or its one-letter codes, ``"1237R"``)."""
        ru, su = PACKS[self.pack]
        if ranks is not None and self.pack == "spanish":
            ranks = _spanish_ranks(ranks)
        r = self.ranks if ranks is None else _canonical_subset("ranks", ranks, ru)
        s = self.suits if suits is None else _canonical_subset("suits", suits, su)
        return replace(self, ranks=r, suits=s)

    @classmethod
    def from_options(cls, name: str = "paulista", *, ranks: str | None = None, suits: str | None = None,
                     max_stake: int | None = None, flor: bool = False, deck_penalty: bool = False,
                     target: int | None = None) -> RuleSet:
        """The one constructor from options (the CLI's ``--rules/--ranks/--suits/--max-stake/--flor/
        --deck-penalty``, the OpenSpiel games' parameters): the named rule set on the deck ``ranks`` x
        ``suits``, the ladder cut at ``max_stake`` (default its top). ``ValueError`` naming the option."""
        base = rule_set(name)
        if (flor or deck_penalty or target is not None) and not base.envido:
            what = "flor" if flor else ("deck-penalty" if deck_penalty else "target")
            raise ValueError(f"argument --{what}: an option of rule set argentino, not of {base.name}")
        if target is not None and (isinstance(target, bool) or not isinstance(target, int) or not 2 <= target <= 30):
            raise ValueError(f"argument --target: an integer in 2..30, got {target!r}")
        if base.envido:
            base = replace(base, flor=bool(flor), deck_extra=1 if deck_penalty else 0,
                           target=base.target if target is None else target)
        try:
            rules = base.with_deck(ranks, suits)
        except ValueError as e:
            raise ValueError(f"argument --ranks/--suits: {e}") from None
        stake = rules.max_stake if max_stake is None else max_stake
        if stake not in rules.ladder:
            raise ValueError(f"argument --max-stake: a rung of {rules.name}'s ladder "
                             f"{' '.join(map(str, rules.ladder))}, got {stake}")
        return rules.with_max_stake(stake)

    def cli_options(self) -> str:
        """The options that rebuild these rules through :meth:`from_options` (empty for seed 000's
        full game), so a suggested command is safe to copy as printed."""
        base = rule_set(self.name)
        out = [] if self.name == "paulista" else [f"--rules {self.name}"]
        if self.ranks != base.ranks:
            ranks = self.ranks if self.pack == "french" else " ".join(
                ("1", "2", "3", "4", "5", "6", "7", "10", "11", "12")[SPANISH_RANK_CODES.index(c)] for c in self.ranks)
            out.append(f"--ranks {ranks}" if " " not in ranks else f"--ranks '{ranks}'")
        if self.suits != base.suits:
            out.append(f"--suits {self.suits}")
        if self.max_stake != base.max_stake:
            out.append(f"--max-stake {self.max_stake}")
        if self.flor:
            out.append("--flor")
        if self.envido and self.target != base.target:
            out.append(f"--target {self.target}")
        if self.deck_extra:
            out.append("--deck-penalty")
        return " ".join(out)

    def to_dict(self) -> dict:
        """Plain JSON data, stable for hashing: fields added after seed 000's first runs appear only when
        they differ from their defaults, so every earlier run's hash stays valid."""
        from dataclasses import asdict

        later = {"raise_to_win": True, "blind_iron_hand": False, "vira": True, "fixed_manilhas": "",
                 "pack": "french", "envido": False, "flor": False, "deck_action": False, "deck_extra": 0,
                 "reraise": True, "seats": 2}
        return {k: (list(v) if isinstance(v, tuple) else v) for k, v in asdict(self).items()
                if not (k in later and v == later[k])}

    @classmethod
    def from_dict(cls, d: dict | RuleSet | None) -> RuleSet:
        """The inverse of :meth:`to_dict` (``None``: seed 000)."""
        if d is None:
            return PAULISTA
        if isinstance(d, RuleSet):
            return d
        return cls(**{k: (tuple(v) if isinstance(v, list) else v) for k, v in d.items()})

    @property
    def deck(self) -> np.ndarray:
        """Card ids in the deck, increasing."""
        ru, su = PACKS[self.pack]
        ids = [4 * ru.index(r) + su.index(s) for r in self.ranks for s in self.suits]
        return np.array(sorted(ids), dtype=np.int32)

    # ---- notation: each pack prints and parses its own cards and actions ----
    def card_str(self, cid: int) -> str:
        """Card id -> this pack's literal (``3d``; Spanish ``12c``)."""
        return _notation(self.pack).card_str(cid)

    def parse_card(self, text: str) -> int:
        return _notation(self.pack).parse_card(text)

    def parse_cards(self, text) -> list[int]:
        return _notation(self.pack).parse_cards(text)

    def action_str(self, action: int) -> str:
        """Action id -> this rule set's notation (``raise 3``; Mineiro ``raise 4``; Argentine ``retruco``)."""
        if self.pack == "spanish":
            from truco_lab.rules import spanish

            return spanish.action_str(action, self)
        from truco_lab.rules.cards import action_str

        return action_str(action, self.raise_targets)

    def parse_action(self, text: str) -> int:
        """This rule set's notation -> action id (``ValueError`` naming what is wrong)."""
        if self.pack == "spanish":
            from truco_lab.rules import spanish

            return spanish.parse_action(text, self)
        from truco_lab.rules.cards import parse_action

        return parse_action(text, self.raise_targets)

    @property
    def n_actions(self) -> int:
        """Distinct action ids of this rule set's games (the envido calls come after paulista's)."""
        from truco_lab.rules.cards import N_ACTIONS, N_ACTIONS_ALL

        return N_ACTIONS_ALL if (self.envido or self.flor) else N_ACTIONS

    @property
    def max_stake(self) -> int:
        return self.ladder[-1]


    @property
    def deal_size(self) -> int:
        """Cards a deal takes from the deck: three each, plus the vira if one is turned."""
        return 3 * self.seats + (1 if self.vira else 0)

    @property
    def raise_targets(self) -> tuple[int, ...]:
        """Targets of the raise actions, in action-id order (``A_RAISE + i`` raises to the ``i``-th)."""
        return self.ladder[1:]

    def fixed_manilha_ids(self) -> tuple[int, ...]:
        """Card ids of the fixed manilhas present in the deck, weakest first."""
        from truco_lab.rules.cards import parse_card

        deck = set(self.deck.tolist())
        return tuple(c for c in (parse_card(x) for x in self.fixed_manilhas.split()) if c in deck)

    def manilha_rank(self, vira_rank: str) -> str:
        """The manilha rank under a vira: the next rank of the deck, cyclically."""
        if not self.vira:
            raise ValueError(f"rule set {self.name!r} turns no vira; its manilhas are fixed: {self.fixed_manilhas}")
        i = self.ranks.index(vira_rank)
        return self.ranks[(i + 1) % len(self.ranks)]

    def to_array(self) -> np.ndarray:
        """The flat int32 array the numba engine reads."""
        a = np.zeros(R_SIZE, dtype=np.int32)
        a[R_LADDER : R_LADDER + len(self.ladder)] = self.ladder
        a[R_NLADDER] = len(self.ladder)
        a[R_TARGET] = self.target
        a[R_ELEVEN_ON] = int(self.mao_de_onze)
        a[R_ELEVEN_VALUE] = self.eleven_value
        a[R_ELEVEN_FOLD] = self.eleven_fold_points
        a[R_ELEVEN_ELEVEN_VALUE] = self.eleven_eleven_value
        a[R_FACEDOWN_FROM] = self.face_down_from_round - 1
        a[R_ALL_TIED] = ALL_TIED_LEADER if self.all_tied == "leader" else ALL_TIED_DRAW
        a[R_SPLIT_TIE] = SPLIT_TIE_FIRST_WINNER
        a[R_RAISE_TO_WIN] = int(self.raise_to_win)
        a[R_BLIND_IRON] = int(self.blind_iron_hand)
        a[R_NEXT_RANK : R_NEXT_RANK + 10] = -1
        a[R_VIRA] = int(self.vira)
        a[R_FIXED : R_FIXED + 4] = -1
        a[R_ENVIDO] = int(self.envido)
        a[R_FLOR] = FLOR_POINTS if self.flor else 0
        a[R_DECK] = int(self.deck_action)
        a[R_DECK_EXTRA] = self.deck_extra
        a[R_RERAISE] = int(self.reraise)
        a[R_SEATS] = self.seats
        if self.pack == "spanish":
            from truco_lab.rules import spanish

            a[R_TABLE] = 1
            a[R_STRENGTH : R_STRENGTH + 40] = spanish.TRICK_STRENGTH
            a[R_ENV_VAL : R_ENV_VAL + 40] = [spanish.envido_value(c) for c in range(40)]
        elif self.vira:
            for r in self.ranks:
                a[R_NEXT_RANK + RANKS.index(r)] = RANKS.index(self.manilha_rank(r))
        else:
            fixed = self.fixed_manilha_ids()
            a[R_FIXED : R_FIXED + len(fixed)] = fixed
        return a


def sees_own_cards(rules: RuleSet, score) -> bool:
    """False in a blind hand (seed 001's iron hand at 11 x 11): nobody sees their own cards, and the
    cards are flipped in dealt order (the engine's ``blind``), so the hand has no decisions."""
    t = rules.target - 1
    return not (rules.blind_iron_hand and score[0] == t and score[1] == t)


def sees_partner(rules: RuleSet, score, seat: int) -> bool:
    """Two against two, seed 003: a side on eleven decides its hand "after seeing its cards and its partner's"
    (not at 11 x 11, where nobody decides)."""
    if rules.seats != 4 or not rules.mao_de_onze:
        return False
    t = rules.target - 1
    return score[seat % 2] == t and score[1 - seat % 2] != t


def rule_set(name: str) -> RuleSet:
    """A named rule set: ``paulista`` (seed 000, the default), ``paulista_house`` (seed 001's table),
    ``mineiro`` (seed 003) or ``argentino`` (seed 004)."""
    key = str(name).strip().lower()
    known = {**RULE_SETS, **TEAM_RULE_SETS}
    if key not in known:
        raise ValueError(f"unknown rule set {name!r}; expected one of {', '.join(known)}")
    return known[key]


def check_start(rules: RuleSet, score0, score1, dealer, prefix: str = "") -> None:
    """The one validation of a hand's start: integer scores below the target, dealer 0 or 1.
    ``ValueError`` naming the value and what is accepted (``prefix`` names the caller)."""
    t = rules.target
    for name, v in (("score0", score0), ("score1", score1)):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or not 0 <= v < t:
            raise ValueError(f"{prefix}{name} must be an integer in 0..{t - 1} for a live hand, got {plain(v)!r}")
    seats = tuple(range(rules.seats))
    if isinstance(dealer, bool) or not isinstance(dealer, (int, np.integer)) or dealer not in seats:
        who = "0 or 1" if rules.seats == 2 else "a seat 0..3"
        raise ValueError(f"{prefix}dealer must be {who}, got {plain(dealer)!r}")


def plain(v):
    """A NumPy scalar as the Python number it holds (messages print ``12``, not ``np.int64(12)``)."""
    return v.item() if isinstance(v, np.generic) else v


def _notation(pack: str):
    if pack == "spanish":
        from truco_lab.rules import spanish

        return spanish
    from truco_lab.rules import cards

    return cards


def _spanish_ranks(value) -> str:
    """``"1 2 3 12"``, ``"1,2,3,12"``, ``[1, 2, 3, 12]`` or codes ``"123R"`` -> rank codes."""
    if isinstance(value, (list, tuple)):
        items = [str(x) for x in value]
    elif any(c in str(value) for c in ", "):
        items = [x for x in str(value).replace(",", " ").split() if x]
    else:
        return str(value).upper()
    nums = ("1", "2", "3", "4", "5", "6", "7", "10", "11", "12")
    bad = [x for x in items if x not in nums]
    if bad:
        raise ValueError(f"ranks must be Spanish ranks among {' '.join(nums)}, got {value!r}")
    return "".join(SPANISH_RANK_CODES[nums.index(x)] for x in items)


def _check_subset(what: str, value: str, universe: str) -> None:
    bad = [c for c in value if c not in universe]
    if bad or len(set(value)) != len(value) or not value:
        raise ValueError(f"{what} must be a non-empty subset of {universe!r} without repeats, got {value!r}")


def _canonical_subset(what: str, value: str, universe: str) -> str:
    v = value.upper() if what == "ranks" else value.lower()
    if universe == SPANISH_RANK_CODES:
        v = value.upper()
    _check_subset(what, v, universe)
    return "".join(c for c in universe if c in v)


PAULISTA = RuleSet()
"""Seed 000: heads-up truco paulista, the engine's contract."""

PAULISTA_HOUSE = replace(PAULISTA, name="paulista_house", all_tied="draw", raise_to_win=False, blind_iron_hand=True)
"""Seed 001's table: three tied tricks are a draw; no raise when accepting the stake would already give
the raiser the match; no truco once a player stands at 11 and the hand of eleven (play for 3 or give 1),
as in seed 000; at 11 x 11 the iron hand is played blind."""

MINEIRO = replace(
    PAULISTA, name="mineiro", ladder=(2, 4, 8, 10, 12), eleven_value=4, eleven_fold_points=2,
    eleven_eleven_value=4, face_down_from_round=4, vira=False, fixed_manilhas="7d As 7h 4c",
)
"""Seed 003's Mineiro: no vira, the manilhas always 4♣ > 7♥ > A♠ > 7♦ above 3 2 A K J Q 7 6 5 4; a hand is
worth 2 and raises go 2 → 4 → 8 → 10 → 12; the hand of eleven plays for 4 or gives 2; ties as seed 003 (the
engine's table). Seed 003 describes no face-down play, so there is none; the choices seed 003 leaves open
(all three tricks tied, the 11 × 11 hand) follow seed 000, as the README's Mineiro table says."""

ARGENTINO = RuleSet(
    name="argentino", ladder=(1, 2, 3, 4), target=30, mao_de_onze=False, face_down_from_round=4, vira=False,
    ranks=SPANISH_RANK_CODES, suits="eboc", pack="spanish", envido=True, deck_action=True, reraise=False,
)
"""Seed 004's two-player Argentine truco (no flor): the Spanish pack in its fixed order; truco 2, retruco 3,
vale cuatro 4, the right to raise going to the accepter, a raise answered only by quiero or no quiero;
envido, real envido and falta envido in the first trick; going to the deck; a match to 30. Seed 003's
options: ``flor=True`` (three of a suit score 3 when dealt, no envido) and ``deck_extra=1``."""

RULE_SETS = {"paulista": PAULISTA, "paulista_house": PAULISTA_HOUSE, "mineiro": MINEIRO, "argentino": ARGENTINO}

PAULISTA_2V2 = replace(PAULISTA, name="paulista_2v2", seats=4)
MINEIRO_2V2 = replace(MINEIRO, name="mineiro_2v2", seats=4)
TEAM_RULE_SETS = {"paulista_2v2": PAULISTA_2V2, "mineiro_2v2": MINEIRO_2V2}
"""Seed 003's two against two, partners facing (four seats; the games ``truco_paulista_2v2`` and
``truco_mineiro_2v2``). Kept apart from :data:`RULE_SETS`: the native solvers, bots and play are heads-up."""
