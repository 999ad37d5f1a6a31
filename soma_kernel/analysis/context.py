"""What every check needs to know about a program, indexed once.

`ProgramIndex` maps cell names to their handlers (a skeleton agent's bodies
come from its `flesh` block), slots, signals and machine model; variant and
type names; which cells define a handler name; and the builtins (the one
registry of `runtime.builtins`).
`Reporter` collects the diagnostics, each placed at a node of the program.
"""

from __future__ import annotations

from typing import Iterable, Optional

from ..core.diagnostics import Diagnostic, Suggestion
from ..core.records import Record, fresh
from ..runtime.builtins import all_builtins, builtin_entry
from ..syntax import ast
from ..syntax.machines import MachineModel, build_model
from .scopes import BodyFacts, body_facts


class CellInfo(Record):
    """One cell with its handlers (flesh bodies included) and sections."""

    decl: ast.CellDecl
    handlers: list[ast.Handler] = fresh(list)
    slots: dict[str, ast.Slot] = fresh(dict)
    signals: dict[str, ast.Signal] = fresh(dict)
    model: Optional[MachineModel] = None

    @property
    def name(self) -> str:
        """The cell's name."""
        return self.decl.name

    def handler(self, name: str) -> Optional[ast.Handler]:
        """The first handler called `name`, or None."""
        return next((h for h in self.handlers if h.name == name), None)

    def handler_names(self) -> list[str]:
        """Handler names in declaration order (duplicates kept once)."""
        return list(dict.fromkeys(h.name for h in self.handlers))


class ProgramIndex:
    """The program's cells, types and handler owners, plus the builtin tables."""

    def __init__(self, program: ast.Program):
        self.program = program
        self.cells: dict[str, CellInfo] = {}
        for decl in program.cells:
            self.cells.setdefault(decl.name, _cell_info(decl, program))
        self.types = {t.name: t for t in program.types}
        self.variants: dict[str, tuple[ast.TypeDecl, ast.VariantDecl]] = {}
        for type_decl in program.types:
            for variant in type_decl.variants:
                self.variants.setdefault(variant.name, (type_decl, variant))
        self._facts: dict[int, BodyFacts] = {}
        self.handler_owners: dict[str, list[str]] = {}
        for info in self.cells.values():
            for name in info.handler_names():
                self.handler_owners.setdefault(name, []).append(info.name)

    def facts(self, body_owner: ast.Node) -> BodyFacts:
        """The scope facts of a handler's or scheduled block's body (cached)."""
        key = id(body_owner)
        if key not in self._facts:
            params = [p.name for p in getattr(body_owner, "params", [])]
            self._facts[key] = body_facts(params, body_owner.body)
        return self._facts[key]

    def bodies(self) -> list[tuple[CellInfo, ast.Node]]:
        """Every (cell, handler or scheduled block) pair of the program's cells."""
        found = []
        for info in self.cells.values():
            found.extend((info, handler) for handler in info.handlers)
            found.extend((info, block) for block in info.decl.scheduled)
        return found

    def builtin_arity(self, name: str) -> Optional[tuple[int, Optional[int]]]:
        """(min, max) arguments of a builtin (max None = variadic), or None."""
        entry = builtin_entry(name)
        return None if entry is None else (entry.min_args, entry.max_args)

    def is_builtin(self, name: str) -> bool:
        """True for a builtin's name."""
        return builtin_entry(name) is not None

    def is_pure_builtin(self, name: str) -> bool:
        """True for a builtin without effects (needs no frame declaration)."""
        entry = builtin_entry(name)
        return entry is not None and entry.pure

    def builtin_names(self) -> list[str]:
        """Every builtin name (for spelling suggestions)."""
        return list(all_builtins())

    def only_machine(self) -> Optional[MachineModel]:
        """The program's machine when exactly one cell declares one."""
        models = [c.model for c in self.cells.values() if c.model is not None]
        return models[0] if len(models) == 1 else None


def _cell_info(decl: ast.CellDecl, program: ast.Program) -> CellInfo:
    """Index one cell; a skeleton's handlers come from its flesh blocks."""
    handlers = list(decl.handlers)
    if decl.kind == "skeleton":
        for flesh in program.fleshes:
            if flesh.name == decl.name:
                handlers.extend(flesh.handlers)
    slots = {s.name: s for s in decl.memory.slots} if decl.memory else {}
    signals = {s.name: s for s in decl.face.signals} if decl.face else {}
    model = build_model(decl.name, decl.machine) if decl.machine else None
    return CellInfo(decl, handlers, slots, signals, model)


def suggest(name: str, candidates: Iterable[str]) -> Optional[Suggestion]:
    """The spelling fix of `name`: the closest candidate, or None when none is close."""
    import difflib  # lazy: spelling suggestions are only made for a mistake

    close = difflib.get_close_matches(name, sorted(set(candidates) - {name}), n=1, cutoff=0.6)
    return Suggestion(name, close[0]) if close else None


def did_you_mean(suggestion: Optional[Suggestion], suffix: str = "", quote: str = "'") -> str:
    """` (did you mean 'x'?)` for a suggestion (`suffix` appended to the name,
    e.g. "()" for functions; `quote` around it), or the empty string."""
    return f" (did you mean {quote}{suggestion.meant}{suffix}{quote}?)" if suggestion else ""


class Reporter:
    """Collects errors, warnings and notes for one program."""

    def __init__(self, origin: str):
        self.origin = origin
        self.diagnostics: list[Diagnostic] = []

    def error(self, node: Optional[ast.Node], message: str, kind: str, hint: Optional[str] = None,
              suggestion: Optional[Suggestion] = None) -> None:
        """Report an error at `node` (with the did-you-mean fix its message names, if any)."""
        self._add("error", node, message, kind, hint, suggestion)

    def warning(self, node: Optional[ast.Node], message: str, kind: str, hint: Optional[str] = None) -> None:
        """Report a warning at `node`."""
        self._add("warning", node, message, kind, hint)

    def note(self, node: Optional[ast.Node], message: str, kind: str) -> None:
        """Report an informational note (printed as a `✓` line)."""
        self._add("note", node, message, kind, None)

    def _add(self, severity: str, node: Optional[ast.Node], message: str, kind: str, hint: Optional[str],
             suggestion: Optional[Suggestion] = None) -> None:
        span = node.span if node is not None else ast.NO_SPAN
        self.diagnostics.append(Diagnostic(severity, message, span, self.origin, kind, hint, suggestion))
