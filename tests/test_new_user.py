"""What a careful reader and a new user hit (issue 17), each reproduced, now answered in one line."""

from __future__ import annotations

import json

import pytest

from truco_lab import PAULISTA_2V2, HandState, TrucoError
from truco_lab.cli import main
from truco_lab.people.arena import wilson_interval

SMALL = ["--ranks", "7QJKA23", "--suits", "c", "--max-stake", "3"]


def _one_line_exit_2(argv, capsys, *named):
    try:
        code = main(argv)
    except SystemExit as e:  # argparse's own refusals
        code = e.code
    err = capsys.readouterr().err
    assert code == 2, err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    for n in named:
        assert n in err, err
    return err


@pytest.mark.parametrize("argv", [
    ["play", "--seed", "-1", "--hand"],
    ["arena", "--bots", "random,heuristic-low", "--seed", "-1", "--no-exploitability"],
    ["mccfr", "--score", "0,0", "--dealer", "1", "--iterations", "1", "--seed", "-5", "--out", "/tmp/x"],
    ["mccfr", "--score", "0,0", "--dealer", "1", "--iterations", "1", "--seed", str(2**64), "--out", "/tmp/x"],
])
def test_a_bad_seed_is_one_line(argv, capsys):
    _one_line_exit_2(argv, capsys, "--seed")


def test_a_score_out_of_range_names_the_rules_range(capsys):
    err = _one_line_exit_2(["explain", "--score", "-1,0", "--dealer", "0", "--vira", "4c", "--hand", "5c 3d Qs"],
                           capsys, "0..11", "-1,0")
    assert "29" not in err


def test_resume_with_fresh_is_refused_before_anything_is_touched(tmp_path, capsys):
    out = tmp_path / "run"
    out.mkdir()
    (out / "run.json").write_text('{"kind": "solve", "key": "k", "describe": {}}')
    (out / "summary.json").write_text("{}")
    before = sorted(p.name for p in out.iterdir())
    _one_line_exit_2(["solve", "--score", "11,11", "--dealer", "0", "--vira", "all", "--iterations", "1",
                      "--out", str(out), "--resume", "--fresh", *SMALL], capsys, "--resume", "--fresh")
    _one_line_exit_2(["match", "--cells", "11,11", "--out", str(out), "--resume", "--fresh", *SMALL], capsys,
                     "--resume")
    assert sorted(p.name for p in out.iterdir()) == before and (out / "summary.json").read_text() == "{}"


def test_another_run_in_the_folder_names_the_fields_that_differ(tmp_path, capsys):
    out = tmp_path / "r"
    base = ["solve", "--score", "11,11", "--dealer", "0", "--vira", "Kc", "--iterations", "2", "--out", str(out),
            "-q", "--ranks", "7QJKA23", "--suits", "c"]
    assert main([*base, "--max-stake", "3"]) == 0
    capsys.readouterr()
    err = _one_line_exit_2([*base, "--max-stake", "1"], capsys, "rules.ladder")
    assert "'name'" not in err  # the differing field, not the two whole rules dicts


def test_spec_check_counts_malformed_fixtures_as_failed(tmp_path, capsys):
    ok = json.loads(json.dumps(HandState.new(("3d Qs 5c", "4s 7h Ac"), "4c").to_json()))
    cases = {"noop": [{"player": 0}], "notalist": "notalist",
             "zero": [{"op": "assert_legal_actions", "player": "zero", "must_include": []}]}
    for name, steps in cases.items():
        (tmp_path / f"{name}.json").write_text(json.dumps({"id": name, "initial_state": ok, "steps": steps}))
    (tmp_path / "broken.json").write_text("{not json")
    assert main(["spec-check", str(tmp_path)]) == 1
    out = capsys.readouterr().out
    assert out.strip().endswith("0 passed, 4 failed") and "Traceback" not in out
    for name in ("noop", "notalist", "zero", "broken"):
        assert f"FAIL {name}" in out


def test_a_malformed_state_is_a_truco_error():
    j = HandState.new(("3d Qs 5c", "4s 7h Ac"), "4c").to_json()
    j["completed_rounds"] = [1]
    with pytest.raises(TrucoError) as e:
        HandState.load(j)
    assert e.value.code == "INVALID_INITIAL_STATE"


