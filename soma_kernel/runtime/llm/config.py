"""Which model a cell talks to, and with which key.

The settings come from soma.toml — `[agent]` for every cell, `[models.NAME]`
for a cell declared `cell agent X [model: NAME]` (that table only: no
fall-back to `[agent]`; an unknown name means the defaults) — overridden by
the environment: `SOMA_LLM_URL`, `SOMA_LLM_MODEL`, `SOMA_LLM_RETRIES`,
`SOMA_LLM_TIMEOUT_MS`, `SOMA_LLM_RPM`, `SOMA_LLM_TPM`, `SOMA_LLM_CASSETTE`,
`SOMA_LLM_CASSETTE_MODE`. There is no provider variable.

The key, in order: `SOMA_LLM_KEY` (set but empty is an error); the table's
`key` after `${ENV}` expansion; the provider's own cloud variable
(`ANTHROPIC_API_KEY` / `OPENAI_API_KEY`) — but only when the request goes to
that provider's own host, so a cloud key never reaches another host (the
reference sends `ANTHROPIC_API_KEY` to OpenAI, and cloud keys to a local
Ollama); then, for a local endpoint (`provider = "ollama"` or a `url` that is
no cloud host), a placeholder that is not a secret.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Mapping, Optional
from urllib.parse import urlsplit

from .errors import llm_error

ANTHROPIC_URL = "https://api.anthropic.com/v1/messages"
OPENAI_URL = "https://api.openai.com/v1/chat/completions"
OLLAMA_URL = "http://localhost:11434/v1/chat/completions"
DEFAULT_MODELS = {"anthropic": "claude-sonnet-4-20250514", "ollama": "gemma3:12b", "openai": "gpt-4o-mini"}
CLOUD_KEYS = {"anthropic": ("api.anthropic.com", "ANTHROPIC_API_KEY"), "openai": ("api.openai.com", "OPENAI_API_KEY")}
DEFAULT_RETRIES = 3
DEFAULT_TIMEOUT_MS = 60_000
CASSETTE_MODES = ("once", "replay", "record", "new")
LOCAL_PLACEHOLDER = {"ollama": "ollama"}
NO_KEY_PLACEHOLDER = "no-key"


@dataclass(frozen=True)
class ModelSettings:
    """Everything one think() call needs to reach its model.

    `wire` is "anthropic" or "openai" (every other provider speaks the OpenAI
    format). `key` is None when there is none; `key_is_secret` is False for
    the placeholder a local endpoint gets.
    """

    provider: str
    model: str
    url: str
    key: Optional[str] = field(repr=False)
    key_is_secret: bool
    retries: int
    timeout_ms: int
    rpm: int
    tpm: int
    mock: Optional[str]
    cassette: Optional[str]
    cassette_mode: str
    key_problem: Optional[str] = None

    @property
    def wire(self) -> str:
        """The wire format: "anthropic" or "openai"."""
        return "anthropic" if self.provider == "anthropic" else "openai"

    @property
    def secrets(self) -> tuple[str, ...]:
        """The texts that must never be shown (the key, when it is one)."""
        return (self.key,) if self.key and self.key_is_secret else ()


def resolve(agent: Mapping, models: Mapping, model_name: Optional[str], environ: Mapping[str, str],
            project_dir: str = ".") -> ModelSettings:
    """The settings of a cell bound to `model_name` (None: `[agent]`) under `environ`."""
    table = dict(models.get(model_name, {})) if model_name else dict(agent)
    provider = str(table.get("provider", "") or "openai").lower()
    url = environ.get("SOMA_LLM_URL") or table.get("url") or default_url(provider)
    model = environ.get("SOMA_LLM_MODEL") or table.get("model") or DEFAULT_MODELS.get(provider, DEFAULT_MODELS["openai"])
    key, secret, problem = find_key(provider, url, table.get("key"), environ)
    cassette = environ.get("SOMA_LLM_CASSETTE") or table.get("cassette")
    if cassette and not os.path.isabs(cassette):
        cassette = os.path.join(project_dir, cassette)
    return ModelSettings(
        provider=provider, model=model, url=url, key=key, key_is_secret=secret,
        retries=_int_setting(environ, "SOMA_LLM_RETRIES", table.get("retries"), DEFAULT_RETRIES),
        timeout_ms=_int_setting(environ, "SOMA_LLM_TIMEOUT_MS", None, DEFAULT_TIMEOUT_MS),
        rpm=_int_setting(environ, "SOMA_LLM_RPM", table.get("rpm"), 0),
        tpm=_int_setting(environ, "SOMA_LLM_TPM", table.get("tpm"), 0),
        mock=table.get("mock"), cassette=cassette,
        cassette_mode=cassette_mode(environ.get("SOMA_LLM_CASSETTE_MODE")), key_problem=problem)


def default_url(provider: str) -> str:
    """The endpoint a provider name means when no `url` is written."""
    return {"anthropic": ANTHROPIC_URL, "ollama": OLLAMA_URL}.get(provider, OPENAI_URL)


def find_key(provider: str, url: str, written: Optional[str], environ: Mapping[str, str]):
    """(key, is_secret, problem) by the lookup order of the module docstring."""
    if "SOMA_LLM_KEY" in environ:
        value = environ["SOMA_LLM_KEY"]
        return (value, True, None) if value else (None, False, "think() API key empty.")
    expanded = expand_env(written or "", environ)
    if expanded:
        return expanded, True, None
    host = (urlsplit(url).hostname or "").lower()
    cloud = CLOUD_KEYS.get("anthropic" if provider == "anthropic" else "openai")
    if host == cloud[0]:
        value = environ.get(cloud[1])
        return (value, True, None) if value else (None, False, None)
    if provider == "ollama" or host not in {h for h, _ in CLOUD_KEYS.values()}:
        return LOCAL_PLACEHOLDER.get(provider, NO_KEY_PLACEHOLDER), False, None
    return None, False, None


def expand_env(text: str, environ: Mapping[str, str]) -> str:
    """`${NAME}` replaced by the variable's value ("" when unset); an unclosed `${` ends the expansion."""
    out, rest = [], text
    while "${" in rest:
        before, _, after = rest.partition("${")
        name, closed, tail = after.partition("}")
        if not closed:
            out.append(rest)
            return "".join(out)
        out.append(before + environ.get(name, ""))
        rest = tail
    out.append(rest)
    return "".join(out)


def cassette_mode(text: Optional[str]) -> str:
    """A cassette mode (`once` when not given), refused when unknown."""
    mode = (text or "once").strip().lower()
    if mode not in CASSETTE_MODES:
        raise llm_error(f"unknown cassette mode '{mode}' — the modes are {', '.join(CASSETTE_MODES)}")
    return mode


def _int_setting(environ: Mapping[str, str], variable: str, written, default: int) -> int:
    """An integer from the environment (beats soma.toml), the table, or the default."""
    text = environ.get(variable)
    if text is not None and text.strip():
        try:
            return max(int(text), 0)
        except ValueError:
            raise llm_error(f"{variable} must be a whole number, got '{text}'") from None
    return max(int(written), 0) if isinstance(written, int) and not isinstance(written, bool) else default
