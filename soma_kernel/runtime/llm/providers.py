"""The two wire formats, spoken through the providers' official SDKs.

A `request` is provider-neutral and is what a cassette stores: `{provider,
model, system, messages, tools, max_tokens, json}` (`messages` already in the
provider's own format: the conversation of one cell, tool turns included;
`tools` the neutral schemas of `schema`). A provider turns it into its body,
sends it with its SDK (imported on the first real call), and reads the JSON
reply into a `Reply`. Bodies are parsed here, not by the SDK, so that an
OpenAI-compatible server (Ollama, vLLM, llama.cpp, LM Studio) answering an
odd shape still gets a plain message.

Each SDK is built with `max_retries=0` (the retries are ours, `transport`),
the key in its header only, and its failures mapped to `ProviderFailure`,
whose text names the url actually requested, without credentials.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Optional
from urllib.parse import parse_qsl, urlsplit, urlunsplit

from .config import ModelSettings
from .errors import answer_error, llm_error
from .redact import redact, redact_data, redacted_prefix, shown_url, url_secrets
from .usage import checked_usage, usage_figure

RETRYABLE_STATUSES = (429, 500, 502, 503, 529)
NEITHER_TEXT_NOR_TOOL = ("llm: the provider's reply has neither text nor a tool call "
                         "(empty, null or an unknown content shape)")


@dataclass
class ToolCall:
    """One tool call the model asked for; `arguments` is JSON text."""

    id: str
    name: str
    arguments: str


@dataclass
class Reply:
    """One provider reply: text and/or tool calls, usage, and the assistant turn to keep."""

    text: Optional[str]
    calls: list[ToolCall] = field(default_factory=list)
    finish_reason: str = ""
    total_tokens: Optional[int] = None
    output_tokens: Optional[int] = None
    turn: dict = field(default_factory=dict)
    usage_problem: Optional[str] = None  # why the reported usage is not usable (then both figures are None)

    def to_record(self) -> dict:
        """The reply as plain JSON data (for cassettes)."""
        return asdict(self)

    def masked(self, secrets: tuple[str, ...]) -> "Reply":
        """This reply with every secret in its texts replaced by `***` (an endpoint may echo the key)."""
        if not any(secrets):
            return self
        data = redact_data(self.to_record(), secrets)
        return Reply(data["text"], [ToolCall(**call) for call in data["calls"]], data["finish_reason"],
                     self.total_tokens, self.output_tokens, data["turn"], data["usage_problem"])


class ProviderFailure(Exception):
    """A failed send: its plain text (no key), HTTP status, and whether to retry it."""

    def __init__(self, text: str, status: Optional[int] = None, retryable: bool = False, timeout: bool = False):
        super().__init__(text)
        self.text = text
        self.status = status
        self.retryable = retryable
        self.timeout = timeout


class Provider:
    """What both wire formats share: the endpoint, the secrets, the SDK client."""

    wire = ""
    path_suffix = ""
    scripted = False  # a ScriptedModel answers from the mock queue (`answer`), not over the network

    def __init__(self, settings: ModelSettings):
        self.settings = settings
        self.shown_url = shown_url(self.requested_url())
        self.secrets = tuple(settings.secrets) + tuple(url_secrets(settings.url))
        self._client = None

    def base_url_and_query(self) -> tuple[str, dict]:
        """The SDK's base_url (the endpoint without its path suffix) and the url's query parameters."""
        parts = urlsplit(self.settings.url)
        path = parts.path.rstrip("/")
        if path.endswith(self.path_suffix):
            path = path[: -len(self.path_suffix)]
        return urlunsplit((parts.scheme, parts.netloc, path, "", "")), dict(parse_qsl(parts.query))

    def requested_url(self) -> str:
        """The url the SDK posts to: the base url, the wire's path suffix, the url's query.

        A configured url whose path does not end with the suffix keeps its path and gets the suffix after it
        (`…/v1/nope` is requested as `…/v1/nope/chat/completions`), so messages name this one, not the setting.
        """
        base, _ = self.base_url_and_query()
        query = urlsplit(self.settings.url).query
        return base + self.path_suffix + (f"?{query}" if query else "")

    def client(self):
        """The SDK client, built on first use."""
        if self._client is None:
            self._client = self.make_client()
        return self._client

    def make_client(self):
        """Build the SDK client (subclasses)."""
        raise NotImplementedError

    def send(self, request: dict, timeout_s: float) -> dict:
        """POST the request; its JSON reply body, or ProviderFailure."""
        raw = self.post(self.body(request), timeout_s)
        try:
            data = json.loads(raw)
        except ValueError:
            snippet = redacted_prefix(raw, 60, self.secrets)
            raise answer_error(f"think() JSON error: the reply of {self.shown_url} is not JSON: "
                               f"{json.dumps(snippet, ensure_ascii=False)}") from None
        if not isinstance(data, dict):
            raise answer_error(f"think() JSON error: the reply of {self.shown_url} is not a JSON object")
        error = data.get("error")
        if isinstance(error, dict) and error.get("message"):
            raise answer_error(f"LLM error: {redact(str(error['message']), self.secrets)}")
        return data

    def post(self, body: dict, timeout_s: float) -> str:
        """Send `body` with the SDK; the raw reply text (subclasses)."""
        raise NotImplementedError

    def body(self, request: dict) -> dict:
        """The wire body of a neutral request (subclasses)."""
        raise NotImplementedError

    def failure(self, err: Exception, sdk, timeout_s: float) -> ProviderFailure:
        """An SDK exception as a ProviderFailure, by the SDK's own exception classes (`sdk` is its module)."""
        if isinstance(err, sdk.APIStatusError):
            message = redacted_prefix(_provider_message(err), 200, self.secrets) or "no message"
            return ProviderFailure(f"{self.shown_url}: status {err.status_code}: {message}", err.status_code,
                                   retryable=err.status_code in RETRYABLE_STATUSES)
        if isinstance(err, sdk.APITimeoutError):
            return ProviderFailure(f"{self.shown_url}: no answer within {round(timeout_s * 1000)} ms", timeout=True)
        if isinstance(err, sdk.APIConnectionError):
            cause = redact(str(err.__cause__ or err), self.secrets)
            return ProviderFailure(f"{self.shown_url}: cannot connect ({cause})", retryable=True)
        return ProviderFailure(f"{self.shown_url}: {redact(str(err), self.secrets)}")

    def user_turn(self, text: str) -> dict:
        """The user message of a prompt."""
        return {"role": "user", "content": text}

    def answer_turn(self, text: str) -> dict:
        """The assistant message of a final text reply."""
        return {"role": "assistant", "content": text}


