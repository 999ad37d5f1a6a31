#!/usr/bin/env bash
# The lowest versions the pins allow, tested: a scratch virtual environment gets every runtime
# dependency at its floor (scripts/floor.py: ipykernel, jupyter_client, ipywidgets, lark, …),
# soma-jupyterlab from labextension/ and soma-kernel from this checkout; there the kernel
# protocol tests, the provider tests and notebook 02 (diagrams, reports) run.
# Extra arguments go to pytest. .ci/run runs it after the main test command.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-python3}"
export PIP_DISABLE_PIP_VERSION_CHECK=1

scratch="$(mktemp -d "${TMPDIR:-/tmp}/soma-floor.XXXXXX")"
trap 'rm -rf "$scratch"' EXIT
"$PYTHON" scripts/floor.py > "$scratch/floor.txt"
echo "floor: the lowest allowed versions: $(tr '\n' ' ' < "$scratch/floor.txt")"
"$PYTHON" -m venv "$scratch/venv"
py="$scratch/venv/bin/python"
"$py" -m pip install -q ./labextension
"$py" -m pip install -q -c "$scratch/floor.txt" -e . \
    "pytest>=8" "nbval>=0.11" "jupyter_kernel_test>=0.7" "nbformat>=5.9" "nbclient>=0.10" "nbconvert>=7"
"$py" -m pip list --format=freeze | grep -iE '^(ipykernel|jupyter_client|comm|lark|ipywidgets|pygments|graphviz-pure|anthropic|openai)=='
# Only this environment's kernelspecs: a `soma` spec in the user's Jupyter folder would run another Python.
export JUPYTER_PATH="$scratch/venv/share/jupyter" JUPYTER_DATA_DIR="$scratch/jupyter-data"
# The kernels' input history and the parser cache in the scratch folder too: these tests must neither read
# nor add to the user's (and the cache is built afresh by the floor's lark).
export SOMA_KERNEL_HISTORY="$scratch/history.sqlite" XDG_CACHE_HOME="$scratch/cache"
"$py" -m pytest --color=no -q -p no:cacheprovider \
    tests/test_kernel_protocol.py tests/test_kernel_protocol_frontends.py tests/test_kernel_protocol_interrupt.py tests/test_kernel_protocol_seed.py \
    tests/test_kernel_protocol_spec.py tests/test_llm_providers.py \
    notebooks/02_refund_agent.ipynb --nbval --nbval-kernel-name soma \
    --nbval-sanitize-with notebooks/nbval-sanitize.cfg "$@"
