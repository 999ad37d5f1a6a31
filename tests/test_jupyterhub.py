"""JupyterHub end to end, once: a real hub on 127.0.0.1 runs a Soma notebook in a user's server.

JupyterHub (this environment's) with its configurable-http-proxy from npm
(`scripts/setup.sh --tests` installs it in ~/.cache/soma-kernel/tools), the
dummy authenticator and the simple local spawner (every user's server runs as
this OS user: for tests only), everything on 127.0.0.1 and free ports, state in
a temporary folder. Through the hub's REST API a user is created, their server
started and a token made; through the proxy, notebook 01 is uploaded, a session
opened on the `soma` kernel and every code cell executed over the kernel
websocket; the outputs must be the notebook's saved ones. Then the server, the
user and the hub are stopped, and nothing listens any more. Every wait is
bounded (about 40 s in all here).
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
import sysconfig
import time
import urllib.error
import urllib.request
import uuid
from pathlib import Path

import nbformat
import pytest

from helpers import kernelspec_installed

REPO = Path(__file__).resolve().parents[1]
NOTEBOOK = REPO / "notebooks" / "01_tour.ipynb"
TOOLS = Path(os.environ.get("SOMA_TOOLS_DIR") or
             Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "soma-kernel" / "tools")
PROXY = TOOLS / "node_modules" / ".bin" / "configurable-http-proxy"
HUB_START_SECONDS = 60
SERVER_START_SECONDS = 120
CELL_SECONDS = 60
USER = "alice"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _listening(port: int) -> bool:
    with socket.socket() as sock:
        sock.settimeout(1)
        return sock.connect_ex(("127.0.0.1", port)) == 0


def _api(method: str, url: str, token: str, body: dict | None = None) -> tuple[int, object]:
    """One REST call with `Authorization: token …`; (status, decoded JSON or None)."""
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, method=method,
                                     headers={"Authorization": f"token {token}", "Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=30) as reply:
            text = reply.read()
            return reply.status, json.loads(text) if text else None
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode(errors="replace")


def _config(tmp: Path, ports: dict, token: str, jupyter_path: Path) -> Path:
    scripts = Path(sysconfig.get_path("scripts"))
    config = tmp / "jupyterhub_config.py"
    config.write_text(f"""
c = get_config()  # noqa: F821
c.JupyterHub.ip = "127.0.0.1"
c.JupyterHub.port = {ports['public']}
c.JupyterHub.hub_ip = "127.0.0.1"
c.JupyterHub.hub_port = {ports['hub']}
c.ConfigurableHTTPProxy.api_url = "http://127.0.0.1:{ports['proxy_api']}"
c.ConfigurableHTTPProxy.command = [{str(PROXY)!r}]
c.JupyterHub.db_url = "sqlite:///{tmp / 'hub.sqlite'}"
c.JupyterHub.cookie_secret_file = {str(tmp / 'cookie_secret')!r}
c.JupyterHub.pid_file = {str(tmp / 'hub.pid')!r}
c.JupyterHub.authenticator_class = "dummy"
c.DummyAuthenticator.password = {uuid.uuid4().hex!r}
c.Authenticator.allow_all = True
c.JupyterHub.spawner_class = "simple"
c.SimpleLocalProcessSpawner.home_dir_template = {str(tmp / 'home-{username}')!r}
c.Spawner.cmd = [{str(scripts / 'jupyterhub-singleuser')!r}]
c.Spawner.args = {['--allow-root'] if os.geteuid() == 0 else []!r}
c.Spawner.default_url = "/lab"
c.Spawner.start_timeout = {SERVER_START_SECONDS}
c.Spawner.environment = {{"JUPYTER_PATH": {str(jupyter_path)!r}}}
c.JupyterHub.services = [{{"name": "smoke-admin", "api_token": {token!r}}}]
c.JupyterHub.load_roles = [{{"name": "smoke-admin-role", "services": ["smoke-admin"],
                            "scopes": ["admin:users", "admin:servers", "access:servers", "tokens"]}}]
""")
    return config


@pytest.fixture
def hub(tmp_path):
    """A running JupyterHub; yields (public URL, admin token); stops it and checks nothing is left listening."""
    if not PROXY.exists():
        pytest.fail(f"no configurable-http-proxy at {PROXY}: `bash scripts/setup.sh --tests` installs it (npm)")
    ports = {name: _free_port() for name in ("public", "hub", "proxy_api")}
    token = uuid.uuid4().hex
    prefix = tmp_path / "kernels"
    env = dict(os.environ, PATH=os.pathsep.join([sysconfig.get_path("scripts"), os.environ.get("PATH", "")]))
    with kernelspec_installed(str(prefix)):
        config = _config(tmp_path, ports, token, prefix / "share" / "jupyter")
        log_path = tmp_path / "hub.log"
        with open(log_path, "wb") as log:
            process = subprocess.Popen([sys.executable, "-m", "jupyterhub", "-f", str(config)], cwd=tmp_path,
                                       stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env)
        url = f"http://127.0.0.1:{ports['public']}"
        try:
            _wait_for_hub(url, process, log_path)
            yield url, token
        finally:
            _stop_hub(process)
            left = [name for name, port in ports.items() if _listening(port)]
            assert left == [], f"still listening after the hub stopped: {left}\n{log_path.read_text()[-3000:]}"


def _wait_for_hub(url: str, process: subprocess.Popen, log_path: Path) -> None:
    deadline = time.monotonic() + HUB_START_SECONDS
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(f"jupyterhub exited with {process.returncode}:\n{log_path.read_text()[-3000:]}")
        try:
            with urllib.request.urlopen(f"{url}/hub/api/", timeout=2) as reply:
                if "version" in json.loads(reply.read()):
                    return
        except (OSError, ValueError):
            pass
        time.sleep(0.5)
    pytest.fail(f"jupyterhub did not answer within {HUB_START_SECONDS} s:\n{log_path.read_text()[-3000:]}")


def _stop_hub(process: subprocess.Popen) -> None:
    """SIGTERM: the hub stops the users' servers and its proxy itself; SIGKILL if it lingers."""
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)


