# The two commands of the quick start: `make demo` and `make test`.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
export NUMBA_CACHE_DIR := $(CURDIR)/.numba_cache

.PHONY: demo test lint typecheck pytest java bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $@

$(VENV)/.installed-bench: pyproject.toml $(VENV)/.installed
	$(BIN)/python -m pip install --quiet -e '.[test,bench]'
	touch $@

demo: $(VENV)/.installed
	rm -rf out/demo
	$(BIN)/neardup dedup data/sample/licenses.jsonl.gz --output out/demo --keep longest

lint: $(VENV)/.installed
	$(BIN)/ruff check src tests bench
	$(BIN)/ruff format --check src tests bench

typecheck: $(VENV)/.installed
	$(BIN)/mypy

java:  # Spark's tests need a Java runtime (17): from the system, or from apt when missing
	command -v java >/dev/null || (apt-get update -q && apt-get install -y -q openjdk-17-jre-headless)

pytest: $(VENV)/.installed java
	$(BIN)/pytest

test: lint typecheck pytest

bench: $(VENV)/.installed-bench
	command -v redis-server >/dev/null || (apt-get update -q && apt-get install -y -q redis-server)
	$(BIN)/python bench/dedup_vs_peers.py
	$(BIN)/python bench/index.py
	$(BIN)/python bench/scale.py --rfc  # makes 1M and 10M documents once (out/bench, ~4 GB)

clean:
	rm -rf $(VENV) .numba_cache out .pytest_cache .mypy_cache .ruff_cache
