"""The agent builtins: `think()`, `approve()`, the token budget and the mocks.

Replies come, in this order, from the scripted queue (`mock think`), from
`SOMA_LLM_MOCK` or soma.toml `[agent] mock` / `[models.NAME] mock` (`echo`,
`fixed:TEXT`, `rules:FILE.json`), from a real model when one is reachable
(a key, a local endpoint, or a cassette that replays: `runtime.llm`, imported
on first use), or from the automatic echo mock, announced once on stderr
(under `soma-kernel run` think() then raises kind `llm` instead, as the
reference does outside tests).
`approve()` pops `mock approve`, then reads `SOMA_APPROVE`, then asks a
person (a terminal under `soma run`, the notebook's input box in the kernel),
and otherwise fails closed.
"""

from __future__ import annotations

import json
import os
from contextlib import contextmanager, nullcontext
from typing import Callable, Iterator, Optional

from ..core.diagnostics import SomaError
from ..core.files import read_text_bounded
from .mocks import NO_MODEL, Mocks, capped, request_bound, scripted_error, tokens_of
from .shown_text import shown_action
from .values import display, from_json

THINK_OPTIONS = ("max_tokens", "timeout", "timeout_ms", "max_rounds", "tools_allowed", "requires")
DEFAULT_SYSTEM = "You are a helpful AI agent. Be concise. Use tools when available."
AUTO_ECHO_NOTE = ("note: no LLM key configured — think() is mocked (echo: the reply is the prompt). "
                  "Script replies with `mock think \"…\"`, or set [agent] mock in soma.toml.")
NO_KEY_NOTE = ("note: think() has no LLM key — every call raises kind \"llm\". Set SOMA_LLM_KEY (or [agent] key, "
               "ANTHROPIC_API_KEY, OPENAI_API_KEY), or answer with a mock: [agent] mock = \"echo\" in soma.toml "
               "or SOMA_LLM_MOCK=echo.")
NO_KEY_ERROR = ("think() has no LLM key and no mock: set SOMA_LLM_KEY or [agent] key, or [agent] mock = \"echo\" "
                "in soma.toml")