def test_two_against_two_public_state_and_json():
    h = HandState.new(hands=("3d Qs 5c", "4s 7h Ac", "Kd Jd 6c", "Ks Js 6h"), vira="4c", dealer=3,
                      rules=PAULISTA_2V2)
    for _ in range(6):  # round 1 (four plays), then two of round 2
        h.apply(h.legal_actions()[0])
    pub = h.public_state()
    assert len(pub["completed_rounds"]) == 1
    cur = pub["current_round"]["plays"]
    assert len(cur) == 2 and [p["player"] for p in cur] == [int(pub["current_round"]["leader"]),
                                                            (int(pub["current_round"]["leader"]) + 1) % 4]
    two_seat = HandState.new(("3d Qs 5c", "4s 7h Ac"), "4c").to_json()
    with pytest.raises(TrucoError, match="heads-up"):
        HandState.load(two_seat, rules=PAULISTA_2V2)


def test_wilson_interval_is_right_near_zero_and_one():
    lo, hi = wilson_interval(100, 100)
    assert hi == pytest.approx(1.0) and 0.95 < lo < 0.97  # not "1.000 ± 0.000"
    lo, hi = wilson_interval(0, 100)
    assert lo == pytest.approx(0.0, abs=1e-12) and 0.03 < hi < 0.05
    lo, hi = wilson_interval(50, 100)
    assert lo == pytest.approx(0.404, abs=2e-3) and hi == pytest.approx(0.596, abs=2e-3)


def test_arena_under_house_rules_picks_a_cell_with_decisions(tmp_path, capsys):
    assert main(["arena", "--rules", "paulista_house", "--bots", "random,heuristic-low", "--matches", "4",
                 "--out", str(tmp_path), "-q", *SMALL]) == 0
    arena = json.loads((tmp_path / "arena.json").read_text())
    assert arena["cell"][:2] == [10, 10] and arena["exploitability_units"] == "points per hand"
    assert set(arena["exploitability"]) == {"random", "heuristic-low"}


class _Script:
    def __init__(self, lines):
        self.lines = list(lines)

    def __call__(self, prompt=""):
        if not self.lines:
            raise EOFError
        return self.lines.pop(0)


def _hand_table(lines, seed=3):
    from truco_lab.people.bots import RandomBot
    from truco_lab.people.play import Table
    from truco_lab.rules import PAULISTA

    out: list[str] = []
    t = Table(PAULISTA, RandomBot(1), match=False, seed=seed, read=_Script(lines), write=out.append)
    assert t.run() == 0
    return "\n".join(out)


def test_the_table_takes_its_own_words_and_says_why_a_move_is_illegal():
    text = _hand_table(["raise 9", "concede"])
    assert "is not legal now: " in text and "choose 1-" in text.lower()
    assert "concede the hand" in text
    assert "win the match" not in text and "the hand" in text.splitlines()[-1]


def test_the_table_never_reveals_a_face_down_card():
    """Seed 000: a face-down card is never revealed, not when the hand is over either."""
    import pyspiel

    from truco_lab.people.bots import RandomBot
    from truco_lab.people.play import Table
    from truco_lab.rules import PAULISTA
    from truco_lab.rules.cards import A_DOWN, A_UP, parse_card

    out: list[str] = []
    table = Table(PAULISTA, RandomBot(1), match=False, write=out.append)
    st = pyspiel.load_game("truco_paulista", {"strategic": False}).new_initial_state()
    deal = [parse_card(c) for c in ("4s", "5h", "6d")] + [parse_card(c) for c in ("3d", "Ks", "Jc")] + [parse_card("7c")]
    for c in sorted(deal[:3]) + sorted(deal[3:6]) + deal[6:]:
        st.apply_action(c)
    st.apply_action(A_UP + parse_card("4s"))  # you lead round 1
    st.apply_action(A_UP + parse_card("3d"))  # the bot wins it and leads round 2
    st.apply_action(A_DOWN + parse_card("Ks"))  # face down
    while not st.is_terminal():
        st.apply_action(st.legal_actions()[0])
    table._hand_over(st, list(st.deal))
    line = out[-1] if out[-1].startswith("hand over.") else next(x for x in out if x.startswith("hand over."))
    assert "??" in line and "K♠" not in line and "3♦" in line
