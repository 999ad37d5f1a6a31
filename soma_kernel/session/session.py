"""The live Soma session: one interpreter, one set of definitions, one soma.toml.

The Jupyter kernel is a thin protocol layer over this class; tests and
scripts use it directly, without ZeroMQ:

    session = Session()
    result = session.execute('cell Counter { … }', cell_key="a")
    result = session.execute('Counter.bump(2)', cell_key="b")
    result.result        # {"text/plain": "2"}

Rules of a notebook session:
- Definitions (`cell`, `cell type`, `cell test`, `flesh`) belong to the
  notebook cell that made them (its `cell_id`, else its execution label).
  Re-running a cell replaces what it defined and drops what it no longer
  defines; defining a name another notebook cell defined takes it over, with a
  one-line warning naming that cell.
- Each top-level statement is one atomic invocation; the value of the last
  expression is the cell's result. `assert`, `assert_fails` and `property`
  lines are run by the test runner's `run_rule` and print exactly the ✓/✗
  lines of `soma test`; one that fails (or raises) then fails its cell. A
  `mock` line feeds the session's queues; a mock whose value fails is an
  error that stops the cell, and queues nothing.
  A failed cell drops the mocks it queued that nothing consumed, with a note.
- Errors are rendered with `cell[N]:line:col`, the line and a caret, counted
  in the untrimmed cell text; memory, instances and counters are as they were
  before the failing statement; its model calls (tokens, trace records, the
  mocks they consumed) are kept. A bug in soma-kernel is an `InternalError`,
  never a dead kernel.
- Lines starting with `%name` (or `?name`, `??name`) are magics, run in order
  with the Soma code around them; `%%toml` takes the whole cell (`%help`).
"""

from __future__ import annotations

import contextlib
import os
import sys
import traceback
from dataclasses import dataclass, field
from typing import Callable, Optional

from ..analysis.check import check_program
from ..analysis.names import dangling_keyword
from ..core.diagnostics import Diagnostic, SomaError, SomaSyntaxError, caret_lines
from ..core.errors import UserError
from ..project.settings import load_project
from ..runtime.builtins import BUILTINS
from ..runtime.interpreter import Runtime
from ..syntax import ast
from ..syntax.ast import Span
from ..syntax.parser import parse, parse_fragment
from ..testing.runner import apply_mock, discard_note, origin_place, run_rule
from .definitions import SESSION_ORIGIN, Definition, SourceMap, combined_text, defined_names, definition_key
from .display import value_bundle
from .hints import missing_name_hint
from .history import History
from .magics import REGISTRY, MagicError, magic_span, run_cell_magic, run_line_magic, split_cell

DEFINITION_TYPES = (ast.CellDecl, ast.TypeDecl, ast.TestCell, ast.Flesh)
RULE_TYPES = (ast.RuleMock, ast.RuleAssert, ast.RuleAssertFails, ast.RuleLet, ast.RuleProperty)

RUNTIME_HINTS = {
    "undefined_variable": "define it in an earlier cell (top-level `let` lines are kept) or check the spelling",
    "undefined_function": "define the handler in a cell first, or check `%help` for the builtins",
    "invariant": "the invocation was rolled back: memory is as it was before this statement",
    "guard_failed": "the edge's guard was false; the instance stays in its state",
    "invalid_transition": "see `%diagram CELL` for the edges the machine declares",
}
MOCK_HINTS = {
    "think": "`mock think \"reply\"` scripts the model's next reply (a String, or a list of them); "
             "nothing was queued",
    "approve": "`mock approve true` (or false, or a list of them) scripts the next approval; nothing was queued",
}
MOCK_HINT = "the mock's value could not be computed; nothing was queued"
INTERRUPTED = ("KeyboardInterrupt: interrupted — the running statement was rolled back (or the magic stopped); "
               "the session is intact")
RULE_WORDS = {"RuleAssert": "assert", "RuleAssertFails": "assert_fails", "RuleProperty": "property"}
FAILED_RULE_HINT = ("the cell stops at a failing assertion; a notebook that shows one on purpose tags the "
                    "cell `raises-exception`")
DEFAULT_RUNTIME_HINT = "the statement was rolled back: the session is as it was before it"


