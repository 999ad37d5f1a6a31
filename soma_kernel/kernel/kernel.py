"""SomaKernel: the Jupyter protocol over a `Session`.

The kernel is thin: every `do_*` hook turns a request into a call on the
session (`soma_kernel.session.session`), or on `complete`/`inspect`, and the result
into a reply. The language itself never runs here. Heavy modules (parser,
runtime) are imported on first use, so the kernel starts about as fast as the
stock python3 kernel.

Protocol details that matter:
- print() inside Soma code reaches the right notebook cell because the
  parent header of sys.stdout/sys.stderr is set for every shell request.
- Errors become `error` messages whose traceback is the rendered diagnostic
  (cell[N]:line:col, the line, a caret, a hint); SIGINT (interrupt_request)
  becomes a `KeyboardInterrupt` error reply; nothing a cell does stops the kernel.
- Comms are wired to ipykernel's CommManager. Soma shows no widget (reports
  are static HTML and text), but a frontend with the ipywidgets manager opens
  its control comm (`jupyter.widget.control`) at every connection: the widget
  targets are registered at start so it gets its (empty) answer instead of an
  error in the kernel's log; ipywidgets itself is imported when a comm opens.
"""

from __future__ import annotations

import sys

import comm
from ipykernel.comm import CommManager
from ipykernel.comm.comm import BaseComm
from ipykernel._version import kernel_protocol_version
from ipykernel.kernelbase import Kernel

from .. import __version__

LANGUAGE_INFO = {
    "name": "soma",
    "version": __version__,
    "mimetype": "text/x-soma",
    "file_extension": ".cell",
    "pygments_lexer": "soma",
    "codemirror_mode": "soma",
}


