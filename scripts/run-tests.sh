#!/usr/bin/env bash
# The whole suite against the embedded PostgreSQL (held by the caller). Exit 5 (no tests) fails.
set -uo pipefail
cd "$(dirname "$0")/.."
PY=.venv/bin/python

$PY manage.py check --fail-level ERROR || exit 1
$PY -m pytest "$@"
rc=$?
if [ $rc -eq 5 ]; then
  echo "pytest collected no tests: failing on purpose" >&2
  exit 1
fi
exit $rc
