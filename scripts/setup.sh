#!/usr/bin/env bash
# Set up soma-kernel in the current Python environment (a venv, if one is active):
# Debian's Chromium for the browser test (when we may use apt), then the package
# with its test extras. `pip install -e` registers the `soma` kernelspec in this
# environment; the last step checks that Jupyter sees it.
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

install_chromium
"$PYTHON" -m pip install --disable-pip-version-check -q -e '.[test]'
if ! "$PYTHON" -m jupyter kernelspec list | grep -qw soma; then
    "$PYTHON" -m soma_kernel install --sys-prefix
fi
"$PYTHON" -m jupyter kernelspec list | grep -w soma
