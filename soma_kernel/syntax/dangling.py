"""An expression cut short: an operator with nothing after it, and the keyword that landed there.

Newlines are whitespace in Soma, so `let a = 1 +` followed by `let b = 2`
reads on into the next line, and the keyword that starts it (`let`,
`return`, `assert` …) lands where the operator's right operand belongs. A
keyword is never reported as an undefined name: the mistake is the
operator, and the error sits there ("incomplete expression: nothing after
'+'").

Words that can never name a value (`let`, `return`, `while` …) are refused
by the parser. Keywords that may also be bound as names (`state`, `cost`,
`assert` …) parse as a `Name` that remembers the operator ending the line
before it (`ast.Name.after_operator`); `soma check` and the runtime, which know
whether such a variable exists, report an undefined one with
`keyword_name_problem`.
"""

from __future__ import annotations

from typing import Optional

from ..core.records import Record
from ..core.spans import Span
from . import ast
from .keywords import KEYWORDS

# Longest first, so that `<=` is found before `=` and `<`.
OPERATORS = ("||", "&&", "??", "|>", "==", "!=", "<=", ">=", "+=", "-=", "*=", "/=",
             "+", "-", "*", "/", "%", "<", ">", "=", "!")

# Keywords that begin an expression: after an operator they are its operand, not a new statement.
EXPRESSION_WORDS = ("if", "match", "try", "true", "false")


class KeywordProblem(Record):
    """Where and how to report a keyword read as a name (`span` makes it a reportable node).

    `incomplete` says it is an expression cut short at an operator (a syntax
    error), not a keyword used as a value.
    """

    span: Span
    message: str
    hint: str
    incomplete: bool


def operator_before(code: str, offset: int) -> Optional[tuple[int, str]]:
    """The operator that the code before `offset` ends with (blanks skipped): its start and text.

    None when the code ends otherwise, or with an arrow (`->`, `=>`) or a
    generic type's angle bracket (`Map<String, Int>`), which are no operators.
    """
    before = code[:offset].rstrip()
    for op in OPERATORS:
        if before.endswith(op):
            start = len(before) - len(op)
            if before[start - 1:start + 1] in ("->", "=>") or _type_bracket(before, start, op):
                return None
            return start, op
    return None


def _type_bracket(code: str, start: int, op: str) -> bool:
    """True when the `<` or `>` at `start` belongs to a written type (`List<`, `Map<String, Int>`)."""
    if op == "<":
        return start > 0 and (code[start - 1].isalnum() or code[start - 1] == "_")
    if op != ">":
        return False
    line = code[code.rfind("\n", 0, start) + 1:start]
    return any(line[i - 1].isalnum() for i in range(1, len(line)) if line[i] == "<")


def incomplete_message(op: str) -> str:
    """The message of an expression that stops at `op`."""
    return f"incomplete expression: nothing after '{op}'"


def incomplete_hint(op: str, follower: Optional[str], undefined_variable: bool = False) -> str:
    """What follows the dangling `op` and the fix.

    `follower` is the closing bracket after it, or the keyword that starts
    the next line (None at the end of the text); `undefined_variable` says the
    keyword could be a variable, but none is defined.
    """
    if follower is None:
        said = "the text ends after it"
    elif follower in ("}", ")", "]"):
        said = f"'{follower}' closes the {'block' if follower == '}' else 'bracket'} after it"
    elif undefined_variable:
        said = f"'{follower}' on the next line is a keyword and no variable '{follower}' is defined"
    else:
        said = f"'{follower}' on the next line is a keyword, not a value"
    return f"{said}: finish the expression or remove the '{op}'"


def keyword_name_problem(node: ast.Name) -> Optional[KeywordProblem]:
    """How to report `node` when it is a keyword that names nothing, or None when it is no keyword.

    After an operator the expression is incomplete (at the operator);
    elsewhere the keyword is named as such, never as an undefined variable.
    """
    word = node.id
    if word not in KEYWORDS:
        return None
    operator = node.after_operator
    if operator is not None:
        return KeywordProblem(operator.span, incomplete_message(operator.op),
                              incomplete_hint(operator.op, word, undefined_variable=True), True)
    return KeywordProblem(node.span, f"'{word}' is a keyword, and no variable '{word}' is defined",
                          f"a keyword is read as a name only where no keyword fits; to use '{word}' as a "
                          f"variable, bind it first (`let {word} = …`)", False)
