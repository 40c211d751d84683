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

bench: setup
	$(BIN)/python -m bench

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache
