"""`Cell.member` without a call is a handler reference (horde(), vote()): when the cell has no such handler
the message says so — in `soma check`, in a handler at run time and on a notebook line — never that the cell
"is not a value" or an undefined variable."""

from __future__ import annotations

import pytest

from soma_kernel.analysis.check import check_program
from soma_kernel.core.diagnostics import SomaError
from soma_kernel.runtime.interpreter import Runtime
from soma_kernel.session.session import Session
from soma_kernel.syntax.parser import parse

REPORTER = """cell Reporter {
    memory {
        notes: Map<String, Int>
    }
    on write(topic: String) { return "on {topic}" }
    on edit(text: String) { return text }
}
"""

# (expression using a reference, the member it names)
USES = [
    ('vote(Reporter.nope, "x", 3)', "nope"),
    ('horde(Reporter.wirte, ["x"])', "wirte"),
    ('horde(Reporter.notes, ["x"], map("max_parallel", 2))', "notes"),
    ('vote(Reporter.edits, "x", 2)', "edits"),
    ("Reporter.nope", "nope"),
]


@pytest.mark.parametrize("expression, member", USES)
def test_check_names_the_missing_handler(expression, member):
    program = parse(REPORTER + f"cell Desk {{\n    on go() {{ return {expression} }}\n}}\n", "desk.cell")
    [error] = check_program(program).errors
    assert error.message.startswith(f"cell 'Reporter' has no handler '{member}'")
    assert (error.span.line, error.span.col) == (9, 22 + expression.index("Reporter"))


@pytest.mark.parametrize("expression, member", USES)
def test_a_handler_running_it_says_the_cell_has_no_such_handler(expression, member):
    rt = Runtime()
    rt.load_program(parse(REPORTER + f"cell Desk {{\n    on go() {{ return {expression} }}\n}}\n", "desk.cell"))
    with pytest.raises(SomaError) as caught:
        rt.call("go", [], cell="Desk")
    assert caught.value.text == f"undefined_variable: cell 'Reporter' has no handler '{member}'"
    assert (caught.value.span.line, caught.value.span.col) == (9, 22 + expression.index("Reporter"))


def test_a_notebook_line_says_it_with_a_hint_from_the_cell():
    session = Session()
    assert session.execute(REPORTER, "a", count=1).ok
    hints = {}
    for expression, member in USES:
        error = session.execute(expression, "b", count=2).error.split("\n")
        assert error[0] == f"error: cell[2]:1:{expression.index('Reporter') + 1}: undefined_variable: " \
                           f"cell 'Reporter' has no handler '{member}'"
        hints[member] = error[-1]
    assert hints["wirte"] == "  hint: did you mean `write`?"
    assert hints["edits"] == "  hint: did you mean `edit`?"
    assert hints["nope"] == "  hint: the handlers of `Reporter`: write(topic: String), edit(text: String)"
    assert hints["notes"].startswith("  hint: `notes` is a memory slot of `Reporter`: it is read by its bare name")
    unknown = session.execute('horde(Reportr.write, ["x"])', "c", count=3).error.split("\n")
    assert unknown[0] == "error: cell[3]:1:7: undefined_variable: no cell named 'Reportr'"
    assert unknown[-1] == "  hint: did you mean `Reporter`?"


def test_a_real_reference_and_a_local_of_that_name_still_work():
    session = Session()
    session.execute(REPORTER, "a", count=1)
    assert session.execute('vote(Reporter.write, "x", 2).winner', "b").result["text/plain"] == "on x"
    rt = Runtime()
    rt.load_program(parse(REPORTER + 'cell Desk {\n    on go() {\n        let Reporter = map("nope", 4)\n'
                                     "        return Reporter.nope\n    }\n}\n", "desk.cell"))
    assert rt.call("go", [], cell="Desk") == 4