class Agent:
    """Per-runtime agent state: mocks, the budget, the trace, the echo note."""

    def __init__(self, mock_mode: Optional[str], note: Callable[[str], None], project_dir: str = "."):
        self.mocks = Mocks()
        self.mock_mode = mock_mode
        self.note = note
        self.project_dir = project_dir
        self.budget: Optional[int] = None
        self.used = 0
        self.noted_echo = False
        self.echo_without_model = True  # False (`soma-kernel run`): with no mock and no model, think() raises
        self.trace: list = []
        self.ask: Optional[Callable[[str], bool]] = None  # a person: a terminal (`soma run`) or the notebook
        self.approval_remedy: Optional[str] = None  # how to answer approve() where `mock approve` does not exist
        self.host = None            # the Runtime (tools, journal, cell declarations)
        self.project = None         # the soma.toml (ProjectConfig) for [agent] / [models.NAME]
        self.tool_ceiling: Optional[int] = None  # what a running tool's set_budget may not exceed
        self.horde_budget = None    # the running horde's budget_tokens (runtime.horde.HordeBudget), if any
        self.caller_budget = None   # while a horde runs: what it may spend of its caller's set_budget() (a HordeBudget)
        self._models = None         # runtime.llm.rounds.ModelClient, made on the first real call
        self.unread_skills: set[str] = set()  # skill files already noted as unreadable

    # ------------------------------------------------------------ budget

    def set_budget(self, tokens) -> int:
        """Cap the tokens think() may spend and reset the count."""
        if type(tokens) is not int or tokens < 0:
            raise SomaError("type", f"set_budget() needs a non-negative Int, got {display(tokens)}")
        if self.tool_ceiling is not None:
            tokens = min(tokens, self.tool_ceiling)
        self.record_undo(self.budget_restorer(self.budget, self.used))
        self.budget = tokens
        self.used = 0
        return tokens

    def budget_restorer(self, budget: Optional[int], used: int) -> Callable[[], None]:
        """How to undo a set_budget that found `budget` and `used`: the old cap comes back,
        and the tokens spent since are added to the old count (spent is spent)."""
        def restore():
            self.budget = budget
            self.used = used + self.used
        return restore

    def remaining(self) -> int:
        """Tokens left (-1 when there is no budget)."""
        if self.budget is None:
            return -1
        return max(self.budget - self.used, 0)

    def reset_budget(self) -> None:
        """No budget (each `soma test` rule starts so, and a session after %reset)."""
        self.budget = None
        self.used = 0

    @contextmanager
    def reservation(self, request_bytes: int, messages: int, max_tokens: int) -> Iterator[None]:
        """For the with-block (one model request), reserve its upper bound on the running
        horde's budget_tokens and on what its caller's budget has left (refused with kind
        `budget`), then give the reservations back and count the tokens the block spent
        on both. Outside a horde it does nothing."""
        budgets = [budget for budget in (self.horde_budget, self.caller_budget) if budget is not None]
        if not budgets:
            yield
            return
        reserved = request_bound(request_bytes, messages, max_tokens)

        def waits() -> bool:  # concurrent tasks' requests are out
            return any(budget.waits_for_others(reserved) for budget in budgets)

        while self.host is not None and waits():
            if not self.host.gate.wait_until(lambda: not waits()):
                break
        held = []
        try:
            for budget in budgets:
                budget.reserve(reserved)
                held.append(budget)
        except SomaError:
            for budget in held:
                budget.settle(reserved, 0)
            raise
        before = self.used
        try:
            yield
        finally:
            for budget in budgets:
                budget.settle(reserved, self.used - before)
            if self.host is not None:
                self.host.gate.notify()

    # ------------------------------------------------------------ what a failed statement keeps

    def trace_write(self, kind: str, fields: dict) -> None:
        """A trace record of a write (a Transition): it is undone with the statement or
        `try` block that made the write. Think, ToolCall and Approval records are
        appended plainly: a model call or a person's answer is an external effect,
        kept (with its tokens) when the statement fails."""
        record = (kind, fields)
        trace = self.trace
        trace.append(record)
        self.record_undo(lambda: _remove_record(trace, record))

    def clear_trace(self) -> None:
        """clear_trace(): empty the trace (the records come back if the statement fails)."""
        trace, cleared = self.trace, list(self.trace)
        trace.clear()
        self.record_undo(lambda: trace.__setitem__(slice(0, 0), cleared))

    # ------------------------------------------------------------ think

    def think(self, args: list, cell_name: Optional[str], json_mode: bool = False) -> str:
        """Answer one think() call from the mocks or a real model, charging the budget."""
        prompt, system, options = split_think_args(args)
        max_tokens = think_max_tokens(options)
        self.check_budget(prompt, system)
        if self.mocks.think and self.mocks.think[0][0] == "tool":  # a scripted model: the same rounds (llm.rounds)
            return self.scripted_tool_rounds(prompt, system, options, max_tokens, cell_name, json_mode)
        if not self.mocks.think:
            cell_options = self.cell_options(cell_name)
            mode = os.environ.get("SOMA_LLM_MOCK") or self.toml_mock(cell_options)
            settings = None if mode else self.reachable_model(cell_options)
            if settings is not None:  # each request reserves on a horde budget (llm.rounds)
                return self.model_think(prompt, system, options, max_tokens, cell_name, settings, json_mode)
        request_bytes = len(prompt.encode()) + len((system or "").encode())
        with self.reservation(request_bytes, 2 if system else 1, max_tokens):
            reply = self.mocked_reply(prompt, max_tokens, cell_name)
            spent = self.charge(prompt, system, reply, max_tokens)
        self.trace_think(1, prompt, system if system is not None else self.system_prompt(cell_name), reply,
                         spent, "stop")
        return reply

    def trace_think(self, iteration: int, prompt: str, system: str, reply: str, tokens: int,
                    finish_reason: str) -> None:
        """The Think record of one model round — the same fields on every path (a mock, the scripted
        tool rounds, a real model): iteration, prompt and system (`(cont)` and "" after the first
        round), reply, its tokens, tokens_used() after it, and why the model stopped."""
        self.trace.append(("Think", {"iteration": iteration, "prompt": prompt, "system": system, "reply": reply,
                                     "tokens": tokens, "total_tokens": self.used, "finish_reason": finish_reason}))

    def mocked_reply(self, prompt: str, max_tokens: int, cell_name: Optional[str]) -> str:
        """The next scripted reply (a scripted error raises), else the mock mode's."""
        scripted = self.mocks.think.popleft() if self.mocks.think else None
        if scripted is not None and scripted[0] == "error":
            raise scripted_error(scripted[1])
        if scripted is not None:
            return capped(scripted[1], max_tokens, "the scripted reply")
        mode = os.environ.get("SOMA_LLM_MOCK") or self.toml_mock(self.cell_options(cell_name))
        return self.unscripted_reply(prompt, max_tokens, cell_name, mode)

    def unscripted_reply(self, prompt: str, max_tokens: int, cell_name: Optional[str], mode: Optional[str]) -> str:
        """The reply of the mock mode `mode`. With none set and no model reachable: echo, announced
        once (tests, notebooks), or — outside them (`echo_without_model` false) — kind `llm`,
        announced once, as the reference does outside tests (§8.2)."""
        if mode is None:
            if not self.noted_echo:
                self.noted_echo = True
                self.note(AUTO_ECHO_NOTE if self.echo_without_model else NO_KEY_NOTE)
            if not self.echo_without_model:
                raise SomaError("llm", NO_KEY_ERROR, missing=NO_MODEL)
            mode = "echo"
        if mode == "echo":
            return prompt[: max_tokens * 4]
        if mode.startswith("fixed:"):
            return capped(mode[len("fixed:"):], max_tokens, "the fixed mock reply")
        if mode.startswith("rules:"):
            return self.rules_reply(mode[len("rules:"):], prompt, max_tokens, cell_name)
        raise SomaError("config", f"unknown LLM mock mode '{mode}' — use echo, fixed:TEXT or rules:FILE.json",
                        catchable=False)

    def rules_reply(self, path: str, prompt: str, max_tokens: int, cell_name: Optional[str]) -> str:
        """`rules:FILE.json`: the first rule whose `match` is in the prompt."""
        full = path if os.path.isabs(path) else os.path.join(self.project_dir, path)
        try:
            rules = json.loads(read_text_bounded(full))
        except (OSError, ValueError) as err:
            reason = err.strerror if isinstance(err, OSError) and err.strerror else err
            raise SomaError("config", f"cannot read mock rules {path}: {reason}", catchable=False)
        for rule in rules if isinstance(rules, list) else []:
            if rule.get("match", "") in prompt and rule.get("cell", cell_name) == cell_name:
                reply = rule.get("reply", "")
                text = reply if isinstance(reply, str) else json.dumps(reply)
                return capped(text, max_tokens, "the rules reply")
        return prompt[: max_tokens * 4]

    def check_budget(self, prompt: str, system: Optional[str]) -> None:
        """Refuse a call the budget cannot pay for."""
        if self.budget is None:
            return
        if self.used >= self.budget:
            raise SomaError("budget", f"token budget exhausted: used {self.used}/{self.budget}")
        prompt_tokens = tokens_of(len(prompt) + len(system or ""))
        left = self.budget - self.used
        if prompt_tokens > left:
            raise SomaError("budget", f"token budget exhausted: the prompt alone is ~{prompt_tokens} tokens, "
                            f"{left} of {self.budget} are left — shorten it or raise set_budget()")

    def charge(self, prompt: str, system: Optional[str], reply: str, max_tokens: int) -> int:
        """Add a mocked call's tokens to tokens_used; the tokens added."""
        spent = max(tokens_of(len(prompt) + len(system or "")) + min(tokens_of(len(reply)), max_tokens), 1)
        self.used += spent
        return spent

    def think_json(self, args: list, cell_name: Optional[str]):
        """think() whose reply must be a JSON object (a ```json fence or prose around it is tolerated)."""
        reply = self.think(args, cell_name, json_mode=True)
        start, end = reply.find("{"), reply.rfind("}")
        if start < 0 or end < start:
            raise SomaError("json", f"think_json(): the reply is not a JSON object: {reply[:80]}")
        value = from_json(reply[start:end + 1])
        if not isinstance(value, dict):
            raise SomaError("json", "think_json(): the reply is not a JSON object")
        return value

    # ------------------------------------------------------------ real models

    def cell_options(self, cell_name: Optional[str]) -> dict:
        """The `[model: NAME, skill: "FILE"]` options of the calling cell ({} outside one)."""
        decl = self.host.cell_decls.get(cell_name) if self.host is not None and cell_name else None
        return dict(getattr(decl, "options", None) or {})

    def toml_mock(self, cell_options: dict) -> Optional[str]:
        """`[agent] mock`, or `[models.NAME] mock` for a cell bound to a named model."""
        name = cell_options.get("model")
        if name is None:
            return self.mock_mode
        models = self.project.models if self.project is not None else {}
        return (models.get(name) or {}).get("mock")

    @property
    def models(self):
        """The program's ModelClient (conversations, SDK clients, cassettes), made on first use."""
        if self._models is None:
            from .llm.rounds import ModelClient  # lazy: only programs that reach a model load the llm package

            self._models = ModelClient(self.note)
        return self._models

    def model_settings(self, cell_options: dict):
        """The ModelSettings of the cell's model ([agent] or [models.NAME], and the environment)."""
        from .llm.config import resolve  # lazy: see `models`

        project = self.project
        on_disk = project is not None and os.path.isfile(project.path)
        folder = os.path.dirname(os.path.abspath(project.path)) if on_disk else self.project_dir
        return resolve(project.agent if project else {}, project.models if project else {},
                       cell_options.get("model"), os.environ, folder)

    def reachable_model(self, cell_options: dict):
        """The ModelSettings of the cell's model when a call can reach it (a key or a replaying cassette), else None."""
        settings = self.model_settings(cell_options)
        if settings.problem:  # worded as llm.errors words a `think()` text: shown as it is
            raise SomaError("llm", settings.problem, text=settings.problem)
        if settings.key is None and not self.models.replays(settings):
            return None
        return settings

    def model_think(self, prompt: str, system: Optional[str], options: dict, max_tokens: int,
                    cell_name: Optional[str], settings, json_mode: bool, scripted=None) -> str:
        """One think() answered by a real model, tool rounds included (by `scripted`, a ScriptedModel, if given)."""
        from .llm.rounds import ThinkCall  # lazy: see `models`

        decl = self.host.cell_decls.get(cell_name) if self.host is not None and cell_name else None
        tools = list(decl.face.tools) if decl is not None and decl.face is not None else []
        call = ThinkCall(prompt, system if system is not None else self.system_prompt(cell_name), max_tokens,
                         settings, cell_name, tools, think_tools_allowed(options), think_int_option(options, "max_rounds", 10),
                         think_timeout(options), json_mode)
        return self.models.think(self, call, scripted)

    def scripted_tool_rounds(self, prompt: str, system: Optional[str], options: dict, max_tokens: int,
                             cell_name: Optional[str], json_mode: bool) -> str:
        """think() when the next `mock think` asks for a tool: the tool rounds of a real model, each of the
        model's turns taken from the queue (`mock think tool …`, then the final `mock think "…"`)."""
        from .llm.scripted import ScriptedModel  # lazy: see `models`

        settings = self.model_settings(self.cell_options(cell_name))
        return self.model_think(prompt, system, options, max_tokens, cell_name, settings, json_mode,
                                ScriptedModel(settings, self.mocks.think))

    def system_prompt(self, cell_name: Optional[str]) -> str:
        """The cell's `skill:` file text (when readable), else the default system prompt
        (noted once per file on stderr: a missing, unreadable or too large skill file)."""
        skill = self.cell_options(cell_name).get("skill")
        if skill:
            path = skill if os.path.isabs(skill) else os.path.join(self.project_dir, skill)
            try:
                return read_text_bounded(path)
            except (OSError, UnicodeDecodeError) as err:
                if path not in self.unread_skills:
                    self.unread_skills.add(path)
                    reason = err.strerror if isinstance(err, OSError) and err.strerror else err
                    self.note(f"[agent] skill file {skill}: {reason} — the default system prompt is used")
        return DEFAULT_SYSTEM

    def waiting(self):
        """Around a blocking wait (a model request, a pause): other horde workers run meanwhile
        (runtime.workers); a no-op outside a worker."""
        return self.host.gate.outside() if self.host is not None else nullcontext()

    def record_undo(self, undo: Callable[[], None]) -> None:
        """Undo `undo` with the running statement if it fails (no-op outside a runtime)."""
        if self.host is not None:
            self.host.journal.record(undo)

    def clear_context(self, cell_name: Optional[str]) -> None:
        """clear_context(): forget the calling cell's conversation — called at top level (a
        notebook line, a test rule: `cell_name` None), every agent's, since no cell is calling.
        The conversations come back if the statement fails."""
        if self._models is None:
            return
        conversations = self._models.conversations
        names = list(conversations) if cell_name is None else [cell_name]
        cleared = {name: conversations.pop(name) for name in names if name in conversations}
        if cleared:
            self.record_undo(lambda: conversations.update(cleared))

    def forget_conversations(self) -> None:
        """Forget every cell's conversation (a full reset)."""
        if self._models is not None:
            self._models.conversations.clear()

    def conversation(self, cell_name: Optional[str]) -> Optional[list]:
        """The cell's conversation with a real model (None when it has none)."""
        return self._models.conversations.get(cell_name) if self._models is not None else None

    def set_conversation(self, cell_name: Optional[str], messages: Optional[list]) -> None:
        """Make `messages` the cell's conversation (None: it has none)."""
        if messages is None:
            self.models.clear_context(cell_name)
        else:
            self.models.conversations[cell_name] = messages

    # ------------------------------------------------------------ approve

    def approve(self, action, under_test: bool) -> bool:
        """A human's yes/no: scripted, SOMA_APPROVE, or fail closed."""
        text = display(action)
        shown = shown_action(text)
        if self.mocks.approve:
            answer = self.mocks.approve.popleft().value
            self.trace.append(("Approval", {"action": text, "approved": answer}))
            return answer
        policy = os.environ.get("SOMA_APPROVE", "")
        if policy in ("always", "never"):
            answer = policy == "always"
            if answer:
                self.note(f"[agent] approval requested: {shown} — approved by SOMA_APPROVE=always")
            return answer
        if self.ask is not None and not under_test:
            with self.host.gate.asking() if self.host is not None else nullcontext():
                answer = self.ask(shown)
            self.trace.append(("Approval", {"action": text, "approved": answer}))
            return answer
        how = ("script it in the test: `mock approve true` / `mock approve false` before the call"
               if under_test else self.approval_remedy or "script it with `mock approve true` / "
               "`mock approve false`, or set SOMA_APPROVE=always|never")
        raise SomaError("approval_required", f"approve(\"{shown}\") has no one to answer it — {how}")


