"""The study lab's explorer: the table index, the run browser, the JSON endpoints and the page in a
real headless Chromium (Debian's, driven by Playwright)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest

from solvers.tableindex import TableIndex
from solvers.tables import StrategyTable
from tests.conftest import cli_in_process
from truco_lab.lab.browse import BrowseError, Run
from truco_lab.rules.ruleset import PAULISTA

RULES = PAULISTA.with_deck("7QJKA23", "c").with_max_stake(3)
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"


@pytest.fixture(scope="module")
def mini(tmp_path_factory) -> Path:
    """The 9-11 endgame of a 7-card, one-suit match (cells with both scores >= 10), tables included (~3 s)."""
    from truco_lab.lab.match import MatchConfig
    from truco_lab.lab.match_run import run_match

    out = tmp_path_factory.mktemp("mini")
    run_match(MatchConfig(RULES, target=1e-4), "min:10", out, workers=1, progress=False)
    return out


@pytest.fixture(scope="module")
def server(mini):
    from truco_lab.people.explorer.server import serve

    httpd = serve([str(mini), str(mini)], port=0, background=True)
    yield httpd
    httpd.shutdown()


def get(server, path: str) -> tuple[int, dict]:
    try:
        with urllib.request.urlopen(server.url.rstrip("/") + path, timeout=30) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


def tables(run: Path) -> list[Path]:
    return sorted(p for p in run.rglob("s*_v*.parquet") if "checkpoints" not in p.parts)


# ---- the index ---------------------------------------------------------------------------------------
def _same(index: TableIndex, df: pd.DataFrame, where: dict, hist: str) -> None:
    got = index.rows(hist).to_pandas()
    want = df.iloc[where[hist]]
    assert len(got) == len(want) > 0
    for c in want.columns:
        a, b = got[c].to_numpy(), want[c].to_numpy()
        if a.dtype.kind == "f":
            np.testing.assert_array_equal(a, b)
        else:
            assert [str(x) for x in a] == [str(x) for x in b], c


def test_index_reads_exactly_the_rows_of_a_history(mini, tmp_path):
    f = tables(mini)[0]
    df = pd.read_parquet(f)
    where = df.groupby(df["history"].astype(str), observed=True).indices
    hists = list(where)[:: max(len(where) // 300, 1)]  # ~300 histories, spread over the table
    assert len(hists) > 20
    index = TableIndex.open(f)
    for h in hists:
        _same(index, df, where, h)
    assert index.rows("0:no such step").num_rows == 0
    # small row groups: runs cut by a group boundary are joined, and read across the boundary
    g = tmp_path / f.name
    pq.write_table(pq.read_table(f), g, row_group_size=max(len(df) // 12, 2))
    assert pq.ParquetFile(g).num_row_groups > 10
    small = TableIndex.open(g)
    assert len(small.runs) == len(index.runs)
    for h in hists:
        _same(small, df, where, h)


def test_index_is_saved_reused_and_rebuilt_when_the_table_changes(mini, tmp_path):
    f = tmp_path / "t.parquet"
    src = pq.read_table(tables(mini)[1])
    pq.write_table(src, f)
    a = TableIndex.open(f)
    side = sorted(p.name for p in tmp_path.iterdir() if p.name.startswith("."))
    assert side == [".t.parquet.history.idx.json", ".t.parquet.history.idx.npy"]
    assert isinstance(TableIndex.open(f).runs, np.memmap)
    pq.write_table(src.slice(0, 10), f)  # another table at the same path: the stale index must not be used
    b = TableIndex.open(f)
    assert int(b.runs["count"].sum()) == 10 != int(a.runs["count"].sum())


def test_index_falls_back_to_a_cache_folder_when_the_table_folder_is_read_only(mini, tmp_path, monkeypatch):
    ro = tmp_path / "ro"
    ro.mkdir()
    f = ro / "t.parquet"
    shutil.copy(tables(mini)[0], f)
    ro.chmod(0o555)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    try:
        if (ro / "probe").exists() or _writable(ro):
            pytest.skip("running as a user who can write a read-only folder (root)")
        TableIndex.open(f)
        assert list((tmp_path / "cache").rglob("*.idx.npy"))
    finally:
        ro.chmod(0o755)


def _writable(d: Path) -> bool:
    try:
        (d / ".w").write_text("")
        (d / ".w").unlink()
        return True
    except OSError:
        return False


# ---- the run browser -------------------------------------------------------------------------------------
def test_decision_rows_are_the_tables_rows_with_costs(mini):
    run = Run(mini)
    f = tables(mini)[0]
    ref = run.tables[next(k for k, t in run.tables.items() if t.path == f)]
    cell = ",".join(map(str, ref.cell))
    df = pd.read_parquet(f)
    for hist in df["history"].astype(str).unique()[:30]:
        d = run.decision(cell, ref.meta["vira"], hist)
        want = df[df["history"].astype(str) == hist]
        assert d["player"] == int(want["player"].iloc[0])
        assert [r["probability"] for r in d["rows"]] == pytest.approx(want["probability"].tolist(), abs=0)
        assert sorted(d["actions"]) == sorted(want["action"].astype(str).unique())
        got = pd.DataFrame(d["rows"])
        best = got.groupby(["hand", "hidden"])["action_value"].transform("max")
        assert np.allclose(got["cost"], 100 * (best - got["action_value"]))  # match units: percentage points
        assert (got.groupby(["hand", "hidden"])["cost"].min() == 0).all()
        assert np.allclose(got.groupby(["hand", "hidden"])["probability"].sum(), 1, atol=1e-5)
        for n in d["next"]:
            assert n["history"].startswith(hist) and n["decision"] == bool(
                (df["history"].astype(str) == n["history"]).any())


def test_decision_matches_strategy_table_lookup_in_real_cards(mini):
    run = Run(mini)
    ref = run.tables[((10, 10, 1), 0)]
    table = StrategyTable.load(ref.path)
    vira = ref.meta["vira"]
    d = run.decision("10,10,1", vira, "")
    row = d["rows"][0]
    cards = row["cards"]
    want = table.lookup(vira, cards, "")
    got = [r for r in d["rows"] if r["hand"] == row["hand"] and r["hidden"] == row["hidden"]]
    assert [r["probability"] for r in got] == pytest.approx(want["probability"].tolist(), abs=1e-7)


@pytest.mark.parametrize("args, words", [
    (("9,9,7", None, ""), "outside a match to 12"),
    (("x,y", None, ""), "is not S0,S1,D"),
    (("0,0,1", None, ""), "has no strategy table"),
    (("10,10,1", "9z", ""), "is not a card"),
    (("10,10,1", None, "Zap"), "is not 'player:action'"),
    (("10,10,1", None, "0:fold, 1:fold"), "no decision after history"),
])
def test_bad_requests_say_what_is_accepted(mini, args, words):
    with pytest.raises(BrowseError, match=words) as e:
        Run(mini).decision(*args)
    assert "\n" not in str(e.value)


def test_a_mirror_cell_is_its_twin_with_the_seats_swapped(mini):
    run = Run(mini)
    canon = run.decision("10,10,1", None, "")
    step = next(n for n in canon["next"] if n["decision"])
    for hist in ("", step["history"]):
        a = run.decision("10,10,1", None, hist)
        m = run.decision("10,10,0", None, ", ".join(f"{1 - int(x[0])}{x[1:]}" for x in a["steps"]))
        assert m["cell"] == [10, 10, 0] and m["mirror_of"] == [10, 10, 1] and m["player"] == 1 - a["player"]
        assert m["rows"] == a["rows"]  # the acting player's values: the same person, the same numbers
        assert [n["history"][0] for n in m["next"]] == [str(1 - int(n["history"][0])) for n in a["next"]]
    r = run.range("10,10,0", None, m["history"])
    assert r["player"] == 1 - run.range("10,10,1", None, a["history"])["player"]
    cells = {(c["score0"], c["score1"], c["dealer"]): c for c in run.cells()}
    assert cells[(10, 10, 0)]["viras"] == cells[(10, 10, 1)]["viras"] and not cells[(10, 10, 0)]["solved"]


def test_run_folder_errors(tmp_path):
    with pytest.raises(BrowseError, match="does not exist"):
        Run(tmp_path / "nope")
    with pytest.raises(BrowseError, match="holds no strategy tables"):
        Run(tmp_path)


# ---- the endpoints ---------------------------------------------------------------------------------------
def test_api_cells_and_decision(server, mini):
    st, body = get(server, "/api/cells")
    assert st == 200 and body["kind"] == "match"
    eq = pd.read_parquet(mini / "equity.parquet")
    assert len(body["cells"]) == len(eq)
    for c in body["cells"]:
        assert {"score0", "score1", "dealer", "equity", "exploitability"} <= set(c)
        e = eq[(eq.score0 == c["score0"]) & (eq.score1 == c["score1"]) & (eq.dealer == c["dealer"])]
        assert c["equity"] == pytest.approx(float(e.equity.iloc[0]))
    st, d = get(server, "/api/decision?cell=10,10,1&history=")
    assert st == 200 and d["player"] in (0, 1) and d["actions"]
    assert {"hand", "action", "probability", "action_value", "reach"} <= set(d["rows"][0])


@pytest.mark.parametrize("query, status, words", [
    ("/api/decision?cell=10,10,9", 400, "outside a match"),
    ("/api/decision", 400, "needs cell"),
    ("/api/decision?cell=10,10,1&cell=9,9,1", 400, "given 2 times"),
    ("/api/decision?cell=10,10,1&file=../../etc/passwd", 400, "takes no parameter 'file'"),
    ("/api/decision?cell=10,10,1&run=../..", 400, "is not one of 0, 1"),
    ("/api/cells?run=2", 400, "is not one of"),
    ("/api/nothing", 404, "no endpoint"),
    ("/static/../../../etc/passwd", 404, "no page"),
    ("/etc/passwd", 404, "no page"),
])
def test_api_refuses_bad_parameters_with_one_line(server, query, status, words):
    st, body = get(server, query)
    assert st == status and words in body["error"] and "\n" not in body["error"]


def test_api_diff_marks_differences(server):
    st, d = get(server, "/api/diff?cell=10,10,1&history=&cell2=10,11,1")
    assert st == 200 and d["a"]["cell"] == [10, 10, 1] and d["b"]["cell"] == [10, 11, 1]
    assert 0 < d["marked"] <= len(d["rows"])
    for r in d["rows"]:
        pa, pb = r["probability_a"], r["probability_b"]
        assert r["marked"] == (pa is None or pb is None or abs(pa - pb) >= d["mark"])
    st, same = get(server, "/api/diff?cell=10,10,1&history=&run2=1")  # the same run twice: nothing differs
    assert st == 200 and same["marked"] == 0


def test_server_binds_loopback_by_default(mini):
    from truco_lab.people.explorer.server import serve

    httpd = serve([str(mini)], port=0)
    try:
        assert httpd.server_address[0] == "127.0.0.1"
    finally:
        httpd.server_close()


@pytest.mark.parametrize("argv, words", [
    (["explore", "/no/such/run"], "does not exist"),
    (["explore", "a", "b", "c"], "one or two run folders"),
    (["explore", ".", "--host", "my host"], "not an IP address"),
])
def test_cli_explore_refuses_bad_input(argv, words):
    if argv[1] == "/no/such/run":  # one case as a real process; the rest in this one (conftest.cli_in_process)
        r = subprocess.run([sys.executable, "-m", "truco_lab.cli", *argv], capture_output=True, text=True,
                           timeout=120)
        code, err = r.returncode, r.stderr
    else:
        code, err = cli_in_process(argv)
    assert code == 2 and words in err and len(err.strip().splitlines()) == 1, err


# ---- the page, in a real browser ---------------------------------------------------------------------------
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
        "--disable-component-update", "--disable-sync"]


@pytest.fixture(scope="module")
def page(server):
    sp = pytest.importorskip("playwright.sync_api", reason="playwright is in the [dev] extra")
    if not Path(CHROMIUM).exists():
        pytest.skip(f"no Chromium at {CHROMIUM} (.ci/run installs Debian's chromium)")
    with sp.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
        pg = browser.new_page(viewport={"width": 1280, "height": 900})
        yield pg
        browser.close()


def _open(page, server, hash_: str = "") -> None:
    page.goto(server.url + hash_)
    page.wait_for_selector(".tx[data-ready]", timeout=30_000)


def test_page_decision_shows_the_lookup_probabilities(page, server, mini, tmp_path):
    run = Run(mini)
    ref = run.tables[((10, 10, 1), 0)]
    table = StrategyTable.load(ref.path)
    d = run.decision("10,10,1", ref.meta["vira"], "")
    hand = d["rows"][0]["hand"]
    _open(page, server, f"#view=decision&cell=10,10,1&vira={ref.meta['vira']}")
    page.wait_for_selector("[data-testid=decision-table]")
    page.screenshot(path=str(tmp_path / "decision.png"))
    row = page.locator(f"tr[data-hand='{hand}'][data-hidden='']")
    shown = {e.get_attribute("data-action"): float(e.get_attribute("data-probability"))
             for e in row.locator("[data-action]").all()}
    cards = d["rows"][0]["cards"]
    want = table.lookup(ref.meta["vira"], cards, "")
    # lookup answers in the user's cards; the page in the table's representatives: the same cards here
    assert shown == pytest.approx(dict(zip(want["action"], want["probability"], strict=True)), abs=1e-6)
    assert "exploitability" in page.locator("[data-testid=quality]").first.inner_text()


def test_page_steps_forward_and_a_link_reopens_the_same_state(page, server):
    _open(page, server, "#view=decision&cell=10,10,1")
    page.wait_for_selector("[data-testid=decision-table]")
    nxt = page.locator("[data-testid=next]:not([disabled])").first
    hist = nxt.get_attribute("data-history")
    nxt.click()
    page.wait_for_function("h => decodeURIComponent(location.hash.replace(/\\+/g, ' ')).includes(h)", arg=hist)
    page.wait_for_selector("[data-testid=crumb-1]")
    url = page.url
    rows = page.locator("[data-testid=decision-table] tr").count()
    _open(page, "about:blank" and server, "")  # somewhere else first
    page.goto(url)
    page.wait_for_selector("[data-testid=crumb-1]")
    assert page.locator("[data-testid=crumb-1]").inner_text() == hist.split(", ")[-1]
    assert page.locator("[data-testid=decision-table] tr").count() == rows
    page.locator("[data-testid=crumb-0]").click()  # the breadcrumb steps back
    page.wait_for_function("() => !document.querySelector('[data-testid=crumb-1]')")


def test_page_match_heatmap_opens_a_cell(page, server):
    _open(page, server)
    page.locator("[data-testid=cell-10-11-1]").click()
    page.wait_for_selector("[data-testid=decision-table]")
    assert "cell=10%2C11%2C1" in page.url or "cell=10,11,1" in page.url


def test_page_diff_marks_a_known_difference(page, server):
    st, d = get(server, "/api/diff?cell=10,10,1&history=&cell2=10,11,1")
    _open(page, server, "#view=diff&cell=10,10,1&cell2=10,11,1")
    page.wait_for_selector("[data-testid=diff-table]")
    assert page.locator("tr[data-marked='1']").count() == d["marked"] > 0


def test_widget_selection_is_the_decision_on_screen(mini):
    from truco_lab.explore import Explorer

    w = Explorer(mini, view="decision", cell="10,10,1")
    assert "cell=10%2C10%2C1" in w.state
    sel = w.selection
    d = Run(mini).decision("10,10,1")
    assert sel["probability"].tolist() == [r["probability"] for r in d["rows"]]
    assert (sel["player"] == d["player"]).all()
    assert w.query("/api/cells")["cells"] == Run(mini).cells()
    assert Explorer(mini).selection.empty  # the match view: no decision selected


def test_range_reproduces_the_tables_reach_after_one_opponent_action(mini):
    """After one action of the opponent, the acting player's reach in the table (the solver's) is
    ways-to-deal(hand) x the opponent's range mass given that hand: the same up to one constant."""
    from math import comb

    from truco_lab.abstraction.levels import level_names, vira_classes

    run = Run(mini)
    root = run.decision("10,10,1")
    checked = 0
    for n in root["next"]:
        if not n["decision"]:
            continue
        d = run.decision("10,10,1", None, n["history"])
        if d["player"] == root["player"]:
            continue
        vc = vira_classes(run.rules)[d["vira_class"]]
        names = level_names(run.rules, vc)
        ratios = []
        for hand in dict.fromkeys(r["hand"] for r in d["rows"] if r["hidden"] == ""):
            reach = next(r["reach"] for r in d["rows"] if r["hand"] == hand)
            cnt = [hand.split().count(x) for x in names]
            ways = np.prod([comb(m, a) for m, a in zip(vc.multiplicity, cnt, strict=True)])
            mass = run.range("10,10,1", None, n["history"], hand)["mass"]
            if reach > 1e-9:
                ratios.append(reach / (ways * mass))
        assert len(ratios) > 3
        assert np.allclose(ratios, ratios[0], rtol=2e-4)  # the table's reach is float32
        checked += 1
    assert checked > 0