class OpenAIProvider(Provider):
    """OpenAI Chat Completions (and every compatible server through `url`)."""

    wire = "openai"
    path_suffix = "/chat/completions"

    def make_client(self):
        """An `openai.OpenAI` client: our key, the endpoint, no SDK retries."""
        import openai  # lazy: the SDK is imported only when a real call first needs it

        base_url, query = self.base_url_and_query()
        return openai.OpenAI(api_key=self.settings.key, base_url=base_url, default_query=query or None,
                             max_retries=0)

    def body(self, request: dict) -> dict:
        """`{model, messages (system first), max_tokens, tools?, response_format?}`."""
        body = {"model": request["model"], "max_tokens": request["max_tokens"],
                "messages": [{"role": "system", "content": request["system"]}] + list(request["messages"])}
        if request["tools"]:
            body["tools"] = [{"type": "function", "function": tool} for tool in request["tools"]]
        if request.get("json"):
            body["response_format"] = {"type": "json_object"}
        return body

    def post(self, body: dict, timeout_s: float) -> str:
        """chat.completions.create through the SDK, the body read raw."""
        import openai  # lazy: see make_client

        try:
            raw = self.client().chat.completions.with_raw_response.create(**body, timeout=timeout_s)
        except openai.APIError as err:
            raise self.failure(err, openai, timeout_s) from None
        return raw.http_response.text

    def parse(self, data: dict) -> Reply:
        """`choices[0].message` → text, tool calls, finish reason; usage."""
        choices = data.get("choices")
        choice = choices[0] if isinstance(choices, list) and choices and isinstance(choices[0], dict) else {}
        message = choice.get("message") if isinstance(choice.get("message"), dict) else {}
        text = _joined_text(message.get("content"))
        calls = []
        for item in message.get("tool_calls") or []:
            if not isinstance(item, dict):
                continue
            function = item.get("function") if isinstance(item.get("function"), dict) else {}
            calls.append(ToolCall(str(item.get("id", "")), str(function.get("name", "")),
                                  function.get("arguments") or "{}"))
        usage, problem = _usage_object(data)
        total, output, problem = checked_usage(usage.get("total_tokens"), usage.get("completion_tokens"),
                                               "total_tokens", "completion_tokens") if problem is None \
            else (None, None, problem)
        turn = {"role": "assistant", "content": message.get("content")}
        if message.get("tool_calls"):
            turn["tool_calls"] = message["tool_calls"]
        return Reply(text, calls, str(choice.get("finish_reason") or ""), total, output, turn, problem)

    def result_turns(self, results: list[tuple[ToolCall, str]]) -> list[dict]:
        """One `{role: "tool", tool_call_id, content}` message per call."""
        return [{"role": "tool", "tool_call_id": call.id, "content": text} for call, text in results]


