# Every target bootstraps a fresh machine by itself: uv (installed with pip when missing),
# a .venv with every extra, (for the browser tests) Debian's chromium, (for the Cloud Skill
# script sandbox) Debian's bubblewrap and (the lake's front door, deploy/haproxy.cfg) Debian's
# haproxy.
# `make help` lists the targets from their `##` comments (tests/test_makefile.py checks that
# every target has one).
SHELL := /bin/bash
# uv runs as a module of the bootstrap python, so a fresh pip install is usable at once.
# --compile-bytecode: every installed module gets its .pyc at install, so no command compiles
# its imports from source on each start (a shell with PYTHONDONTWRITEBYTECODE=1 never writes
# them later; `lmcp --help` would then pay for compiling typer and rich every time).
BOOT_PY ?= python3
UV := $(BOOT_PY) -m uv
VENV := .venv
PY := $(VENV)/bin/python
# The repository's own modules are installed editable: compiled here (a module edited since is
# compiled again in memory, never run stale), at install and before measuring start-up.
COMPILE_OWN := $(PY) -m compileall -q -j 0 -x '/\.' .
DEMO_EXIT ?=
DEMO_ARGS ?=

.DEFAULT_GOAL := help
.PHONY: help uv-bootstrap venv chromium bubblewrap haproxy test test-fast check generate generate-check \
	bench demo demo-lake lock clean

help: ## list every target (from the `##` comment on its line)
	@grep -E '^[a-zA-Z0-9_-]+:.*## ' $(MAKEFILE_LIST) | \
	  awk 'BEGIN {FS = ":.*## "} {printf "make %-15s %s\n", $$1, $$2}'

uv-bootstrap: ## install uv with pip when it is missing
	@$(UV) --version >/dev/null 2>&1 || { echo "installing uv with pip"; $(BOOT_PY) -m pip install --quiet uv; }

$(VENV)/.synced: pyproject.toml uv.lock Makefile
	@$(MAKE) --no-print-directory uv-bootstrap
	$(UV) sync --frozen --all-extras --compile-bytecode --quiet --python $(BOOT_PY)
	@$(COMPILE_OWN)
	@touch $@

venv: $(VENV)/.synced ## create or update .venv from uv.lock, with every extra

chromium: ## install Debian's chromium for the browser tests when it is missing
	@command -v chromium >/dev/null 2>&1 || [ -x /usr/bin/chromium ] || \
	  { echo "installing chromium (Debian package) for the browser tests"; \
	    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null) \
	    || echo "warning: could not install chromium; browser tests will be skipped"; }

bubblewrap: ## install Debian's bubblewrap (the Cloud Skill script sandbox) when missing
	@command -v bwrap >/dev/null 2>&1 || [ -x /usr/bin/bwrap ] || \
	  { echo "installing bubblewrap (Debian package) for the Cloud Skill script sandbox"; \
	    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq bubblewrap >/dev/null) \
	    || echo "warning: could not install bubblewrap; sandbox tests will be skipped"; }

haproxy: ## install Debian's haproxy (the lake's front door, deploy/haproxy.cfg) when missing
	@command -v haproxy >/dev/null 2>&1 || [ -x /usr/sbin/haproxy ] || \
	  { echo "installing haproxy (Debian package) for the lake's front door"; \
	    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq haproxy >/dev/null) \
	    || echo "warning: could not install haproxy; front-door tests will be skipped"; }

# The tests write bytecode even where the environment says not to (PYTHONDONTWRITEBYTECODE):
# otherwise every run, and every child process a test starts, compiles each module again.
TEST_ENV := PYTHONDONTWRITEBYTECODE=

test: venv chromium bubblewrap haproxy ## every test, full hypothesis budget, coverage with its floor (what CI runs)
	$(TEST_ENV) HYPOTHESIS_PROFILE=ci $(PY) -m pytest -q -p no:cacheprovider \
	  --cov --cov-report=term:skip-covered $(PYTEST_ARGS)

# test-fast runs one pytest-xdist worker more than there are cores: tests also wait (fsync, a
# server on loopback), and the extra worker keeps every core busy meanwhile. A test file stays on
# one worker, so its module fixtures are built once. PYTEST_ARGS="-n 0" runs it in one process,
# e.g. to debug.
FAST_WORKERS ?= $(shell echo $$(( $$(nproc 2>/dev/null || echo 1) + 1 )))
test-fast: venv ## what to run on every change: no slow or browser test, small hypothesis budget
	$(TEST_ENV) HYPOTHESIS_PROFILE=dev $(PY) -m pytest -q -p no:cacheprovider -m "not slow and not browser" \
	  -n $(FAST_WORKERS) --dist loadfile $(PYTEST_ARGS)

check: venv ## ruff, format, mypy --strict (code, tests, scripts), lint-imports (the layers), generated files
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy
	$(VENV)/bin/lint-imports --no-logo
	$(PY) -m scripts.generate --check

generate: venv ## regenerate every generated file (scripts/generate.py lists them)
	$(PY) -m scripts.generate

generate-check: venv ## fail when a generated file is stale (writes nothing)
	$(PY) -m scripts.generate --check

bench: venv haproxy ## benchmarks, printed as medians and ratios
	@$(COMPILE_OWN)
	$(PY) -m benchmarks $(BENCH_ARGS)

demo: venv ## the whole pipeline: collector, simulated fleet, triage, dashboard (DEMO_EXIT=1 exits)
	$(PY) -m scripts.demo $(if $(DEMO_EXIT),--exit,) $(DEMO_ARGS)

lock: uv-bootstrap ## update uv.lock after a dependency change in pyproject.toml
	$(UV) lock

clean: ## remove .venv, caches and test artefacts
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache .import_linter_cache test-artifacts

demo-lake: venv haproxy ## the lake mode: SeaweedFS, three collectors behind HAProxy, a fleet, compaction, triage, an exact check
	$(PY) -m scripts.demo_lake $(DEMO_ARGS)
