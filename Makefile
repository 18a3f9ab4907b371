# ContextWeaver: `make demo` serves the app with demo data; `make test` runs the whole suite.
# Both install what they need first (virtualenv, Python packages, system packages) and are idempotent.

SHELL := /bin/bash
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
HOLD := $(PY) -m contextweaver_site.embedded run --
# The browser code: npm ci when the lock file changes, a build when any source changes (frontend/dist).
NODE_STAMP := frontend/node_modules/.installed
BUILD_STAMP := frontend/dist/.built
FRONTEND_SOURCES := $(shell find frontend/src frontend/styles -type f 2>/dev/null) frontend/build.mjs
# Translations: .po files are committed, .mo files compiled here (gettext's msgfmt, scripts/system-deps.sh).
PO_FILES := $(wildcard locale/*/LC_MESSAGES/*.po)
MO_FILES := $(PO_FILES:.po=.mo)
DJANGO_TEST := DJANGO_SETTINGS_MODULE=contextweaver_site.settings.test

.PHONY: demo test setup frontend messages db db-stop migrate lint bench soak eval lock clean-db

setup: $(STAMP) $(BUILD_STAMP) $(MO_FILES)

frontend: $(BUILD_STAMP)

$(NODE_STAMP): frontend/package.json frontend/package-lock.json | $(STAMP)
	cd frontend && npm ci --no-audit --no-fund --loglevel=error
	touch $@

$(BUILD_STAMP): $(NODE_STAMP) $(FRONTEND_SOURCES)
	cd frontend && npm run --silent build
	touch $@

locale/%.mo: locale/%.po | $(STAMP)
	msgfmt --check-format -o $@ $<

# Re-extract the translatable strings (English is the source language) after changing templates or JS.
messages: setup
	for domain in django djangojs; do $(DJANGO_TEST) $(PY) manage.py makemessages -d $$domain -l zh_Hans --no-location \
	  -i "frontend/node_modules/*" -i "frontend/dist/*" -i "var/*" -i "frontend/build.mjs"; done

$(STAMP): pyproject.toml clients/python/pyproject.toml constraints.txt scripts/system-deps.sh
	bash scripts/system-deps.sh
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	# torch first and pinned: the CPU wheel is on local disk; anything looser downloads GBs.
	$(PY) -m pip install --quiet -c constraints.txt "torch==2.13.0"
	$(PY) -m pip install --quiet -c constraints.txt -e ".[dev]"
	# The Python client (its own package, no Django), for its tests and docs/integrations.md.
	$(PY) -m pip install --quiet -c constraints.txt -e "clients/python[mcp,langgraph]"
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

# 20 agents × 250 interactions through a flaky LLM and a database restart; writes docs/reliability.md.
soak: setup
	$(HOLD) $(PY) -m bench.soak

# The labelled set (docs/eval.md), then the held-out files nothing is tuned on (docs/eval-heldout.md), then
# what a linker learned from the labelled edges finds on the held-out files (docs/eval-linker.md; no database),
# then the agent traces with declared links and recall-then-act turns (docs/eval-links.md).
eval: setup
	$(HOLD) $(PY) -m eval.run
	$(HOLD) $(PY) -m eval.run --heldout
	$(PY) -m eval.linker_probe
	$(HOLD) $(PY) -m eval.links

lint: setup
	$(PY) -m ruff check .
	$(VENV)/bin/lint-imports

lock: setup
	$(PY) -m pip freeze --exclude-editable | sed '1i # Versions verified together on Python 3.11 (pip install -c constraints.txt). Regenerate with `make lock`.' > constraints.txt

clean-db: db-stop
	rm -rf var/pgdata var/.pgdata.lock var/.pgdata.leases
