"""nbval compares every output of these notebooks, error tracebacks included.

nbval leaves an error's `traceback` out of the comparison by default (only
`ename` and `evalue` are compared). A Soma error's traceback is its whole
rendered text: position, source line, caret, hint and the frames it was raised
in, so it is put back into the comparison here. What nbval still skips is
listed in the README ("The notebooks"); drawings (SVG data URIs) are sanitised by
nbval-sanitize.cfg and compared through their DOT text twins.
"""

from __future__ import annotations

COMPARED_THOUGH_NBVAL_SKIPS = ("traceback",)


def pytest_collectstart(collector):
    """Drop `traceback` from the keys a notebook's cells skip when comparing outputs."""
    skipped = getattr(collector, "skip_compare", None)
    if skipped is not None and str(collector.path).endswith(".ipynb"):
        collector.skip_compare = tuple(key for key in skipped if key not in COMPARED_THOUGH_NBVAL_SKIPS)


def pytest_collection_modifyitems(items):
    """Give each notebook cell an empty `funcargs`: pytest-lsp 1.0.1's call wrapper (a plugin the language
    server's tests bring) returns without yielding for an item that has none, which fails every nbval cell."""
    for item in items:
        if str(item.path).endswith(".ipynb") and not hasattr(item, "funcargs"):
            item.funcargs = {}
