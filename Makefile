# Two entry points, both safe on a fresh machine: `make run` and `make test`.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: run test fast bench clean

$(STAMP): pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[test]'
	touch $(STAMP)

run: $(STAMP)
	$(BIN)/dshkit scan
	$(BIN)/dshkit serve

# The static checks first: they take seconds, the installs below a minute or more.
test: $(STAMP)
	$(BIN)/ruff check src tests bench
	$(BIN)/ruff format --check src tests bench
	$(BIN)/mypy
	scripts/install-harnesses.sh
	scripts/install-browser.sh
	$(BIN)/pytest

# The quick loop while working: no real harness CLIs, no browser.
fast: $(STAMP)
	$(BIN)/pytest -m "not real and not browser"

bench: $(STAMP)
	$(BIN)/python bench/scan.py

clean:
	rm -rf $(VENV) build src/*.egg-info .pytest_cache .ruff_cache
