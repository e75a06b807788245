"""truco-spec conformance (needs ../shared/truco-spec; CI always has it)."""

import json
import random

import pytest

from tests.conftest import FIXTURES, SCHEMAS, fixture_files, needs_spec
from truco_lab import HandState, TrucoError
from truco_lab.cli import main
from truco_lab.rules.spec import run_fixture, run_fixtures

pytestmark = needs_spec


@pytest.mark.parametrize("path", fixture_files(), ids=lambda p: str(p.relative_to(FIXTURES)))
def test_fixture_passes(path):
    r = run_fixture(path)
    assert r.passed, r.message


def test_corpus_has_67_fixtures_and_all_pass():
    results = run_fixtures(FIXTURES)
    assert len(results) == 67
    assert all(r.passed for r in results)


def test_runner_catches_a_wrong_expectation(tmp_path):
    src = json.loads((FIXTURES / "raises" / "opening-raise-declined.json").read_text())
    src["steps"][-1]["expect"]["score"] = {"0": 3, "1": 0}  # a decline pays 1, not 3
    f = tmp_path / "bad.json"
    f.write_text(json.dumps(src))
    r = run_fixture(f)
    assert not r.passed and "score" in r.message


def test_spec_check_cli_prints_the_summary_line(capsys):
    assert main(["spec-check", str(FIXTURES)]) == 0
    assert capsys.readouterr().out.strip().splitlines()[-1] == "67 passed, 0 failed"


def test_spec_check_cli_exits_1_on_failures(tmp_path, capsys):
    src = json.loads((FIXTURES / "raises" / "opening-raise-declined.json").read_text())
    src["steps"][-1]["expect"]["hand_winner"] = 1
    (tmp_path / "x.json").write_text(json.dumps(src))
    (tmp_path / "y.json").write_text((FIXTURES / "raises" / "opening-raise-accepted.json").read_text())
    assert main(["spec-check", str(tmp_path)]) == 1
    assert capsys.readouterr().out.strip().splitlines()[-1] == "1 passed, 1 failed"


def test_spec_check_cli_rejects_missing_dir(capsys):
    assert main(["spec-check", "/nonexistent/dir"]) == 2
    assert "does not exist" in capsys.readouterr().err


def _schema_validator(name):
    jsonschema = pytest.importorskip("jsonschema")
    from referencing import Registry, Resource

    schemas = {p.name: json.loads(p.read_text()) for p in SCHEMAS.glob("*.json")}
    reg = Registry().with_resources((s["$id"], Resource.from_contents(s)) for s in schemas.values())
    return jsonschema.Draft202012Validator(schemas[name], registry=reg)


def _random_states(n, seed=0):
    rng = random.Random(seed)
    from truco_lab.rules.cards import card_str

    for _ in range(n):
        cards = rng.sample(range(40), 7)
        sc = (rng.choice([0, 5, 10, 11]), rng.choice([0, 3, 9, 11]))
        h = HandState.new(hands=([card_str(c) for c in cards[:3]], [card_str(c) for c in cards[3:6]]),
                          vira=card_str(cards[6]), dealer=rng.randint(0, 1), score=sc)
        yield h.copy()
        while not h.is_over:
            h.apply(rng.choice(h.legal_actions()))
            yield h.copy()


def test_exports_validate_against_the_truco_spec_schemas():
    game_state = _schema_validator("game-state.schema.json")
    public = _schema_validator("public-state.schema.json")
    match = _schema_validator("match-state.schema.json")
    for h in _random_states(60):
        game_state.validate(h.to_json())
        public.validate(h.public_state())
        match.validate({"next_dealer": 0, "score": h.to_json()["score"], "winner": None, "current_hand": h.export()})


def test_export_then_load_is_the_identity_on_random_playouts():
    """Everything compares: the JSON, the public state, the legal actions, the points each side won and the
    returns, now and after the same random continuation of the hand (a loaded hand once reported whole
    scores as points won: its starting score was never set)."""
    rng = random.Random(11)
    for h in _random_states(150, seed=3):
        again = HandState.load(json.loads(json.dumps(h.export())))
        assert again.to_json() == h.to_json()
        assert again.public_state() == h.public_state()
        assert again.legal_actions() == h.legal_actions()
        # a finished hand's JSON holds the score after the award, not the award: a capped award (12 from 9 or
        # 10 with a hand worth 3) or a fold after re-raises (the raise is gone) cannot be told apart
        capped = h.is_over and (max(h.score) == 12 or json.loads(json.dumps(h.to_json()))["last_raised_by"] is not None)
        if not capped:
            assert again.gains == h.gains and again.returns() == h.returns()
        while not h.is_over:
            a = rng.choice(h.legal_actions())
            h.apply(a)
            again.apply(a)
        assert again.score == h.score
        if not capped:
            assert again.gains == h.gains and again.returns() == h.returns()


def test_a_loaded_hand_counts_its_points_from_its_own_start():
    """Issue 17's reproduction: a hand at 5x3 played to its end gives gains (1, 0) and returns [1, -1],
    loaded from JSON at its start or at its end."""
    h = HandState.new(hands=("3d Qs 5c", "4s 7h Ac"), vira="4c", dealer=1, score=(5, 3))
    start = HandState.load(json.loads(json.dumps(h.to_json())))
    for x in ("play_face_up 3d", "play_face_up 4s", "play_face_up Qs", "play_face_up 7h"):
        h.apply(x)
        start.apply(x)
    assert h.is_over and start.is_over
    end = HandState.load(json.loads(json.dumps(h.export())))
    for st in (h, start, end):
        assert st.gains == (1, 0) and st.returns() == [1.0, -1.0], st


def test_bad_state_is_rejected_with_a_message_naming_the_problem():
    st = json.loads((FIXTURES / "raises" / "opening-raise-accepted.json").read_text())["initial_state"]
    st["hands"]["1"][0] = dict(st["hands"]["0"][0], id="p1c0")  # the same physical card twice
    with pytest.raises(TrucoError) as e:
        HandState.load(st)
    assert e.value.code == "INVALID_INITIAL_STATE" and "7" in str(e.value)


def test_spec_check_finds_fixtures_skips_other_json_and_refuses_an_empty_folder(tmp_path, capsys):
    from truco_lab.cli import main

    empty = tmp_path / "empty"
    empty.mkdir()
    assert main(["spec-check", str(empty)]) == 2
    assert "no fixture" in capsys.readouterr().err
    d = tmp_path / "corpus" / "fixtures"
    d.mkdir(parents=True)
    (tmp_path / "corpus" / "schema.json").write_text('{"$schema": "x", "type": "object"}')
    (d / "broken.json").write_text("{not json")
    good = fixture_files()[0] if fixture_files() else None
    if good is not None:
        (d / good.name).write_text(good.read_text())
    code = main(["spec-check", str(tmp_path / "corpus")])
    out = capsys.readouterr().out
    assert "skipped 1 JSON" in out
    assert code == 1 and "FAIL broken" in out  # a malformed fixture is a failure, not a crash
    assert out.strip().splitlines()[-1] == f"{1 if good else 0} passed, 1 failed"
