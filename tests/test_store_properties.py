"""Atomicity of stored invocations, property-based: random programs, random calls, injected failures.

Each example generates a program (one or two cells, each with a capped
persistent map, a persistent list, a non-persistent map, a chain machine
with a guarded shortcut), binds two runtimes to one store file (two
processes, in effect) and runs a random sequence of calls on either. Some
calls fail on purpose: an invariant refusal, `fail()` after writes, a guard
refusal, an invalid transition, a write out of a list's range, a `try` whose
block is rolled back while the rest commits, and a call run in a forked
child that is SIGKILLed in the middle of its invocation or between writing
its rows and COMMIT. A plain Python model applies exactly the calls that
should commit. After every step the file, the runtime that ran the call and
(after one invocation to catch up) the other runtime must equal the model:
slots, machine instances with their histories, `next_id` counters and
`remember()` values.
"""

from __future__ import annotations

import os
import signal
import sqlite3
import tempfile
from dataclasses import dataclass, field

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from soma_kernel.runtime.interpreter import Runtime
from soma_kernel.runtime.store import SlotStore
from soma_kernel.runtime.store import binding as store_binding
from soma_kernel.runtime.store import database as store_database
from soma_kernel.syntax.parser import parse
from soma_kernel.runtime.values import from_json

KEYS = ("a", "b", "c")
IDS = ("x", "y")
WORDS = ("p", "q")


@dataclass(frozen=True)
class Shape:
    """One generated cell: its map's cap, its machine's length and the guard's limit."""

    cap: int
    states: int
    limit: int


def cell_source(name: str, shape: Shape) -> str:
    """The Soma text of one generated cell."""
    chain = "\n".join(f"        s{i} -> s{i + 1}" for i in range(shape.states - 1))
    last = shape.states - 1
    return f"""
cell {name} {{
    memory {{
        m: Map<String, Int> [persistent]
        log: List<String> [persistent]
        tmp: Map<String, Int>
        invariant m <= {shape.cap}
    }}
    state flow {{
        initial: s0
{chain}
        s0 -> s{last} {{ guard {{ amount <= {shape.limit} }} }}
    }}
    on put(k: String, v: Int) {{ m.set(k, v)  tmp.set(k, v) }}
    on put_two(k: String, v: Int) {{ m.set(k, 1)  m.set(k + "2", v) }}
    on put_fail(k: String, v: Int) {{ m.set(k, v)  log.push("never")  fail("boom", "injected") }}
    on drop(k: String) {{ m.delete(k) }}
    on note(w: String) {{ log.push(w) }}
    on shift() {{ log.delete(0) }}
    on rewrite(i: Int, w: String) {{ log[i] = w }}
    on partial(k: String, v: Int) {{
        let r = try {{ m.set(k, v)  log.push("tried")  fail("inner", "rolled back") }}
        m.set(k + "_after", 1)
    }}
    on advance(id: String, target: String, amount: Int) {{ transition(id, target) }}
    on ticket() {{ return next_id() }}
    on learn(k: String, v: Int) {{ remember(k, v) }}
    on peek() {{ return 0 }}
}}
"""


@dataclass
class CellModel:
    """What should be committed for one cell."""

    shape: Shape
    m: dict = field(default_factory=dict)
    log: list = field(default_factory=list)
    current: dict = field(default_factory=dict)
    history: dict = field(default_factory=dict)
    counter: int = 0
    memory: dict = field(default_factory=dict)


def apply(model: CellModel, handler: str, args: tuple) -> None:
    """Change the model as the call should, when it commits (a refused call changes nothing)."""
    cap = model.shape.cap
    if handler == "put" and args[1] <= cap:
        model.m[args[0]] = args[1]
    elif handler == "put_two" and args[1] <= cap:
        model.m[args[0]] = 1
        model.m[args[0] + "2"] = args[1]
    elif handler == "drop":
        model.m.pop(args[0], None)
    elif handler == "note":
        model.log.append(args[0])
    elif handler == "shift" and model.log:
        model.log.pop(0)
    elif handler == "rewrite" and -len(model.log) <= args[0] < len(model.log):
        model.log[args[0]] = args[1]
    elif handler == "partial":
        model.m[args[0] + "_after"] = 1
    elif handler == "advance":
        advance(model, *args)
    elif handler == "ticket":
        model.counter += 1
    elif handler == "learn":
        model.memory[args[0]] = args[1]


def advance(model: CellModel, instance: str, target: str, amount: int) -> None:
    """A transition along the chain, or the guarded shortcut when the amount is within the limit."""
    last = f"s{model.shape.states - 1}"
    source = model.current.get(instance, "s0")
    step = int(source[1:]) + 1
    allowed = target == f"s{step}" or (source == "s0" and target == last and amount <= model.shape.limit)
    if not allowed:
        return
    model.history.setdefault(instance, [source]).append(target)
    model.current[instance] = target


