"""truco-spec conformance: run the engine fixtures of ``truco-spec/engine``."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from truco_lab.rules.state import HandState, TrucoError


@dataclass
class FixtureResult:
    id: str
    path: Path
    passed: bool
    message: str = ""


def _subset(expect: Any, got: Any, path: str = "") -> str | None:
    """None if ``expect`` matches ``got`` (dicts: subset of keys; lists: same length)."""
    if isinstance(expect, dict):
        if not isinstance(got, dict):
            return f"{path or '.'}: expected an object {expect!r}, got {got!r}"
        for k, v in expect.items():
            if k not in got:
                return f"{path}.{k}: missing"
            err = _subset(v, got[k], f"{path}.{k}")
            if err:
                return err
        return None
    if isinstance(expect, list):
        if not isinstance(got, list) or len(got) != len(expect):
            return f"{path}: expected {expect!r}, got {got!r}"
        for i, (e, g) in enumerate(zip(expect, got, strict=False)):
            err = _subset(e, g, f"{path}[{i}]")
            if err:
                return err
        return None
    if expect != got or type(expect) is not type(got):
        return f"{path}: expected {expect!r}, got {got!r}"
    return None


_STEP_KEYS = {"assert_legal_actions": ("player",), "apply_action": ("action", "player"), "assert_state": ("expect",),
              "assert_export_round_trip": ("expect",), "assert_rejected_action": ("action", "player", "error_code")}


def _malformed_step(step) -> str | None:
    """Why a step cannot be run (``None`` when it can): an object with a known ``op``, the keys that op
    reads, and an integer ``player``."""
    if not isinstance(step, dict):
        return f"a step is an object, got {step!r}"
    op = step.get("op")
    if op not in _STEP_KEYS:
        return f"op must be one of {', '.join(_STEP_KEYS)}, got {op!r}"
    missing = [k for k in _STEP_KEYS[op] if k not in step]
    if missing:
        return f"{op} needs {', '.join(missing)}"
    p = step.get("player", 0)
    if isinstance(p, bool) or not isinstance(p, int):
        return f"player must be an integer seat, got {p!r}"
    return None


def _legal_for(state: HandState, player: int) -> set[int]:
    return set(state.legal_actions()) if state.actor == player else set()


def run_fixture(path: str | Path) -> FixtureResult:
    """Run one fixture file; never raises for a failing (or malformed) fixture."""
    path = Path(path)
    try:
        fx = json.loads(path.read_text())
        if not isinstance(fx, dict) or "initial_state" not in fx:
            raise ValueError("no initial_state")
    except (OSError, UnicodeDecodeError, ValueError) as e:
        return FixtureResult(path.stem, path, False, f"malformed fixture ({type(e).__name__}: {e})")
    fid = fx.get("id", path.stem)
    try:
        state = HandState.load(fx["initial_state"])
    except TrucoError as e:
        want = fx.get("expect_initial_state_error")
        if want == e.code:
            return FixtureResult(fid, path, True)
        return FixtureResult(fid, path, False, f"initial state rejected with {e}")
    if "expect_initial_state_error" in fx:
        return FixtureResult(fid, path, False, f"initial state accepted, expected {fx['expect_initial_state_error']}")
    steps = fx.get("steps", [])
    if not isinstance(steps, list):
        return FixtureResult(fid, path, False, f"malformed fixture: steps must be a list, got {steps!r}")
    for i, step in enumerate(steps):
        bad = _malformed_step(step)
        if bad:
            return FixtureResult(fid, path, False, f"step {i + 1}: malformed ({bad})")
        op = step["op"]
        where = f"step {i + 1} ({op})"
        try:
            if op == "assert_legal_actions":
                legal = _legal_for(state, step["player"])
                for a in step.get("must_include", []):
                    if state.action_from_json(a, step["player"]) not in legal:
                        return FixtureResult(fid, path, False, f"{where}: {a} is not legal")
                for a in step.get("must_exclude", []):
                    try:
                        aid = state.action_from_json(a, step["player"])
                    except TrucoError:
                        continue
                    if aid in legal:
                        return FixtureResult(fid, path, False, f"{where}: {a} is legal")
            elif op == "apply_action":
                state.apply(state.action_from_json(step["action"], step["player"]), step["player"])
            elif op == "assert_state":
                err = _subset(step["expect"], state.public_state())
                if err:
                    return FixtureResult(fid, path, False, f"{where}: {err}")
            elif op == "assert_export_round_trip":
                again = HandState.load(json.loads(json.dumps(state.export())))
                err = _subset(step["expect"], again.public_state())
                if err:
                    return FixtureResult(fid, path, False, f"{where}: after round trip {err}")
                if again.to_json() != state.to_json():
                    return FixtureResult(fid, path, False, f"{where}: round trip changed the private state")
                state = again
            elif op == "assert_rejected_action":
                before = state.s.copy()
                try:
                    state.apply(state.action_from_json(step["action"], step["player"]), step["player"])
                except TrucoError as e:
                    if e.code != step["error_code"]:
                        return FixtureResult(fid, path, False, f"{where}: rejected with {e.code}, expected {step['error_code']}")
                    if (state.s != before).any():
                        return FixtureResult(fid, path, False, f"{where}: a rejected action changed the state")
                else:
                    return FixtureResult(fid, path, False, f"{where}: accepted, expected {step['error_code']}")
        except TrucoError as e:
            return FixtureResult(fid, path, False, f"{where}: {e}")
        except (ValueError, KeyError, TypeError, AttributeError) as e:  # a malformed value inside a step
            return FixtureResult(fid, path, False, f"{where}: malformed ({type(e).__name__}: {e})")
    return FixtureResult(fid, path, True)


def is_fixture(path: Path) -> bool:
    """A truco-spec engine fixture: a JSON object with an ``initial_state`` (schemas and other valid
    JSON are not); a ``.json`` file that is not valid JSON counts as a (malformed, so failing) fixture:
    nobody can tell it is not one."""
    try:
        obj = json.loads(path.read_text())
    except (OSError, UnicodeDecodeError, ValueError):
        return True
    return isinstance(obj, dict) and "initial_state" in obj


def find_fixtures(directory: str | Path) -> tuple[list[Path], list[Path]]:
    """(fixture files, other JSON files skipped) under ``directory`` (or the one file given)."""
    d = Path(directory)
    if not d.exists():
        raise FileNotFoundError(f"fixture directory {str(d)!r} does not exist")
    files = sorted(d.rglob("*.json")) if d.is_dir() else [d]
    fixtures = [f for f in files if is_fixture(f)]
    return fixtures, [f for f in files if f not in set(fixtures)]


def run_fixtures(directory: str | Path) -> list[FixtureResult]:
    """Run every fixture under ``directory`` (sorted); other JSON (schemas, manifests) is skipped."""
    return [run_fixture(f) for f in find_fixtures(directory)[0]]
