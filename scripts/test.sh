#!/usr/bin/env bash
# The test command: set up everything on a fresh machine, then run the whole suite (fast tests on
# tiny models, slow tests on the real bundled pair, browser tests in headless chromium).
# Extra arguments go to pytest, e.g. `bash scripts/test.sh -m "not slow"`.
#
# --busy (anywhere among the arguments; pytest never sees it): keep every core busy for the whole
# pytest run with one spinning process per core, at the tests' own priority, as on a shared CI
# machine. The browser tests wait on what they check, never on elapsed time, so they must pass
# this way too: `bash scripts/test.sh --busy -m browser -x -q`. The load stops when pytest
# ends, fails or is interrupted.
set -euo pipefail
cd "$(dirname "$0")/.."

busy=0
args=()
for arg in "$@"; do
  if [[ "$arg" == "--busy" ]]; then busy=1; else args+=("$arg"); fi
done

bash scripts/setup.sh --test
export HF_HUB_OFFLINE=1 TOKENIZERS_PARALLELISM=false

if [[ "$busy" == 0 ]]; then
  exec .venv/bin/python -m pytest ${args[@]+"${args[@]}"}
fi

load=()
stop_load() {
  if ((${#load[@]})); then
    kill "${load[@]}" 2>/dev/null || true
    wait "${load[@]}" 2>/dev/null || true
  fi
  load=()
}
trap stop_load EXIT
trap 'stop_load; exit 130' INT
trap 'stop_load; exit 143' TERM
cores=$(nproc)
for ((i = 0; i < cores; i++)); do
  # Niceness 0, the tests' own: the load competes with them as an equal, not politely.
  nice -n 0 .venv/bin/python -c "while True: pass" &
  load+=("$!")
done
echo "test.sh: --busy: ${cores} spinning processes (${load[*]}) for the whole run" >&2
status=0
.venv/bin/python -m pytest ${args[@]+"${args[@]}"} || status=$?
exit "$status"
