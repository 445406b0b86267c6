# hlo-rewrite: the two set-up commands of the README are `make demo` and `make test`.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
EXAMPLE ?= examples/torch_xla_allreduce.hlo

.PHONY: demo test test-unit test-fast lint bench fuzz clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# the tool and its runtime dependencies only (editable, like the test install, so the two agree;
# tests/test_packaging.py checks that a plain, non-editable wheel install works too)
$(VENV)/.stamp-run: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e .
	touch $@

# editable install with the test and lint dependencies (jax/jaxlib: XLA as the oracle)
$(VENV)/.stamp-test: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[test,dev]'
	touch $@

demo: $(VENV)/.stamp-run
	@echo "== input: $(EXAMPLE)"
	@cat $(EXAMPLE)
	@echo "== hlo-rewrite $(EXAMPLE) --diff"
	@$(BIN)/hlo-rewrite $(EXAMPLE) --diff || test $$? -eq 1
	@echo "== hlo-rewrite $(EXAMPLE)"
	@$(BIN)/hlo-rewrite $(EXAMPLE)

# every test once: the unit layer with jax and jaxlib unimportable (which proves it needs
# neither), then the oracle layer
test: test-unit
	$(BIN)/python -m pytest -q -m xla

# the unit layer: runtime dependencies, pytest and hypothesis only; jax and jaxlib are made
# unimportable, so a test that needs them fails here (tests/README.md)
test-unit: $(VENV)/.stamp-test
	HLO_REWRITE_BLOCK_JAX=1 $(BIN)/python -m pytest -q -m "not xla"

test-fast: $(VENV)/.stamp-test
	$(BIN)/python -m pytest -q -m "not slow"

lint: $(VENV)/.stamp-test
	$(BIN)/ruff check hlo_rewrite tests bench
	$(BIN)/mypy hlo_rewrite

# the command as users run it against XLA (bench/command.py), then the in-process breakdown
bench: $(VENV)/.stamp-test
	$(BIN)/python bench/make_modules.py
	$(BIN)/python bench/command.py
	$(BIN)/python bench/run.py
	$(BIN)/python bench/scaling.py

fuzz: $(VENV)/.stamp-test
	$(BIN)/python tests/fuzz_corpus.py --count 100000
	$(BIN)/python tests/fuzz_corpus.py --tokens --xla --count 20000
	$(BIN)/python tests/fuzz_corpus.py --tokens --xla --strict --count 5000

clean:
	rm -rf $(VENV) build dist *.egg-info .pytest_cache .mypy_cache .ruff_cache
