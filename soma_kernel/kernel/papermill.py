"""papermill support: parameters written as Soma `let` lines.

papermill (2.7) has no entry-point group for translators, only for engines
and I/O handlers, and it imports every `papermill.engine` entry point when it
is imported itself. So pyproject.toml declares `papermill_engine.SomaEngine`
(papermill's own nbclient engine under another name) as the `soma` engine; that
module imports this one, and importing this one registers `SomaTranslator` for
the `soma` kernel and language: the plain `papermill in.ipynb out.ipynb -p
limit 250` then injects `let limit = 250`. Only papermill imports these modules.
"""

from __future__ import annotations

import re

from papermill.models import Parameter
from papermill.translators import Translator, papermill_translators

from ..syntax.keywords import KEYWORDS
from ..syntax.render import render_data

LANGUAGE = "soma"
NAME = re.compile(r"[a-z_][A-Za-z0-9_]*\Z")  # grammar.lark's NAME: what `let` can bind
PARAMETER_LINE = re.compile(r"^\s*let\s+([a-z_][A-Za-z0-9_]*)\s*(?::\s*([A-Za-z][A-Za-z0-9_<>, ]*?))?\s*=\s*(.*)$")
# A string literal (escapes included) or one other character: `//` outside strings starts a comment.
CODE_OR_STRING = re.compile(r'"(?:[^"\\]|\\.)*"|//|.')
LITERAL_TYPES = ((re.compile(r'^"'), "String"), (re.compile(r"^-?[0-9][0-9_]*\.[0-9]|^-?[0-9][0-9_]*[eE]"), "Float"),
                 (re.compile(r"^-?[0-9]"), "Int"), (re.compile(r"^(true|false)\b"), "Bool"),
                 (re.compile(r"^\["), "List"), (re.compile(r"^map\("), "Map"), (re.compile(r"^\(\s*\)"), "Unit"))


class SomaTranslator(Translator):
    """Python parameter values as Soma: `let name = literal` lines under a `//` comment."""

    @classmethod
    def translate(cls, val) -> str:
        """Any JSON/YAML value as a Soma expression (None is `()`, a dict `map(k, v, …)`)."""
        return render_data(val)

    @classmethod
    def comment(cls, cmt_str: str) -> str:
        """A Soma line comment."""
        return f"// {cmt_str}".rstrip()

    @classmethod
    def assign(cls, name: str, str_val: str) -> str:
        """`let name = value`; a name `let` cannot bind is refused, naming it."""
        if not NAME.match(name) or name in KEYWORDS:
            raise ValueError(f"papermill parameter {name!r} cannot be a Soma variable: a name starts with a "
                             f"lower-case letter or _, has only letters, digits and _, and is no keyword")
        return f"let {name} = {str_val}"

    @classmethod
    def inspect(cls, parameters_cell) -> list:
        """The `let` lines of the cell tagged `parameters` (for `papermill --help-notebook`)."""
        parameters = []
        for line in parameters_cell.source.splitlines():
            found = PARAMETER_LINE.match(line)
            if found is None:
                continue
            name, declared, rest = found.groups()
            default, help_text = _split_comment(rest)
            parameters.append(Parameter(name=name, inferred_type_name=declared or _literal_type(default),
                                        default=default, help=help_text))
        return parameters


def _split_comment(text: str) -> tuple[str, str]:
    """`value // help` → (`value`, `help`): the first `//` outside a string literal starts the comment."""
    for token in CODE_OR_STRING.finditer(text):
        if token.group() == "//":
            return text[:token.start()].strip(), text[token.end():].strip()
    return text.strip(), ""


def _literal_type(text: str) -> str:
    """The type of a default written as a literal, or "None" (papermill's word for unknown)."""
    return next((kind for pattern, kind in LITERAL_TYPES if pattern.match(text)), "None")


papermill_translators.register(LANGUAGE, SomaTranslator)
