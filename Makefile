# The two commands a person needs: `make run` and `make test`. Both set up what is missing.
VENV := .venv
BIN := $(VENV)/bin

.PHONY: setup run test lint typecheck pytest bench clean

setup:
	@scripts/setup.sh

run: setup
	$(BIN)/browser-tool serve

test: setup
	$(BIN)/ruff format --check .
	$(BIN)/ruff check .
	$(BIN)/mypy
	$(BIN)/pytest

lint: setup
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

# The benchmark's own environment: Playwright for Python, to compare against. It drives our
# Chrome binary (executable_path); no browser is ever downloaded.
BENCH_VENV := bench/.venv
PLAYWRIGHT := playwright==1.65.*

$(BENCH_VENV)/.installed:
	python3 -m venv $(BENCH_VENV)
	$(BENCH_VENV)/bin/python -m pip install --quiet '$(PLAYWRIGHT)'
	touch $@

bench: setup $(BENCH_VENV)/.installed
	$(BIN)/python -m bench

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache
