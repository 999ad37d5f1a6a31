"""The one table of Soma's reserved words, built-in type names and slot properties.

Every tool that colours or completes Soma reads it: the Pygments lexer, tab
completion and the JupyterLab extension (whose `src/keywords.generated.ts` is
written from it at build time by scripts/labextension.py). A unit test checks
that `KEYWORDS` holds exactly the word literals of grammar.lark, so a keyword
added to the grammar cannot be forgotten here.

Kinds: `section` opens a declaration or a cell section (`cell`, `face`,
`state`, `on` …), `clause` qualifies one (`calls`, `guard`, `except` …),
`statement` starts or continues a statement, `test` belongs to test rules,
`constant` is a literal word.
"""

from __future__ import annotations

KEYWORDS: dict[str, str] = {
    # declarations and cell sections
    "cell": "section", "agent": "section", "skeleton": "section", "flesh": "section",
    "type": "section", "test": "section", "use": "section", "variants": "section",
    "face": "section", "signal": "section", "tool": "section", "promise": "section",
    "memory": "section", "invariant": "section", "state": "section", "initial": "section",
    "on": "section", "every": "section", "after": "section", "cost": "section",
    "rules": "section", "interior": "section", "scale": "section", "runtime": "section",
    # clauses of a signal, an edge, a tool or a loop
    "calls": "clause", "writes": "clause", "reads": "clause", "moves": "clause",
    "guard": "clause", "except": "clause", "capability": "clause", "loop_bound": "clause",
    # statements and expressions
    "let": "statement", "if": "statement", "else": "statement", "while": "statement",
    "for": "statement", "in": "statement", "match": "statement", "try": "statement",
    "return": "statement", "break": "statement", "continue": "statement",
    "require": "statement", "ensure": "statement", "emit": "statement",
    # test rules
    "assert": "test", "assert_fails": "test", "matching": "test", "mock": "test",
    "error": "test", "property": "test", "forall": "test", "ensures": "test",
    # literal words
    "true": "constant", "false": "constant",
}

TYPES: tuple[str, ...] = ("Int", "Float", "String", "Bool", "List", "Map", "Any", "Unit")
"""The built-in type names a declaration may write (user types are `cell type` names)."""

RESERVED_FUNCTIONS: tuple[str, ...] = ("transition", "approve", "fail", "get_status", "has_state",
                                        "valid_transitions", "think", "think_json", "set_budget", "tokens_used")
"""Builtins whose meaning no program may replace: no handler, parameter, variable or pattern takes their name.

The reference refuses these as handler names (a program's `approve` would
answer every approval); a local binding would shadow them in the same way.
"""

SLOT_PROPERTIES: tuple[str, ...] = ("persistent", "ephemeral", "capacity", "ttl", "consistency", "native")
"""Memory slot properties written in `[…]` after a slot's type."""


def words_of(*kinds: str) -> tuple[str, ...]:
    """The keywords of the given kinds, in table order."""
    return tuple(word for word, kind in KEYWORDS.items() if kind in kinds)
