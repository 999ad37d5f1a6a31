#!/usr/bin/env bash
# Set up, then run every test in one pytest session: unit tests, kernel protocol
# tests, the browser test (tests/browser) and nbval over every notebook with the
# `soma` kernel; then the kernel tests again with the lowest dependency versions
# the pins allow (scripts/test_floor.sh; SOMA_SKIP_FLOOR=1 skips it).
# pytest's "no tests collected" (exit 5) is a failure here.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-python3}"

if [ "${SOMA_SKIP_SETUP:-}" != "1" ]; then
    bash scripts/setup.sh --tests
fi

status=0
"$PYTHON" -m pytest --color=no -q -p no:cacheprovider \
    tests notebooks \
    --nbval --nbval-kernel-name soma \
    --nbval-sanitize-with notebooks/nbval-sanitize.cfg \
    "$@" || status=$?
if [ "$status" -eq 5 ]; then
    echo "test: pytest collected no tests — that is a failure" >&2
    exit 1
fi
if [ "$status" -ne 0 ] || [ "${SOMA_SKIP_FLOOR:-}" = "1" ]; then
    exit "$status"
fi
echo "== test: the lowest allowed dependency versions (scripts/test_floor.sh)"
PYTHON="$PYTHON" bash scripts/test_floor.sh
