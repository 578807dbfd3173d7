# Sonare developer commands. `make serve` and `make test` each set everything up from scratch first.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.sonare-installed

.PHONY: setup serve test lint bench system-deps

setup: $(STAMP)

# The CPU build of torch goes in first, pinned, so that no dependency can pull a multi-GB CUDA build.
$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet torch==2.13.0
	$(BIN)/pip install --quiet -e '.[data,eval,server,conformance,dev]'
	touch $(STAMP)

# Debian packages that some teacher engines of the data factory call (root only; skipped when present).
system-deps:
	@command -v flite >/dev/null || { apt-get update -qq && apt-get install -y -qq flite >/dev/null; }

serve: setup
	$(BIN)/sonare serve

test: setup system-deps
	$(BIN)/python -m pytest

lint: setup
	$(BIN)/ruff check . && $(BIN)/ruff format --check .
