"""The model's turns scripted by `mock think`, for the tool rounds.

`mock think tool lookup(city: "Oslo")` queues the model asking for the tool
`lookup` with the arguments {"city": "Oslo"}; the next `mock think "…"` is
its final text. A think() whose next scripted turn is a tool request runs
the rounds of `rounds.ModelClient` with a `ScriptedModel` in place of a
provider, so the offline path is the one a real model takes: the tools
offered and `tools_allowed`, the argument check, `tool error: …` texts, the
rollback of a failing tool, `max_rounds`, the trace and the budget. Each
round pops one turn; a scripted error is raised as `mock think error` is.
"""

from __future__ import annotations

from collections import deque
from itertools import count

from ..mocks import capped, scripted_error, tokens_of
from ..values import to_json
from .errors import no_model_error
from .providers import Provider, Reply, ToolCall

NO_TURN_LEFT = ("think(): the model's scripted turns ran out after a tool call — queue its next turn "
                "(`mock think \"final text\"`, or another `mock think tool …`)")


class ScriptedModel(Provider):
    """A provider whose replies are the queued `mock think` turns (reply, error or tool request)."""

    wire = "scripted"
    scripted = True

    def __init__(self, settings, queue: deque):
        super().__init__(settings)
        self.queue = queue
        self.ids = count(1)

    def answer(self, request: dict) -> Reply:
        """The next scripted turn as the reply to `request`, with the token counts the mocks charge."""
        if not self.queue:
            raise no_model_error(NO_TURN_LEFT)
        kind, entry, _ = self.queue.popleft()
        if kind == "error":
            raise scripted_error(entry)
        first = len(request["messages"]) == 1
        prompt_tokens = tokens_of(len(request["messages"][0]["content"]) + len(request["system"])) if first else 0
        if kind == "tool":
            name, arguments = entry
            call = ToolCall(f"mock_call_{next(self.ids)}", name, to_json(arguments))
            spent = tokens_of(len(call.name) + len(call.arguments) + len(call.id))
            return Reply(None, [call], "tool_calls", prompt_tokens + spent, spent, self.tool_turn(call))
        text = capped(entry, request["max_tokens"], "the scripted reply")
        spent = tokens_of(len(text))
        return Reply(text, [], "stop", prompt_tokens + spent, spent)

    @staticmethod
    def tool_turn(call: ToolCall) -> dict:
        """The assistant turn asking for `call`."""
        return {"role": "assistant", "tool_calls": [{"id": call.id, "name": call.name, "arguments": call.arguments}]}

    @staticmethod
    def result_turns(results: list[tuple[ToolCall, str]]) -> list[dict]:
        """The tool results sent back for the model's next turn."""
        return [{"role": "tool", "tool_call_id": call.id, "content": text} for call, text in results]
