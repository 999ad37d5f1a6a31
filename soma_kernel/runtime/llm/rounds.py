"""One think() call against a real model: the tool-round loop.

Each round: check the budget (the first round's check is the agent's own),
send the cell's conversation, charge the tokens, record a Think step, check
the max_tokens cap. Tool calls append the assistant turn as the provider
sent it, run each call in order (`tools`), append the results and go round
again; a non-empty text ends the call. A cell without tools gets one round,
one with tools `max_rounds` (1–10, default 10).

`ModelClient` keeps what outlives a call: one conversation per agent cell,
the SDK clients, the rate limiter, the open cassettes. A call that fails —
or a statement that fails after it — leaves the conversation as it was.
"""

from __future__ import annotations

import json
import math
import os
import time
from dataclasses import dataclass, field
from typing import Callable, Optional

from ...core.diagnostics import SomaError
from ...syntax import ast
from ..mocks import request_bound
from .cassette import Cassette
from .config import ModelSettings
from .errors import ProviderAnswerError, llm_error, no_model_error
from .providers import NEITHER_TEXT_NOR_TOOL, Provider, Reply, provider_for
from .redact import redact
from .schema import offered_tools
from .tools import run_tool_call
from .transport import RateLimiter, request_tokens, send_with_retries
from .usage import charged_tokens

MAX_ROUNDS = 10


@dataclass
class ThinkCall:
    """What one think() asks: the prompt, the system text, the options, the cell's tools."""

    prompt: str
    system: str
    max_tokens: int
    settings: ModelSettings
    cell_name: Optional[str] = None
    tools: list[ast.Tool] = field(default_factory=list)
    allowed: Optional[list[str]] = None
    max_rounds: int = MAX_ROUNDS
    timeout_ms: Optional[int] = None
    json_mode: bool = False


class ConversationUndo:
    """Undo one think()'s growth of a conversation. It names the conversation, so a horde
    worker can tell this entry (its own conversation's) from a write to shared state."""

    __slots__ = ("conversation", "mark")

    def __init__(self, conversation: list, mark: int):
        self.conversation = conversation
        self.mark = mark

    def __call__(self) -> None:
        del self.conversation[self.mark:]


