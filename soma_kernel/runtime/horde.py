"""horde() / horde_status() / vote(): many runs of one agent handler.

A horde runs right after the top-level invocation that started it commits:
each task its own atomic invocation (a failed task leaves none of its writes
behind) with a fresh budget, conversation and trace, retried at once up to
`max_attempts`. In the notebook and under `soma-kernel run` up to
`concurrency` tasks run at once on worker threads (runtime.workers): their
model requests, pauses and approve() waits overlap, their Soma code runs one
line at a time, taken in input order; under `soma test` (and with
`concurrency` 1) they run one after another in input order. `on_result` runs
as each task ends, `apply` at the end in input order. Tasks of one agent
`instance` run in input order, one at a time. Callbacks are handlers of the
calling cell, each run as its own invocation; `on_done` may start the next
horde (rounds), which runs next. `vote()` runs inside the calling handler,
its voters at once when it is called from the driver (not from a task).
An interrupt cancels the running horde (its running tasks rolled back) and
the ones queued behind it.

`budget_tokens` is a hard ceiling for the whole horde (providers.md §6): every
model request of a task or of a callback first reserves an upper bound of its
cost (agent.request_bound: request bytes + 8·messages + 16 + max_tokens) and
settles the real count after; a request that does not fit is refused (kind
`budget`), the task is stopped (counted cancelled, no on_error) and no other
task starts: the horde ends `exhausted`. A horde started by a task or a callback
reserves on its parent's budget too. With `instance`, the input field names an
agent instance whose remember()/recall() memory and model conversation carry
over from task to task and horde to horde.

The context that runs a horde pays for it: every request of its tasks, their
callbacks and the hordes they start also reserves on a `HordeBudget` made when
the horde runs from what is left of the caller's set_budget() (the notebook
session's, the `soma-kernel run`'s, the `soma test` rule's; no limit when there
is none), by the same rule, and the tokens it settles are added to the caller's
tokens_used() when the horde ends (ended by an interrupt too). A request that
spends no more than it reserved (every mock, every honest provider) keeps the
caller's spend within its budget exactly. Inside a task tokens_used() counts
that attempt's own tokens, from 0.
"""

from __future__ import annotations

import random as _random
import threading
from collections import deque
from dataclasses import dataclass, field
from typing import Any, Optional

from ..core.diagnostics import SomaError
from . import capabilities
from .values import display
from .workers import View

HORDE_OPTION_HELP = {
    "concurrency": "tasks run at once, 1 to 1000 (default 8; soma test runs them one after another)",
    "max_attempts": "tries of a failing task, retried at once, 1 to 10 (default 1)",
    "budget_tokens": "a token ceiling for the whole horde, reserved before each model request (else kind budget)",
    "snapshot": "a value every task gets as its second argument",
    "seed": "an Int seeding random() in each task (with the task's index)",
    "instance": "an input field naming the agent instance whose memory and conversation carry over",
    "on_result": "a handler of the calling cell, called with each result as its task ends",
    "apply": "a handler of the calling cell, called with each result at the end, in input order",
    "on_done": "a handler of the calling cell, called with the horde's id when it ends (it may start the next)",
    "on_error": "a handler of the calling cell, called with (input, {error, kind, detail}) for a failed task",
}
"""Each option of horde()'s options Map and what it does (what `?horde` lists)."""
HORDE_OPTIONS = tuple(HORDE_OPTION_HELP)
MAX_VOTERS = 25


