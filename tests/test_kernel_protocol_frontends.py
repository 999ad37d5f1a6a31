"""What console and Lab users meet at the protocol's edges: kernel_info, the debugger, is_complete, history.

Each test starts its own kernel (the kernelspec in a temporary prefix, as in
test_kernel_protocol) with its input history in a temporary file.
"""

from __future__ import annotations

import contextlib
import os

import pytest
from jupyter_client.manager import start_new_kernel

from helpers import is_complete_reply, kernelspec_installed


@pytest.fixture(scope="module", autouse=True)
def soma_kernelspec(tmp_path_factory):
    """The kernelspec installed into a temporary prefix that Jupyter finds first, for this module's kernels."""
    with kernelspec_installed(str(tmp_path_factory.mktemp("kernelspec"))):
        yield


@contextlib.contextmanager
def soma_kernel(history, stderr_path=None):
    """A running Soma kernel whose history file is `history` (its stderr to `stderr_path` when given)."""
    env = dict(os.environ, SOMA_KERNEL_HISTORY=str(history))
    stderr = open(stderr_path, "w") if stderr_path else None
    try:
        manager, client = start_new_kernel(kernel_name="soma", env=env, stderr=stderr)
        try:
            yield client
        finally:
            client.stop_channels()
            manager.shutdown_kernel(now=False)
    finally:
        if stderr:
            stderr.close()


def test_kernel_info_prints_no_debugger_warnings_and_lists_no_features(tmp_path):
    log = tmp_path / "stderr.txt"
    with soma_kernel(tmp_path / "h.sqlite", log) as client:
        reply = client.kernel_info(reply=True)["content"]
        assert reply["supported_features"] == []
        assert reply["protocol_version"].startswith("5.")
        assert reply["implementation"] == "soma_kernel"
        client.execute_interactive("1 + 1", timeout=30)
    text = log.read_text()
    assert "Debugger warning" not in text and "frozen modules" not in text and "debugpy" not in text


def test_a_debug_request_gets_an_error_reply(tmp_path):
    with soma_kernel(tmp_path / "h.sqlite") as client:
        for seq, command in enumerate(("initialize", "attach", "debugInfo"), start=1):
            message = client.session.msg("debug_request", {"type": "request", "seq": seq, "command": command,
                                                           "arguments": {}})
            client.control_channel.send(message)
            reply = client.control_channel.get_msg(timeout=10)
            assert reply["msg_type"] == "debug_reply"
            assert reply["content"]["success"] is False
            assert reply["content"]["command"] == command and reply["content"]["request_seq"] == seq
            assert "no debugger" in reply["content"]["message"]


NESTING_CASES = [
    ("cell A {", "    "),
    ("cell A {\n  on f() {", "        "),
    ("cell A {\n  on f() {\n    let m = map(\"a\", [1,", "                "),
    ('let s = """first line\n{ ( [', ""),
    ('cell A {\n  on f() {\n    let t = """a {', ""),
    ("let y = (1 +", "    "),
    ("cell A { // a comment { (\n", "    "),
    ("cell A { /* { /* { */ ( */\n", "    "),
    ('cell A {\n  on f() { let s = "}"\n', "        "),
]


def test_is_complete_indents_by_nesting_and_never_inside_a_string(tmp_path):
    with soma_kernel(tmp_path / "h.sqlite") as client:
        for code, indent in NESTING_CASES:
            reply = is_complete_reply(client, code)
            assert (code, reply["status"], reply["indent"]) == (code, "incomplete", indent)


def test_input_history_survives_a_restart(tmp_path):
    history = tmp_path / "history.sqlite"
    with soma_kernel(history) as client:
        client.execute_interactive('print("before-restart-needle")', timeout=30)
        client.execute_interactive("40 + 2", timeout=30)
    with soma_kernel(history) as client:
        client.execute_interactive("7 * 6", timeout=30)
        tail = client.history(hist_access_type="tail", n=3, reply=True)["content"]["history"]
        assert [entry[2] for entry in tail] == ['print("before-restart-needle")', "40 + 2", "7 * 6"]
        assert tail[0][0] == tail[1][0] == tail[2][0] - 1
        found = client.history(hist_access_type="search", pattern="*restart-needle*", reply=True)["content"]
        assert [entry[2] for entry in found["history"]] == ['print("before-restart-needle")']
        earlier = client.history(hist_access_type="range", session=-1, start=0, reply=True)["content"]["history"]
        assert [entry[2] for entry in earlier] == ['print("before-restart-needle")', "40 + 2"]


def test_history_is_answered_before_any_cell_runs_without_loading_the_session(tmp_path):
    """A console asks for the history first: the kernel answers from the file without building the session."""
    history = tmp_path / "history.sqlite"
    with soma_kernel(history) as client:
        client.execute_interactive("6 * 7", timeout=30)
    with soma_kernel(history) as client:
        tail = client.history(hist_access_type="tail", n=1000, reply=True, timeout=5)["content"]["history"]
        assert [entry[2] for entry in tail] == ["6 * 7"]
        modules = client.execute_interactive("%who", timeout=30)
        assert modules["content"]["status"] == "ok"


def test_the_test_run_keeps_kernel_history_out_of_the_users_file():
    assert os.environ["SOMA_KERNEL_HISTORY"] != os.path.join(os.path.expanduser("~"), ".local", "share",
                                                               "soma-kernel", "history.sqlite")