def _start_server(url: str, token: str) -> str:
    """Create the user, start their server through the REST API, wait until ready; return a user token."""
    assert _api("POST", f"{url}/hub/api/users/{USER}", token)[0] == 201
    status, detail = _api("POST", f"{url}/hub/api/users/{USER}/server", token)
    assert status in (201, 202), detail
    deadline = time.monotonic() + SERVER_START_SECONDS
    while time.monotonic() < deadline:
        server = _api("GET", f"{url}/hub/api/users/{USER}", token)[1]["servers"].get("", {})
        if server.get("ready"):
            assert server["url"] == f"/user/{USER}/"
            break
        time.sleep(0.5)
    else:
        pytest.fail(f"{USER}'s server was not ready within {SERVER_START_SECONDS} s")
    status, made = _api("POST", f"{url}/hub/api/users/{USER}/tokens", token, {"expires_in": 600, "note": "smoke"})
    assert status == 201, made
    return made["token"]


def _stop_server(url: str, token: str) -> None:
    status, detail = _api("DELETE", f"{url}/hub/api/users/{USER}/server", token)
    assert status in (202, 204), detail
    deadline = time.monotonic() + SERVER_START_SECONDS
    while _api("GET", f"{url}/hub/api/users/{USER}", token)[1]["servers"]:
        assert time.monotonic() < deadline, f"{USER}'s server did not stop"
        time.sleep(0.5)
    assert _api("DELETE", f"{url}/hub/api/users/{USER}", token)[0] == 204


def _saved_outputs(cell) -> list:
    """What a cell showed when the notebook was saved, in the form `_run_cell` collects."""
    return [_output_key(output) for output in cell.outputs]


def _output_key(output) -> tuple:
    kind = output["output_type"]
    if kind == "stream":
        return kind, output["name"], output["text"]
    if kind == "error":
        return kind, output["ename"], output["evalue"]
    return kind, output["data"].get("text/plain")


async def _run_cells(ws_url: str, token: str, cells: list) -> list:
    """Execute each code cell over the kernel websocket; the outputs of each, and its reply status."""
    from tornado.httpclient import HTTPRequest
    from tornado.websocket import websocket_connect

    connection = await websocket_connect(HTTPRequest(ws_url, headers={"Authorization": f"token {token}"}))
    session, results = uuid.uuid4().hex, []
    try:
        for cell in cells:
            msg_id = uuid.uuid4().hex
            connection.write_message(json.dumps({
                "header": {"msg_id": msg_id, "msg_type": "execute_request", "username": USER, "session": session,
                           "version": "5.3", "date": ""},
                "parent_header": {}, "metadata": {}, "channel": "shell", "buffers": [],
                "content": {"code": cell.source, "silent": False, "store_history": True, "user_expressions": {},
                            "allow_stdin": False, "stop_on_error": False}}))
            results.append(await asyncio.wait_for(_collect(connection, msg_id), CELL_SECONDS))
    finally:
        connection.close()
    return results


async def _collect(connection, msg_id: str) -> tuple[str, list]:
    """Read messages until the kernel is idle after `msg_id`: (reply status, outputs)."""
    outputs, status, idle = [], None, False
    while status is None or not idle:  # the reply (shell) and idle (iopub) come in either order
        text = await connection.read_message()
        assert text is not None, "the kernel websocket closed"
        message = json.loads(text)
        if message.get("parent_header", {}).get("msg_id") != msg_id:
            continue
        kind, content = message["msg_type"], message["content"]
        if kind in ("stream", "error", "execute_result", "display_data"):
            outputs.append(_output_key(dict(content, output_type=kind)))
        elif kind == "execute_reply":
            status = content["status"]
        elif kind == "status" and content["execution_state"] == "idle":
            idle = True
    return status, outputs


def test_a_soma_notebook_runs_in_a_users_server_started_through_the_hub(hub):
    url, admin = hub
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    cells = [cell for cell in notebook.cells if cell.cell_type == "code"]
    user_token = _start_server(url, admin)
    try:
        base = f"{url}/user/{USER}"
        specs = _api("GET", f"{base}/api/kernelspecs", user_token)[1]["kernelspecs"]
        assert specs["soma"]["spec"]["argv"][0] == sys.executable
        status, _ = _api("PUT", f"{base}/api/contents/tour.ipynb", user_token,
                         {"type": "notebook", "format": "json", "content": json.loads(nbformat.writes(notebook))})
        assert status in (200, 201)
        status, session = _api("POST", f"{base}/api/sessions", user_token,
                               {"path": "tour.ipynb", "type": "notebook", "name": "tour.ipynb",
                                "kernel": {"name": "soma"}})
        assert status == 201, session
        kernel_id = session["kernel"]["id"]
        ws_url = f"ws://127.0.0.1:{url.rsplit(':', 1)[1]}/user/{USER}/api/kernels/{kernel_id}/channels"
        results = asyncio.run(_run_cells(ws_url, user_token, cells))
        assert _api("DELETE", f"{base}/api/sessions/{session['id']}", user_token)[0] == 204
    finally:
        _stop_server(url, admin)
    expected = [("error" if "raises-exception" in cell.metadata.get("tags", []) else "ok", _saved_outputs(cell))
                for cell in cells]
    assert results == expected
    assert sum(status == "error" for status, _ in results) == 4
