"""Builtins that need the interpreter's context (state machines, the agent,
the clock, memory of the calling cell), with their arities and docs.

The pure builtins live in `runtime.builtins`; these are implemented by the
interpreter itself. The checker and the kernel's completion read both tables.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional


@dataclass(frozen=True)
class ContextBuiltin:
    """Name, arity range (max None = variadic), signature text and a one-line doc."""

    name: str
    min_args: int
    max_args: Optional[int]
    signature: str
    doc: str
    effect: bool = True


CONTEXT_BUILTINS: dict[str, ContextBuiltin] = {
    b.name: b
    for b in [
        ContextBuiltin("think", 1, 3, "think(prompt: String, system?: String, opts?: Map) -> String",
                       "Ask the model; mocked by `mock think`, soma.toml [agent] mock or SOMA_LLM_MOCK."),
        ContextBuiltin("think_json", 1, 3, "think_json(prompt: String, system?: String, opts?: Map) -> Map",
                       "Like think(), and the reply must be a JSON object."),
        ContextBuiltin("approve", 1, 1, "approve(action: String) -> Bool",
                       "Ask a human; scripted by `mock approve`, fails closed when nobody answers."),
        ContextBuiltin("transition", 2, 3, "transition(id, [from,] to) -> Map",
                       "Move a state-machine instance along a declared edge (guards checked)."),
        ContextBuiltin("get_status", 1, 1, "get_status(id) -> String",
                       "The current state of an instance (the initial state if it never moved)."),
        ContextBuiltin("has_state", 1, 1, "has_state(id) -> Bool", "True once the instance has transitioned.", False),
        ContextBuiltin("valid_transitions", 1, 1, "valid_transitions(id) -> List",
                       "The states an instance may move to next.", False),
        ContextBuiltin("set_budget", 1, 1, "set_budget(tokens: Int) -> Int",
                       "Cap the tokens think() may spend; resets tokens_used to 0."),
        ContextBuiltin("tokens_used", 0, 0, "tokens_used() -> Int", "Tokens spent since the last set_budget().", False),
        ContextBuiltin("tokens_remaining", 0, 0, "tokens_remaining() -> Int",
                       "Tokens left under the budget (-1 when unlimited).", False),
        ContextBuiltin("next_id", 0, 0, "next_id() -> Int", "A per-cell counter (rolled back with the invocation)."),
        ContextBuiltin("remember", 2, 2, "remember(key: String, value) -> ()", "Store a value in the cell's agent memory."),
        ContextBuiltin("recall", 1, 1, "recall(key: String) -> Any", "Read the cell's agent memory (() if absent)."),
        ContextBuiltin("delegate", 2, None, "delegate(cell: String, handler: String, args…) -> Any",
                       "Call another cell's handler by name."),
        ContextBuiltin("horde", 2, 3, "horde(Cell.handler, inputs: List, opts?: Map) -> String",
                       "Run the handler once per input (after the calling invocation commits); returns the id."),
        ContextBuiltin("horde_status", 1, 1, "horde_status(id: String) -> Map",
                       "{state, total, queued, running, done, failed, cancelled, tokens} of a horde.", False),
        ContextBuiltin("vote", 3, 3, "vote(Cell.handler, input, k: Int) -> Map",
                       "Call the handler k times with fresh conversations; the most printed result wins."),
        ContextBuiltin("trace", 0, 0, "trace() -> List", "The agent's trace: think, approval and transition records.", False),
        ContextBuiltin("clear_trace", 0, 0, "clear_trace() -> ()", "Empty the trace."),
        ContextBuiltin("clear_context", 0, 0, "clear_context() -> ()", "Forget the conversation with the model."),
        ContextBuiltin("now", 0, 0, "now() -> Int", "Seconds since the epoch (frozen by `mock now`).", False),
        ContextBuiltin("now_ms", 0, 0, "now_ms() -> Int", "Milliseconds since the epoch (frozen by `mock now`).", False),
        ContextBuiltin("today", 0, 0, "today() -> String", "Today's UTC date as YYYY-MM-DD (frozen by `mock now`).", False),
        ContextBuiltin("sleep", 1, 1, "sleep(ms: Int) -> ()", "Pause (a no-op under tests with a mocked clock)."),
    ]
}

EFFECT_BUILTINS = frozenset(name for name, b in CONTEXT_BUILTINS.items() if b.effect)

# Machine reads that also take a cell: `Cell.get_status(id)` reads Cell's machine
# (how to choose when several cells own one).
MACHINE_READS = ("get_status", "has_state", "valid_transitions")
