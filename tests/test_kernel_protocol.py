"""The Soma kernel over the real Jupyter protocol (ZeroMQ, a kernel process).

The kernelspec is installed into a temporary prefix that JUPYTER_PATH points
at, so the tests exercise the same kernel.json users get. The conformance
class runs jupyter_kernel_test's sample tables; the functions below check
what is specific to Soma: carets in error replies, interrupting a running
loop, display data, print() reaching its cell, widgets, history, completion.
"""

from __future__ import annotations

import os
import queue
import tempfile
import time

import jupyter_kernel_test
import pytest
from jupyter_client.manager import start_new_kernel

from helpers import is_complete_reply, kernelspec_installed
from test_session import COUNTER


_PREFIX = tempfile.TemporaryDirectory(prefix="soma-kernelspec-")
_INSTALLED = kernelspec_installed(_PREFIX.name)


def setup_module(module):
    """Install the kernelspec into a temporary prefix and let Jupyter find it there first."""
    _INSTALLED.__enter__()


def teardown_module(module):
    """Restore JUPYTER_PATH and drop the temporary prefix."""
    _INSTALLED.__exit__(None, None, None)
    _PREFIX.cleanup()


class TestSomaConformance(jupyter_kernel_test.KernelTests):
    """jupyter_kernel_test's protocol checks with Soma samples."""

    kernel_name = "soma"
    language_name = "soma"
    file_extension = ".cell"
    code_hello_world = 'print("hello, world")'
    completion_samples = [{"text": "lowerc", "matches": {"lowercase"}}, {"text": "%hel", "matches": {"help"}}]
    complete_code_samples = ["1 + 1", "let x = 1", "%check", 'cell A {\n  on f() { return 1 }\n}']
    incomplete_code_samples = ["cell A {", 'let s = "abc', 'let t = """x', "let y = (1 +"]
    invalid_code_samples = ["let = 5", "1 + + }"]
    code_generate_error = "undefined_name_here + 1"
    code_execute_result = [{"code": "1 + 2", "result": "3"}, {"code": 'uppercase("soma")', "result": "SOMA"}]
    code_display_data = [{"code": "?print", "mime": "text/plain"}]
    code_history_pattern = "1 + *"
    supported_history_operations = ("tail", "range", "search")
    code_inspect_sample = "print"
    code_stderr = '%reset\nthink("hello")'  # the echo-mock note goes to stderr (again after a reset)
    code_page_something = "??print"

    @classmethod
    def setUpClass(cls):
        """Start the kernel with an input history of its own: the history checks expect only this kernel's inputs."""
        cls._history = tempfile.TemporaryDirectory(prefix="soma-conformance-history-")
        saved = os.environ.get("SOMA_KERNEL_HISTORY")
        os.environ["SOMA_KERNEL_HISTORY"] = os.path.join(cls._history.name, "history.sqlite")
        try:
            super().setUpClass()
        finally:
            if saved is None:
                os.environ.pop("SOMA_KERNEL_HISTORY")
            else:
                os.environ["SOMA_KERNEL_HISTORY"] = saved

    @classmethod
    def tearDownClass(cls):
        """Stop the kernel, then drop its history."""
        super().tearDownClass()
        cls._history.cleanup()

    @pytest.mark.skip(reason="Soma has nothing that clears a cell's output: no builtin or magic sends clear_output")
    def test_clear_output(self):
        """Not applicable to Soma (see the skip reason)."""


@pytest.fixture(scope="module")
def kernel():
    """One running Soma kernel and a blocking client for the tests below."""
    manager, client = start_new_kernel(kernel_name="soma")
    yield manager, client
    client.stop_channels()
    manager.shutdown_kernel(now=True)


def run(client, code, timeout=30):
    """Execute `code`; return (reply content, iopub messages of this request)."""
    messages = []
    reply = client.execute_interactive(code, timeout=timeout, output_hook=messages.append)
    return reply["content"], messages


def of_type(messages, msg_type):
    """The contents of the messages of one type."""
    return [m["content"] for m in messages if m["msg_type"] == msg_type]


def test_kernel_info_describes_soma_without_debugger(kernel):
    _, client = kernel
    reply = client.kernel_info(reply=True)["content"]
    assert reply["language_info"]["name"] == "soma"
    assert reply["language_info"]["file_extension"] == ".cell"
    assert reply["language_info"]["pygments_lexer"] == "soma"
    assert reply["language_info"]["codemirror_mode"] == "soma"
    assert reply["language_info"]["mimetype"] == "text/x-soma"
    assert "debugger" not in reply["supported_features"]


