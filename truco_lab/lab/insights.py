"""Answers to players' questions from a run's strategy tables (the notebooks' shared analysis).

A strategy table has one row per information set and action (see
``StrategyTable.describe()``); this module turns a run's tables into one
DataFrame per *decision* (information set) with the features players talk
about: hand strength, round, who leads, whether a raise is pending, the score.

Hand strength is the hand's percentile among all hands of its vira class by the
mean strength level of its three cards (0 = weakest hand, 1 = strongest); a
"weak" hand (strength below 0.5) is the proxy for a hand that loses a showdown
more often than not. Every frequency is weighted by ``reach`` (the probability
that the equilibrium reaches the decision), so it is how often the solution
does it in play, not per listed hand.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from truco_lab.abstraction.levels import level_names, vira_classes

KEY = ["score0", "score1", "dealer", "vira_class", "player", "hand", "history", "hidden"]
_NOT_CARDS = ("raise", "accept", "fold", "concede")


def load_tables(run: str | Path, columns: list[str] | None = None, cells=None) -> pd.DataFrame:
    """The strategy tables of a ``truco-lab solve`` or ``truco-lab match`` run folder as one DataFrame
    (string columns as categories); ``cells``: only these ``(score0, score1, dealer)`` (canonical cells of
    a match run: ``score0 <= score1``)."""
    run = Path(run)
    files = sorted(f for f in run.rglob("s*_d*_v*.parquet"))
    if cells is not None:
        want = {f"s{a}-{b}_d{d}_" for a, b, d in cells}
        files = [f for f in files if any(f.name.startswith(w) for w in want)]
    if not files:
        raise FileNotFoundError(f"no strategy tables under {run}" + (f" for cells {cells}" if cells else "")
                                + " (written by truco-lab solve / match unless --no-table)")
    _check_fits(files, columns)
    frames = [pd.read_parquet(f, columns=columns) for f in files]
    df = pd.concat(frames, ignore_index=True)
    for c in ("hand", "history", "hidden", "action", "vira"):
        if c in df:
            df[c] = df[c].astype(str).astype("category")
    return df


# Bytes per row of a loaded table, all columns, categories included (measured: a full-deck 10x10 class,
# 14.5 M rows, reached 3.1 GB with its decisions frame; nine of them killed a 24 GB machine).
ROW_BYTES = 200


def _check_fits(files: list[Path], columns: list[str] | None) -> None:
    """Refuse up front a load this machine cannot hold (one line: what to pass instead)."""
    import pyarrow.parquet as pq

    from solvers.storage import available_memory_gb

    rows = sum(pq.ParquetFile(f).metadata.num_rows for f in files)
    need = rows * ROW_BYTES * (1.0 if columns is None else 0.6) / 2**30
    try:
        have = available_memory_gb()
    except OSError:
        return
    if need > 0.8 * have:
        raise MemoryError(f"{len(files)} tables, {rows:,} rows (~{need:.0f} GB in pandas) exceed the "
                          f"{have:.0f} GB available: pass cells=[(a, b, d)] or columns=[...], or read one table at "
                          "a time (pandas.read_parquet on a file; experiments/endgame_truco.py does)")


def _plays(history: str) -> tuple[int, str]:
    """(cards played so far, the last token's action without its player) of a table history."""
    if not history:
        return 0, ""
    toks = [t.split(":", 1)[1] for t in history.split(", ")]
    return sum(1 for t in toks if not t.startswith(_NOT_CARDS)), toks[-1]


def strength_of(rules, df: pd.DataFrame) -> pd.Series:
    """Hand-strength percentile (0..1) of each row's hand within its vira class."""
    out = pd.Series(np.nan, index=df.index)
    for vc in vira_classes(rules):
        names = {n: i for i, n in enumerate(level_names(rules, vc))}
        rows = df["vira_class"] == vc.index
        if not rows.any():
            continue
        hands = df.loc[rows, "hand"].astype(str).astype("category")
        uniq = pd.Series(hands.cat.categories.astype(str))
        present = np.zeros(len(uniq), bool)
        present[np.unique(hands.cat.codes.to_numpy())] = True  # rank among the hands the rows hold
        mean_level = uniq[present].map(lambda h, names=names: np.mean([names[x] for x in h.split()]))
        pct = np.full(len(uniq), np.nan)
        pct[present] = mean_level.rank(pct=True, method="average").to_numpy(float)
        out.loc[rows] = pct[hands.cat.codes.to_numpy()]
    return out


def _kinds(df: pd.DataFrame) -> dict[str, np.ndarray]:
    """Row masks of each kind of action (per distinct action name, not per row)."""
    col = df["action"]
    cats = col.cat.categories if isinstance(col.dtype, pd.CategoricalDtype) else None
    if cats is None:
        col = col.astype(str).astype("category")
        cats = col.cat.categories
    codes = col.cat.codes.to_numpy()
    names = pd.Index(cats.astype(str))
    tests = {"p_raise": names.str.startswith("raise"), "p_accept": names == "accept_raise", "p_fold": names == "fold",
             "p_accept_eleven": names == "accept_eleven", "p_fold_eleven": names == "fold_eleven",
             "p_down": names.str.startswith("play_face_down")}
    return {k: np.asarray(m)[codes] for k, m in tests.items()}


def _codes(col: pd.Series) -> np.ndarray:
    return col.cat.codes.to_numpy() if isinstance(col.dtype, pd.CategoricalDtype) else pd.factorize(col)[0]


def _where(col: pd.Series, test) -> np.ndarray:
    """``test(str)`` of each row's value, evaluated once per distinct value (a 10x10 table has 14.5 M rows
    but ~400 k histories)."""
    col = col if isinstance(col.dtype, pd.CategoricalDtype) else col.astype(str).astype("category")
    per = np.array([bool(test(str(v))) for v in col.cat.categories], bool)
    codes = col.cat.codes.to_numpy()
    return np.where(codes >= 0, per[np.maximum(codes, 0)], False) if len(per) else np.zeros(len(col), bool)


def _runs(df: pd.DataFrame) -> np.ndarray | None:
    """First row of each information set when every set's rows are contiguous (the table writer emits
    them so), else None. Checked: as many runs as distinct keys."""
    n = len(df)
    if n == 0:
        return None
    change = np.zeros(n, bool)
    change[0] = True
    key = np.zeros(n, np.int64)
    bits = 0
    for c in KEY:
        v = _codes(df[c]).astype(np.int64)
        change[1:] |= v[1:] != v[:-1]
        width = max(1, int(v.max()).bit_length())
        key = (key << width) | v
        bits += width
    starts = np.flatnonzero(change)
    if bits > 62:  # the packed key would overflow: check the slow way
        return None if df[KEY].iloc[starts].duplicated().any() else starts
    k = np.sort(key[starts])
    return starts if not (k[1:] == k[:-1]).any() else None


def decisions(rules, df: pd.DataFrame) -> pd.DataFrame:
    """One row per information set: its features and the probability of each kind of action.

    Columns: the table key, ``reach``, ``strength``, ``round`` (1-3), ``leading`` (first to play in
    the round), ``facing`` (the raise being answered: 3, 6, ... or 0), ``can_raise``, and
    ``p_raise``, ``p_accept``, ``p_fold``, ``p_accept_eleven``, ``p_fold_eleven`` and ``p_down``
    (a card face down)."""
    kinds = _kinds(df)
    starts = _runs(df)
    if starts is not None:
        # contiguous sets (every table we write): segment sums, ~40x faster than a groupby on 8 keys
        # (a full-deck 10x10 class: 45 s -> ~2 s)
        p = df["probability"].to_numpy(np.float64)
        out = df[KEY].iloc[starts].reset_index(drop=True)
        for k, m in kinds.items():
            out[k] = np.add.reduceat(np.where(m, p, 0.0), starts)
        out["reach"] = df["reach"].to_numpy()[starts]  # the groupby's column order
        out["can_raise"] = np.add.reduceat(kinds["p_raise"].astype(np.int32), starts) > 0
    else:
        work = df[KEY + ["reach"]].copy()
        for k, m in kinds.items():
            work[k] = np.where(m, df["probability"], 0.0)
        work["can_raise"] = kinds["p_raise"]
        agg = {k: "sum" for k in kinds} | {"reach": "first", "can_raise": "any"}
        out = work.groupby(KEY, sort=False, observed=True).agg(agg).reset_index()
    hist = out["history"].astype("category")
    feats = [_plays(str(h)) for h in hist.cat.categories]  # per distinct history, not per row
    codes = hist.cat.codes.to_numpy()
    plays = np.array([f[0] for f in feats], np.int64)[codes]
    facing = np.array([int(f[1].split()[1]) if f[1].startswith("raise") else 0 for f in feats], np.int64)[codes]
    out["round"] = plays // 2 + 1
    out["leading"] = plays % 2 == 0
    out["facing"] = facing
    out["strength"] = strength_of(rules, out)
    return out


def weighted_sums(df: pd.DataFrame, col: str, by) -> pd.DataFrame:
    """Columns ``x`` (reach x ``col``) and ``w`` (reach) summed by ``by``: additive, so sums from tables
    read one at a time add up to the sums of all of them (``ratio`` turns them into means)."""
    w = df["reach"].to_numpy(float)
    g = pd.DataFrame({"x": df[col].to_numpy(float) * w, "w": w})
    for b in ([by] if isinstance(by, str) else by):
        g[b] = df[b].to_numpy()
    return g.groupby(by, observed=True)[["x", "w"]].sum()


def ratio(sums: pd.DataFrame, name: str | None = None) -> pd.Series:
    """``x / w`` of :func:`weighted_sums` (NaN where nothing is reached)."""
    out = sums["x"] / sums["w"].where(sums["w"] > 0)
    return out.rename(name) if name else out


def weighted(df: pd.DataFrame, col: str, by) -> pd.Series:
    """Reach-weighted mean of ``col`` by ``by`` (how often the solution does it in play)."""
    return ratio(weighted_sums(df, col, by), col)


def table_files(run: str | Path, cells, classes=None) -> list[tuple[tuple[int, int, int], int, Path]]:
    """``((score0, score1, dealer), vira class, path)`` of each strategy table of ``cells`` in a run folder,
    optionally only the vira classes in ``classes``."""
    out = []
    for a, b, d in cells:
        for f in sorted(Path(run).rglob(f"s{a}-{b}_d{d}_v*.parquet")):
            vc = int(f.name.split("_v")[1].split(".")[0])
            if classes is None or vc in classes:
                out.append(((a, b, d), vc, f))
    return out


def reduce_tables(rules, run: str | Path, cells, fn, classes=None, progress: bool = True) -> dict[str, pd.DataFrame]:
    """Tables too big to load together, one at a time: ``fn(decisions, table)`` returns a dict of additive
    sums (e.g. :func:`weighted_sums`); each table's are scaled by its vira class's probability, tagged with
    its cell and summed over the classes. Returns one frame per key of ``fn``'s dict, indexed by
    ``score0, score1, dealer`` and ``fn``'s own index."""
    weight = {vc.index: vc.weight for vc in vira_classes(rules)}
    files = table_files(run, cells, classes)
    if not files:
        raise FileNotFoundError(f"no strategy tables under {run} for cells {list(cells)}")
    parts: dict[str, list[pd.DataFrame]] = {}
    it = files
    if progress:
        from tqdm.auto import tqdm

        it = tqdm(files, desc="tables", unit="table")
    for cell, vc, f in it:
        df = pd.read_parquet(f, columns=KEY + ["action", "probability", "reach"])
        dec = decisions(rules, df)
        for k, sums in fn(dec, df).items():
            sums = sums * weight[vc]
            parts.setdefault(k, []).append(pd.concat({cell: sums}, names=["score0", "score1", "dealer"]))
        del dec, df
    return {k: pd.concat(v).groupby(level=list(range(v[0].index.nlevels)), observed=True).sum()
            for k, v in parts.items()}


def strength_bins(s: pd.Series, n: int = 5) -> pd.Series:
    """Equal-width strength bins labelled by their upper edge (0.2, 0.4, ...)."""
    return pd.cut(s, np.linspace(0, 1, n + 1), labels=[f"{x:.1f}" for x in np.linspace(0, 1, n + 1)[1:]],
                  include_lowest=True)


def bluff_share(dec: pd.DataFrame) -> float:
    """Of all raising in play (reach x probability), the share made with weak hands (strength < 0.5)."""
    x = dec["reach"] * dec["p_raise"]
    return float(x[dec["strength"] < 0.5].sum() / x.sum()) if x.sum() > 0 else float("nan")


# ---- seed 001's strategy tips, one function each ---------------------------------------------------
def _card_level_names(rules) -> dict[tuple[int, str], str]:
    """(vira class, card notation of a representative) -> its level name."""
    from truco_lab.rules.cards import card_str

    out = {}
    for vc in vira_classes(rules):
        names = level_names(rules, vc)
        for lv, cards in enumerate(vc.level_cards):
            for c in cards:
                out[(vc.index, card_str(c))] = names[lv]
    return out


def lead_choice(rules, df: pd.DataFrame, shares: bool = True) -> pd.Series:
    """Tip 1 ("the first trick is the hand: spend strength early"): how the leader of round 1 chooses
    among its three cards — reach-weighted shares of leading the strongest, middle or weakest card
    (``shares=False``: the reach-weighted masses, which add up over tables)."""
    names_of = _card_level_names(rules)
    sub = df[_where(df["history"], lambda h: _plays(h)[0] == 0)
             & _where(df["action"], lambda a: a.startswith("play_face_up"))].copy()
    if sub.empty:
        return pd.Series(dtype=float)
    order = {vc.index: {n: i for i, n in enumerate(level_names(rules, vc))} for vc in vira_classes(rules)}

    def position(row) -> str:
        lv = order[row.vira_class]
        levels = sorted((lv[x] for x in str(row.hand).split()), reverse=True)
        mine = lv[names_of[(row.vira_class, str(row.action).split()[1])]]
        return ("strongest", "middle", "weakest")[levels.index(mine)]

    sub["lead"] = [position(r) for r in sub.itertuples()]
    w = sub["reach"] * sub["probability"]
    mass = w.groupby(sub["lead"]).sum().reindex(["strongest", "middle", "weakest"]).fillna(0.0)
    return mass / mass.sum() if shares else mass


def first_raise_by_strength(dec: pd.DataFrame, bins: int = 10, sums: bool = False):
    """Tip 2 ("truco from strength or total weakness"): P(raise) at the first raise opportunity of each
    round (nobody raised yet), by hand-strength decile (``sums=True``: the :func:`weighted_sums`)."""
    first = dec[dec["can_raise"] & (dec["facing"] == 0) & ~_where(dec["history"], lambda h: "raise" in h)]
    first = first.assign(bin=strength_bins(first["strength"], bins))
    return weighted_sums(first, "p_raise", "bin") if sums else weighted(first, "p_raise", "bin")


def accept_by_rung(dec: pd.DataFrame, bins: int = 5) -> pd.DataFrame:
    """Tip 3 ("respect the raise ladder"): P(accept) by hand strength, one column per raise faced."""
    f = dec[dec["facing"] > 0]
    f = f.assign(bin=strength_bins(f["strength"], bins))
    return weighted(f, "p_accept", ["bin", "facing"]).unstack()


def tie_play(df: pd.DataFrame) -> pd.DataFrame:
    """Tip 4 ("use ties on purpose"): when following and holding a card of the led card's rank, P(play the
    tying card), split by whether the hand also holds a manilha. Empty without ties (one-suit decks)."""
    from truco_lab.abstraction.levels import MANILHA_NAMES

    manilhas = set(MANILHA_NAMES.values())
    hist = df["history"].astype("category")
    led_of = {}
    for h in hist.cat.categories:
        n, last = _plays(h)
        led_of[h] = last if n % 2 == 1 and last and last not in manilhas and not last.startswith("hid") else ""
    led = hist.map(led_of).astype(str)
    hand = df["hand"].astype(str)
    has = np.array([bool(x) and x in h.split() for x, h in zip(led, hand, strict=True)])
    sub = df[has].assign(led=led[has])
    if sub.empty:
        return pd.DataFrame(columns=["manilha_kept", "p_tie", "decisions"])
    act = sub["action"].astype(str)
    tie = act.str.startswith("play_face_up") & (act.str.split().str[1].str[:-1] == sub["led"])
    sub = sub.assign(p_tie=np.where(tie, sub["probability"], 0.0))
    g = sub.groupby(KEY, observed=True, sort=False).agg(p_tie=("p_tie", "sum"), reach=("reach", "first")).reset_index()
    g["manilha_kept"] = g["hand"].astype(str).map(lambda h: any(x in manilhas for x in h.split()))
    out = weighted(g, "p_tie", "manilha_kept").to_frame()
    out["decisions"] = g.groupby("manilha_kept").size()
    return out.reset_index()


def vira_relative_strength(rules, dec: pd.DataFrame) -> dict[str, float]:
    """Tip 5 ("watch the vira"): the reach-weighted correlation of the accept-eleven probability with the
    hand's strength counted against the vira versus by the printed ranks alone (manilhas as their rank)."""
    from truco_lab.rules.cards import RANKS

    d = dec[(dec["p_accept_eleven"] + dec["p_fold_eleven"]) > 0.5].copy()
    if len(d) < 3:
        return {"vira": float("nan"), "ranks": float("nan"), "decisions": len(d)}
    rank_of = {}
    for vc in vira_classes(rules):
        names = level_names(rules, vc)
        for lv, cards in enumerate(vc.level_cards):
            rank_of[(vc.index, names[lv])] = RANKS.index(RANKS[cards[0] >> 2])
    d["rank_strength"] = [np.mean([rank_of[(v, x)] for x in str(h).split()])
                          for v, h in zip(d["vira_class"], d["hand"], strict=True)]

    def wcorr(x, y, w):
        mx, my = np.average(x, weights=w), np.average(y, weights=w)
        cov = np.average((x - mx) * (y - my), weights=w)
        return float(cov / np.sqrt(np.average((x - mx) ** 2, weights=w) * np.average((y - my) ** 2, weights=w)))

    w = d["reach"].to_numpy(float) + 1e-12
    y = d["p_accept_eleven"].to_numpy(float)
    return {"vira": wcorr(d["strength"].to_numpy(float), y, w), "ranks": wcorr(d["rank_strength"].to_numpy(float), y, w),
            "decisions": len(d)}


def option_worth(df: pd.DataFrame) -> pd.DataFrame:
    """The hand of eleven's option, per cell: the equilibrium value of the decision (accept or fold as the
    solution mixes) minus the value of always accepting, reach-weighted over hands, in the decider's
    match-win probability (the continuation is the solution's in both)."""
    d = df[df["action"].astype(str).isin(["accept_eleven", "fold_eleven"])]
    rows = []
    for (a, b, dl), g in d.groupby(["score0", "score1", "dealer"], observed=True):
        wide = g.pivot_table(index=["vira_class", "player", "hand"], columns="action",
                             values=["probability", "action_value", "reach"], observed=True, aggfunc="first")
        p_acc = wide[("probability", "accept_eleven")]
        v_acc = wide[("action_value", "accept_eleven")]
        v_fold = wide[("action_value", "fold_eleven")]
        reach = wide[("reach", "accept_eleven")]
        mixed = p_acc * v_acc + (1 - p_acc) * v_fold
        rows.append({"score0": a, "score1": b, "dealer": dl,
                     "option_worth": float(((mixed - v_acc) * reach).sum() / reach.sum()),
                     "accept_rate": float((p_acc * reach).sum() / reach.sum())})
    return pd.DataFrame(rows)