# ---- the browser table ------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def table_server(mini):
    from truco_lab.lab.policy import MatchStrategy
    from truco_lab.people.explorer.api import TableHost
    from truco_lab.people.explorer.server import serve

    host = TableHost(RULES, MatchStrategy(mini))
    httpd = serve([], port=0, background=True, tables=host)
    httpd.host = host
    yield httpd
    httpd.shutdown()


def _bot_secrets(session) -> set[str]:
    """The bot's cards the human must not see yet: all it holds, minus what it played face up."""
    from truco_lab.rules import engine as E

    s, me = session.st.s, session.seat
    shown = {int(E.play_card(s, x)) for x in range(int(E.nplays(s)))
             if int(E.play_owner(s, x)) != me and not E.play_down(s, x)}
    hidden = [c for c in session.deal[3 * (1 - me):3 * (1 - me) + 3] if c not in shown]
    return {session.w.literal(c) for c in hidden} | {session.w.card(c) for c in hidden}  # notation and as shown


@pytest.mark.parametrize("bot", ["heuristic-high", "random", "solved"])
def test_table_json_never_shows_the_bots_cards(table_server, bot):
    rng = np.random.default_rng(0)
    for seed in range(4):
        st, r = get(table_server, f"/api/table/new?bot={bot}&hand=1&score=10,10&dealer={seed % 2}&seed={seed}&hints=1")
        assert st == 200, r
        tid, v = r["id"], r["view"]
        session = table_server.host.tables[tid]
        while not v["hand_over"]:
            text = json.dumps(v)
            for c in _bot_secrets(session):
                assert f'"{c}"' not in text, (c, text)
            assert v["your_turn"] and v["legal"]
            a = v["legal"][int(rng.integers(len(v["legal"])))]["code"]
            st, r = get(table_server, f"/api/table/act?id={tid}&action={a}")
            assert st == 200, r
            v = r["view"]
        down = [p for p in v["table"] if p["who"] == "bot" and p["down"]]
        assert all(p["card"] == "??" for p in down) and v["hand_over"]["bot_cards"].count("??") == len(down)


