"""How the language server is found and started: the jupyter-lsp spec, the command, the lazy import of pygls."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from importlib import import_module
from pathlib import Path

from jupyter_lsp.schema import SPEC_VERSION, make_validator

from soma_kernel.kernel.kernel import LANGUAGE_INFO
from soma_kernel.lsp.spec import LANGUAGE

REPO = Path(__file__).resolve().parents[1]


def registered_spec():
    """The object pyproject's `jupyter_lsp_spec_v1` entry point names, loaded."""
    with open(REPO / "pyproject.toml", "rb") as handle:
        points = tomllib.load(handle)["project"]["entry-points"]["jupyter_lsp_spec_v1"]
    module, _, name = points["soma-language-server"].partition(":")
    return getattr(import_module(module), name)


def test_the_entry_point_gives_a_valid_jupyter_lsp_spec_for_the_kernels_language():
    specs = registered_spec()(None)
    make_validator("language-server-specs-implementation-map").validate(specs)
    (spec,) = specs.values()
    assert spec["version"] == SPEC_VERSION
    assert spec["requires_documents_on_disk"] is False
    # jupyterlab-lsp takes a notebook's language from the kernel's mimetype, prefix stripped
    assert LANGUAGE_INFO["mimetype"] == "text/x-soma" and spec["languages"] == [LANGUAGE] == ["soma"]
    assert LANGUAGE_INFO["file_extension"] == ".cell"


def test_the_spec_command_starts_a_server_that_answers_initialize():
    command = registered_spec()(None)["soma-language-server"]["argv"]
    body = '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"capabilities":{},"processId":null}}'
    message = f"Content-Length: {len(body)}\r\n\r\n{body}"
    exit_body = '{"jsonrpc":"2.0","method":"exit"}'
    message += f"Content-Length: {len(exit_body)}\r\n\r\n{exit_body}"
    done = subprocess.run(command, input=message.encode(), capture_output=True, timeout=60)
    reply = done.stdout.decode().replace(" ", "")
    assert '"hoverProvider":true' in reply and '"name":"soma-language-server"' in reply


def test_the_kernel_and_the_other_commands_do_not_import_the_language_server():
    probe = (
        "import sys, io, contextlib\n"
        "import soma_kernel.kernel.kernel, soma_kernel.session.session\n"
        "from soma_kernel.commands.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        f"    main(['check', {str(REPO / 'tests/seeds/refund_agent/refund_agent.cell')!r}])\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('pygls', 'lsprotocol', 'cattrs')"
        " or m.startswith('soma_kernel.lsp')))\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
