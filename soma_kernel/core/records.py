"""`Record`: the base of soma-kernel's plain data classes (AST nodes, reports, facts), cheap to define.

A record class lists its fields as annotated class attributes, in order, as a
dataclass does:

    class Step(Record):
        state: str
        via: Optional[str] = None
        handlers: list[str] = fresh(list)

and gets what a `@dataclass` would give it: an `__init__` taking the fields in
that order (by position or by name; `fresh(list)` makes a new empty list per
record), an `__eq__` comparing the fields of two records of the same class,
and a `__repr__` showing them. Like a dataclass, a record is unhashable unless
it is `frozen`. `FIELDS` names a class's fields in order.

Class options: `class Interval(Record, frozen=True)` refuses assignment after
`__init__` and hashes by the fields; `class Node(Record, metadata={"span":
NO_SPAN})` adds keyword-only fields with those defaults that equality,
hashing and repr leave out (an AST node's span).

Why not `@dataclass`: it compiles `__init__`, `__repr__` and `__eq__` (and
more when frozen) of each class when the class is defined, by separate
`exec` calls after much per-field work. With the ~100 such classes a command
imports, that was about half the import time of `soma-kernel verify`. A
record class compiles only its `__init__`, and only when its first record is
made (many classes, e.g. most AST nodes, are never used by one program);
equality, hashing and repr are generic methods of `Record`.
"""

from __future__ import annotations

from typing import Any, Callable, Optional


class fresh:
    """The default of a field that starts as a new empty container in every record:
    `edges: list[Edge] = fresh(list)` (what `field(default_factory=list)` is to a dataclass)."""

    __slots__ = ("factory",)

    def __init__(self, factory: Callable[[], object]):
        self.factory = factory


_REQUIRED = object()  # the `_DEFAULTS` entry of a field that has no default
_UNSET = object()  # the default a `fresh` field's parameter has, meaning "not given: make a new one"


class Record:
    """Base class of a plain data class: fields, `__init__`, equality and repr (see the module docstring)."""

    FIELDS: tuple[str, ...] = ()
    _DEFAULTS: dict[str, object] = {}
    _METADATA: dict[str, object] = {}
    _FROZEN = False
    __hash__ = None  # type: ignore[assignment]

    def __init_subclass__(cls, frozen: Optional[bool] = None, metadata: Optional[dict[str, object]] = None,
                          **kwargs: Any):
        super().__init_subclass__(**kwargs)
        cls._METADATA = {**cls._METADATA, **(metadata or {})}
        own = tuple(name for name in cls.__dict__.get("__annotations__", ()) if name not in cls._METADATA)
        defaults = dict(cls._DEFAULTS)
        for name in own:
            default = cls.__dict__.get(name, _REQUIRED)
            if isinstance(default, fresh):
                delattr(cls, name)  # the marker is no value: a record without the field must not read it
            defaults[name] = default
        cls.FIELDS = cls.FIELDS + own
        cls._DEFAULTS = defaults
        required = tuple(name for name in cls.FIELDS if defaults[name] is _REQUIRED)
        if cls.FIELDS[:len(required)] != required:
            raise TypeError(f"{cls.__name__}: a field without a default follows one with a default")
        if frozen is not None:
            cls._FROZEN = frozen
        if cls._FROZEN:
            cls.__hash__ = Record._hash  # type: ignore[assignment]
            cls.__setattr__ = Record._refuse_change  # type: ignore[assignment]
            cls.__delattr__ = Record._refuse_change  # type: ignore[assignment]
        cls.__init__ = _on_first_init  # type: ignore[method-assign]

    def _values(self) -> list:
        """The fields' values, in order (what equality and hashing compare)."""
        return [getattr(self, name) for name in self.FIELDS]

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self._values() == other._values()  # type: ignore[attr-defined]

    def _hash(self) -> int:
        """A frozen record's hash: that of its fields' values."""
        return hash(tuple(self._values()))

    def _refuse_change(self, name: str, *value: object) -> None:
        """A frozen record's `__setattr__` and `__delattr__`."""
        raise AttributeError(f"cannot assign to field {name!r} of a frozen {type(self).__name__}")

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.FIELDS)
        return f"{type(self).__qualname__}({shown})"


def _on_first_init(self: Record, *args, **kwargs) -> None:
    """A record class's `__init__` until its first record is made: compile the class's own, then run it."""
    cls = type(self)
    cls.__init__ = _compiled_init(cls)  # type: ignore[method-assign]
    cls.__init__(self, *args, **kwargs)


def _compiled_init(cls: type[Record]) -> Callable[..., None]:
    """The `__init__` of a record class, compiled from its fields and their defaults."""
    context: dict[str, object] = {"_UNSET": _UNSET, "_set": object.__setattr__}
    params, keywords, assigns = [], [], []
    for name, default in cls._METADATA.items():
        context[f"_default_{name}"] = default
        keywords.append(f"{name}=_default_{name}")
        assigns.append(_assignment(cls, name, name))
    for name in cls.FIELDS:
        default = cls._DEFAULTS[name]
        if default is _REQUIRED:
            params.append(name)
            assigns.append(_assignment(cls, name, name))
        elif isinstance(default, fresh):
            context[f"_new_{name}"] = default.factory
            params.append(f"{name}=_UNSET")
            assigns.append(_assignment(cls, name, f"_new_{name}() if {name} is _UNSET else {name}"))
        else:
            context[f"_default_{name}"] = default
            params.append(f"{name}=_default_{name}")
            assigns.append(_assignment(cls, name, name))
    signature = ", ".join(["self", *params, *(["*", *keywords] if keywords else [])])
    body = "".join(f"    {line}\n" for line in assigns) or "    pass\n"
    exec(f"def __init__({signature}):\n{body}", context)  # noqa: S102 - source built from the class's field names
    init = context["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"  # type: ignore[attr-defined]
    return init  # type: ignore[return-value]


def _assignment(cls: type[Record], name: str, value: str) -> str:
    """The line of `__init__` that sets one field (through object.__setattr__ when the class is frozen)."""
    if cls._FROZEN:
        return f"_set(self, {name!r}, {value})"
    return f"self.{name} = {value}"