class ModelClient:
    """The program's link to its models (created by the agent on the first real call)."""

    def __init__(self, note: Callable[[str], None]):
        self.note = note
        self.conversations: dict[Optional[str], list] = {}
        self.providers: dict[ModelSettings, Provider] = {}
        self.limiters: dict[tuple[int, int], RateLimiter] = {}
        self.cassettes: dict[tuple[str, str], Cassette] = {}
        self.cassette_choice = None  # None: the settings' cassette; False: none; (path, mode): %cassette

    # ------------------------------------------------------------ the loop

    def think(self, agent, call: ThinkCall, scripted: Optional[Provider] = None) -> str:
        """The model's final text for `call`, after any tool rounds.

        With `scripted` (a ScriptedModel) the model's turns come from the mock
        queue; the rounds are the same, and the exchange is no model's memory:
        it is kept in a conversation of its own, as a scripted reply is.
        """
        provider = scripted or self.provider(call.settings)
        conversation = [] if scripted is not None else self.conversations.setdefault(call.cell_name, [])
        mark = len(conversation)
        agent.record_undo(ConversationUndo(conversation, mark))
        started = time.monotonic()
        try:
            conversation.append(provider.user_turn(call.prompt))
            return self._rounds(agent, call, provider, conversation, started)
        except BaseException:
            del conversation[mark:]
            raise

    def _rounds(self, agent, call: ThinkCall, provider: Provider, conversation: list, started: float) -> str:
        """Run rounds until a text reply; raise when there is none within max_rounds."""
        rounds = max(1, min(call.max_rounds, MAX_ROUNDS)) if call.tools else 1
        tools = offered_tools(call.tools, call.allowed)
        for iteration in range(1, rounds + 1):
            if iteration > 1 and agent.budget is not None and agent.used >= agent.budget:
                raise SomaError("budget", f"token budget exhausted: {agent.used}/{agent.budget}")
            if call.timeout_ms is not None and (time.monotonic() - started) * 1000 > call.timeout_ms:
                raise llm_error(f"think() timed out after {call.timeout_ms}ms")
            request = {"provider": provider.wire, "model": call.settings.model, "system": call.system,
                       "messages": json.loads(json.dumps(conversation)), "tools": tools,
                       "max_tokens": call.max_tokens, "json": call.json_mode}
            sent = json.dumps({"system": call.system, "messages": request["messages"], "tools": tools})
            sent_bytes, messages = len(sent.encode()), len(request["messages"]) + 1
            with agent.reservation(sent_bytes, messages, call.max_tokens):
                reply = self.exchange(agent, request, call, provider)
                self._charge(agent, call, reply, iteration, request_bound(sent_bytes, messages, call.max_tokens))
            if reply.calls:
                if not call.tools:
                    break
                conversation.append(reply.turn)
                results = [(c, self._run_tool(agent, call, c)) for c in reply.calls]
                conversation.extend(provider.result_turns(results))
                continue
            if reply.text:
                conversation.append(provider.answer_turn(reply.text))
                return reply.text
            raise llm_error(NEITHER_TEXT_NOR_TOOL)
        if not call.tools:
            raise llm_error("think(): the model answered with a tool call, but this cell declares no tools "
                            "(face { tool … }) — the reply has no text")
        raise llm_error(f"think() exceeded max rounds ({rounds}) of tool calls — raise "
                        "map(\"max_rounds\", N) (≤ 10) or give the model fewer steps")

    def _charge(self, agent, call: ThinkCall, reply: Reply, iteration: int, bound: int) -> None:
        """Charge one round's tokens (`usage`: a usage figure that is no count costs the request's
        upper `bound`), trace it, and refuse a reply over the max_tokens cap."""
        reply_chars = len(reply.text or "") + sum(len(c.arguments) + len(c.name) + len(c.id) for c in reply.calls)
        measured = math.ceil(reply_chars / 4)
        reported = reply.output_tokens or 0
        prompt_chars = len(call.prompt) + len(call.system) if iteration == 1 else 0
        spent = charged_tokens(reply.total_tokens, reply.output_tokens, reply.usage_problem, prompt_chars,
                               reply_chars, bound)
        if reply.usage_problem is not None:
            self.note(f"[agent] warning: {reply.usage_problem} — this exchange is charged its upper bound, "
                      f"{spent} tokens")
        agent.used += spent
        agent.trace_think(iteration, call.prompt if iteration == 1 else "(cont)", call.system if iteration == 1 else "",
                          reply.text or "", spent, reply.finish_reason)
        largest = max(measured, reported)
        if largest > call.max_tokens:
            raise llm_error(f"llm: the provider returned {largest} reply tokens for max_tokens "
                            f"{call.max_tokens} — it ignored the cap the cost bound relies on")

    def _run_tool(self, agent, call: ThinkCall, tool_call) -> str:
        """Run one tool call with its own empty conversation and a budget it may only lower."""
        saved = self.conversations.get(call.cell_name)
        self.conversations[call.cell_name] = []
        agent.tool_ceiling = agent.remaining() if agent.budget is not None else None
        try:
            result = run_tool_call(agent.host, call.cell_name, tool_call, call.tools, call.allowed)
        finally:
            agent.tool_ceiling = None
            self.conversations[call.cell_name] = saved
        agent.trace.append(("ToolCall", {"name": tool_call.name, "args": tool_call.arguments, "result": result}))
        return result

    # ------------------------------------------------------------ one exchange

    def exchange(self, agent, request: dict, call: ThinkCall, provider: Provider) -> Reply:
        """The reply to one request: from the script, the cassette, else from the provider (and recorded)."""
        if provider.scripted:
            return provider.answer(request)
        cassette = self.cassette(call.settings, provider)
        if cassette is not None:
            recorded = cassette.lookup(request)
            if recorded is not None:
                return recorded
            if not cassette.records:
                raise cassette.miss(request)
        if call.settings.key is None:
            raise no_model_error(f"think(): no key for {provider.shown_url} — set SOMA_LLM_KEY, or "
                            "key = \"${ENV_VAR}\" in soma.toml")
        settings = call.settings
        limiter = self.limiter(settings)
        size = len(json.dumps(provider.body(request)).encode("utf-8")) if limiter is not None else 0
        timeout_ms = call.timeout_ms or settings.timeout_ms
        provider.client()  # built while this thread holds the runtime, used by every worker
        try:
            with agent.waiting():  # other horde workers run while this request is out
                if limiter is not None:
                    limiter.wait(request_tokens(size, call.max_tokens, settings.tpm))
                data = send_with_retries(lambda left: provider.send(request, left), settings.retries, timeout_ms,
                                         lambda text: self.note(redact(text, provider.secrets)),
                                         on_retry=lambda failure, delay: self._after_retryable(limiter, failure, delay))
        except ProviderAnswerError as err:  # the provider answered with an error: a replay gives the same
            if cassette is not None:
                cassette.record_error(request, err.text)
            raise
        reply = provider.parse(data).masked(provider.secrets)
        if cassette is not None:
            cassette.record(request, reply)
        return reply

    @staticmethod
    def _after_retryable(limiter: Optional[RateLimiter], failure, delay: float) -> None:
        """A 429 pauses every later send of the program (when rpm/tpm are set)."""
        if limiter is not None and failure.status == 429:
            limiter.pause(delay)

    # ------------------------------------------------------------ shared pieces

    def provider(self, settings: ModelSettings) -> Provider:
        """The provider (and its SDK client) for these settings, made once."""
        found = self.providers.get(settings)
        if found is None:
            found = self.providers[settings] = provider_for(settings)
        return found

    def limiter(self, settings: ModelSettings) -> Optional[RateLimiter]:
        """The rate limiter of settings with rpm/tpm (None when both are 0)."""
        if not settings.rpm and not settings.tpm:
            return None
        key = (settings.rpm, settings.tpm)
        if key not in self.limiters:
            self.limiters[key] = RateLimiter(settings.rpm, settings.tpm)
        return self.limiters[key]

    def cassette_target(self, settings: ModelSettings) -> Optional[tuple[str, str]]:
        """(path, mode) of the cassette in use: `%cassette`'s choice, else the settings'."""
        if self.cassette_choice is False:
            return None
        if self.cassette_choice is not None:
            return self.cassette_choice
        return (settings.cassette, settings.cassette_mode) if settings.cassette else None

    def cassette(self, settings: ModelSettings, provider: Provider) -> Optional[Cassette]:
        """The open cassette for these settings, if any."""
        target = self.cassette_target(settings)
        if target is None:
            return None
        if target not in self.cassettes:
            self.cassettes[target] = Cassette(target[0], target[1])
        cassette = self.cassettes[target]
        cassette.mask(provider.secrets)
        return cassette

    def replays(self, settings: ModelSettings) -> bool:
        """True when a cassette would answer without a key (so think() needs no key)."""
        target = self.cassette_target(settings)
        if target is None:
            return False
        path, mode = target
        return mode in ("replay", "new") or (mode == "once" and (os.path.exists(path) or target in self.cassettes))

    def clear_context(self, cell_name: Optional[str]) -> None:
        """Forget the conversation of one cell."""
        self.conversations.pop(cell_name, None)