CALLS = st.one_of(
    st.tuples(st.just("put"), st.tuples(st.sampled_from(KEYS), st.integers(0, 12))),
    st.tuples(st.just("put_two"), st.tuples(st.sampled_from(KEYS), st.integers(0, 12))),
    st.tuples(st.just("put_fail"), st.tuples(st.sampled_from(KEYS), st.integers(0, 5))),
    st.tuples(st.just("drop"), st.tuples(st.sampled_from(KEYS))),
    st.tuples(st.just("note"), st.tuples(st.sampled_from(WORDS))),
    st.tuples(st.just("shift"), st.just(())),
    st.tuples(st.just("rewrite"), st.tuples(st.integers(-3, 3), st.sampled_from(WORDS))),
    st.tuples(st.just("partial"), st.tuples(st.sampled_from(KEYS), st.integers(0, 5))),
    st.tuples(st.just("advance"), st.tuples(st.sampled_from(IDS), st.sampled_from(["s0", "s1", "s2", "s3"]),
                                            st.integers(0, 10))),
    st.tuples(st.just("ticket"), st.just(())),
    st.tuples(st.just("learn"), st.tuples(st.sampled_from(KEYS), st.integers(0, 9))),
)
SHAPES = st.builds(Shape, cap=st.integers(3, 9), states=st.integers(2, 4), limit=st.integers(0, 10))
STEPS = st.lists(st.tuples(st.sampled_from(["A", "B", "killed in run", "killed before COMMIT"]),
                           st.integers(0, 1), CALLS), min_size=1, max_size=25)


def runtime_on(program, path: str) -> Runtime:
    """A runtime of the program bound to the store file."""
    runtime = Runtime(note=lambda text: None)
    runtime.load_program(program)
    runtime.attach_store(SlotStore(path))
    return runtime


def call(runtime: Runtime, cell: str, handler: str, args: tuple) -> None:
    """One top-level call; its failure (any SomaError) is part of the test, not an error."""
    from soma_kernel.core.diagnostics import SomaError

    try:
        runtime.call(handler, list(args), cell=cell)
    except SomaError as err:
        assert err.kind != "store", err.text


def killed_call(program, path: str, cell: str, handler: str, args: tuple, during_commit: bool) -> None:
    """Run the call in a forked child that SIGKILLs itself mid-invocation (before or inside the commit)."""
    pid = os.fork()
    if pid == 0:
        try:
            runtime = runtime_on(program, path)
            die = lambda *ignored: os.kill(os.getpid(), signal.SIGKILL)  # noqa: E731
            if during_commit:
                store_database.Database.commit = die  # rows written, COMMIT never reached
            else:
                store_binding.SlotStore.commit = die  # the invocation ran; nothing written
            runtime.call(handler, list(args), cell=cell)
        finally:
            os._exit(0)  # the call refused before any commit: nothing to kill
    os.waitpid(pid, 0)


def file_state(path: str, cells: list[str]) -> dict:
    """Each cell's committed data, read straight from the file."""
    with sqlite3.connect(path) as db:
        rows = db.execute("SELECT cell, space, key, value FROM entries ORDER BY cell, space, key").fetchall()
    state = {cell: {"m": {}, "log": [], "current": {}, "history": {}, "counter": 0, "memory": {}} for cell in cells}
    for cell, space, key, value in rows:
        decoded, part = from_json(value), state[cell]
        if space == "map:m":
            part["m"][key] = decoded
        elif space == "list:log":
            assert key == len(part["log"]), "list positions are contiguous"
            part["log"].append(decoded)
        elif space == "instance":
            part["current"][key], part["history"][key] = decoded[0], decoded[1]
        elif space == "next_id":
            part["counter"] = decoded
        else:
            assert space == "remember", space
            part["memory"][key] = decoded
    return state


def runtime_state(runtime: Runtime, cells: list[str]) -> dict:
    """Each cell's live data in a runtime, in the same shape."""
    state = {}
    for name in cells:
        cell = runtime.cells[name]
        state[name] = {"m": dict(cell.slots["m"].data), "log": list(cell.slots["log"].data),
                       "current": dict(cell.machines.current), "history": dict(cell.machines.history),
                       "counter": cell.counter, "memory": dict(cell.memory)}
    return state


def model_state(models: dict[str, CellModel]) -> dict:
    """The model in the same shape."""
    return {name: {"m": model.m, "log": model.log, "current": model.current, "history": model.history,
                   "counter": model.counter, "memory": model.memory} for name, model in models.items()}


@settings(max_examples=120, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(shapes=st.lists(SHAPES, min_size=1, max_size=2), steps=STEPS)
def test_every_step_leaves_exactly_what_committed(shapes, steps):
    cells = [f"C{i}" for i in range(len(shapes))]
    program = parse("\n".join(cell_source(name, shape) for name, shape in zip(cells, shapes)))
    models = {name: CellModel(shape) for name, shape in zip(cells, shapes)}
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "store.sqlite")
        runtimes = {"A": runtime_on(program, path), "B": runtime_on(program, path)}
        for who, index, (handler, args) in steps:
            cell = cells[index % len(cells)]
            if who.startswith("killed"):
                killed_call(program, path, cell, handler, args, during_commit=who.endswith("COMMIT"))
            else:
                call(runtimes[who], cell, handler, args)
                apply(models[cell], handler, args)
            expected = model_state(models)
            assert file_state(path, cells) == expected, (who, handler, args)
            for name, runtime in runtimes.items():
                if name != who:
                    call(runtime, cells[0], "peek", ())
                assert runtime_state(runtime, cells) == expected, (name, who, handler, args)
        fresh = runtime_on(program, path)
        assert runtime_state(fresh, cells) == model_state(models)
        for runtime in (*runtimes.values(), fresh):
            runtime.detach_store()
