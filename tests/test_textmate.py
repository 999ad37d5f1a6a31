"""The TextMate grammar (editors/vscode) is current and colours every keyword by its kind."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

from soma_kernel.syntax.keywords import KEYWORDS, TYPES

REPO = Path(__file__).resolve().parents[1]
GRAMMAR = REPO / "editors" / "vscode" / "syntaxes" / "soma.tmLanguage.json"
SCOPES = {"section": "keyword.declaration.soma", "clause": "storage.modifier.soma",
          "statement": "keyword.control.soma", "test": "keyword.other.test.soma",
          "constant": "constant.language.soma"}


def test_the_committed_grammar_is_what_the_script_writes():
    done = subprocess.run([sys.executable, "scripts/textmate.py", "check"], cwd=REPO, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout


def test_every_keyword_gets_the_scope_of_its_kind_and_nothing_else():
    grammar = json.loads(GRAMMAR.read_text())
    rules = grammar["repository"]["keywords"]["patterns"]
    for word, kind in KEYWORDS.items():
        matching = [rule["name"] for rule in rules if re.fullmatch(rule["match"], word)]
        assert matching == [SCOPES[kind]], word
    assert not any(re.fullmatch(rule["match"], "cells") for rule in rules)
    builtin_types = grammar["repository"]["types"]["patterns"][0]["match"]
    assert all(re.fullmatch(builtin_types, name) for name in TYPES)


def test_the_grammar_is_referenced_by_the_vscode_extension():
    manifest = json.loads((REPO / "editors" / "vscode" / "package.json").read_text())
    (language,) = manifest["contributes"]["languages"]
    (grammar,) = manifest["contributes"]["grammars"]
    assert language["extensions"] == [".cell"] and grammar["language"] == language["id"] == "soma"
    assert (REPO / "editors" / "vscode" / grammar["path"]).resolve() == GRAMMAR
    assert json.loads(GRAMMAR.read_text())["scopeName"] == grammar["scopeName"]
