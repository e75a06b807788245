# Two commands do all set-up on a fresh machine: `make solve` and `make test`.
PY      ?= python3
VENV    := .venv
BIN     := $(VENV)/bin
STAMP   := $(VENV)/.installed
export NUMBA_CACHE_DIR ?= $(CURDIR)/.venv/numba-cache

.PHONY: setup test test-fast solve bench lint spec-check clean

$(BIN)/python:
	$(PY) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# Reinstall only when the pinned dependencies (pyproject.toml) change. Ray is the optional extra 'ray'
# (the grid on a cluster); make solve and make test install it so the Ray tests run.
$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[dev,ray]'
	touch $(STAMP)

setup: $(STAMP)

test: setup
	$(BIN)/ruff check .
	$(BIN)/python -m pytest -q

# The inner loop: everything but the tests marked slow (under two minutes).
test-fast: setup
	$(BIN)/ruff check .
	$(BIN)/python -m pytest -q -m "not slow"

# The default main job: the eleven row in match equity, both dealers, to exploitability <= 1e-3 (resumable).
solve: setup
	$(BIN)/python experiments/eleven_row.py --out results/eleven

bench: setup
	$(BIN)/python benchmarks/engine.py
	$(BIN)/python benchmarks/solvers.py
	$(BIN)/python benchmarks/threads.py

spec-check: setup
	$(BIN)/truco-lab spec-check ../shared/truco-spec/engine/fixtures

lint: setup
	$(BIN)/ruff check .

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache
