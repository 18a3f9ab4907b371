#!/usr/bin/env bash
# The whole suite against the embedded PostgreSQL (held by the caller). Exit 5 (no tests) fails.
#
# Two pytest runs: the main suite, then the browser tests (tests/browser: Playwright driving Debian's
# Chromium against a uvicorn server). They need their own process: Playwright's sync API runs an
# event loop in the test thread, which breaks the async tests of the main suite.
#   scripts/run-tests.sh [-q ...]                  both runs (options go to both)
#   scripts/run-tests.sh tests/test_x.py -k y      only the main run, with these arguments
#   scripts/run-tests.sh tests/browser ...         only the browser run, with these arguments
#   CW_SKIP_BROWSER_TESTS=1 scripts/run-tests.sh   the main run only
set -uo pipefail
cd "$(dirname "$0")/.."
PY=.venv/bin/python

run_pytest() {
  $PY -m pytest "$@"
  local rc=$?
  if [ $rc -eq 5 ]; then
    echo "pytest collected no tests: failing on purpose" >&2
    return 1
  fi
  return $rc
}

$PY manage.py check --fail-level ERROR || exit 1

browser_args=()
main_args=()
paths=0
for arg in "$@"; do
  case "$arg" in
    tests/browser*) browser_args+=("$arg") ;;
    -*) main_args+=("$arg") ;;
    *) main_args+=("$arg"); paths=1 ;;
  esac
done

if [ ${#browser_args[@]} -gt 0 ]; then
  run_pytest "${browser_args[@]}" "${main_args[@]}"
  exit $?
fi

run_pytest --ignore=tests/browser "${main_args[@]}"
rc=$?
if [ $paths -eq 1 ] || [ "${CW_SKIP_BROWSER_TESTS:-0}" = "1" ]; then
  exit $rc
fi
run_pytest tests/browser "${main_args[@]}"
browser_rc=$?
[ $rc -ne 0 ] && exit $rc
exit $browser_rc