class CellError(Exception):
    """An error already rendered for the user: its name, one-line value and full text."""

    def __init__(self, name: str, value: str, text: str):
        super().__init__(value)
        self.name, self.value, self.text = name, value, text


@dataclass
class Output:
    """One output of a cell, in order: a stream chunk or a display bundle."""

    kind: str
    name: str = ""
    text: str = ""
    bundle: Optional[dict] = None


@dataclass
class ExecutionResult:
    """What one `Session.execute` produced.

    outputs: streams and display bundles in order; result: the mime bundle of
    the last expression's value, or None; payloads: execute-reply payloads
    (`??name` sends its text to the pager); error: the rendered error text
    (header, source line, caret, hint) or None, with `error_name` (`SyntaxError`,
    `CheckError`, `SomaError`, `UserError`, `MagicError`, `KeyboardInterrupt`,
    `InternalError`) and `error_value` (the one-line message).
    """

    outputs: list[Output] = field(default_factory=list)
    result: Optional[dict] = None
    payloads: list[dict] = field(default_factory=list)
    error: Optional[str] = None
    error_name: str = ""
    error_value: str = ""

    @property
    def ok(self) -> bool:
        """True when the cell raised no error."""
        return self.error is None

    def stream_text(self, name: str = "stdout") -> str:
        """All text written to one stream, joined."""
        return "".join(o.text for o in self.outputs if o.kind == "stream" and o.name == name)

    @property
    def displays(self) -> list[dict]:
        """The display bundles, in order."""
        return [o.bundle for o in self.outputs if o.kind == "display"]


class _StreamTee:
    """A text stream that records what is written as Outputs and passes it on."""

    def __init__(self, name: str, outputs: list[Output], target):
        self.name = name
        self.outputs = outputs
        self.target = target

    def write(self, text: str) -> int:
        """Record `text` (merging with the previous chunk of the same stream) and forward it."""
        if text:
            last = self.outputs[-1] if self.outputs else None
            if last is not None and last.kind == "stream" and last.name == self.name:
                last.text += text
            else:
                self.outputs.append(Output("stream", self.name, text))
            self.target.write(text)
        return len(text)

    def flush(self) -> None:
        """Flush the stream written through."""
        self.target.flush()

    def __getattr__(self, name):
        return getattr(self.target, name)


class CellRun:
    """One execution in progress: its code, origin label and collected outputs.

    Magics receive it to write text (`out`), show bundles (`show`) and read
    their cell's source.
    """

    def __init__(self, code: str, origin: str, cell_key: str, display: Optional[Callable[[dict], None]]):
        self.code = code
        self.origin = origin
        self.cell_key = cell_key
        self.result = ExecutionResult()
        self.defined: set[tuple[str, str]] = set()
        self.magic_line = 0  # the 1-based line of the magic running now (its code's carets point there)
        self.failed_line: Optional[int] = None  # the line of the statement or mock running, while it runs
        self._display = display

    @contextlib.contextmanager
    def capturing(self):
        """Record stdout/stderr written during the block (and still let it through)."""
        outputs = self.result.outputs
        with contextlib.redirect_stdout(_StreamTee("stdout", outputs, sys.stdout)), \
                contextlib.redirect_stderr(_StreamTee("stderr", outputs, sys.stderr)):
            yield

    def out(self, text: str, stream: str = "stdout") -> None:
        """Write a line (a newline is added when missing) to stdout or stderr."""
        target = sys.stdout if stream == "stdout" else sys.stderr
        target.write(text if text.endswith("\n") else text + "\n")

    def show(self, bundle: dict) -> None:
        """Display a mime bundle now (after what was printed so far)."""
        self.result.outputs.append(Output("display", bundle=bundle))
        if self._display is not None:
            sys.stdout.flush()
            sys.stderr.flush()
            self._display(bundle)

    def page(self, bundle: dict) -> None:
        """Send a mime bundle to the pager (a `page` payload of the execute reply)."""
        self.result.payloads.append({"source": "page", "data": bundle, "start": 0})

    def fail(self, name: str, value: str, text: str) -> None:
        """Record the cell's error."""
        self.result.error_name, self.result.error_value, self.result.error = name, value, text


