#!/usr/bin/env bash
# The app command: set up on a fresh machine, then serve the app on the bundled offline pair.
# Extra arguments go to app.py, e.g. `bash scripts/app.sh --port 7861`.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
exec .venv/bin/python app.py "$@"
