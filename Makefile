# vigente — set-up and checks. Every target creates .venv on first use.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-dev

.PHONY: demo test lint bench install clean base-install

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(BIN)/pip install --quiet -e .
	touch $@

# torch first, pinned to the CPU build on disk, so that the embed extra never pulls a CUDA build.
$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/pip install --quiet torch==2.13.0
	$(BIN)/pip install --quiet -e '.[dev,embed]'
	touch $@ $(VENV)/.installed

install: $(VENV)/.installed

demo: $(VENV)/.installed
	rm -f demo.db demo.db-wal demo.db-shm
	$(BIN)/vigente --db demo.db demo

# The inspector's browser tests drive Debian's Chromium (never a browser download): install it
# when it is missing, where apt-get is there and we are root; when that fails they skip, saying why.
CHROMIUM := /usr/bin/chromium

test: $(STAMP)
	@if [ ! -x $(CHROMIUM) ] && command -v apt-get >/dev/null 2>&1 && [ "$$(id -u)" = 0 ]; then \
		echo "installing chromium for the browser tests (apt-get install -y chromium)"; \
		{ apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium; } \
			>/dev/null 2>&1 || echo "note: chromium could not be installed: the browser tests will skip"; \
	fi
	$(BIN)/lint-imports --no-cache
	.ci/base-install
	PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 $(BIN)/python -m pytest -q

lint: $(STAMP)
	$(BIN)/ruff check src tests
	$(BIN)/mypy
	$(BIN)/lint-imports --no-cache

bench: $(STAMP)
	$(BIN)/python -m vigente.bench all

clean:
	rm -rf $(VENV) .venv-base demo.db demo.db-wal demo.db-shm .pytest_cache .mypy_cache .ruff_cache

# The main commands in a venv with no extras at all (.venv-base), as `pip install vigente` gives
base-install:
	.ci/base-install
