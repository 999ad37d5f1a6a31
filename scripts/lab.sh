#!/usr/bin/env bash
# Set up, then open JupyterLab on notebooks/ with the Soma kernel.
# Extra arguments go to `jupyter lab` (for example --port=8899 or --no-browser).
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-python3}"

bash scripts/setup.sh
root_flag=()
if [ "$(id -u)" -eq 0 ]; then
    root_flag=(--allow-root)
fi
exec "$PYTHON" -m jupyter lab "${root_flag[@]}" --ServerApp.root_dir=notebooks "$@"
