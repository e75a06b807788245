# Two commands do all set-up on a fresh machine: `make solve` and `make test`.
PY      ?= python3
VENV    := .venv
BIN     := $(VENV)/bin
STAMP   := $(VENV)/.installed
# numba caches compiled kernels beside their sources (__pycache__), its default, so `make`'s runs and a user's own
# `truco-lab ...` share one cache: with a cache of make's own (.venv/numba-cache), the first command typed after
# `make lab` compiled every kernel again (~80 s of CPU per process, stop 57)

.PHONY: setup test test-fast solve lab bench lint spec-check clean

$(BIN)/python:
	$(PY) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# Reinstall only when the pinned dependencies (pyproject.toml) change. Ray is the optional extra 'ray'
# (the grid on a cluster); make solve and make test install it so the Ray tests run.
$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[dev,ray]'
	touch $(STAMP)

setup: $(STAMP)

# -n 2: the suite on both cores (pytest-xdist); tests share no files (tmp_path) and assert no timings.
test: setup
	$(BIN)/ruff check .
	$(BIN)/python -m pytest -q -n 2

# The inner loop: everything but the tests marked slow (under two minutes).
test-fast: setup
	$(BIN)/ruff check .
	$(BIN)/python -m pytest -q -n 2 -m "not slow"

# The default main job: the eleven row in match equity, both dealers, to exploitability <= 1e-3 (resumable).
solve: setup
	$(BIN)/python experiments/eleven_row.py --out results/eleven

# The lab's results for the player notebooks 02-06 and the README's arena table: the real deck's endgame
# (9x9 .. 11x11, both dealers, to 1e-3 win probability: see the README for its wall time), a whole 10-card
# grid with tables, a ladder-to-6 cell, the arena; then the notebooks, executed in place.
LAB_DECK := --ranks 4567QJKA23 --suits c
# --resume only where a run was begun (a fresh machine's first `make lab` printed a refused --resume before starting);
# an interrupted step then continues, and a failed one stops make instead of being retried from scratch.
resume_if_begun = $(if $(wildcard $(1)/run.json),--resume)
lab: solve
	$(BIN)/truco-lab match --cells endgame --out results/endgame -q $(call resume_if_begun,results/endgame)
	$(BIN)/truco-lab match --cells all $(LAB_DECK) --max-stake 3 --out results/small-grid -q \
		$(call resume_if_begun,results/small-grid)
	test -f results/ladder6/summary.json || $(BIN)/truco-lab solve --score 0,0 --dealer 1 --vira all $(LAB_DECK) \
		--max-stake 6 --target-exploitability 2e-3 --out results/ladder6 -q
	$(BIN)/truco-lab arena --bots solved,heuristic-high,heuristic-low,random --matches 20000 --seed 1 $(LAB_DECK) \
		--max-stake 3 --solved results/small-grid --cell 0,0 --out results/arena -q
	cd notebooks && ../$(BIN)/jupyter-execute --inplace 0[2-6]_*.ipynb

bench: setup
	$(BIN)/python benchmarks/bandwidth.py
	$(BIN)/python benchmarks/engine.py
	$(BIN)/python benchmarks/solvers.py
	$(BIN)/python benchmarks/threads.py
	$(BIN)/python benchmarks/bots.py

spec-check: setup
	$(BIN)/truco-lab spec-check ../shared/truco-spec/engine/fixtures

lint: setup
	$(BIN)/ruff check .

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache
	find . -name __pycache__ -type d -prune -not -path './.venv/*' -exec rm -rf {} +