@pytest.mark.parametrize("query, words", [
    ("/api/table/new?bot=god", "is not one of"),
    ("/api/table/new?seat=3", "seat and dealer are 0 or 1"),
    ("/api/table/new?score=12,3", "is not A,B"),
    ("/api/table/act?id=nope&action=1", "no table 'nope'"),
    ("/api/table/new?colour=red", "takes no parameter 'colour'"),
])
def test_table_refuses_bad_parameters(table_server, query, words):
    st, body = get(table_server, query)
    assert st == 400 and words in body["error"]


def test_table_refuses_an_illegal_move(table_server):
    st, r = get(table_server, "/api/table/new?bot=random&seed=3")
    legal = {a["code"] for a in r["view"]["legal"]}
    bad = next(c for c in range(200) if c not in legal)
    st, body = get(table_server, f"/api/table/act?id={r['id']}&action={bad}")
    assert st == 400 and "is not legal now" in body["error"]


def _click_and_wait(page, selector: str) -> None:
    """Click the first match and wait until the table has drawn the server's answer."""
    before = page.locator(".tt").get_attribute("data-version")
    page.locator(selector).first.click()
    page.wait_for_function(f"() => document.querySelector('.tt').getAttribute('data-version') !== '{before}'")


def test_page_table_plays_a_whole_hand_by_clicks_with_hints(page, table_server, tmp_path):
    page.goto(table_server.url + "table#hand=1&score=10,10&dealer=1&bot=solved&hints=1&seed=11")
    page.wait_for_selector(".tt[data-ready]", timeout=30_000)
    page.screenshot(path=str(tmp_path / "table.png"))
    clicks = 0
    while not page.locator("[data-testid=hand-over]").count():
        assert page.locator("[data-testid=hints]").count() == 1  # the solution's advice at each decision
        assert page.locator("[data-testid=hand] [data-card]").count() >= 1
        _click_and_wait(page, "[data-testid=actions] button")
        clicks += 1
        assert page.locator("[data-testid=last-cost], [data-testid=hand-over]").count() > 0
        assert clicks < 20
    assert clicks >= 1
    assert page.locator("[data-testid=result]").count() == 1  # one hand: the result, no next hand
    page.screenshot(path=str(tmp_path / "table-over.png"))


def test_page_match_table_deals_the_next_hand(page, table_server):
    page.goto(table_server.url + "table#bot=random&seed=2")
    page.wait_for_selector(".tt[data-ready]", timeout=30_000)
    for _ in range(40):
        if page.locator("[data-testid=next-hand]").count():
            break
        _click_and_wait(page, "[data-testid=actions] button")
    _click_and_wait(page, "[data-testid=next-hand]")
    page.wait_for_function("() => document.querySelector('[data-testid=status]').textContent.includes('hand 2')")


def test_argentine_table_in_the_browser_hides_the_bots_cards(page):
    """seed 004 at the browser table: Spanish cards, malas/buenas, and never a card the bot still hides."""
    from truco_lab.people.explorer.api import TableHost
    from truco_lab.people.explorer.server import serve
    from truco_lab.rules.ruleset import rule_set

    host = TableHost(rule_set("argentino"))
    httpd = serve([], port=0, background=True, tables=host)
    try:
        for seed in range(3):
            st, r = get(httpd, f"/api/table/new?bot=heuristic-high&hand=1&seed={seed}")
            assert st == 200 and r["view"]["deck"] == "spanish" and "malas" in r["view"]["score_words"]["you"]
            v, tid = r["view"], r["id"]
            while not v["hand_over"]:
                text = json.dumps(v)
                for c in _bot_secrets(host.tables[tid]):
                    assert f'"{c}"' not in text
                st, r = get(httpd, f"/api/table/act?id={tid}&action={v['legal'][0]['code']}")
                v = r["view"]
        page.goto(httpd.url + "table#bot=heuristic-low&hand=1&seed=4")
        page.wait_for_selector(".tt[data-ready]", timeout=30_000)
        assert " de " in page.locator("[data-testid=hand]").inner_text()
        while not page.locator("[data-testid=hand-over]").count():
            _click_and_wait(page, "[data-testid=actions] button")
        assert page.locator("[data-testid=result]").count() == 1
    finally:
        httpd.shutdown()