class HordeBudget:
    """A horde's `budget_tokens`, or what a running horde may spend of its caller's
    set_budget() (`caller_budget`): spent + reserved never passes the limit, here nor
    on the parent's budget it is chained to."""

    def __init__(self, limit: Optional[int], parent: Optional["HordeBudget"] = None,
                 name: Optional[str] = None):
        self.limit = limit  # None: no ceiling, the tokens are only counted
        self.parent = parent
        self.name = name if name is not None else f"horde budget_tokens {limit}"
        self.spent = 0
        self.reserved = 0
        self.exhausted = False

    def is_exhausted(self) -> bool:
        """True once a request was refused here or on a parent."""
        return self.exhausted or (self.parent is not None and self.parent.is_exhausted())

    def reserve(self, want: int) -> None:
        """Hold `want` tokens for one request, or refuse it (kind `budget`) and stop the horde."""
        if self.exhausted or (self.limit is not None and self.spent + self.reserved + want > self.limit):
            self.exhausted = True
            raise SomaError("budget", f"token budget exhausted: {self.name} — "
                            f"{self.spent} spent, {self.reserved} reserved by calls in flight, "
                            f"this call needs up to {want}")
        self.reserved += want
        if self.parent is not None:
            try:
                self.parent.reserve(want)
            except SomaError:
                self.reserved -= want
                self.exhausted = True
                raise

    def waits_for_others(self, want: int) -> bool:
        """True when `want` does not fit now only because of other requests' reservations
        (here or on a parent): once they settle it may fit."""
        if self.exhausted or (self.limit is not None and self.spent + want > self.limit):
            return False
        here = self.limit is not None and self.reserved > 0 and self.spent + self.reserved + want > self.limit
        return here or (self.parent is not None and self.parent.waits_for_others(want))

    def settle(self, reserved: int, spent: int) -> None:
        """A request is over: `reserved` back, `spent` counted (here and on the parent)."""
        self.reserved -= reserved
        self.spent += spent
        if self.parent is not None:
            self.parent.settle(reserved, spent)


@dataclass
class Horde:
    """One horde: its target, inputs, options and counters."""

    id: str
    owner: Optional[str]
    target: tuple[str, str]
    inputs: list
    options: dict
    state: str = "queued"
    done: int = 0
    failed: int = 0
    cancelled: int = 0
    running: int = 0
    tokens: int = 0
    results: list = field(default_factory=list)
    budget: Optional[HordeBudget] = None  # its own budget_tokens, else its parent's, else none
    caller: Optional[HordeBudget] = None  # while it runs: what is left of the running context's set_budget()
    used_before: int = 0  # the running context's tokens_used() when it started
    capabilities: tuple = ()  # the tool capabilities in force where it was started (its tasks keep them)

    def status(self) -> dict:
        """The horde_status() Map (`tokens`: the budget's count, callbacks included, when there is one)."""
        ended = self.done + self.failed + self.cancelled
        status = {"state": self.state, "total": len(self.inputs), "queued": len(self.inputs) - ended - self.running,
                  "running": self.running, "done": self.done, "failed": self.failed, "cancelled": self.cancelled,
                  "tokens": self.budget.spent if self.budget is not None else self.tokens}
        if self.options["budget_tokens"] is not None:
            status["budget_tokens"] = self.options["budget_tokens"]
        return status


def handler_reference(value, what: str) -> tuple[str, str]:
    """("Cell", "handler") from a `Cell.h` reference (a "Cell.h" String)."""
    if isinstance(value, str) and value.count(".") == 1 and all(value.split(".")):
        cell, name = value.split(".")
        return cell, name
    raise SomaError("type", f"{what}: the first argument must be a handler reference Cell.handler, got {display(value)}")


def int_option(options: dict, name: str, low: int, high: Optional[int], default: Optional[int]):
    """An Int option within [low, high] (`default` when absent)."""
    if name not in options:
        return default
    value = options[name]
    if type(value) is not int or value < low or (high is not None and value > high):
        bound = f"{low}–{high}" if high is not None else f">= {low}"
        raise SomaError("type", f"horde(): option '{name}' must be an Int {bound}, got {display(value)}")
    return value


