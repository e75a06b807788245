"""The house's walls: layers import only downwards, no import cycles, the engine's state and rules arrays
are read by name outside the rules layer, solvers/ knows no truco, functions stay short."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LAYERS = ("rules", "openspiel", "abstraction", "lab", "people", "cli")  # each may import those before it
PKG = ROOT / "truco_lab"


def _modules() -> dict[str, Path]:
    out = {}
    for f in sorted(PKG.rglob("*.py")):
        parts = f.relative_to(ROOT).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        out[name] = f
    return out


def _imports(path: Path) -> set[str]:
    """Every module a file imports, at the top or inside functions."""
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            out.add(node.module)
            out |= {f"{node.module}.{a.name}" for a in node.names}  # `from pkg import module`
    return out


def _layer(module: str) -> int | None:
    parts = module.split(".")
    return LAYERS.index(parts[1]) if len(parts) > 1 and parts[0] == "truco_lab" and parts[1] in LAYERS else None


def test_no_layer_imports_from_a_layer_above_it():
    mods = _modules()
    bad = []
    for name, path in mods.items():
        mine = _layer(name)
        if mine is None:
            continue
        for imp in _imports(path):
            theirs = _layer(imp)
            if theirs is not None and theirs > mine:
                bad.append(f"{name} imports {imp}")
    assert not bad, "\n".join(bad)


def test_no_import_cycles_between_modules():
    mods = _modules()
    graph = {m: sorted(i for i in _imports(p) if i in mods and i != m and not m.startswith(i + "."))
             for m, p in mods.items()}
    graph = {m: [i for i in deps if i != "truco_lab"] for m, deps in graph.items()}  # the package root re-exports
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(m: str) -> list[str] | None:
        state[m] = 1
        stack.append(m)
        for n in graph[m]:
            if state.get(n) == 1:
                return stack[stack.index(n):] + [n]
            if n not in state:
                cyc = visit(n)
                if cyc:
                    return cyc
        stack.pop()
        state[m] = 2
        return None

    for m in graph:
        if m not in state and m != "truco_lab":
            cyc = visit(m)
            assert cyc is None, " -> ".join(cyc)


def _engine_slot_names() -> set[str]:
    """The state layout's slot names, read from the engine's layout block."""
    text = (PKG / "rules" / "engine.py").read_text()
    block = text[text.index("# ---- state layout"):text.index("STATE_SIZE =")]
    return set(re.findall(r"^([A-Z][A-Z_]*) = \d+", block, re.M))


def test_engine_state_and_rules_arrays_are_read_by_name_outside_rules():
    slots = _engine_slot_names()
    assert {"HAND", "SCORE", "WINNER", "PCARD"} <= slots
    raw_slot = re.compile(r"\bE\.(" + "|".join(sorted(slots)) + r")\b")
    offset = re.compile(r"\bR_[A-Z][A-Z_]*\b")
    bad = []
    files = [f for f in PKG.rglob("*.py") if "rules" not in f.relative_to(PKG).parts[:1]]
    files += [*(ROOT / "benchmarks").glob("*.py"), *(ROOT / "experiments").glob("*.py")]
    for f in files:
        for i, line in enumerate(f.read_text().splitlines(), 1):
            if raw_slot.search(line) or offset.search(line):
                bad.append(f"{f.relative_to(ROOT)}:{i}: {line.strip()}")
    assert not bad, "\n".join(bad)


def test_solvers_know_no_truco():
    bad = []
    for f in (ROOT / "solvers").glob("*.py"):
        for imp in _imports(f):
            if imp.startswith("truco_lab"):
                bad.append(f"{f.name} imports {imp}")
        for i, line in enumerate(f.read_text().splitlines(), 1):
            # the Parquet metadata key b"truco_lab" is the lab's file format name, not a rule of the game
            if re.search(r"zap|copas|manilha|vira|dealer|truco", line, re.I) and 'b"truco_lab' not in line:
                bad.append(f"{f.name}:{i}: {line.strip()}")
    assert not bad, "\n".join(bad)


@pytest.mark.parametrize("where", ["truco_lab", "solvers"])
def test_functions_outside_numba_kernels_stay_under_a_hundred_lines(where):
    long = []
    for f in (ROOT / where).rglob("*.py"):
        for node in ast.walk(ast.parse(f.read_text())):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                jitted = any("jit" in ast.unparse(d) for d in node.decorator_list)
                n = node.end_lineno - node.lineno + 1
                if n > 100 and not jitted:
                    long.append(f"{f.relative_to(ROOT)}:{node.lineno} {node.name} ({n} lines)")
    assert not long, "\n".join(long)


def test_public_names_are_importable_from_the_package():
    import truco_lab

    for name in truco_lab.__all__:
        assert getattr(truco_lab, name) is not None
