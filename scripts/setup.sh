#!/usr/bin/env bash
# Creates .venv (if needed) and installs the app's requirements; with --test also the test tools
# and Debian's chromium for the browser tests. Safe to run again: it only installs what is missing.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
[ -x .venv/bin/python ] || "$PYTHON" -m venv .venv
.venv/bin/python -m pip install --quiet --disable-pip-version-check -r requirements.txt
if [ "${1:-}" = "--test" ]; then
  .venv/bin/python -m pip install --quiet --disable-pip-version-check -r requirements-test.txt
  if [ ! -x /usr/bin/chromium ]; then
    if [ "$(id -u)" = 0 ]; then
      (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null) \
        || echo "warning: could not install chromium; browser tests will be skipped" >&2
    else
      echo "note: install Debian's chromium (sudo apt-get install chromium) to run the browser tests" >&2
    fi
  fi
fi
