# Every target bootstraps a fresh machine by itself: uv (installed with pip when missing),
# a .venv with every extra, and (for the browser tests) Debian's chromium.
SHELL := /bin/bash
# uv runs as a module of the bootstrap python, so a fresh pip install is usable at once.
BOOT_PY ?= python3
UV := $(BOOT_PY) -m uv
VENV := .venv
PY := $(VENV)/bin/python
DEMO_EXIT ?=
DEMO_ARGS ?=

.PHONY: help uv-bootstrap venv test check bench demo chromium lock clean schema docs

help:
	@echo "make demo   - run the whole pipeline: collector, simulated fleet, triage, dashboard"
	@echo "make test   - run every test (unit, end-to-end, browser, privacy audit)"
	@echo "make check  - ruff, ruff format --check, mypy --strict"
	@echo "make bench  - benchmarks, printed as medians and ratios"

uv-bootstrap:
	@$(UV) --version >/dev/null 2>&1 || { echo "installing uv with pip"; $(BOOT_PY) -m pip install --quiet uv; }

$(VENV)/.synced: pyproject.toml uv.lock
	@$(MAKE) --no-print-directory uv-bootstrap
	$(UV) sync --frozen --all-extras --quiet --python $(BOOT_PY)
	@touch $@

venv: $(VENV)/.synced

chromium:
	@command -v chromium >/dev/null 2>&1 || [ -x /usr/bin/chromium ] || \
	  { echo "installing chromium (Debian package) for the browser tests"; \
	    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null) \
	    || echo "warning: could not install chromium; browser tests will be skipped"; }

test: venv chromium
	$(PY) -m pytest -q -p no:cacheprovider $(PYTEST_ARGS)

check: venv
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy

bench: venv
	$(PY) -m benchmarks $(BENCH_ARGS)

demo: venv
	$(PY) -m scripts.demo $(if $(DEMO_EXIT),--exit,) $(DEMO_ARGS)

schema: venv
	$(PY) -m scripts.gen_schema

lock: uv-bootstrap
	$(UV) lock

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache test-artifacts

.PHONY: demo-lake
demo-lake: venv
	$(PY) -m scripts.demo_lake $(DEMO_ARGS)
