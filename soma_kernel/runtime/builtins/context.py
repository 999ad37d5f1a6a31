"""Builtins that need the running program: the agent (think, approve, the
budget, the trace), state machines, the calling cell's memory and counter,
hordes and the clock.

Each is registered with `needs_runtime=True` and is called as
`fn(call, *arguments)`, `call` being the `BuiltinCall` (runtime, calling
cell, call node) of that call site. They reach the runtime through `call.rt`
only, so this module imports nothing of the interpreter.
"""

from __future__ import annotations

import time

from ...core.diagnostics import SomaError
from ...syntax import ast
from ..horde import HORDE_OPTION_HELP
from ..values import display
from .registry import BuiltinCall, builtin

# Machine reads that also take a cell: `Cell.get_status(id)` reads Cell's machine
# (how to choose when several cells own one).
MACHINE_READS = ("get_status", "has_state", "valid_transitions")

_ABSENT = object()


def _cell_name(call: BuiltinCall):
    """The calling cell's name, or None at test or session level."""
    return call.cell.name if call.cell else None


def _own_cell(call: BuiltinCall):
    """The calling cell; at test level, the program's only cell."""
    if call.cell is not None:
        return call.cell
    cells = call.rt.cells
    if len(cells) == 1:
        return next(iter(cells.values()))
    raise SomaError("type", "this builtin needs a cell: call it from a handler", call.node.span)


# ------------------------------------------------------------ the agent

@builtin("agent", "think(prompt: String, system?: String, opts?: Map) -> String",
         "Ask the model; mocked by `mock think`, soma.toml [agent] mock or SOMA_LLM_MOCK.",
         needs_runtime=True, pure=False, min_args=1, max_args=3, usage="prompt, [system], [opts]")
def think(call, *args):
    """The agent's think() for the calling cell's conversation."""
    return call.rt.agent.think(list(args), _cell_name(call))


@builtin("agent", "think_json(prompt: String, system?: String, opts?: Map) -> Map",
         "Like think(), and the reply must be a JSON object.",
         needs_runtime=True, pure=False, min_args=1, max_args=3, usage="prompt, [system], [opts]")
def think_json(call, *args):
    """think() whose reply is parsed as a JSON object."""
    return call.rt.agent.think_json(list(args), _cell_name(call))


@builtin("agent", "approve(action: String) -> Bool",
         "Ask a human; scripted by `mock approve`, fails closed when nobody answers.", needs_runtime=True, pure=False)
def approve(call, action):
    """The human gate (scripted under test, else asked, else refused)."""
    return call.rt.agent.approve(action, call.rt.under_test)


@builtin("agent", "set_budget(tokens: Int) -> Int", "Cap the tokens think() may spend; resets tokens_used to 0.",
         needs_runtime=True, pure=False)
def set_budget(call, tokens):
    """Cap think()'s tokens from now on."""
    return call.rt.agent.set_budget(tokens)


@builtin("agent", "tokens_used() -> Int", "Tokens spent since the last set_budget().", needs_runtime=True)
def tokens_used(call):
    """Tokens think() spent since the last set_budget()."""
    return call.rt.agent.used


@builtin("agent", "tokens_remaining() -> Int", "Tokens left under the budget (-1 when unlimited).",
         needs_runtime=True)
def tokens_remaining(call):
    """Tokens left under the budget, -1 without one."""
    return call.rt.agent.remaining()


@builtin("agent", "trace() -> List", "The agent's trace: think, approval and transition records.", needs_runtime=True)
def trace(call):
    """The agent's trace records as Maps with their `_type`."""
    return [{"_type": kind, **fields} for kind, fields in call.rt.agent.trace]


@builtin("agent", "clear_trace() -> ()", "Empty the trace.", needs_runtime=True, pure=False)
def clear_trace(call):
    """Empty the agent's trace (undone if the statement fails)."""
    call.rt.agent.clear_trace()


@builtin("agent", "clear_context() -> ()",
         "Forget the conversation with the model (at top level: every agent's).", needs_runtime=True, pure=False)
def clear_context(call):
    """Forget the calling cell's conversation with the model; at top level, every agent's."""
    call.rt.agent.clear_context(_cell_name(call))


# ------------------------------------------------------------ state machines

@builtin("machine", "transition(id, [from,] to) -> Map",
         "Move a state-machine instance along a declared edge (guards checked).",
         needs_runtime=True, pure=False, min_args=2, max_args=3, usage="instance id, [from state,] target state")
def transition(call, *args):
    """Move an instance of the calling cell's machine (guards read no locals here)."""
    return call.rt.machines.transition(call.cell, list(args), {}, call.node)


@builtin("machine", "get_status(id) -> String",
         "The current state of an instance (the initial state if it never moved).", needs_runtime=True, pure=False)
def get_status(call, instance_id):
    """An instance's current state."""
    return call.rt.ask_instance(call.cell, call.node, instance_id, lambda m: m.status(instance_id))