@pytest.fixture(scope="module")
def team_server():
    from truco_lab.people.explorer.api import TableHost
    from truco_lab.people.explorer.server import serve
    from truco_lab.rules.ruleset import rule_set

    host = TableHost(rule_set("paulista_2v2"))
    httpd = serve([], port=0, background=True, tables=host)
    httpd.host = host
    yield httpd
    httpd.shutdown()


def _team_secrets(session, partner_seen: bool) -> set[str]:
    """The other three seats' cards the human must not see: all they hold, minus what they played face up
    (and the partner's hand when seed 003 shows it: a side on eleven)."""
    from truco_lab.rules import engine as E

    s, me = session.st.s, session.seat
    shown = {int(E.play_card(s, x)) for x in range(int(E.nplays(s))) if not E.play_down(s, x)}
    hidden = set()
    for q in range(4):
        if q == me or (partner_seen and q == (me + 2) % 4):
            continue
        hidden |= {int(c) for c in session.deal[3 * q:3 * q + 3] if int(c) not in shown}
    return {session.w.literal(c) for c in hidden} | {session.w.card(c) for c in hidden}


@pytest.mark.parametrize("seat", [0, 1, 2, 3])
def test_team_table_json_shows_only_what_a_seat_sees(team_server, seat):
    """Two against two (seed 003) at the browser table: the human's own cards, every card played face up
    (the partner's named as the partner's), the partner's hand only on a hand of eleven, and never a card
    another seat still hides, not even when the hand is over."""
    rng = np.random.default_rng(seat)
    partner_played = partner_shown = False
    ours_at_eleven = "11,4" if seat % 2 == 0 else "4,11"
    deals = [(0, "0,0", 0), (1, "11,4", 1), (2, "4,11", 2), (3, "9,9", 3), (4, ours_at_eleven, (seat + 3) % 4)]
    for seed, score, dealer in deals:  # the last: our side on eleven, the human first to speak
        st, r = get(team_server, f"/api/table/new?bot=heuristic-high&partner=random&hand=1&seat={seat}"
                                 f"&dealer={dealer}&score={score}&seed={seed}")
        assert st == 200, r
        tid, v = r["id"], r["view"]
        session = team_server.host.tables[tid]
        ours = session.st.start_score[seat % 2] == 11 and session.st.start_score[1 - seat % 2] != 11
        assert v["sides"] == {"you": "us", "them": "them"} and "rivals" in v["against"]
        start = int(score.split(",")[seat % 2])
        assert v["score"]["you"] == start or (v["hand_over"] and v["score"]["you"] >= start)  # over before our turn
        while True:
            seen = v["partner_cards"] is not None
            partner_shown |= seen
            assert seen == (ours and not v["hand_over"]), (score, seat, v["partner_cards"])
            text = json.dumps(v)
            for c in _team_secrets(session, seen):
                assert f'"{c}"' not in text, (c, text)
            partner_played |= any(p["who"] == "partner" and not p["down"] for p in v["table"])
            assert {p["who"] for p in v["table"]} <= {"you", "partner", f"rival {(seat + 1) % 4}",
                                                     f"rival {(seat + 3) % 4}"}
            if v["hand_over"]:
                break
            assert v["your_turn"] and v["legal"]
            a = v["legal"][int(rng.integers(len(v["legal"])))]["code"]
            st, r = get(team_server, f"/api/table/act?id={tid}&action={a}")
            assert st == 200, r
            v = r["view"]
        assert v["hand_over"]["bot_cards"] == [] and v["result"] in ("your side wins", "the other side wins")
    assert partner_played and partner_shown