class SomaKernel(Kernel):
    """The Soma Jupyter kernel (protocol layer only; the language is in Session)."""

    implementation = "soma_kernel"
    implementation_version = __version__
    language = "soma"
    language_info = LANGUAGE_INFO
    banner = f"Soma {__version__} — an agent language with state machines you can verify. %help lists the magics."
    help_links = [{"text": "Soma reference", "url": "https://github.com/soma-dev-lang/soma"}]

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self._session = None
        self._history = None
        self._install_comms()

    # ------------------------------------------------------------ wiring

    def _install_comms(self) -> None:
        """Route comm messages to an ipykernel CommManager and point `comm` at it (for ipywidgets)."""
        self.comm_manager = CommManager(parent=self, kernel=self)
        comm.create_comm = lambda *args, **kwargs: BaseComm(*args, **kwargs)
        comm.get_comm_manager = lambda: self.comm_manager
        for msg_type in ("comm_open", "comm_msg", "comm_close"):
            self.shell_handlers[msg_type] = getattr(self.comm_manager, msg_type)
        for target, handler in WIDGET_COMM_TARGETS.items():
            self.comm_manager.register_target(target, _widget_target(handler))

    @property
    def history(self):
        """The input history (this kernel's and earlier ones'), made without the session: a console asks
        for it first, before any cell runs, and should not wait for the parser and runtime to load."""
        if self._history is None:
            from ..session.history import History, default_history_path  # lazy: sqlite3 is opened on first use

            self._history = History(default_history_path())
        return self._history

    @property
    def session_state(self):
        """The live Soma session (created on first use)."""
        if self._session is None:
            from ..session.session import Session  # lazy: ~0.3 s of parser, runtime and analyses, kept off kernel start

            self._session = Session(history=self.history)
        return self._session

    @property
    def kernel_info(self):
        """kernel_info, built here rather than by ipykernel.

        ipykernel's own property imports its debugger (debugpy then prints four
        "frozen modules" warnings on stderr) and its keys differ across the
        ipykernel versions the package allows; Soma has no debugger and no
        subshells, so `supported_features` is empty.
        """
        return {
            "protocol_version": kernel_protocol_version,
            "implementation": self.implementation,
            "implementation_version": self.implementation_version,
            "language_info": self.language_info,
            "banner": self.banner,
            "help_links": self.help_links,
            "supported_features": [],
        }

    async def do_debug_request(self, msg):
        """A Debug Adapter Protocol request: an error response (Soma has no debugger), never silence."""
        return {"type": "response", "request_seq": msg.get("seq", 0), "success": False,
                "command": msg.get("command", ""), "seq": 0,
                "message": "the Soma kernel has no debugger"}

    def set_parent(self, ident, parent, channel="shell"):
        """Also give sys.stdout/sys.stderr the request's header, so print() output finds its cell."""
        super().set_parent(ident, parent, channel)
        if channel == "shell":
            for stream in (sys.stdout, sys.stderr):
                if hasattr(stream, "set_parent"):
                    stream.set_parent(parent)

    def _send_display(self, bundle: dict) -> None:
        """Send one display_data message for the current cell."""
        self.send_response(self.iopub_socket, "display_data", {"data": bundle, "metadata": {}})

    # ------------------------------------------------------------ execute

    async def do_execute(self, code, silent, store_history=True, user_expressions=None,
                         allow_stdin=False, *, cell_meta=None, cell_id=None):
        """Run a cell in the session; send its outputs, result or error."""
        self._allow_stdin = allow_stdin  # raw_input() (approve's question) needs it; ipykernel's own shell sets it likewise
        self.session_state.ask_person = self._ask_person if allow_stdin else None
        try:
            result = self.session_state.execute(
                code, cell_key=cell_id, count=self.execution_count,
                display=None if silent else self._send_display, store_history=store_history)
        except (Exception, KeyboardInterrupt) as err:  # the session guards itself; this is the last net
            return self._error_reply(type(err).__name__ if isinstance(err, KeyboardInterrupt) else "InternalError",
                                     str(err), [f"InternalError: {type(err).__name__}: {err}"], silent)
        if result.error is not None:
            return self._error_reply(result.error_name, result.error_value, result.error.split("\n"), silent)
        if result.result is not None and not silent:
            _flush_streams()
            self.send_response(self.iopub_socket, "execute_result",
                               {"execution_count": self.execution_count, "data": result.result, "metadata": {}})
        return {"status": "ok", "execution_count": self.execution_count, "payload": result.payloads,
                "user_expressions": {}}

    def _ask_person(self, action: str) -> bool:
        """approve() in a notebook: Jupyter's input request `approve? <action> [y/N]`; y or yes approves."""
        reply = self.raw_input(f"approve? {action} [y/N] ")
        return reply.strip().lower() in ("y", "yes")

    def _error_reply(self, name: str, value: str, traceback: list[str], silent: bool) -> dict:
        """Publish an `error` message (unless silent) and build the error reply."""
        _flush_streams()
        content = {"ename": name, "evalue": value, "traceback": traceback}
        if not silent:
            self.send_response(self.iopub_socket, "error", content)
        return {"status": "error", "execution_count": self.execution_count, **content}

    # ------------------------------------------------------------ editor help

    async def do_complete(self, code, cursor_pos):
        """Completion from the session's names, builtins, keywords and magics."""
        from ..session.complete import complete  # lazy: imports the runtime's builtins; kept off kernel start

        cursor_pos = len(code) if cursor_pos is None else cursor_pos
        return complete(self.session_state, code, cursor_pos)

    async def do_inspect(self, code, cursor_pos, detail_level=0, omit_sections=()):
        """Help on the name under the cursor."""
        from ..session.inspect import inspect  # lazy: imports the runtime's builtins; kept off kernel start

        cursor_pos = len(code) if cursor_pos is None else cursor_pos
        return inspect(self.session_state, code, cursor_pos)

    async def do_is_complete(self, code):
        """The parser decides: unclosed braces and strings are `incomplete`; the next line is indented
        four spaces per open bracket, and not at all inside an unclosed string."""
        from ..session.magics import split_cell  # lazy: the magics import the analyses; kept off kernel start

        parts = split_cell(code)
        if parts.cell_magic is not None or not parts.code.strip():
            return {"status": "complete"}
        from ..syntax.parser import is_complete  # lazy: lark and the grammar (~60 ms); kept off kernel start

        status = is_complete(parts.code)
        if status != "incomplete":
            return {"status": status}
        from ..syntax.nesting import nesting  # lazy, with the parser above

        depth, in_string = nesting(parts.code)
        return {"status": status, "indent": "" if in_string else "    " * depth}

    async def do_history(self, hist_access_type, output, raw, session=None, start=None, stop=None,
                         n=None, pattern=None, unique=False):
        """Input history, this kernel's and earlier ones' (kept in SQLite): tail, search (glob) or range."""
        history = self.history
        if hist_access_type == "tail":
            entries = history.tail(n or 10)
        elif hist_access_type == "search":
            entries = history.search(pattern or "*", n, unique)
        elif hist_access_type == "range":
            entries = history.range(session or 0, start or 0, stop)
        else:
            entries = []
        return {"status": "ok",
                "history": [(number, line, (code, None) if output else code) for number, line, code in entries]}

    async def do_shutdown(self, restart):
        """Close the bound store (checkpointed: no -wal or -shm file is left) and the history file."""
        if self._session is not None:
            self._session.runtime.detach_store()
        if self._history is not None:
            self._history.close()
        return {"status": "ok", "restart": restart}


def _flush_streams() -> None:
    """Send what print() buffered, so it reaches the frontend before the result or error that follows.

    ipykernel's OutStream sends on a timer; without this an execute_result
    overtakes the text the cell printed before it.
    """
    sys.stdout.flush()
    sys.stderr.flush()


WIDGET_COMM_TARGETS = {
    "jupyter.widget": "handle_comm_opened",
    "jupyter.widget.control": "handle_control_comm_opened",
}


def _widget_target(handler_name: str):
    """A comm target for ipywidgets that imports ipywidgets only when a frontend opens the comm.

    Registered at kernel start, so the control comm JupyterLab opens at once
    (`jupyter.widget.control`, to restore widget state) is answered; the
    import (~0.2 s) is paid by the first comm, not by every kernel start.
    """

    def open_widget_comm(comm, message):
        from ipywidgets import Widget  # lazy: ~75 ms, paid by the first comm only (see above)

        return getattr(Widget, handler_name)(comm, message)

    return open_widget_comm