class Hordes:
    """The runtime's hordes: started ones by id, the queue still to run."""

    def __init__(self, runtime):
        self.rt = runtime
        self.by_id: dict[str, Horde] = {}
        self.pending: deque[Horde] = deque()
        self.instances: dict[tuple, dict] = {}
        self.count = 0
        self.draining = False

    def reset(self) -> None:
        """Forget every horde (a full reset of the runtime)."""
        self.by_id.clear()
        self.pending.clear()
        self.instances.clear()
        self.count = 0

    # ------------------------------------------------------------ horde()

    def start(self, values: list, cell) -> str:
        """horde(Cell.h, inputs, opts?): validate, queue, return the id."""
        target = handler_reference(values[0], "horde()")
        inputs = values[1]
        if not isinstance(inputs, list):
            raise SomaError("type", f"horde(): inputs must be a List, got {display(inputs)}")
        options = values[2] if len(values) == 3 else {}
        if not isinstance(options, dict):
            raise SomaError("type", f"horde(): options must be a Map, got {display(options)}")
        options = self.checked_options(options, target, cell)
        self.count += 1
        owner = cell.name if cell is not None else target[0]
        horde = Horde(f"{owner}:h{self.count}", cell.name if cell is not None else None, target, list(inputs), options)
        parent = self.rt.agent.horde_budget
        limit = options["budget_tokens"]
        horde.budget = HordeBudget(limit, parent) if limit is not None else parent
        horde.capabilities = capabilities.current()
        self.by_id[horde.id] = horde
        self.pending.append(horde)
        self.rt.journal.record(lambda: self.forget(horde))
        return horde.id

    def forget(self, horde: Horde) -> None:
        """Undo a horde() whose invocation failed."""
        self.by_id.pop(horde.id, None)
        if horde in self.pending:
            self.pending.remove(horde)
        self.count -= 1

    def checked_options(self, options: dict, target: tuple[str, str], cell) -> dict:
        """The options, validated, with defaults filled in."""
        for key in options:
            if key not in HORDE_OPTIONS:
                raise SomaError("type", f"horde(): unknown option '{key}' — the options are {', '.join(HORDE_OPTIONS)}")
        checked = dict(options)
        checked["concurrency"] = int_option(options, "concurrency", 1, 1000, 8)
        checked["max_attempts"] = int_option(options, "max_attempts", 1, 10, 1)
        checked["budget_tokens"] = int_option(options, "budget_tokens", 1, None, None)
        checked["seed"] = int_option(options, "seed", -(2 ** 63), 2 ** 63 - 1, None)
        if "instance" in options and not isinstance(options["instance"], str):
            raise SomaError("type", f"horde(): option 'instance' must be a field name (String), "
                            f"got {display(options['instance'])}")
        if "on_result" in options and "apply" in options:
            raise SomaError("type", "horde(): give on_result (as tasks end) or apply (at the end), not both")
        nargs = 2 if "snapshot" in options else 1
        self.target_function(target, nargs, "horde()")
        for name, arity in (("on_result", 1), ("apply", 1), ("on_done", 1), ("on_error", 2)):
            if name in options:
                self.callback_check(cell, name, options[name], arity)
        return checked

    def target_function(self, target: tuple[str, str], nargs: int, what: str):
        """The compiled handler Cell.h taking `nargs` arguments."""
        cell_name, name = target
        state = self.rt.cells.get(cell_name)
        if state is None:
            raise SomaError("undefined_variable", f"{what}: no cell named '{cell_name}'")
        decl = state.handler(name, nargs)
        if decl is None:
            raise SomaError("type", f"{what}: {cell_name}.{name} must be a handler taking {nargs} "
                            f"argument{'' if nargs == 1 else 's'}")
        return self.rt.bound_handler(state, decl)

    def callback_check(self, cell, option: str, name, arity: int) -> None:
        """Refuse a callback that is not a handler of the calling cell taking `arity` arguments."""
        if not isinstance(name, str):
            raise SomaError("type", f"horde(): option '{option}' must be a handler name (String), got {display(name)}")
        if cell is None:
            raise SomaError("type", f"horde(): option '{option}' needs a calling cell — call horde() from a handler")
        if cell.handler(name, arity) is None:
            raise SomaError("type", f"horde(): {option} '{name}' is not a handler of {cell.name} taking {arity} "
                            f"argument{'' if arity == 1 else 's'}")

    def status(self, horde_id) -> dict:
        """horde_status(id)."""
        horde = self.by_id.get(horde_id) if isinstance(horde_id, str) else None
        if horde is None:
            raise SomaError("not_found", f"horde_status(): no horde {display(horde_id)}")
        return horde.status()

    # ------------------------------------------------------------ running

    def drain(self) -> None:
        """Run every queued horde (and the ones their on_done starts), in order; an
        interrupt cancels the running horde and every queued one."""
        if self.draining:
            return
        self.draining = True
        try:
            while self.pending:
                horde = self.pending.popleft()
                with capabilities.within(horde.capabilities):
                    self.run(horde)
        except KeyboardInterrupt:
            while self.pending:
                cancel_counts(self.pending.popleft())
            raise
        finally:
            self.draining = False

    def run(self, horde: Horde) -> None:
        """All tasks of one horde, then apply / on_done, under the horde's budget."""
        horde.state = "running"
        agent = self.rt.agent
        saved = (agent.horde_budget, agent.budget, agent.used)
        agent.horde_budget, agent.caller_budget = horde.budget, caller_budget(agent.budget, agent.used)
        horde.caller, horde.used_before = agent.caller_budget, agent.used
        try:
            function = self.target_function(horde.target, 2 if "snapshot" in horde.options else 1, "horde()")
            if self.concurrent(horde):
                self.run_at_once(horde, function)
            else:
                self.run_in_order(horde, function)
            horde.state = "exhausted" if self.out_of_budget(horde) else "done"
            for _index, result in sorted(horde.results, key=lambda pair: pair[0]):
                self.callback(horde, "apply", [result])
            self.callback(horde, "on_done", [horde.id])
        except KeyboardInterrupt:
            cancel_counts(horde)
            raise
        finally:
            agent.horde_budget, agent.budget, agent.used = saved
            agent.used += horde.caller.spent  # the caller pays for its tasks and callbacks, failed ones too
            agent.caller_budget = None

    def concurrent(self, horde: Horde) -> bool:
        """True when the tasks run on workers: outside `soma test`, with concurrency > 1 and
        more than one task, from the driver (a horde is never run by a worker)."""
        return (not self.rt.under_test and horde.options["concurrency"] > 1 and len(horde.inputs) > 1
                and self.rt.gate.current_run() is None)

    def run_in_order(self, horde: Horde, function) -> None:
        """The tasks one after another, in input order."""
        for index, item in enumerate(horde.inputs):
            if self.out_of_budget(horde):
                horde.cancelled += 1
                continue
            self.run_task(horde, function, index, item)

    def run_at_once(self, horde: Horde, function) -> None:
        """The tasks on up to `concurrency` workers, each taking the next input in order."""
        rt = self.rt
        pending = iter(enumerate(horde.inputs))
        turns = self.instance_turns(horde)
        ended = [threading.Event() for _ in horde.inputs]

        def job(worker) -> None:
            with capabilities.within(horde.capabilities):  # a worker thread starts with no capability
                run_tasks(worker)

        def run_tasks(worker) -> None:
            for index, item in pending:
                if self.out_of_budget(horde):
                    horde.cancelled += 1 + sum(1 for _ in pending)
                    return
                before = turns.get(index)
                if before is not None and not ended[before].is_set():
                    with rt.gate.outside():
                        ended[before].wait()
                try:
                    self.run_task(horde, function, index, item)
                finally:
                    ended[index].set()

        cell_name, seeded = horde.target[0], horde.options["seed"] is not None
        rt.gate.run(min(horde.options["concurrency"], len(horde.inputs)),
                    lambda: View(rt, cell_name, agent_fields=True, seeded=seeded), job)

    def instance_turns(self, horde: Horde) -> dict[int, int]:
        """With `instance`: each task's index -> the index of the previous task of the same
        instance (it waits for that one to end)."""
        key = horde.options.get("instance")
        if key is None:
            return {}
        last: dict[str, int] = {}
        turns = {}
        for index, item in enumerate(horde.inputs):
            if isinstance(item, dict) and key in item:
                name = display(item[key])
                if name in last:
                    turns[index] = last[name]
                last[name] = index
        return turns

    @staticmethod
    def out_of_budget(horde: Horde) -> bool:
        """True once the horde's budget (or a parent's) or its caller's refused a request."""
        return ((horde.budget is not None and horde.budget.is_exhausted())
                or (horde.caller is not None and horde.caller.is_exhausted()))

    def run_task(self, horde: Horde, function, index: int, item) -> None:
        """One task, its retries, and its on_result / on_error; a task the budget
        stopped is counted cancelled, without on_error."""
        horde.running += 1
        counted = False
        try:
            error: Optional[SomaError] = None
            for _attempt in range(horde.options["max_attempts"]):
                try:
                    value = self.attempt(horde, function, index, item)
                except SomaError as err:
                    error = err
                    if self.out_of_budget(horde):
                        break
                    continue
                horde.running -= 1
                counted = True
                horde.done += 1
                if "apply" in horde.options:
                    horde.results.append((index, value))
                self.callback(horde, "on_result", [value])
                return
            horde.running -= 1
            counted = True
            if error.kind == "budget" and self.out_of_budget(horde):
                horde.cancelled += 1
                return
            horde.failed += 1
            self.callback(horde, "on_error", [item, {"error": str(error), "kind": error.kind, "detail": error.detail}])
        finally:
            if not counted and horde.state != "cancelled":
                horde.running -= 1

    def attempt(self, horde: Horde, function, index: int, item):
        """One attempt of a task as its own invocation, with fresh tokens, budget,
        trace and conversation (an instance's own memory and conversation); its
        tokens are added to the horde's, the caller's count is left as it was."""
        rt, options = self.rt, horde.options
        agent = rt.agent
        cell_name = horde.target[0]
        args = [item, options["snapshot"]] if "snapshot" in options else [item]
        state = rt.cells[cell_name]
        saved = (agent.trace, agent.budget, agent.used, agent.conversation(cell_name), state.memory, state.on_remember)
        saved_random = _random.getstate() if options["seed"] is not None else None
        instance = self.instance_of(horde, item) if "instance" in options else None
        agent.trace, agent.budget, agent.used = [], None, 0
        agent.set_conversation(cell_name, list(instance["conversation"]) if instance is not None else None)
        if instance is not None:
            state.memory, state.on_remember = instance["memory"], None
        if saved_random is not None:
            _random.seed(f"{options['seed']}:{index}")
        try:
            value = rt.invoke(function, args)
            if instance is not None:
                instance["conversation"] = list(agent.conversation(cell_name) or [])
            return value
        finally:
            horde.tokens += agent.used
            agent.trace, agent.budget, agent.used = saved[0], saved[1], saved[2]
            agent.set_conversation(cell_name, saved[3])
            state.memory, state.on_remember = saved[4], saved[5]
            if saved_random is not None:
                _random.setstate(saved_random)

    def instance_of(self, horde: Horde, item) -> dict:
        """The agent instance named by the input's `instance` field: its memory and
        its conversation, kept across tasks and hordes."""
        key = horde.options["instance"]
        if not isinstance(item, dict) or key not in item:
            raise SomaError("type", f"horde(): option instance '{key}' names no field of the input {display(item)}")
        return self.instances.setdefault((horde.target[0], display(item[key])), {"memory": {}, "conversation": []})

    def callback(self, horde: Horde, option: str, args: list) -> None:
        """Run a callback handler of the calling cell as its own invocation; a failure is noted, not raised."""
        name = horde.options.get(option)
        if name is None:
            return
        state = self.rt.cells.get(horde.owner)
        decl = state.handler(name, len(args)) if state is not None else None
        if decl is None:
            self.rt.note(f"horde {horde.id}: {option} handler '{name}' is gone")
            return
        function = self.rt.bound_handler(state, decl)
        if horde.caller is not None:  # a callback runs in its caller's context: it sees what the horde spent so far
            self.rt.agent.used = horde.used_before + horde.caller.spent
        try:
            self.rt.invoke(function, args)
        except SomaError as err:
            self.rt.note(f"horde {horde.id}: {option} {name} failed: {err}")

    # ------------------------------------------------------------ vote()

    def vote(self, reference, item, k) -> dict:
        """vote(Cell.h, input, k): k fresh calls, tallied by printed value (the earliest voters first)."""
        target = handler_reference(reference, "vote()")
        if type(k) is not int or not 1 <= k <= MAX_VOTERS:
            raise SomaError("type", f"vote(): k must be an Int 1–{MAX_VOTERS}, got {display(k)}")
        function = self.target_function(target, 1, "vote()")
        if k > 1 and not self.rt.under_test and self.rt.gate.current_run() is None:
            outcomes = self.voters_at_once(function, target[0], item, k)
        else:
            outcomes = [self.outcome(function, target[0], item) for _ in range(k)]
        votes = [value for failed, value in outcomes if not failed]
        if not votes:
            raise outcomes[0][1]
        return tally(votes, k)

    def outcome(self, function, cell_name: str, item) -> tuple[bool, object]:
        """(False, value) of one voter, or (True, its SomaError)."""
        try:
            return False, self.voter(function, cell_name, item)
        except SomaError as err:
            return True, err

    def voters_at_once(self, function, cell_name: str, item, k: int) -> list:
        """The k voters on k workers: their writes join the calling invocation's, the
        conversation left behind is the last voter's (as when they run in turn)."""
        rt = self.rt
        outcomes: list = [None] * k
        conversations: list = [None] * k
        pending = iter(range(k))

        def job(worker) -> None:
            for index in pending:
                outcomes[index] = self.outcome(function, cell_name, item)
                conversations[index] = worker.hand_over(keep_entries=not outcomes[index][0])[1]

        rt.gate.run(k, lambda: View(rt, cell_name, agent_fields=False, seeded=False), job)
        rt.agent.set_conversation(cell_name, conversations[-1])
        return outcomes

    def voter(self, function, cell_name: str, item):
        """One voter: a fresh conversation; its writes rolled back if it fails."""
        journal = self.rt.journal
        mark = journal.savepoint()
        self.rt.agent.clear_context(cell_name)
        try:
            return function([item])
        except SomaError:
            journal.rollback(mark)
            raise


def caller_budget(budget: Optional[int], used: int) -> HordeBudget:
    """What a horde may spend of the running context's set_budget() (`budget`, `used` so
    far): the rest of it, or no ceiling without one."""
    if budget is None:
        return HordeBudget(None, name="no set_budget()")
    left = max(budget - used, 0)
    return HordeBudget(left, name=f"set_budget({budget}) of the horde's caller, {left} left when the horde started")


def cancel_counts(horde: Horde) -> None:
    """An interrupted horde: every task that has not ended counts as cancelled."""
    horde.state = "cancelled"
    horde.cancelled = len(horde.inputs) - horde.done - horde.failed
    horde.running = 0


def tally(votes: list, k: int) -> dict:
    """The vote() result: the most printed value (the earliest on a tie)."""
    counts: dict[str, int] = {}
    first: dict[str, Any] = {}
    for value in votes:
        text = display(value)
        counts[text] = counts.get(text, 0) + 1
        first.setdefault(text, value)
    best = max(counts, key=lambda text: counts[text])  # max keeps the first of equal counts: the earliest
    return {"winner": first[best], "count": counts[best], "k": k, "unanimous": counts[best] == k,
            "errors": k - len(votes), "votes": votes}