@pytest.mark.parametrize("query, words", [
    ("/api/table/new?bot=solved", "is not one of"),
    ("/api/table/new?partner=god", "partner 'god' is not one of"),
    ("/api/table/new?hints=1", "no solved strategy to hint from"),
    ("/api/table/new?seat=4", "seat and dealer are 0-3"),
    ("/api/table/new?bot=mccfr", "needs truco-lab mccfr runs"),
])
def test_team_table_refuses_bad_parameters(team_server, query, words):
    st, body = get(team_server, query)
    assert st == 400 and words in body["error"], body


def test_heads_up_table_refuses_a_partner(table_server):
    st, body = get(table_server, "/api/table/new?partner=random")
    assert st == 400 and "is heads-up" in body["error"]


def test_page_team_table_plays_a_match_hand_by_clicks(page, team_server, tmp_path):
    page.goto(team_server.url + "table#bot=heuristic-high&partner=heuristic-high&seat=1&seed=5")
    page.wait_for_selector(".tt[data-ready]", timeout=30_000)
    status = page.locator("[data-testid=status]").inner_text()
    assert "heuristic-high rivals, with a heuristic-high partner" in status and "us " in status
    page.screenshot(path=str(tmp_path / "team-table.png"))
    for _ in range(40):
        if page.locator("[data-testid=hand-over]").count():
            break
        _click_and_wait(page, "[data-testid=actions] button")
    over = page.locator("[data-testid=hand-over]").inner_text()
    assert "score us" in over and "held" not in over  # the other seats' cards stay unseen
    assert page.locator("[data-testid^=round-]").count() >= 1
    page.screenshot(path=str(tmp_path / "team-table-over.png"))
    _click_and_wait(page, "[data-testid=next-hand]")
    page.wait_for_function("() => document.querySelector('[data-testid=status]').textContent.includes('hand 2')")


def test_page_play_from_here_opens_a_hand_at_the_cells_score(page, mini):
    """The decision view's link opens the browser table at that cell's score, against the solved bot."""
    from truco_lab.lab.policy import MatchStrategy
    from truco_lab.people.explorer.api import TableHost
    from truco_lab.people.explorer.server import serve

    httpd = serve([str(mini)], port=0, background=True, tables=TableHost(RULES, MatchStrategy(mini)))
    try:
        _open(page, httpd, "#view=decision&cell=10,10,1")
        page.wait_for_selector("[data-testid=play-here]")
        href = page.locator("[data-testid=play-here]").get_attribute("href")
        assert "score=10%2C10" in href and "bot=solved" in href
        page.goto(httpd.url.rstrip("/") + href)
        page.wait_for_selector(".tt[data-ready]", timeout=30_000)
        assert "you 10 – bot 10" in page.locator("[data-testid=score]").inner_text()  # no hand ends before our move
        assert page.locator("[data-testid=hints]").count() == 1
    finally:
        httpd.shutdown()
