"""One builtin registry: dispatch, `soma check`, completion, `?name` and
`call_builtin` all read the same entry, builtins that need the running
program included (their arity is declared once, in the registry)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from soma_kernel.analysis.check import check_program
from soma_kernel.core.diagnostics import SomaError
from soma_kernel.runtime.builtins import BUILTINS, arity_error, builtin, call_builtin
from soma_kernel.session.complete import complete
from soma_kernel.session.inspect import help_text
from soma_kernel.session.session import Session
from soma_kernel.syntax.parser import parse


@pytest.fixture
def session(tmp_path):
    return Session(directory=str(tmp_path))


def test_a_runtime_builtin_called_with_too_many_arguments_is_the_registry_arity_error(session):
    for code, name, got in (("tokens_used(1)", "tokens_used", 1), ("now(1, 2)", "now", 2),
                            ('think("a", "b", map(), 4)', "think", 4)):
        result = session.execute(code, "a")
        assert result.error_value == f"type: {arity_error(BUILTINS[name], got).detail}"


def test_the_arity_error_names_the_arguments_the_registry_lists(session):
    result = session.execute('think("a", "b", map(), 4)', "a")
    assert result.error_value == "type: think() takes 1 to 3 arguments (prompt, [system], [opts]), got 4"


def test_help_and_completion_read_the_registry_entry_of_a_runtime_builtin(session):
    entry = BUILTINS["horde_status"]
    assert help_text(session, "horde_status") == f"{entry.signature}\n  {entry.doc}"
    found = complete(session, "horde_st", 8)
    assert "horde_status" in found["matches"]


def test_check_reads_a_runtime_builtin_arity_from_the_registry():
    report = check_program(parse("cell A {\n    on f() {\n        return tokens_remaining(3)\n    }\n}\n", "a.cell"))
    assert [d.message for d in report.errors] == ["builtin tokens_remaining() takes 0 argument(s), but the call passes 1"]


def test_a_builtin_that_needs_the_program_refuses_to_run_without_one():
    with pytest.raises(SomaError) as err:
        call_builtin("next_id", [])
    assert err.value.detail == "this builtin needs a running program"
    assert call_builtin("from_json", ['{"a": 1}']) == {"a": 1}


def test_checking_a_machine_program_loads_no_pure_builtin_group():
    program = ('cell A {\n    state m {\n        initial: a\n        a -> b\n    }\n'
               '    on go(id: String) {\n        transition(id, "b")\n        return get_status(id)\n    }\n}\n')
    script = ("import sys\nfrom soma_kernel.analysis.check import check_program\n"
              "from soma_kernel.syntax.parser import parse\n"
              f"assert check_program(parse({program!r}, 'a.cell')).passed\n"
              "print(sorted(m for m in sys.modules if m.startswith('soma_kernel.runtime.builtins.')))")
    loaded = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout
    assert loaded.strip() == "['soma_kernel.runtime.builtins.context', 'soma_kernel.runtime.builtins.registry']"


def test_a_second_registration_of_a_builtin_name_is_refused_and_the_first_kept():
    first = BUILTINS["len"]
    with pytest.raises(RuntimeError, match="'len' of group 'extra' is already registered by group"):
        builtin("extra", "len(x: Any) -> Int", "A second len.")(lambda x: 0)
    assert BUILTINS["len"] is first
