# The two Quick-start commands (README) and a few helpers. Each target creates .venv on
# first use; later runs only reinstall when pyproject.toml changes.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.assetgate-installed
DEMO_SERVER ?= 2.11.11

.PHONY: demo test fast lint bench clean java fidelity fuzz fuzz-servers

$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	@$(BIN)/python -m pip install --quiet --disable-pip-version-check --upgrade "pip>=25.1"
	@$(BIN)/python -m pip install --quiet --disable-pip-version-check -e ".[nats,spark,connect]" --group test
	@touch $(STAMP)

## demo: the main job: check the bundled demo inventory (captured from real servers)
## against nats-server $(DEMO_SERVER), then scan it on embedded local Spark and print the
## scan's summary; exit status 1 from either means findings, as intended
DEMO_SCAN := .cache/demo-scan
demo: $(STAMP) java
	@$(BIN)/assetgate check fixtures/inventories/demo.jsonl --target $(DEMO_SERVER) || test $$? -eq 1
	@echo
	@echo "assetgate scan (embedded Spark) -> $(DEMO_SCAN)/"
	@$(BIN)/assetgate scan fixtures/inventories/demo.jsonl --target $(DEMO_SERVER) \
		--out $(DEMO_SCAN) --output /dev/null || test $$? -eq 1
	@cat $(DEMO_SCAN)/summary.md

## test: the whole suite, as CI runs it (Spark tests need Java 17+)
test: $(STAMP) lint java
	@ASSETGATE_REQUIRE_SPARK=1 $(BIN)/python -m pytest

## fast: the quick local loop (no real nats-server binaries, no Spark)
fast: $(STAMP) lint
	@$(BIN)/python -m pytest -m "not realserver and not spark"

## fidelity: the real-server suite, then docs/fidelity.md from its results
fidelity: $(STAMP)
	@$(BIN)/python -m pytest -m realserver -q
	@$(BIN)/python -m tests.support.fidelity

## fuzz: the fuzz targets (inventory reader, validate) for minutes, not seconds
fuzz: $(STAMP)
	@HYPOTHESIS_PROFILE=fuzz $(BIN)/python -m pytest tests/fuzz -q

## fuzz-servers: the differential test with many random creates per release and kind
## (standalone servers and 3-node clusters)
## against real servers; a fresh seed each run (printed), or DIFF_SEED=N to repeat one
DIFF_N ?= 100000
DIFF_CLUSTER_N ?= 20000
DIFF_SEED ?= $(shell date +%s)
DIFF_SEED := $(DIFF_SEED)# expanded once: the seed printed is the seed used
fuzz-servers: $(STAMP)
	@echo "differential test: ASSETGATE_DIFF_N=$(DIFF_N) ASSETGATE_DIFF_CLUSTER_N=$(DIFF_CLUSTER_N) ASSETGATE_DIFF_SEED=$(DIFF_SEED) ASSETGATE_DIFF_CLUSTER_VERSIONS=all"
	@ASSETGATE_DIFF_N=$(DIFF_N) ASSETGATE_DIFF_CLUSTER_N=$(DIFF_CLUSTER_N) ASSETGATE_DIFF_SEED=$(DIFF_SEED) ASSETGATE_DIFF_CLUSTER_VERSIONS=all \
		$(BIN)/python -m pytest tests/realserver/test_differential.py -q -m realserver

java:
	@command -v java >/dev/null || { echo "Java 17+ is required for Spark (apt-get install -y openjdk-17-jre-headless)" >&2; exit 2; }

lint: $(STAMP)
	@$(BIN)/ruff check .
	@$(BIN)/ruff format --check .
	@$(BIN)/mypy

bench: $(STAMP)
	@$(BIN)/python benchmarks/bench_validate.py
	@$(BIN)/python benchmarks/bench_overlaps.py
	@$(BIN)/python benchmarks/bench_check.py
	@$(BIN)/python benchmarks/bench_scan.py

clean:
	rm -rf $(VENV) .cache .mypy_cache .ruff_cache .pytest_cache .hypothesis
