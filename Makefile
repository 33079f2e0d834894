# The two commands from the README: `make demo` and `make test`. Both set everything up first.
SHELL := /bin/bash
.SHELLFLAGS := -eo pipefail -c
.DEFAULT_GOAL := help

PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
# torch first, pinned: here it resolves to a CPU wheel; installed later, pip would pull a CUDA build.
TORCH_SPEC ?= torch==2.13.0
# One torch thread: on a shared 2-core box two threads made steps up to 20x slower.
export OMP_NUM_THREADS ?= 1
export PIP_DISABLE_PIP_VERSION_CHECK := 1
# Drop pip's notes about local package mirrors that do not exist; keep every real message.
PIP_FILTER := 2>&1 | { grep -v 'is neither a file nor a directory' || true; }

# Test processes for `make test` (pytest-xdist): most tests wait on services or subprocesses, so
# three share two cores well; each process that runs a Label Studio test starts its own server.
TEST_WORKERS ?= 3

.PHONY: help install bytecode peer-venvs browser postgres demo test unit up down status lint audit bench clean

help:
	@echo "make demo    set up, start Redis and Label Studio, build the tiny model, show the loop"
	@echo "make test    set up, start Redis, run lint and the test suite (all three tiers)"
	@echo "make unit    the unit tier alone: in-process tests, no services (about 1.5 min on 2 cores)"
	@echo "make browser  install headless Chromium for the reviewer UI tests (as root)"
	@echo "make postgres start (or, as root, install) PostgreSQL for the tests marked postgres"
	@echo "make audit   known vulnerabilities in the installed packages (pip-audit)"
	@echo "make up | down | status | lint | bench | clean"

$(BIN)/python:
	@$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 10))' || \
	  { echo "lowtide needs Python >= 3.10; found $$($(PYTHON) --version 2>&1)"; exit 1; }
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip $(PIP_FILTER)

$(VENV)/.torch-installed: | $(BIN)/python
	$(BIN)/pip install --quiet "$(TORCH_SPEC)" $(PIP_FILTER)
	@touch $@

# Reinstalls only when pyproject.toml changes (the project itself is an editable install).
$(VENV)/.deps-installed: pyproject.toml $(VENV)/.torch-installed
	$(BIN)/pip install --quiet -e '.[dev]' $(PIP_FILTER)
	@touch $@

install: $(VENV)/.deps-installed

# The project's own modules compiled once (only the changed ones are redone): with
# PYTHONDONTWRITEBYTECODE set, as some images set it, every process would compile what it
# imports from source again, ~0.2-1 s of CPU each, and the tests start hundreds of processes.
bytecode: install
	$(BIN)/python -m compileall -q -j 0 lowtide rl sampling annotation bench tests/helpers

# Other trainers' own virtualenvs (their transformers pins clash with ours), for their adapters'
# tests: built once per user in ~/.cache/lowtide (~1.5 min each), a second or so when cached.
PEER_VENVS := verl openrlhf
peer-venvs: install
	$(BIN)/python -m lowtide.services.peer_venvs $(PEER_VENVS)

# Headless Chromium and its driver from the system packages, for the reviewer UI tests: installed
# with apt-get where we are root (here, CI), otherwise the exact packages to install are printed.
BROWSER_CHECK := $(PYTHON) -m tests.helpers.browser
browser:
	@$(BROWSER_CHECK) >/dev/null && exit 0; \
	if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	  echo "installing chromium and chromium-driver (apt-get)"; \
	  export DEBIAN_FRONTEND=noninteractive; \
	  apt-get install -y -qq --no-install-recommends chromium chromium-driver >/dev/null 2>&1 || \
	    { apt-get update -qq >/dev/null && \
	      apt-get install -y -qq --no-install-recommends chromium chromium-driver >/dev/null; }; \
	fi; \
	$(BROWSER_CHECK) || true

