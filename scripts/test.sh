#!/usr/bin/env bash
# The test command: set up everything on a fresh machine, then run the whole suite (fast tests on
# tiny models, slow tests on the real bundled pair, browser tests in headless chromium).
# Extra arguments go to pytest, e.g. `bash scripts/test.sh -m "not slow"`.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh --test
export HF_HUB_OFFLINE=1 TOKENIZERS_PARALLELISM=false
exec .venv/bin/python -m pytest "$@"