def test_print_output_reaches_its_cell(kernel):
    _, client = kernel
    reply, messages = run(client, 'print("first")\nprint("second")')
    assert reply["status"] == "ok"
    text = "".join(c["text"] for c in of_type(messages, "stream"))
    assert text == "first\nsecond\n"


def test_printed_text_comes_before_the_result(kernel):
    _, client = kernel
    reply, messages = run(client, 'print("before")\n"the result"')
    assert reply["status"] == "ok"
    kinds = [m["msg_type"] for m in messages if m["msg_type"] in ("stream", "execute_result")]
    assert kinds == ["stream", "execute_result"]


def test_definitions_and_values_across_cells(kernel):
    _, client = kernel
    reply, _ = run(client, COUNTER)
    assert reply["status"] == "ok"
    reply, messages = run(client, "bump(2)\nbump(3)")
    assert of_type(messages, "execute_result")[0]["data"]["text/plain"] == "5"


def test_runtime_error_has_position_caret_and_hint(kernel):
    _, client = kernel
    run(client, COUNTER)
    reply, messages = run(client, "\n\n   bump(-1000)")
    assert reply["status"] == "error"
    assert reply["ename"] == "SomaError"
    traceback = of_type(messages, "error")[0]["traceback"]
    header = traceback[0]
    assert header.startswith("error: cell[") and "]:3:4: invariant" in header
    assert traceback[1] == "3 |    bump(-1000)"
    assert traceback[2] == "  |    " + "^" * len("bump(-1000)")
    assert any(line.startswith("  hint:") for line in traceback)


def test_syntax_error_is_an_error_reply_with_caret(kernel):
    _, client = kernel
    reply, messages = run(client, "let x = (1 +\nlet y = 2")
    assert reply["status"] == "error" and reply["ename"] == "SyntaxError"
    traceback = of_type(messages, "error")[0]["traceback"]
    assert traceback[0].startswith("error: cell[")
    assert any(set(line.split("|", 1)[-1].strip()) == {"^"} for line in traceback)


def test_interrupt_stops_a_running_loop_and_keeps_the_session(kernel):
    manager, client = kernel
    assert run(client, "let kept = 41")[0]["status"] == "ok"
    msg_id = client.execute("while true { }")
    time.sleep(1.0)
    manager.interrupt_kernel()
    reply = _reply_to(client, msg_id, timeout=20)
    wait_idle(client, msg_id)
    assert reply["status"] == "error"
    assert reply["ename"] == "KeyboardInterrupt"
    reply, messages = run(client, "kept + 1")
    assert reply["status"] == "ok"
    assert of_type(messages, "execute_result")[0]["data"]["text/plain"] == "42"