class Session:
    """A live Soma session: definitions by notebook cell, a runtime, a project.

    `project` is the soma.toml of `directory` (default: the working folder)
    until `%%toml` replaces it. `magics` maps every magic's name to its
    record; the magics, `%help`, completion and inspection read it from here.
    """

    magics = REGISTRY

    def __init__(self, directory: Optional[str] = None, history: Optional[History] = None):
        self.directory = os.path.abspath(directory or os.getcwd())
        self.definitions: dict[tuple[str, str], Definition] = {}
        self.cell_labels: dict[str, str] = {}
        self.dropped: dict[str, tuple[str, str]] = {}  # a name a re-run cell no longer defines → (that cell, owner)
        self.variables: dict[str, object] = {}
        self.history = history or History()  # this session's inputs; all sessions' with a file (the kernel's)
        self.execution_count = 0
        self._project_loaded = False
        self._project = None
        self._runtime = None
        self._parsed: Optional[tuple[str, ast.Program]] = None
        self.ask_person: Optional[Callable[[str], bool]] = None  # approve()'s person (the kernel sets it)
        self.program_path: Optional[str] = None  # the last %load-ed file (its default store: %store)
        self.previous_directory: Optional[str] = None  # where `%cd -` goes back to

    # ------------------------------------------------------------ state

    @property
    def project(self):
        """The session's soma.toml (a ProjectConfig) or None."""
        if not self._project_loaded:
            self._project = load_project(self.directory)
            self._project_loaded = True
        return self._project

    def set_project(self, project) -> None:
        """Replace the session's soma.toml (what `%%toml` does)."""
        self._project, self._project_loaded = project, True
        if self._runtime is not None:
            self._runtime.agent.mock_mode = self._agent_mock()
            self._runtime.agent.project = project

    @property
    def runtime(self):
        """The interpreter holding every definition, slot and machine instance."""
        if self._runtime is None:
            self._runtime = Runtime(agent_mock=self._agent_mock(), under_test=False, note=self._note,
                                    project_dir=self.directory, project=self.project)
            self._runtime.agent.ask = self.ask_person
        return self._runtime

    def _agent_mock(self) -> Optional[str]:
        """`[agent] mock` of the soma.toml, if any."""
        project = self.project
        return project.agent.get("mock") if project is not None else None

    @staticmethod
    def _note(text: str) -> None:
        """A runtime note (auto-mock, unused mock…): one line on stderr."""
        sys.stderr.write(text if text.endswith("\n") else text + "\n")

    def change_directory(self, path: str) -> None:
        """Make `path` the session's folder (`%cd`): relative paths of magics, cassettes and skills start there."""
        self.previous_directory, self.directory = self.directory, path
        if self._runtime is not None:
            self._runtime.agent.project_dir = path

    def names_defined_by(self, cell_key: str) -> list[str]:
        """Names of the definitions a notebook cell currently owns."""
        return [d.key[1] for d in self.definitions.values() if d.cell_key == cell_key]

    # ------------------------------------------------------------ execute

    def execute(self, code: str, cell_key: Optional[str] = None, count: Optional[int] = None,
                display: Optional[Callable[[dict], None]] = None, store_history: bool = True) -> ExecutionResult:
        """Run one notebook cell: magics, definitions, then statements in order.

        `count` is the execution counter shown as `cell[N]` (default: the
        session's own counter); `display` is called with each display bundle
        as soon as it is produced (the kernel sends it at once).
        """
        if count is None:
            self.execution_count += 1
            count = self.execution_count
        else:
            self.execution_count = max(self.execution_count, count)
        origin = f"cell[{count}]"
        cell_key = cell_key or origin
        if store_history:
            self.history.record(count, code)
        run = CellRun(code, origin, cell_key, display)
        if self._runtime is not None:
            self._runtime.agent.ask = self.ask_person
        with run.capturing():
            self._guarded(run, lambda: self._run_cell(run))
            if not run.result.ok:
                self._discard_cell_mocks(run, run.failed_line)
        return run.result

    def _discard_cell_mocks(self, run: "CellRun", line: Optional[int]) -> None:
        """Drop, with `soma test`'s note, the mocks this cell queued that nothing consumed (its
        statement or rule raised); what earlier cells queued stays queued."""
        if self._runtime is None:
            return
        where = f"{run.origin}:{line}" if line else run.origin
        note = discard_note(self._runtime.mocks.discard(run.origin), where)
        if note:
            run.out(note, "stderr")

    def _guarded(self, run: CellRun, action: Callable[[], None]) -> None:
        """Run `action`, turning every failure into the cell's error."""
        try:
            action()
        except CellError as err:
            run.fail(err.name, err.value, err.text)
        except SomaSyntaxError as err:
            run.fail("SyntaxError", err.diagnostic.message, err.diagnostic.render())
        except SomaError as err:
            run.fail("SomaError", err.text, f"error: {err.text}")
        except UserError as err:
            run.fail("UserError", f"error: {err.headline}", str(err))
        except MagicError as err:
            run.fail("MagicError", str(err).partition("\n")[0], str(err))
        except KeyboardInterrupt:
            run.fail("KeyboardInterrupt", "interrupted", INTERRUPTED)
        except Exception as err:  # a bug in soma-kernel: report it, keep the session
            run.fail("InternalError", f"{type(err).__name__}: {err}", _folded_traceback(err))

    def _run_cell(self, run: CellRun) -> None:
        """A cell magic on its body, or magic lines and Soma code in source order (`exit`/`quit` alone ends a console)."""
        if self._asks_to_exit(run.code):
            run.result.payloads.append({"source": "ask_exit", "keepkernel": False})
            return
        parts = split_cell(run.code)
        if parts.cell_magic is not None:
            name, args, _ = parts.cell_magic
            first_line = len(run.code[:len(run.code) - len(run.code.lstrip())].split("\n"))
            with _magic_errors_at(run, first_line, args):
                run_cell_magic(self, run, parts.cell_magic)
            return
        for kind, step in parts.steps:
            if kind == "magic":
                with _magic_errors_at(run, step.line, step.args):
                    run_line_magic(self, run, step)
            else:
                self.run_soma(run, step, run.origin)

    def run_soma(self, run: CellRun, code: str, origin: str) -> None:
        """Parse `code`, apply its definitions, then run its statements."""
        nodes = self._parse_code(code, origin)
        definitions = [n for n in nodes if isinstance(n, DEFINITION_TYPES)]
        for use in (n for n in nodes if isinstance(n, ast.Use)):
            run.out(f"note: `use {use.path}` is ignored in a notebook; run `%load FILE.cell` instead", "stderr")
        self._define(run, definitions, code, origin)
        self.run_statements(run, [n for n in nodes if not isinstance(n, DEFINITION_TYPES + (ast.Use,))], code, origin)

    @staticmethod
    def _parse_code(code: str, origin: str) -> list:
        """The top-level nodes of a cell's Soma text, or its syntax error as the cell's error."""
        try:
            return parse_fragment(code, origin)
        except SomaSyntaxError as err:
            raise CellError("SyntaxError", err.diagnostic.message, err.diagnostic.render(code)) from None

    def parse_statements(self, code: str, origin: str) -> list:
        """The statements of `code` (what `%timeit` runs again and again); a definition there is an error."""
        nodes = self._parse_code(code, origin)
        defining = next((n for n in nodes if isinstance(n, DEFINITION_TYPES + (ast.Use,))), None)
        if defining is not None:
            raise MagicError("only statements can be timed: define cells in a cell of their own")
        return nodes

    def run_statements(self, run: CellRun, runnable: list, code: str, origin: str) -> None:
        """Run top-level statements one by one, each atomic; the last expression's value is the cell's result."""
        self._refuse_dangling_keyword(runnable, code, origin)
        for index, node in enumerate(runnable):
            value = self._run_statement(run, node, code, origin)
            if index == len(runnable) - 1 and isinstance(node, ast.ExprStmt):
                try:
                    run.result.result = self._result_bundle(node.expr, value)
                except SomaError as err:  # a value too long to write out: the statement itself stands
                    raise CellError("SomaError", err.text, self._render_runtime_error(
                        err, node.span, code, origin, "the statement ran and what it did is kept; only its "
                        "value cannot be shown — show a part of it (len(x), slice(x, 0, 10))")) from None

    def _asks_to_exit(self, code: str) -> bool:
        """True for a cell that is only `exit`, `quit`, `exit()` or `quit()` and no program name of that spelling."""
        word = code.strip().removesuffix("()")
        if word not in ("exit", "quit") or word in self.variables:
            return False
        return self._runtime is None or not any(word in state.handler_decls for state in self._runtime.cells.values())

    def _refuse_dangling_keyword(self, statements: list, code: str, origin: str) -> None:
        """An expression cut short before a keyword nothing defines is a syntax error before any statement runs."""
        runtime = self.runtime
        problem = dangling_keyword(statements, lambda name: name in self.variables or name in runtime.cells
                                   or name in runtime.variants or name in BUILTINS
                                   or runtime.unique_slot_owner(name) is not None)
        if problem is not None:
            diagnostic = Diagnostic("error", problem.message, problem.span, origin, "parse", problem.hint)
            raise CellError("SyntaxError", problem.message, diagnostic.render(code))

    def _result_bundle(self, expr, value) -> Optional[dict]:
        """The cell's result: the value's bundle, `()` included, except after a call made for
        its effect (a builtin whose signature returns `()`, such as `print(…)` or `remember(…)`)."""
        if value is not None:
            return value_bundle(value)
        return None if self._called_for_effect(expr) else {"text/plain": "()"}

    def _called_for_effect(self, expr) -> bool:
        """True for a call (or UFCS method call) of a builtin that returns nothing by design
        (`print`, `remember`, `clear_trace`…), unless a handler of the program takes that name."""
        if isinstance(expr, ast.Call) and expr.cell is None:
            name = expr.func
        elif isinstance(expr, ast.MethodCall):
            name = expr.method
        else:
            return False
        entry = BUILTINS.get(name)
        if entry is None or not entry.returns_nothing:
            return False
        return not any(name in state.handler_decls for state in self.runtime.cells.values())

    # ------------------------------------------------------------ definitions

    def _define(self, run: CellRun, items: list, code: str, origin: str) -> None:
        """Replace what this notebook cell defined by `items` (may be empty)."""
        new_keys = [definition_key(item) for item in items]
        previous = [k for k, d in self.definitions.items() if d.cell_key == run.cell_key and k not in run.defined]
        if not new_keys and not previous:
            return
        taken_over = [(k, self.definitions[k].cell_key) for k in new_keys
                      if k in self.definitions and self.definitions[k].cell_key != run.cell_key]
        dropped = [k for k in previous if k not in new_keys]
        self._check_new_definitions(run, items, code, origin)
        runtime = self.runtime
        if dropped:
            gone = [name for kind, name in dropped if not self._name_still_defined(name, dropped)]
            if gone:
                runtime.undefine(gone)
            for key in dropped:
                self._remember_dropped(self.definitions.pop(key).item, run.origin)
        for key, owner in taken_over:
            label = self.cell_labels.get(owner, owner)
            run.out(f"warning: {key[0]} `{key[1]}` was defined by {label}; this cell's definition replaces it",
                    "stderr")
        for message in runtime.define(items) if items else []:
            run.out(message, "stderr")
        for key, item in zip(new_keys, items):
            text = code[item.span.start:item.span.end]
            self.definitions[key] = Definition(key, item, text, origin, code, run.cell_key)
            for name in defined_names(item):
                self.dropped.pop(name, None)
        run.defined.update(new_keys)
        self.cell_labels[run.cell_key] = run.origin

    def _remember_dropped(self, item, label: str) -> None:
        """Record the names a dropped definition took with it (its own, its handlers', its variants'), for hints."""
        still = {name for definition in self.definitions.values() for name in defined_names(definition.item)}
        for name in defined_names(item):
            if name not in still:
                self.dropped[name] = (label, item.name)

    def dropped_hint(self, missing) -> Optional[str]:
        """`re-running cell[N] dropped Beta …` when a failed lookup names what a re-run cell no longer defines."""
        if missing is None:
            return None
        for name in (missing.owner, missing.name):
            if name in self.dropped:
                label, owner = self.dropped[name]
                what = f"`{owner}`" if owner == name else f"`{owner}` (and `{name}` with it)"
                return (f"re-running {label} dropped {what}: that cell no longer defines it — "
                        "put the definition back there, or define it in another cell")
        return None

    def _name_still_defined(self, name: str, dropped: list) -> bool:
        """True when another kind of definition keeps `name` alive (a skeleton and its flesh)."""
        return any(k[1] == name and k not in dropped for k in self.definitions)

    def _check_new_definitions(self, run: CellRun, items: list, code: str, origin: str) -> None:
        """Run `soma check` on the session with these items; refuse them on errors inside them.

        A skeleton agent and its flesh are one agent: (re)defining either is
        refused on errors inside both. Alone, a skeleton's signals have no
        handlers yet, so it is accepted with a note and checked with its flesh.
        """
        if not items:
            return
        keys = {definition_key(item) for item in items}
        cell_key = run.cell_key
        others = [d for d in self.definitions.values() if d.cell_key != cell_key and d.key not in keys]
        pending = others + [Definition(definition_key(i), i, code[i.span.start:i.span.end], origin, code, cell_key)
                            for i in items]
        pending_keys = {d.key for d in pending}
        awaiting = {("cell", i.name) for i in items
                    if getattr(i, "kind", None) == "skeleton" and ("flesh", i.name) not in pending_keys}
        for _, name in sorted(awaiting):
            run.out(f"note: skeleton {name} is checked when its flesh is defined (`flesh {name} {{ … }}`)")
        halves = {("cell", i.name) for i in items if isinstance(i, ast.Flesh)} | \
            {("flesh", i.name) for i in items if getattr(i, "kind", None) == "skeleton"}
        blamed = (keys - awaiting) | (halves & pending_keys)
        if not blamed:
            return
        program, source_map = self._program_of(pending)
        report = check_program(program, self.project)
        own = [e for e in report.errors if source_map.owner(e.span) in blamed]
        if own:
            rendered = "\n".join(source_map.render(e) for e in own)
            raise CellError("CheckError", own[0].message, rendered)

    # ------------------------------------------------------------ program view

    def program(self) -> tuple[ast.Program, "SourceMap"]:
        """The session's definitions as one parsed program, and where each part came from."""
        return self._program_of(list(self.definitions.values()))

    def program_text(self) -> str:
        """The definitions as one `.cell` text (what `%save` writes)."""
        return combined_text(list(self.definitions.values()))[0]

    def _program_of(self, definitions: list[Definition]) -> tuple[ast.Program, "SourceMap"]:
        """Parse the combined text of `definitions` (so every span is in one text).

        The last parse is kept: checking a definition and the magics after it
        read the same text, which is parsed once (a large program takes seconds).
        """
        text, starts = combined_text(definitions)
        if self._parsed is None or self._parsed[0] != text:
            self._parsed = (text, parse(text, origin=SESSION_ORIGIN))
        return self._parsed[1], SourceMap(text, definitions, starts)

    # ------------------------------------------------------------ statements

    def _run_statement(self, run: CellRun, node, code: str, origin: str):
        """Run one top-level statement or rule atomically; returns an ExprStmt's value.

        Rules (`assert`, `assert_fails`, `mock`, `property`) go through the test
        runner's `run_rule`, so their ✓/✗ lines are exactly those of `soma test`;
        a failing one is then a CellError that stops the cell. After one that
        raised, the mocks this cell queued and nothing consumed are dropped as
        `soma test` drops them. A statement that fails leaves no
        write behind (the runtime's journal); what reached the outside stays: its
        model calls, their tokens and trace records, the mocks they consumed.
        """
        if isinstance(node, ast.RuleMock):
            return self._run_mock(run, node, code, origin)
        if isinstance(node, RULE_TYPES):
            outcome = run_rule(self.runtime, node, self.variables, origin_place(origin))
            for line in outcome.lines:
                run.out(line)
            if outcome.raised is not None and not isinstance(node, ast.RuleAssertFails):
                self._discard_cell_mocks(run, node.span.line)
            if outcome.counted and not outcome.passed:
                raise _failed_rule_error(node, outcome, code, origin)
            return None
        run.failed_line = node.span.line
        try:
            value = self.runtime.execute(node, self.variables)
        except SomaError as err:
            raise CellError("SomaError", err.text, self._render_runtime_error(err, node.span, code, origin)) from None
        run.failed_line = None
        return value

    def _run_mock(self, run: CellRun, node: ast.RuleMock, code: str, origin: str) -> None:
        """A `mock` line, queued as this cell's: a value that cannot be evaluated or does not fit
        is an error that stops the cell."""
        run.failed_line = node.span.line
        try:
            apply_mock(self.runtime, node, self.runtime.evaluate(node.value, self.variables), run.origin)
            run.failed_line = None
        except SomaError as err:
            text = self._render_runtime_error(err, node.span, code, origin,
                                              err.hint or MOCK_HINTS.get(node.target, MOCK_HINT))
            raise CellError("SomaError", err.text, text) from None

    # ------------------------------------------------------------ errors

    def _render_runtime_error(self, err: SomaError, statement: Span, code: str, origin: str,
                              hint: Optional[str] = None) -> str:
        """`error: cell[N]:line:col: text`, the line, a caret, where it was raised, a hint."""
        inside = _inside(err.span, statement)
        span = err.span if inside else statement
        hint = hint or err.hint or self.dropped_hint(err.missing) or missing_name_hint(self.runtime, err.missing) \
            or RUNTIME_HINTS.get(err.kind, DEFAULT_RUNTIME_HINT)
        lines = [Diagnostic("error", err.text, span, origin, err.kind).render(code)]
        if not inside:
            lines.extend(self._raised_in(err.span))
        lines.append(f"  hint: {hint}")
        return "\n".join(lines)

    def _raised_in(self, span: Span) -> list[str]:
        """Where in the definitions an error was raised, when exactly one of them contains its span."""
        if span.line <= 0:
            return []
        holders = [d for d in self.definitions.values()
                   if d.item.span.start <= span.start and span.end <= d.item.span.end
                   and d.source[span.start:span.end].strip()]
        if len(holders) != 1:
            return []
        holder = holders[0]
        return [f"  raised in {holder.key[0]} {holder.key[1]} at {holder.origin}:{span.line}:{span.col}"] + \
            ["  " + line for line in caret_lines(holder.source, span)]