# PostgreSQL for the tests that run Label Studio on it (`pytest -m postgres`). Where it answers,
# this is one connection; as root: installed with apt-get where missing, its stopped clusters
# started, and a role for root made (the tests administer it over the local socket); otherwise
# what to do is printed. Tests skip without it, and fail under CI=true.
POSTGRES_CHECK := $(PYTHON) -m tests.helpers.postgres
postgres:
	@if ! $(POSTGRES_CHECK) >/dev/null && [ "$$(id -u)" = 0 ]; then \
	  if ! command -v pg_lsclusters >/dev/null && command -v apt-get >/dev/null; then \
	    echo "installing postgresql (apt-get)"; \
	    export DEBIAN_FRONTEND=noninteractive; \
	    apt-get install -y -qq --no-install-recommends postgresql >/dev/null 2>&1 || \
	      { apt-get update -qq >/dev/null && \
	        apt-get install -y -qq --no-install-recommends postgresql >/dev/null; }; \
	  fi; \
	  if command -v pg_lsclusters >/dev/null; then \
	    pg_lsclusters -h | while read -r version cluster _ state _; do \
	      case "$$state" in online*) ;; *) echo "starting PostgreSQL $$version/$$cluster"; \
	        pg_ctlcluster "$$version" "$$cluster" start;; esac; \
	    done; \
	  fi; \
	fi; \
	if [ "$$(id -u)" = 0 ] && [ -z "$${PGHOST:-}$${PGUSER:-}" ] && command -v pg_lsclusters >/dev/null \
	    && $(POSTGRES_CHECK) >/dev/null; then \
	  su postgres -c "psql -qtAc \"SELECT 1 FROM pg_roles WHERE rolname = 'root'\"" | grep -q 1 || \
	    su postgres -c "createuser --superuser root"; \
	fi; \
	$(POSTGRES_CHECK) || true

demo: install bytecode
	$(BIN)/lowtide demo $(DEMO_FLAGS)

test: install bytecode peer-venvs browser postgres
	$(BIN)/lowtide up --only redis
	$(BIN)/ruff check .
	$(BIN)/python -m pytest -n $(TEST_WORKERS) --dist worksteal

# The fast loop while editing: no Redis, Label Studio, browser or other trainers needed.
unit: install bytecode
	$(BIN)/python -m pytest -n 2 --tier unit -q

up: install
	$(BIN)/lowtide up

down: install
	$(BIN)/lowtide down

status: install
	$(BIN)/lowtide status

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/python -m pytest -q tests/test_import_contract.py

# Known vulnerabilities (PyPA's advisory database, from PyPI) in every package installed in the
# virtualenv, lowtide's own editable install aside; pip-audit is installed there on first use.
# Found ones fail the target. Where the index or the database cannot be reached (no network, or
# a package mirror that answers "not found" for every package), it says so and succeeds: then
# nothing, or not everything, was checked.
AUDIT_NO_NETWORK := ConnectionError|Max retries|Failed to establish|NameResolution|timed out
AUDIT_OFFLINE := $(AUDIT_NO_NETWORK)|Network is unreachable|ProxyError|SSLError
audit: install
	@if ! $(BIN)/python -c 'import pip_audit' 2>/dev/null \
	    && ! $(BIN)/pip install --quiet pip-audit $(PIP_FILTER); then \
	  echo "make audit: could not install pip-audit (no package index?); nothing was checked"; \
	  exit 0; \
	fi; \
	status=0; out="$$($(BIN)/pip-audit --skip-editable --progress-spinner off 2>&1)" || status=$$?; \
	printf '%s\n' "$$out"; \
	if [ "$$status" != 0 ] && ! grep -qE 'known vulnerabilit' <<<"$$out" \
	    && grep -qE '$(AUDIT_OFFLINE)' <<<"$$out"; then \
	  echo "make audit: pip-audit could not reach its advisory database; nothing was checked"; \
	  exit 0; \
	fi; \
	skipped=$$(grep -c 'could not be audited' <<<"$$out" || true); \
	installed=$$($(BIN)/pip list --format=freeze --exclude-editable 2>/dev/null | wc -l); \
	if [ "$$skipped" -ge "$$installed" ]; then \
	  echo "make audit: the advisory database knew none of the $$installed packages" \
	    "(a package mirror in PyPI's place?); nothing was checked"; \
	elif [ "$$skipped" -gt 0 ]; then \
	  echo "make audit: $$skipped of $$installed packages could not be audited (listed above)"; \
	fi; \
	exit $$status

$(VENV)/.bench-installed: $(VENV)/.deps-installed
	$(BIN)/pip install --quiet -e '.[dev,bench]' $(PIP_FILTER)
	@touch $@

# Every bench in turn (bench/_*.py are their helpers); BENCH_QUICK=1 for a smoke run of each.
bench: $(VENV)/.bench-installed bytecode
	@for bench in bench/[!_]*.py; do echo "== $$bench"; $(BIN)/python "$$bench"; done

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache build *.egg-info
