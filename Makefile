# ContextWeaver: `make demo` serves the app with demo data; `make test` runs the whole suite.
# Both install what they need first (virtualenv, Python packages, system packages) and are idempotent.

SHELL := /bin/bash
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
HOLD := $(PY) -m contextweaver_site.embedded run --

.PHONY: demo test setup db db-stop migrate lint bench eval lock clean-db

setup: $(STAMP)

$(STAMP): pyproject.toml constraints.txt scripts/system-deps.sh
	bash scripts/system-deps.sh
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	# torch first and pinned: the CPU wheel is on local disk; anything looser downloads GBs.
	$(PY) -m pip install --quiet -c constraints.txt "torch==2.13.0"
	$(PY) -m pip install --quiet -c constraints.txt -e ".[dev]"
	touch $@

db: setup
	$(PY) -m contextweaver_site.embedded start

db-stop:
	@test -x $(PY) && $(PY) -m contextweaver_site.embedded stop || true

migrate: setup
	$(PY) manage.py migrate --noinput

demo: setup
	$(HOLD) $(PY) manage.py demo

test: setup
	$(HOLD) bash scripts/run-tests.sh

bench: setup
	$(HOLD) $(PY) -m bench.run_all

eval: setup
	$(HOLD) $(PY) -m eval.run

lint: setup
	$(PY) -m ruff check .

lock: setup
	$(PY) -m pip freeze --exclude-editable | sed '1i # Versions verified together on Python 3.11 (pip install -c constraints.txt). Regenerate with `make lock`.' > constraints.txt

clean-db: db-stop
	rm -rf var/pgdata var/.pgdata.lock var/.pgdata.leases
