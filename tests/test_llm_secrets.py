"""Secrets, exactly as the README promises (issue 20 §7): a key is masked before any text
is cut; a cloud provider's key goes only to that provider's host, however soma.toml
names it; credentials written in a url are refused, never sent as Basic auth, and
masked wherever the url is shown."""

from __future__ import annotations

import pytest

from llm_server import LoopbackModel
from soma_kernel.core.diagnostics import SomaError
from soma_kernel.project.settings import parse_project_text
from soma_kernel.runtime.interpreter import Runtime
from soma_kernel.runtime.llm.config import resolve
from soma_kernel.session.session import Session
from soma_kernel.syntax.parser import parse

SECRET = "sk-test-Yw4nT8rK2mQ6zP1x"
CLOUD = {"ANTHROPIC_API_KEY": "sk-ant-Zq8vW2xR7tN4kL9m", "OPENAI_API_KEY": "sk-oai-Hx3pQ6sJ1yB5cV0d"}
PLAIN = 'cell agent Plain {\n    on ask(q: String) { return think(q) }\n}'


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch):
    """No LLM setting leaks in; the test key is in SOME_VAR and the cloud keys are set."""
    for name in ("SOMA_LLM_MOCK", "SOMA_LLM_KEY", "SOMA_LLM_URL", "SOMA_LLM_CASSETTE", "SOMA_LLM_RETRIES"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    monkeypatch.setenv("SOME_VAR", SECRET)
    for name, value in CLOUD.items():
        monkeypatch.setenv(name, value)


@pytest.fixture
def server():
    """A fresh loopback model server."""
    with LoopbackModel() as started:
        yield started


def runtime_with(toml: str) -> Runtime:
    """A runtime of PLAIN under this soma.toml text."""
    rt = Runtime(project=parse_project_text(toml, "./soma.toml"), note=lambda text: None)
    rt.load_program(parse(PLAIN, "plain.cell"))
    return rt


def failure(rt) -> SomaError:
    """The error of asking the model."""
    with pytest.raises(SomaError) as caught:
        rt.call("ask", ["hi"])
    return caught.value


def leaks(text: str, secret: str) -> bool:
    """True when `text` shows any 4 consecutive characters of the secret's random part."""
    tail = secret.rpartition("-")[2]
    return any(tail[i:i + 4] in text for i in range(len(tail) - 3))


# ------------------------------------------------------------ masked before cut


@pytest.mark.parametrize("pad", range(150, 182, 3))   # the 200-character cut falls inside the key
@pytest.mark.parametrize("wire", ["openai", "anthropic"])
def test_an_echoed_authorization_header_is_masked_before_the_message_is_cut(server, wire, pad):
    server.echo(401, pad=pad)
    rt = runtime_with(f'[agent]\nprovider = "{wire}"\nurl = "{server.url(wire)}"\nkey = "${{SOME_VAR}}"\n')
    error = failure(rt)
    assert "status 401" in error.text and not leaks(error.text, SECRET)


@pytest.mark.parametrize("pad", [20, 31, 35, 38, 40])   # the 60-character cut falls inside the key
def test_a_body_that_is_no_json_is_masked_before_its_snippet_is_cut(server, pad):
    server.raw("x" * pad + "Bearer " + SECRET)
    rt = runtime_with(f'[agent]\nurl = "{server.url("openai")}"\nkey = "${{SOME_VAR}}"\n')
    error = failure(rt)
    assert "is not JSON" in error.text and not leaks(error.text, SECRET)


# ------------------------------------------------------------ cloud keys go home only


@pytest.mark.parametrize("written, url, variable", [
    ("${ANTHROPIC_API_KEY}", "https://llm.example.com/v1/messages", "ANTHROPIC_API_KEY"),
    ("${OPENAI_API_KEY}", "https://llm.example.com/v1/chat/completions", "OPENAI_API_KEY"),
    ("${OPENAI_API_KEY}", "https://api.anthropic.com/v1/messages", "OPENAI_API_KEY"),
    ("${ANTHROPIC_API_KEY}", "https://api.openai.com/v1/chat/completions", "ANTHROPIC_API_KEY"),
    ("Bearer-${OPENAI_API_KEY}", "https://llm.example.com/v1/chat/completions", "OPENAI_API_KEY"),
    ("${OPENAI_API_KEY}", "http://api.openai.com/v1/chat/completions", "OPENAI_API_KEY"),
    ("${OPENAI_API_KEY}", "https://api.openai.com.example.com/v1/chat/completions", "OPENAI_API_KEY"),
])
def test_a_cloud_key_named_beside_another_host_is_refused(written, url, variable):
    settings = resolve({"provider": "anthropic" if "messages" in url else "openai", "url": url, "key": written},
                       {}, None, CLOUD)
    assert settings.key is None
    assert settings.problem.startswith(f"think(): soma.toml's key names ${{{variable}}}, a cloud provider's key: "
                                       "it is sent only to https://")


@pytest.mark.parametrize("wire", ["openai", "anthropic"])
def test_the_loopback_server_never_sees_a_cloud_key(server, wire):
    variable = "ANTHROPIC_API_KEY" if wire == "anthropic" else "OPENAI_API_KEY"
    rt = runtime_with(f'[agent]\nprovider = "{wire}"\nurl = "{server.url(wire)}"\nkey = "${{{variable}}}"\n')
    error = failure(rt)
    assert error.kind == "llm" and error.text.startswith(f"think(): soma.toml's key names ${{{variable}}}")
    assert server.requests == [] and not leaks(error.text, CLOUD[variable])


def test_what_goes_where():
    own = resolve({"provider": "openai", "key": "${OPENAI_API_KEY}"}, {}, None, CLOUD)
    assert (own.key, own.problem) == (CLOUD["OPENAI_API_KEY"], None)
    mine = resolve({"url": "https://llm.example.com/v1/chat/completions", "key": "${SOME_VAR}"}, {}, None,
                   {**CLOUD, "SOME_VAR": SECRET})
    assert (mine.key, mine.problem) == (SECRET, None)                        # other variables: the configured url
    general = resolve({"url": "https://llm.example.com/v1/chat/completions", "key": "${OPENAI_API_KEY}"}, {}, None,
                      {**CLOUD, "SOMA_LLM_KEY": SECRET})
    assert (general.key, general.problem) == (SECRET, None)                  # SOMA_LLM_KEY wins and goes there
    plain_http = resolve({"provider": "openai", "url": "http://api.openai.com/v1/chat/completions"}, {}, None, CLOUD)
    assert plain_http.key is None                                            # never over plain http


# ------------------------------------------------------------ credentials in a url


@pytest.mark.parametrize("netloc", ["user:pw-9f8e7d6c@", "only-user@", ":pw-9f8e7d6c@"])
def test_a_url_with_credentials_is_refused_and_never_sent(server, netloc):
    url = server.url("openai").replace("http://", f"http://{netloc}")
    rt = runtime_with(f'[agent]\nurl = "{url}"\nkey = "${{SOME_VAR}}"\n')
    error = failure(rt)
    shown = server.url("openai").replace("http://", "http://***@")
    assert error.text == (f"think(): the url {shown} carries a user:password — the HTTP client would send it as "
                          "Basic authentication instead of the key; remove it from the url and put the secret in "
                          'key = "${VARIABLE}" (or SOMA_LLM_KEY)')
    assert server.requests == [] and "pw-9f8e7d6c" not in error.text


def test_the_toml_summary_masks_a_url_with_credentials(tmp_path):
    session = Session(str(tmp_path))
    result = session.execute('%%toml\n[agent]\nprovider = "openai"\nurl = "https://u:pw-9f8e7d6c@llm.example.com/v1"\n')
    assert "pw-9f8e7d6c" not in result.stream_text() and "https://***@llm.example.com/v1" in result.stream_text()
