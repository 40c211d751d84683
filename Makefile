# The two commands a person needs: `make run` and `make test`. Both set up what is missing.
VENV := .venv
BIN := $(VENV)/bin

.PHONY: setup run test test-repeat soak lint typecheck pytest bench clean

setup:
	@scripts/setup.sh

run: setup
	$(BIN)/browser-tool serve

test: setup
	$(BIN)/ruff format --check .
	$(BIN)/ruff check .
	$(BIN)/mypy
	$(BIN)/pytest

# The suite three times in a row under two busy loops (killed by pid afterwards).
test-repeat: setup
	@scripts/test-repeat.sh

# The full soak: 200 conversation lifecycles through a real service (CI runs a smaller count).
soak: setup
	BROWSER_TOOL_SOAK_LIFECYCLES=200 $(BIN)/pytest -q -s -o faulthandler_timeout=1200 tests/faults/test_soak.py

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

# The MCP peers (the snapshot table's and bench.mcp_peers'): Playwright MCP and Chrome DevTools
# MCP from npm, pinned, in the benchmark's own directory. Both drive our Chrome binary
# (--executable-path / --executablePath); no browser is ever downloaded.
BENCH_NODE := bench/.node
PLAYWRIGHT_MCP := @playwright/mcp@0.0.83
DEVTOOLS_MCP := chrome-devtools-mcp@1.11.0

$(BENCH_NODE)/.installed: Makefile
	PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 PUPPETEER_SKIP_DOWNLOAD=1 npm install --prefix $(BENCH_NODE) \
		--no-audit --no-fund --silent '$(PLAYWRIGHT_MCP)' '$(DEVTOOLS_MCP)'
	touch $@

bench: setup $(BENCH_VENV)/.installed $(BENCH_NODE)/.installed
	$(BIN)/python -m bench

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache
