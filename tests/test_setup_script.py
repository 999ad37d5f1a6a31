"""scripts/setup.sh waits, bounded and saying so, while another apt or dpkg holds apt's lock.

A fresh VM runs unattended upgrades at boot, which hold the lock for minutes;
setup used to give up on Chromium at once. These tests put a fake `apt-get` on
PATH that answers as a locked apt does, and call the script's function.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
LOCKED = ("E: Could not get lock /var/lib/dpkg/lock-frontend. It is held by process 812 (unattended-upgr)\n"
          "E: Unable to acquire the dpkg frontend lock (/var/lib/dpkg/lock-frontend), is another process using it?")


def _fake_apt(tmp_path: Path, locked_times: int, final_error: str = "") -> Path:
    """An apt-get that reports the lock `locked_times` times, then fails with `final_error` or succeeds."""
    calls = tmp_path / "calls"
    script = tmp_path / "bin" / "apt-get"
    script.parent.mkdir()
    script.write_text(f"""#!/bin/sh
echo "$*" >> {calls}
n=$(wc -l < {calls})
if [ "$n" -le {locked_times} ]; then printf '%s\\n' "{LOCKED}" >&2; exit 100; fi
if [ -n "{final_error}" ]; then echo "{final_error}" >&2; exit 100; fi
echo "apt ok"
""")
    script.chmod(0o755)
    return calls


def _apt_get_waiting(tmp_path: Path, wait: int, *args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PATH=f"{tmp_path / 'bin'}:{os.environ['PATH']}", SOMA_APT_WAIT=str(wait),
               SOMA_APT_POLL="0.1")
    command = f"source {REPO / 'scripts' / 'setup.sh'}; apt=(); apt_get_waiting {' '.join(args)}"
    return subprocess.run(["bash", "-c", command], env=env, capture_output=True, text=True, timeout=60)


def test_a_locked_apt_is_waited_for_and_then_used(tmp_path):
    calls = _fake_apt(tmp_path, locked_times=3)
    done = _apt_get_waiting(tmp_path, 30, "install", "-y", "chromium")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "apt ok\n"
    assert calls.read_text().splitlines() == ["-o DPkg::Lock::Timeout=0.1 install -y chromium"] * 4
    assert done.stderr.count("setup: apt is locked by another process (on a fresh machine: unattended upgrades);"
                             " waiting for it") == 1
    assert "Could not get lock" not in done.stderr  # the lock errors of the attempts that waited are not shown


def test_the_wait_is_bounded_and_says_why_it_gave_up(tmp_path):
    calls = _fake_apt(tmp_path, locked_times=10_000)
    done = _apt_get_waiting(tmp_path, 1, "update", "-qq")
    assert done.returncode == 100
    assert "setup: apt was still locked by another process after 1 s; giving up (SOMA_APT_WAIT sets the wait)" \
        in done.stderr
    assert "Could not get lock" in done.stderr  # the last attempt's own words
    assert 2 <= len(calls.read_text().splitlines()) < 100


def test_any_other_apt_failure_is_returned_at_once(tmp_path):
    calls = _fake_apt(tmp_path, locked_times=0, final_error="E: Unable to locate package chromium")
    done = _apt_get_waiting(tmp_path, 30, "install", "-y", "chromium")
    assert done.returncode == 100
    assert done.stderr == "E: Unable to locate package chromium\n"
    assert len(calls.read_text().splitlines()) == 1
