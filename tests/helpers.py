"""Helpers shared by several test files: builtin calls, a session cell's value and a kernel under test."""

from __future__ import annotations

import os
from contextlib import contextmanager

import pytest

from soma_kernel.core.diagnostics import SomaError
from soma_kernel.runtime.builtins import call_builtin


def call(name, *args):
    """Call a builtin through the registry."""
    return call_builtin(name, list(args))


def kind_of(name, *args):
    """The error kind a builtin call raises."""
    with pytest.raises(SomaError) as err:
        call(name, *args)
    return err.value.kind


def value(result):
    """The text/plain of a session cell's result (the cell must have succeeded)."""
    assert result.ok, result.error
    return result.result["text/plain"]


def script_module(name: str):
    """scripts/<name>.py of the repository, loaded as a module (the scripts are no package)."""
    import importlib.util

    path = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "scripts", f"{name}.py")
    spec = importlib.util.spec_from_file_location(f"soma_script_{name}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@contextmanager
def kernelspec_installed(prefix: str):
    """The soma kernelspec installed under `prefix`, found first through JUPYTER_PATH."""
    from soma_kernel.kernel.install import install

    install(prefix=prefix)
    saved = os.environ.get("JUPYTER_PATH")
    os.environ["JUPYTER_PATH"] = os.path.join(prefix, "share", "jupyter")
    try:
        yield
    finally:
        if saved is None:
            os.environ.pop("JUPYTER_PATH", None)
        else:
            os.environ["JUPYTER_PATH"] = saved


@contextmanager
def running_kernel(prefix: str, cwd: str):
    """A Soma kernel process working in `cwd` and a blocking client: (manager, client)."""
    from jupyter_client.manager import start_new_kernel

    with kernelspec_installed(prefix):
        manager, client = start_new_kernel(kernel_name="soma", cwd=cwd)
        try:
            yield manager, client
        finally:
            client.stop_channels()
            manager.shutdown_kernel(now=True)


def is_complete_reply(client, code):
    """The content of the kernel's reply to an is_complete request for `code` (other shell replies skipped)."""
    msg_id = client.is_complete(code)
    while True:
        message = client.get_shell_msg(timeout=10)
        if message["parent_header"].get("msg_id") == msg_id:
            return message["content"]