class AnthropicProvider(Provider):
    """Anthropic Messages."""

    wire = "anthropic"
    path_suffix = "/v1/messages"

    def make_client(self):
        """An `anthropic.Anthropic` client: our key (x-api-key), the endpoint, no SDK retries."""
        import anthropic  # lazy: the SDK is imported only when a real call first needs it

        base_url, query = self.base_url_and_query()
        return anthropic.Anthropic(api_key=self.settings.key, base_url=base_url, default_query=query or None,
                                   max_retries=0)

    def body(self, request: dict) -> dict:
        """`{model, messages, max_tokens, system, tools?}`."""
        body = {"model": request["model"], "max_tokens": request["max_tokens"], "system": request["system"],
                "messages": list(request["messages"])}
        if request["tools"]:
            body["tools"] = [{"name": t["name"], "description": t["description"], "input_schema": t["parameters"]}
                             for t in request["tools"]]
        return body

    def post(self, body: dict, timeout_s: float) -> str:
        """messages.create through the SDK, the body read raw."""
        import anthropic  # lazy: see make_client

        try:
            raw = self.client().messages.with_raw_response.create(**body, timeout=timeout_s)
        except anthropic.APIError as err:
            raise self.failure(err, anthropic, timeout_s) from None
        return raw.http_response.text

    def parse(self, data: dict) -> Reply:
        """`content` blocks → joined text and tool_use calls; stop_reason; usage."""
        blocks = data.get("content") if isinstance(data.get("content"), list) else []
        texts = [b.get("text") for b in blocks if isinstance(b, dict) and b.get("type") == "text"
                 and isinstance(b.get("text"), str)]
        calls = [ToolCall(str(b.get("id", "")), str(b.get("name", "")), json.dumps(b.get("input") or {}))
                 for b in blocks if isinstance(b, dict) and b.get("type") == "tool_use"]
        usage, problem = _usage_object(data)
        given, input_problem = usage_figure(usage.get("input_tokens"), "input_tokens")
        output, output_problem = usage_figure(usage.get("output_tokens"), "output_tokens")
        problem = problem or input_problem or output_problem
        if problem is not None:
            given = output = None
        total = None if given is None and output is None else (given or 0) + (output or 0)
        return Reply("".join(texts) if texts else None, calls, str(data.get("stop_reason") or ""), total,
                     output, {"role": "assistant", "content": blocks}, problem)

    def result_turns(self, results: list[tuple[ToolCall, str]]) -> list[dict]:
        """One user message carrying a `tool_result` block per call."""
        return [{"role": "user", "content": [{"type": "tool_result", "tool_use_id": call.id, "content": text}
                                             for call, text in results]}]


def provider_for(settings: ModelSettings) -> Provider:
    """The provider speaking `settings.wire`."""
    return AnthropicProvider(settings) if settings.wire == "anthropic" else OpenAIProvider(settings)


def _joined_text(content) -> Optional[str]:
    """A message's text: a string, or the `text` of its parts joined."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [p.get("text") for p in content if isinstance(p, dict) and isinstance(p.get("text"), str)]
        return "".join(parts) if parts else None
    return None


def _provider_message(err: Exception) -> str:
    """The provider's own words in an error reply (its `error.message`, else its body), uncut: the
    caller masks the secrets, then cuts."""
    body = getattr(err, "body", None)
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and inner.get("message"):
            return str(inner["message"])
        if isinstance(inner, str):
            return inner
    response = getattr(err, "response", None)
    return (getattr(response, "text", "") or str(err)).strip()


def _usage_object(data: dict) -> tuple[dict, Optional[str]]:
    """The reply's `usage` object ({} when absent), or why it is not one."""
    usage = data.get("usage")
    if usage is None:
        return {}, None
    if not isinstance(usage, dict):
        return {}, "the provider's usage is not a JSON object"
    return usage, None