def _reply_to(client, msg_id, timeout):
    """The shell reply to `msg_id` (other replies are skipped)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            message = client.get_shell_msg(timeout=max(0.1, deadline - time.monotonic()))
        except queue.Empty:
            break
        if message["parent_header"].get("msg_id") == msg_id:
            return message["content"]
    raise AssertionError("no reply before the timeout")


def wait_idle(client, msg_id, timeout=20):
    """Wait for the kernel's `idle` status after `msg_id`.

    After an error reply ipykernel aborts the requests queued behind it until
    it goes idle; a request sent before that could be aborted.
    """
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        message = client.get_iopub_msg(timeout=max(0.1, deadline - time.monotonic()))
        if (message["msg_type"] == "status" and message["content"]["execution_state"] == "idle"
                and message["parent_header"].get("msg_id") == msg_id):
            return
    raise AssertionError("the kernel did not go idle before the timeout")


def test_diagram_is_display_data_with_an_svg_image_and_dot(kernel):
    _, client = kernel
    run(client, COUNTER)
    run(client, 'open_door("d1")')
    reply, messages = run(client, "%diagram Counter d1")
    assert reply["status"] == "ok"
    data = of_type(messages, "display_data")[0]["data"]
    assert data["text/html"].startswith('<img class="soma-diagram" alt="state machine door: ')
    assert 'src="data:image/svg+xml;base64,' in data["text/html"]
    assert "closed" in data["text/plain"] and "open" in data["text/plain"]


def test_map_value_shows_as_html_table(kernel):
    _, client = kernel
    reply, messages = run(client, 'map("a", 1, "b", 2)')
    data = of_type(messages, "execute_result")[0]["data"]
    assert "<table" in data["text/html"]
    assert data["text/plain"].startswith("{")


def test_verify_shows_a_static_report_with_a_text_twin(kernel):
    _, client = kernel
    run(client, COUNTER)
    reply, messages = run(client, "%verify")
    assert reply["status"] == "ok"
    data = of_type(messages, "display_data")[0]["data"]
    assert set(data) == {"text/plain", "text/html"}
    assert "State machine 'door'" in data["text/plain"]
    assert data["text/html"].startswith('<div class="soma-report">')
    assert not any(m["msg_type"] == "comm_open" for m in messages)  # no widget: nothing needs the widget manager


def test_completion_of_cell_members_and_magics(kernel):
    _, client = kernel
    run(client, COUNTER)
    code = "Counter.bu"
    reply = client.complete(code, len(code), reply=True)["content"]
    assert reply["matches"] == ["bump"]
    assert (reply["cursor_start"], reply["cursor_end"]) == (8, 10)
    code = "let x = Counter."
    reply = client.complete(code, len(code), reply=True)["content"]
    assert {"bump", "open_door"} <= set(reply["matches"])


def test_inspection_shows_face_and_invariants(kernel):
    _, client = kernel
    run(client, COUNTER)
    reply = client.inspect("Counter", 3, reply=True)["content"]
    assert reply["found"]
    text = reply["data"]["text/plain"]
    assert "signal bump(n: Int) -> Int" in text
    assert "invariant count >= 0" in text
    assert "state door: initial closed" in text


def test_is_complete_uses_the_parser(kernel):
    _, client = kernel
    reply = is_complete_reply(client, "cell A {\n  on f() {")
    assert reply["status"] == "incomplete"
    assert reply["indent"] == "        "  # two braces open


def test_history_search_finds_earlier_inputs(kernel):
    _, client = kernel
    run(client, 'print("needle-in-history")')
    reply = client.history(hist_access_type="search", pattern="*needle-in-history*", reply=True)["content"]
    assert [entry[2] for entry in reply["history"]][-1] == 'print("needle-in-history")'


def test_double_question_mark_pages_help_and_the_definition_source(kernel):
    _, client = kernel
    run(client, COUNTER)
    reply, messages = run(client, "??Counter.bump")
    assert reply["status"] == "ok" and not of_type(messages, "display_data")
    [page] = reply["payload"]
    text = page["data"]["text/plain"]
    assert page["source"] == "page" and text.startswith("Counter.bump\n  signal bump(n: Int) -> Int\n")
    handler = text.split("\n\n", 1)[1]  # the handler's own source, not its whole cell
    assert handler.startswith("on bump of cell Counter — cell[") and "\non bump(n: Int) {" in handler
    assert "open_door" not in handler


def test_unknown_magic_is_a_clear_error(kernel):
    _, client = kernel
    reply, messages = run(client, "%nonsense")
    assert reply["ename"] == "MagicError"
    assert "unknown magic %nonsense" in of_type(messages, "error")[0]["traceback"][0]


def test_widget_control_comm_is_answered_before_any_widget_is_shown():
    manager, client = start_new_kernel(kernel_name="soma")
    try:
        comm_id = "control-comm-at-start"
        opened = client.session.msg("comm_open", {"comm_id": comm_id, "target_name": "jupyter.widget.control",
                                                  "data": {}})
        opened["metadata"] = {"version": "1.0.0"}
        client.shell_channel.send(opened)
        request = client.session.msg("comm_msg", {"comm_id": comm_id, "data": {"method": "request_states"}})
        client.shell_channel.send(request)
        deadline = time.monotonic() + 20
        answer = None
        while answer is None and time.monotonic() < deadline:
            message = client.get_iopub_msg(timeout=max(0.1, deadline - time.monotonic()))
            if message["msg_type"] == "comm_msg" and message["content"]["comm_id"] == comm_id:
                answer = message["content"]["data"]
        assert answer is not None and answer["method"] == "update_states" and answer["states"] == {}
        reply = client.comm_info(target_name="jupyter.widget.control", reply=True)["content"]
        assert comm_id in reply["comms"]
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)
