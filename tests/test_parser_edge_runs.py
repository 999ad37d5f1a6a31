"""Plain `a -> b` lines of a state block are built without lark (the fast path for big machines).

Whatever the parser lifts out of the text, the program (every node and
span) or the syntax error (message and span) must be exactly what lark
alone gives; the texts below put continuations, keywords, strings and
comments next to plain edges.
"""

from __future__ import annotations

import pytest

from soma_kernel.core.diagnostics import SomaSyntaxError
from soma_kernel.syntax import ast, parser


def block(*lines: str, head: str = "state s {") -> str:
    """A cell with one state block holding `lines`."""
    body = "\n".join("        " + line for line in lines)
    return f"cell A {{\n    {head}\n{body}\n    }}\n}}\n"


TEXTS = {
    "plain run": block("initial: a", "a -> b", "b -> c", "", "c -> d"),
    "guard inline": block("a -> b", "b -> c { guard { true } }", "c -> d", "d -> e"),
    "guard on the next line": block("a -> b", "b -> c", "   { guard { true } }", "c -> d"),
    "except on the next line": block("a -> b", "* -> c", "except [a]", "c -> d"),
    "keyword as a state": block("a -> b", "match -> c", "c -> d"),
    "dangling arrow": block("a ->", "b -> c", "c -> d"),
    "closing brace on the edge line": "cell A {\n    state s {\n        a -> b\n        b -> c }\n}\n",
    "comments": block("a -> b // one", "/* two */ b -> c", "c -> d"),
    "two initials": block("initial: a", "a -> b", "initial: b", "b -> c"),
    "a bad line after the run": block("a -> b", "b -> c", "c => d"),
    "typed machine and match arms": "cell A {\n    state s: Order {\n        a -> b\n        b -> c\n    }\n"
                                    "    on f(x: Any) {\n        match x {\n            a -> b\n            c -> d\n"
                                    "        }\n    }\n}\n",
    "a string in the run": block("a -> b", 'b -> c "x"', "c -> d"),
    "a brace in a guard's string": block("a -> b", 'b -> c { guard { "}" == "}" } }', "c -> d"),
    "blank lines and a second block": block("a -> b", "", "b -> c") + block("initial: x", "x -> y", "", "y -> z"),
    "an item without an arrow": block("a -> b", "B -> C", "x"),
    "windows line ends": block("a -> b", "b -> c").replace("\n", "\r\n"),
    "blank lines with spaces, tabs and CR in a run": block("a -> b", "  \t", "\r", "b -> c", "", "", "c -> d"),
    "initial between two runs": block("a -> b", "", "initial: b", "", "b -> c", "c -> d"),
    "a keyword in the second run": block("a -> b", "initial: a", "b -> match", "c -> d"),
    "a wildcard after the run": block("a -> b", "b -> c", "* -> a except [c]"),
    "a run that ends the block": block("a -> b", "b -> c", ""),
    "a name ending in state is no block": "cell A {\n    mystate s {\n        a -> b\n    }\n}\n",
    "a state block at the very start": "state s {\n    a -> b\n    b -> c\n}\n",
    "tabs around the arrow": block("a\t->\tb", "b  ->  c", "c->d"),
}


def outcome(text: str):
    """Every node with its span, or the syntax error's message and span."""
    try:
        program = parser.parse(text, origin="a.cell")
    except SomaSyntaxError as err:
        return ("error", err.diagnostic.message, err.diagnostic.span, err.diagnostic.hint)
    return nodes_and_spans(program)


def nodes_and_spans(root) -> list:
    """A flat, comparable listing of a tree: each node's type, span and plain fields."""
    listing, stack = [], [root]
    while stack:
        item = stack.pop()
        if isinstance(item, (list, tuple)):
            stack.extend(reversed(item))
        elif isinstance(item, ast.Node):
            listing.append((type(item).__name__, item.span))
            stack.extend(getattr(item, name) for name in item.FIELDS)
        else:
            listing.append(item)
    return listing


@pytest.mark.parametrize("name", list(TEXTS))
def test_lifted_edges_give_what_lark_alone_gives(name, monkeypatch):
    text = TEXTS[name]
    fast = outcome(text)
    monkeypatch.setattr(parser, "_lift_simple_edges", lambda scanned: (scanned.clean, {}))
    assert fast == outcome(text)


def test_a_long_chain_is_lifted_with_its_spans():
    edges = "\n".join(f"        s{i} -> s{i + 1}" for i in range(2000))
    text = f"cell A {{\n    state s {{\n        initial: s0\n{edges}\n    }}\n}}\n"
    clean, lifted = parser._lift_simple_edges(parser._scan(text))
    assert [len(found) for found in lifted.values()] == [2000] and "->" not in clean
    program = parser.parse(text, origin="a.cell")
    machine = program.items[0].machines[0]
    assert len(machine.edges) == 2000 and machine.initial == "s0"
    last = machine.edges[-1]
    assert (last.src, last.dst) == ("s1999", "s2000")
    assert (last.span.line, last.span.col, last.span.end_line, last.span.end_col) == (2003, 9, 2003, 23)
    assert program.source[last.span.start:last.span.end] == "s1999 -> s2000"


def test_only_the_top_of_a_block_is_lifted():
    text = block("a -> b", "b -> c { guard { true } }", "c -> d", "d -> e")
    clean, lifted = parser._lift_simple_edges(parser._scan(text))
    assert [(e.src, e.dst) for found in lifted.values() for e in found] == [("a", "b")]
    assert clean.count("->") == 3


def test_blank_lines_in_a_run_keep_the_line_numbers():
    text = block("a -> b", "", "  ", "b -> c", "", "c -> d")
    program = parser.parse(text, origin="a.cell")
    spans = [(e.span.line, e.span.col) for e in program.items[0].machines[0].edges]
    assert spans == [(3, 9), (6, 9), (8, 9)]
