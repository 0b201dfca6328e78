# Two entry points, both safe on a fresh machine: `make run` and `make test`.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
RUN_STAMP := $(VENV)/.installed-run
STAMP := $(VENV)/.installed-test
TOOL_HOME ?= $(HOME)/.local/share/dshkit
TOOL_BIN ?= $(HOME)/.local/bin
# pytest-xdist workers for make fast and make test: one per core. About half of the fast loop's
# time is spent waiting (for a process, a deadline, a budget), so `make fast JOBS=4` on two
# idle cores is faster still (on busy ones, a few tests bound by a process's timing fail).
JOBS ?= auto

.PHONY: run test fast bench docs install-user uninstall-user clean

# Running needs the package alone; the tests add pytest (and pytest-xdist), ruff, mypy and
# pillow on top.
$(RUN_STAMP): pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e .
	touch $(RUN_STAMP)

$(STAMP): $(RUN_STAMP)
	$(BIN)/pip install --quiet -e '.[test]'
	touch $(STAMP)

run: $(RUN_STAMP)
	@command -v dshkit >/dev/null 2>&1 || echo "note: dshkit is not on your PATH; 'make install-user' puts it there (see README)"
	$(BIN)/dshkit scan
	$(BIN)/dshkit serve

# dshkit on the PATH for daily use, from this checkout: pipx or uv when present, else a venv of
# its own under $(TOOL_HOME) linked into $(TOOL_BIN). The directories that makes (those not
# there before) are listed in $(MADE), for uninstall-user to remove once they are empty.
MADE = $(TOOL_HOME)/made-directories
install-user:
	@if command -v pipx >/dev/null 2>&1; then pipx install --force --editable .; \
	elif command -v uv >/dev/null 2>&1; then uv tool install --force --editable .; \
	else set --; for dir in "$(TOOL_HOME)" "$(TOOL_BIN)"; do \
	    while [ ! -e "$$dir" ]; do set -- "$$@" "$$dir"; dir=$$(dirname "$$dir"); done; done; \
	  $(PY) -m venv $(TOOL_HOME)/venv && $(TOOL_HOME)/venv/bin/pip install --quiet -e . \
	  && mkdir -p $(TOOL_BIN) && ln -sf $(TOOL_HOME)/venv/bin/dshkit $(TOOL_BIN)/dshkit \
	  && { [ $$# -eq 0 ] || printf '%s\n' "$$@" >> "$(MADE)"; } \
	  && echo "linked $(TOOL_BIN)/dshkit"; fi
	@command -v dshkit >/dev/null 2>&1 || echo "note: add $(TOOL_BIN) to your PATH"

# What install-user put there, each said, and the directories it made once they are empty
# (deepest first; a $(TOOL_BIN) holding other programs stays).
uninstall-user:
	@if command -v pipx >/dev/null 2>&1 && pipx list 2>/dev/null | grep -q dshkit; then pipx uninstall dshkit; \
	elif command -v uv >/dev/null 2>&1 && uv tool list 2>/dev/null | grep -q dshkit; then uv tool uninstall dshkit; \
	else found=""; \
	  if [ "$$(readlink "$(TOOL_BIN)/dshkit")" = "$(TOOL_HOME)/venv/bin/dshkit" ]; then \
	    rm -f "$(TOOL_BIN)/dshkit" && echo "removed $(TOOL_BIN)/dshkit" && found=1; fi; \
	  if [ -d "$(TOOL_HOME)/venv" ]; then \
	    rm -rf "$(TOOL_HOME)/venv" && echo "removed $(TOOL_HOME)/venv" && found=1; fi; \
	  made=$$(cat "$(MADE)" 2>/dev/null); rm -f "$(MADE)"; \
	  emptied=$$(printf '%s\n' "$(TOOL_HOME)" "$$made" | sort -ru | while IFS= read -r dir; do \
	    [ -d "$$dir" ] && rmdir "$$dir" 2>/dev/null && echo "removed $$dir (empty)"; done); \
	  [ -z "$$emptied" ] || { echo "$$emptied"; found=1; }; \
	  [ -n "$$found" ] || echo "nothing to remove: dshkit is not installed by make install-user"; fi

# The generated references (docs/cli.md, docs/config.md, docs/api.md); a test fails when they
# are stale.
docs: $(RUN_STAMP)
	$(BIN)/python scripts/gen-docs.py

# The static checks first: they take seconds, the installs below a minute or more.
test: $(STAMP)
	$(BIN)/ruff check src tests bench scripts
	$(BIN)/ruff format --check src tests bench scripts
	$(BIN)/mypy
	scripts/install-harnesses.sh
	scripts/install-browser.sh
	$(BIN)/pytest -n $(JOBS) --dist loadscope

# The quick loop while working: no real harness CLIs, no browser, a worker per core, idle
# workers taking tests from busy ones (the quickest also leaves out what starts a process:
# -m "not real and not browser and not process").
fast: $(STAMP)
	$(BIN)/pytest -n $(JOBS) --dist worksteal -m "not real and not browser"

bench: $(STAMP)
	$(BIN)/python bench/scan.py

clean:
	rm -rf $(VENV) build src/*.egg-info .pytest_cache .ruff_cache
