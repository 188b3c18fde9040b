# The README names these targets. `make demo` and `make test` work on a fresh machine.
# The interpreter .venv is made from: the system's python3 when it is 3.11 or newer and can
# make a venv, else the first python3 on PATH. Debian and Ubuntu build theirs with PGO and
# LTO; pyenv's default build has neither, and builds the site at 200,000 papers ~17% slower
# (docs/SCALE.md). `make PY=python3.12 …` picks another; remove .venv to make it again.
SYSTEM_PY := /usr/bin/python3
PY ?= $(shell $(SYSTEM_PY) -c 'import sys, ensurepip, venv; sys.exit(sys.version_info < (3, 11))' \
	2>/dev/null && echo $(SYSTEM_PY) || echo python3)
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# axe-core for the accessibility tests: a file from the npm registry, injected into pages.
AXE := tests/axe/node_modules/axe-core/axe.min.js
# ESLint for the site's JavaScript modules, pinned by tests/lint/package-lock.json.
ESLINT := tests/lint/node_modules/.bin/eslint

.PHONY: demo screenshots test test-fast lint bench lock clean

$(STAMP): pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/python -VV
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[test]'
	touch $(STAMP)

$(AXE): tests/axe/package.json tests/axe/package-lock.json
	npm ci --prefix tests/axe --no-audit --no-fund --loglevel=error
	touch $(AXE)

$(ESLINT): tests/lint/package.json tests/lint/package-lock.json
	npm ci --prefix tests/lint --no-audit --no-fund --loglevel=error
	touch $(ESLINT)

## demo: set up, then run the real pipeline offline against the bundled sample
demo: $(STAMP)
	$(BIN)/papertrail demo

## screenshots: build the demo, then take the README's screenshots of it (docs/*.png) with
## Debian's chromium: the first screen at 1366×900 and 390×844, light and dark
screenshots: $(STAMP)
	$(BIN)/papertrail demo --no-serve
	$(BIN)/python docs/screenshot.py .demo/output docs

## test: set up, then lint, type-check pipeline/, check its import contracts, lint and
## unit-test the site's JavaScript (node --test) and run the whole test suite (a worker per core)
test: $(STAMP) $(AXE) $(ESLINT)
	$(BIN)/ruff check .
	$(BIN)/mypy
	$(BIN)/lint-imports
	$(ESLINT) --config tests/lint/eslint.config.mjs theme/static tests/js
	node --experimental-detect-module --test tests/js/
	$(BIN)/pytest -q -n auto --dist loadfile

## test-fast: the unit tier, under a minute: what drives no browser, kills no process and builds
## no site (the markers in pyproject.toml; docs/TESTING.md)
test-fast: $(STAMP)
	$(BIN)/pytest -q -n 2 -m "not browser and not crash and not slow"

lint: $(STAMP) $(ESLINT)
	$(BIN)/ruff check .
	$(BIN)/lint-imports
	$(ESLINT) --config tests/lint/eslint.config.mjs theme/static tests/js

## bench: print the performance figures in full (not a test; the tests run each with --smoke);
## site.py and scale.py append theirs to bench/results/
bench: $(STAMP)
	for f in bench/[!_]*.py; do $(BIN)/python $$f || exit 1; done

## lock: pin requirements.lock (what the update workflow installs, with hashes) anew from
## pyproject.toml, for the Python and platform the workflow runs on
LOCK_ARGS := --generate-hashes --python-version 3.11 --python-platform x86_64-manylinux_2_28 \
	--annotation-style line --custom-compile-command "make lock"
lock: $(STAMP)
	$(BIN)/pip install --quiet 'uv>=0.13,<0.14'
	$(BIN)/uv pip compile pyproject.toml $(LOCK_ARGS) --upgrade --quiet -o requirements.lock

clean:
	rm -rf .demo output data/.lock