@builtin("machine", "has_state(id) -> Bool", "True once the instance has transitioned.", needs_runtime=True)
def has_state(call, instance_id):
    """True once the instance has moved."""
    return call.rt.ask_instance(call.cell, call.node, instance_id, lambda m: m.has_state(instance_id))


@builtin("machine", "valid_transitions(id) -> List", "The states an instance may move to next.", needs_runtime=True)
def valid_transitions(call, instance_id):
    """The states an instance may move to next."""
    return call.rt.ask_instance(call.cell, call.node, instance_id, lambda m: m.valid_targets(instance_id))


# ------------------------------------------------------------ the cell's memory

@builtin("memory", "next_id() -> Int", "A per-cell counter (rolled back with the invocation).",
         needs_runtime=True, pure=False)
def next_id(call):
    """The calling cell's next counter value (journalled, so a failure rolls it back)."""
    state = _own_cell(call)
    state.counter += 1
    call.rt.journal.record(lambda: setattr(state, "counter", state.counter - 1))
    return state.counter


@builtin("memory", "remember(key: String, value) -> ()", "Store a value in the cell's agent memory.",
         needs_runtime=True, pure=False)
def remember(call, key, value):
    """Store a value in the cell's agent memory (journalled)."""
    state = _own_cell(call)
    key, memory = display(key), state.memory
    old = memory.get(key, _ABSENT)
    call.rt.journal.record(lambda: memory.pop(key, None) if old is _ABSENT else memory.__setitem__(key, old))
    memory[key] = value
    if state.on_remember is not None:
        state.on_remember(key)


@builtin("memory", "recall(key: String) -> Any", "Read the cell's agent memory (() if absent).",
         needs_runtime=True, pure=False)
def recall(call, key):
    """A value of the cell's agent memory, () when absent."""
    return _own_cell(call).memory.get(display(key))


@builtin("memory", "delegate(cell: String, handler: String, args…) -> Any", "Call another cell's handler by name.",
         needs_runtime=True, pure=False, min_args=2, max_args=None, usage="cell, handler, args…")
def delegate(call, cell, handler, *args):
    """Call `cell.handler(args…)` named by Strings."""
    target = ast.Call(display(handler), [], cell=display(cell), span=call.node.span)
    return call.rt.qualified_target(target, len(args))(list(args))


# ------------------------------------------------------------ hordes

@builtin("horde", "horde(Cell.handler, inputs: List, opts?: Map) -> String",
         "Run the handler once per input (after the calling invocation commits); returns the id.",
         needs_runtime=True, pure=False, min_args=2, max_args=3, usage="Cell.handler, inputs, opts?",
         options=HORDE_OPTION_HELP)
def horde(call, *args):
    """Queue a horde of the handler over the inputs; its id."""
    return call.rt.hordes.start(list(args), call.cell)


@builtin("horde", "horde_status(id: String) -> Map",
         "{state, total, queued, running, done, failed, cancelled, tokens} of a horde.", needs_runtime=True)
def horde_status(call, horde_id):
    """The counts of a horde by id."""
    return call.rt.hordes.status(horde_id)


@builtin("horde", "vote(Cell.handler, input, k: Int) -> Map",
         "Call the handler k times with fresh conversations; the most printed result wins.",
         needs_runtime=True, pure=False, usage="Cell.handler, input, k")
def vote(call, target, value, k):
    """k fresh calls of the handler on one input, tallied."""
    return call.rt.hordes.vote(target, value, k)


# ------------------------------------------------------------ the clock

def _now_ms(call: BuiltinCall) -> int:
    """The clock: `mock now` when scripted, else the system time."""
    frozen = call.rt.mocks.now_ms
    return frozen if frozen is not None else int(time.time() * 1000)


@builtin("clock", "now() -> Int", "Seconds since the epoch (frozen by `mock now`).", needs_runtime=True)
def now(call):
    """Seconds since the epoch."""
    return _now_ms(call) // 1000


@builtin("clock", "now_ms() -> Int", "Milliseconds since the epoch (frozen by `mock now`).", needs_runtime=True)
def now_ms(call):
    """Milliseconds since the epoch."""
    return _now_ms(call)


@builtin("clock", "today() -> String", "Today's UTC date as YYYY-MM-DD (frozen by `mock now`).", needs_runtime=True)
def today(call):
    """Today's UTC date, YYYY-MM-DD."""
    import datetime as _dt  # lazy: only today() needs it, and every command that checks a program imports this module
    moment = _dt.datetime.fromtimestamp(_now_ms(call) / 1000, tz=_dt.timezone.utc)
    return moment.strftime("%Y-%m-%d")


@builtin("clock", "sleep(ms: Int) -> ()", "Pause (a no-op under tests with a mocked clock).",
         needs_runtime=True, pure=False)
def sleep(call, ms):
    """Pause, or move a mocked clock forward."""
    mocks = call.rt.mocks
    if mocks.now_ms is not None:
        mocks.now_ms += int(ms)
    else:
        with call.rt.agent.waiting():
            time.sleep(max(int(ms), 0) / 1000)