def split_think_args(args: list):
    """(prompt, system, options) from think()'s 1-3 arguments (the registry checked how many)."""
    prompt = display(args[0])
    rest = list(args[1:])
    options = rest.pop() if rest and isinstance(rest[-1], dict) else {}
    if rest and len(rest) > 1:
        raise SomaError("type", "think(): the options Map must be the last argument")
    system = display(rest[0]) if rest else None
    for key in options:
        if key not in THINK_OPTIONS:
            raise SomaError("type", f"think(): unknown option '{key}' — the options are max_tokens, "
                            "timeout (ms), max_rounds, tools_allowed, requires")
    return prompt, system, options


def think_max_tokens(options: dict) -> int:
    """The call's max_tokens (2048 when not given)."""
    value = options.get("max_tokens", 2048)
    if type(value) is not int or value <= 0:
        raise SomaError("type", f"think(): max_tokens must be a positive Int, got {display(value)}")
    return value


def think_int_option(options: dict, name: str, default: int) -> int:
    """A positive Int option of think() (`default` when not given)."""
    value = options.get(name, default)
    if type(value) is not int or value <= 0:
        raise SomaError("type", f"think(): {name} must be a positive Int, got {display(value)}")
    return value


def think_timeout(options: dict) -> Optional[int]:
    """The call's `timeout` / `timeout_ms` option in ms (None when not given)."""
    for name in ("timeout", "timeout_ms"):
        if name in options:
            return think_int_option(options, name, 0)
    return None


def think_tools_allowed(options: dict) -> Optional[list[str]]:
    """The `tools_allowed` names (None: every tool is offered)."""
    if "tools_allowed" not in options:
        return None
    value = options["tools_allowed"]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise SomaError("type", f"think(): tools_allowed must be a List of tool names, got {display(value)}")
    return list(value)


def _remove_record(trace: list, record: tuple) -> None:
    """Take `record` itself (not an equal one) out of `trace`, if it is still there."""
    for index in range(len(trace) - 1, -1, -1):
        if trace[index] is record:
            del trace[index]
            return
