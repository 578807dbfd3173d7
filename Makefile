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
	$(BIN)/pip install --quiet -e '.[data,eval,server,conformance,deploy,dev]'
	touch $(STAMP)

# Debian packages: teacher engines of the data factory (flite, festival voices), real non-speech noise, real
# speech for STT evaluation (pocketsphinx-testdata, alsa-utils, Asterisk's prompts, KTuberling's and qABCs's
# words), and nginx for the multi-replica test. Root only; skipped when all are present.
DEBIAN_PACKAGES := flite festival festvox-kallpc16k festvox-kdlpc16k festvox-us-slt-hts \
	sound-theme-freedesktop pocketsphinx-testdata alsa-utils asterisk-core-sounds-en \
	asterisk-core-sounds-en-wav ktuberling-data qabcs-data nginx-light
system-deps:
	@dpkg -s $(DEBIAN_PACKAGES) >/dev/null 2>&1 || { apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(DEBIAN_PACKAGES) >/dev/null; }

serve: setup
	$(BIN)/sonare serve

test: setup system-deps
	$(BIN)/python -m pytest

lint: setup
	$(BIN)/ruff check . && $(BIN)/ruff format --check .