@contextlib.contextmanager
def _magic_errors_at(run: CellRun, line: int, args: str):
    """Turn a MagicError/UserError of the magic on `line` into an error shown at that line with a caret.

    An error that already points into another file (a soma.toml beside a
    `%load`ed file) keeps its place and says which magic line met it; one
    about the cell itself (`%%toml`) is shown as it is.
    """
    try:
        yield
    except MagicError as err:
        message, _, rest = str(err).partition("\n")
        span = magic_span(run.code.split("\n")[line - 1], line, args, err.word, err.at_name)
        rendered = Diagnostic("error", message, span, run.origin).render(run.code)
        raise CellError("MagicError", message, rendered + (f"\n{rest}" if rest else "")) from None
    except UserError as err:
        if err.file == run.origin:
            raise CellError("UserError", err.headline, str(err)) from None
        if err.line > 0:
            raise CellError("UserError", err.headline, f"{err}\n  (met by the magic at {run.origin}:{line})") from None
        span = magic_span(run.code.split("\n")[line - 1], line, args)
        rendered = Diagnostic("error", err.headline, span, run.origin).render(run.code)
        raise CellError("UserError", err.headline, "\n".join([rendered, *err.notes])) from None


def _failed_rule_error(node, outcome, code: str, origin: str) -> CellError:
    """A failed or erroring `assert` (`assert_fails`, `property`) as the cell's error.

    Its ✗ line is already printed; the error makes the cell fail, so Run All,
    nbval, papermill and nbclient stop there as they do for any error.
    """
    word = RULE_WORDS.get(type(node).__name__, "rule")
    if outcome.raised is not None and not isinstance(node, ast.RuleAssertFails):
        message = f"{word} raised an error: {outcome.raised}"
    else:
        message = f"{word} failed"
    rendered = Diagnostic("error", message, node.span, origin, "assert").render(code)
    return CellError("AssertionError", message, f"{rendered}\n  hint: {FAILED_RULE_HINT}")


def _inside(span: Span, outer: Span) -> bool:
    """True when `span` is a real position within `outer`."""
    return span.line > 0 and outer.start <= span.start and span.end <= outer.end


def _folded_traceback(err: BaseException) -> str:
    """An internal error's text: one line to read, then the Python traceback for the bug report."""
    frames = traceback.format_exception(type(err), err, err.__traceback__)
    return "\n".join([
        f"InternalError: {type(err).__name__}: {err}",
        "  this is a bug in soma-kernel, not in your program; the session is still usable",
        "  ┄┄ Python traceback (for the bug report) ┄┄",
        "".join(frames).rstrip(),
    ])
