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

A cloud variable is its provider's key wherever it is named: a `key` that
says `${ANTHROPIC_API_KEY}` or `${OPENAI_API_KEY}` is refused (a `problem`,
raised by the first think()) unless the url is `https://` that provider's own
host. `SOMA_LLM_KEY` and every other variable go to the configured url. A url
with a `user:password@` part is refused as well: the HTTP client would send it
as Basic authentication in place of the key, so the secret belongs in `key`.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Mapping, Optional
from urllib.parse import urlsplit

from .errors import llm_error
from .redact import shown_url

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
    problem: Optional[str] = None  # why no call may be made with these settings (raised by the first think())

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
    problem = url_problem(url) or problem
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
        cassette_mode=cassette_mode(environ.get("SOMA_LLM_CASSETTE_MODE")), problem=problem)


def default_url(provider: str) -> str:
    """The endpoint a provider name means when no `url` is written."""
    return {"anthropic": ANTHROPIC_URL, "ollama": OLLAMA_URL}.get(provider, OPENAI_URL)


def find_key(provider: str, url: str, written: Optional[str], environ: Mapping[str, str]):
    """(key, is_secret, problem) by the lookup order of the module docstring."""
    if "SOMA_LLM_KEY" in environ:
        value = environ["SOMA_LLM_KEY"]
        return (value, True, None) if value else (None, False, "think() API key empty.")
    foreign = [variable for host, variable in CLOUD_KEYS.values()
               if "${" + variable + "}" in (written or "") and not is_cloud_host(url, host)]
    if foreign:
        return None, False, (f"think(): soma.toml's key names ${{{foreign[0]}}}, a cloud provider's key: it is sent "
                             f"only to https://{_cloud_host(foreign[0])}, not to {shown_url(url)} — give this "
                             "endpoint its own key (SOMA_LLM_KEY, or key = \"${ITS_VARIABLE}\")")
    expanded = expand_env(written or "", environ)
    if expanded:
        return expanded, True, None
    host = (urlsplit(url).hostname or "").lower()
    cloud = CLOUD_KEYS.get("anthropic" if provider == "anthropic" else "openai")
    if host == cloud[0]:
        value = environ.get(cloud[1]) if is_cloud_host(url, cloud[0]) else None
        return (value, True, None) if value else (None, False, None)
    if provider == "ollama" or host not in {h for h, _ in CLOUD_KEYS.values()}:
        return LOCAL_PLACEHOLDER.get(provider, NO_KEY_PLACEHOLDER), False, None
    return None, False, None


def is_cloud_host(url: str, host: str) -> bool:
    """True when `url` is `https://` exactly `host` (a cloud key may travel there, and only there)."""
    try:
        parts = urlsplit(url)
        return parts.scheme.lower() == "https" and (parts.hostname or "").lower() == host
    except ValueError:
        return False


def _cloud_host(variable: str) -> str:
    """The host a cloud key variable belongs to."""
    return next(host for host, name in CLOUD_KEYS.values() if name == variable)


def url_problem(url: str) -> Optional[str]:
    """Why `url` may not be used (None when it may): credentials in its user-info part."""
    try:
        parts = urlsplit(url)
        credentials = parts.username is not None or parts.password is not None
    except ValueError:
        return f"think(): the url {shown_url(url)} is not a valid url"
    if credentials:
        return (f"think(): the url {shown_url(url)} carries a user:password — the HTTP client would send it "
                "as Basic authentication instead of the key; remove it from the url and put the secret in "
                "key = \"${VARIABLE}\" (or SOMA_LLM_KEY)")
    return None


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
