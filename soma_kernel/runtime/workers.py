"""Worker threads that share one runtime: how a horde's tasks (and vote()'s voters) run at once.

The interpreter's state — memory, machine instances, the undo journal, the agent — is
touched by one thread at a time: the one holding the runtime's token (`Gate.token`). The
thread that drives the runtime holds it; a horde lends it to its workers while it waits for
them. A worker gives the token up only around a blocking wait (`Gate.outside`: a model
request, a rate-limit or retry pause, `sleep()`, a person's `approve()` answer), so those
waits overlap while every line of Soma still runs alone. A worker whose task holds an
uncommitted write to shared state keeps the token through its waits: writes are serialised,
invariants are checked against the state every other task left, and a failed task's rollback
can never undo another task's write.

What is a task's own while it waits (its agent fields, its cell's conversation and memory,
the seeded random generator, its journal entries) is a `View`: saved when its thread gives
the token up, put back when it takes it again.

An interrupt of the waiting driver cancels the run: workers running Soma code are stopped
(`Cancelled`, rolled back like any failure), workers back from a wait stop there. A worker
still inside a wait (a slow request) is left behind as an orphan: it ends, rolled back, the
next time the driver lends the token (`Gate.settle`), so the interrupt answers at once.
"""

from __future__ import annotations

import contextvars
import random as _random
import threading
from contextlib import contextmanager
from typing import Callable, Iterator, Optional


SAFETY_WAIT_S = 300.0  # the longest a worker waits for other requests' reservations before it re-checks


class Cancelled(BaseException):
    """Raised inside a worker whose run was interrupted: its task stops and is rolled back."""


class View:
    """The runtime state a worker keeps as its own: agent fields, one cell's conversation
    and memory, the random generator (for a seeded horde) and the journal's entries."""

    AGENT_FIELDS = ("trace", "budget", "used", "horde_budget", "tool_ceiling")

    def __init__(self, runtime, cell_name: str, agent_fields: bool, seeded: bool):
        self.rt = runtime
        self.cell_name = cell_name
        self.fields = self.AGENT_FIELDS if agent_fields else ()
        self.seeded = seeded

    def snapshot(self) -> tuple:
        """The current values of everything in the view."""
        rt, agent = self.rt, self.rt.agent
        state = rt.cells.get(self.cell_name)
        return (tuple(getattr(agent, name) for name in self.fields),
                agent.conversation(self.cell_name),
                (state.memory, state.on_remember) if state is not None and self.fields else None,
                _random.getstate() if self.seeded else None,
                list(rt.journal.entries))

    def apply(self, values: tuple, entries: Optional[list] = None) -> None:
        """Put `values` back (with `entries` as the journal's, when given)."""
        rt, agent = self.rt, self.rt.agent
        fields, conversation, memory, random_state, saved_entries = values
        for name, value in zip(self.fields, fields):
            setattr(agent, name, value)
        agent.set_conversation(self.cell_name, conversation)
        state = rt.cells.get(self.cell_name)
        if memory is not None and state is not None:
            state.memory, state.on_remember = memory
        if random_state is not None:
            _random.setstate(random_state)
        rt.journal.entries[:] = saved_entries if entries is None else entries

    def private_entries_only(self) -> bool:
        """True when every journal entry undoes something of this task alone (its own
        conversation's growth): giving the token up then exposes no uncommitted write."""
        own = self.rt.agent.conversation(self.cell_name)
        return all(own is not None and getattr(entry, "conversation", None) is own for entry in self.rt.journal.entries)


class Worker:
    """One worker thread's side of the token: taking it, giving it up around waits."""

    def __init__(self, gate: "Gate", run: "Run", view: View):
        self.gate = gate
        self.run = run
        self.view = view
        self.mine: Optional[tuple] = None   # the view while someone else holds the token
        self.outer: Optional[tuple] = None  # what the token's lender had, put back when giving it up
        self.state = "running"              # running (holds or wants the token), outside (a wait), done
        self.holding = False
        self.thread: Optional[threading.Thread] = None

    def enter(self) -> None:
        """Take the token and put this worker's view in place; raise Cancelled if the run was interrupted."""
        self.gate.token.acquire()
        self.holding = True
        self.outer = self.view.snapshot()
        if self.mine is None:
            self.view.rt.journal.entries.clear()  # a worker starts with no entries of its own
        else:
            self.view.apply(self.mine)
        self.gate.holder = self
        if self.run.cancelled:
            raise Cancelled()

    def leave(self) -> None:
        """Keep this worker's view and give the lender's state and the token back."""
        if not self.holding:
            return
        self.gate.holder = None
        self.mine = self.view.snapshot()
        self.view.apply(self.outer)
        self.holding = False
        self.gate.token.release()

    def hand_over(self, keep_entries: bool) -> tuple:
        """At the end of a job: this worker's view; with `keep_entries`, its journal entries
        join the lender's (a voter's writes are the calling invocation's)."""
        mine = self.view.snapshot()
        if keep_entries:
            self.outer[4].extend(mine[4])
        self.view.rt.journal.entries.clear()
        return mine

    def may_wait_outside(self) -> bool:
        """True when the token can be given up for a wait (no shared write is pending)."""
        agent = self.view.rt.agent
        if not self.view.fields and agent.budget is not None:
            return False  # voters share the caller's budget: its check and charge stay together
        return self.view.private_entries_only()


class Run:
    """One group of workers lent the token (a horde's tasks, a vote's voters)."""

    def __init__(self):
        self.cancelled = False
        self.workers: list[Worker] = []


class Gate:
    """The runtime's token and the worker threads it is lent to."""

    def __init__(self, runtime):
        self.rt = runtime
        self.token = threading.Lock()
        self.token.acquire()  # the driver holds it; runs lend it to their workers
        self.local = threading.local()
        self.changed = threading.Condition()
        self.holder: Optional[Worker] = None
        self.orphans: list[Worker] = []
        self.ask_lock = threading.Lock()  # one question to a person at a time

    # ------------------------------------------------------------ inside a worker

    @contextmanager
    def outside(self) -> Iterator[None]:
        """Around a blocking wait: other workers run meanwhile (a no-op outside a worker,
        and for a worker holding an uncommitted shared write)."""
        worker = getattr(self.local, "worker", None)
        if worker is None or not worker.holding or not worker.may_wait_outside():
            yield
            return
        store = self.rt.store
        restart_store = store is not None and store.active
        if restart_store:
            store.commit()  # nothing is written: the task has no write yet
        worker.leave()
        self._set_state(worker, "outside")
        try:
            yield
        finally:
            self._set_state(worker, "running")
            worker.enter()
            if restart_store:
                store.begin()

    def wait_until(self, ready: Callable[[], bool]) -> bool:
        """In a worker that can give the token up: wait (outside) until `ready()`, which other
        workers make true under the token and announce with `notify`, and return True (the
        caller checks again). Elsewhere: False at once."""
        worker = getattr(self.local, "worker", None)
        if worker is None or not worker.holding or not worker.may_wait_outside():
            return False
        with self.outside():
            with self.changed:
                return bool(self.changed.wait_for(lambda: ready() or worker.run.cancelled, SAFETY_WAIT_S))

    def notify(self) -> None:
        """Something a waiting worker may be waiting for changed (a request settled)."""
        if self.local.__dict__.get("worker") is not None:
            with self.changed:
                self.changed.notify_all()

    def asking(self) -> Iterator[None]:
        """Around a question to a person: a wait, and one question at a time."""
        return _nested(self.outside(), self.ask_lock)

    def current_run(self) -> Optional[Run]:
        """The run the calling thread works for (None in the driver)."""
        worker = getattr(self.local, "worker", None)
        return worker.run if worker is not None else None

    # ------------------------------------------------------------ in the driver

    def run(self, count: int, view: Callable[[], View], job: Callable[[Worker], None]) -> Run:
        """Run `job(worker)` on `count` threads, lending them the token until all have ended.

        An interrupt (KeyboardInterrupt in the driver) cancels the run, waits for the
        workers that are not inside a wait, then goes on."""
        self.settle()
        run = Run()
        run.workers = [Worker(self, run, view()) for _ in range(count)]
        for worker in run.workers:
            context = contextvars.copy_context()  # the notebook's input request reads the cell's context
            worker.thread = threading.Thread(target=context.run, args=(self._work, worker, job), daemon=True,
                                             name="soma-worker")
        self.token.release()
        try:
            for worker in run.workers:
                worker.thread.start()
            self._wait(lambda: all(w.state == "done" for w in run.workers))
        except KeyboardInterrupt:
            self._cancel(run)
            raise
        finally:
            self.token.acquire()
        return run

    def settle(self) -> None:
        """Let orphans that came back from their waits end (rolled back) before the driver goes on."""
        if not self.orphans:
            return
        self.orphans = [w for w in self.orphans if w.state != "done"]
        if any(w.state == "running" for w in self.orphans):
            self.token.release()
            try:
                self._wait(lambda: not any(w.state == "running" for w in self.orphans))
            finally:
                self.token.acquire()
            self.orphans = [w for w in self.orphans if w.state != "done"]

    def _cancel(self, run: Run) -> None:
        """Stop every worker of `run`: the one running Soma code is interrupted, the others stop
        when they next take the token; wait for all but those inside a wait (the orphans)."""
        run.cancelled = True
        interrupted: set[int] = set()
        while True:
            holder = self.holder
            if holder is not None and holder.run is run and id(holder) not in interrupted:
                interrupted.add(id(holder))  # once: a second one could land in the first one's rollback
                interrupt_thread(holder.thread)
            try:
                self._wait(lambda: not any(w.state == "running" for w in run.workers), timeout=0.2)
            except KeyboardInterrupt:
                continue
            if not any(w.state == "running" for w in run.workers):
                break
        self.orphans += [w for w in run.workers if w.state == "outside"]

    def _wait(self, done: Callable[[], bool], timeout: Optional[float] = None) -> None:
        """Block until `done()` (each worker state change re-checks it)."""
        with self.changed:
            self.changed.wait_for(done, timeout)

    def _set_state(self, worker: Worker, state: str) -> None:
        with self.changed:
            worker.state = state
            self.changed.notify_all()

    def _work(self, worker: Worker, job: Callable[[Worker], None]) -> None:
        """A worker thread: take the token, do the job, give everything back."""
        self.local.worker = worker
        try:
            worker.enter()
            job(worker)
        except Cancelled:
            pass
        finally:
            try:
                if worker.holding and self.rt.journal.entries:
                    self.rt.journal.rollback(0)  # what a cancelled voter or an interrupted rollback left
                worker.leave()
            finally:
                self._set_state(worker, "done")


def interrupt_thread(thread: Optional[threading.Thread]) -> None:
    """Raise Cancelled in `thread` at its next Python instruction (a worker running Soma code)."""
    import ctypes  # lazy: only an interrupted concurrent horde needs it

    if thread is not None and thread.ident is not None:
        ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(thread.ident), ctypes.py_object(Cancelled))


@contextmanager
def _nested(first, lock) -> Iterator[None]:
    """`with first: with lock:` as one context."""
    with first:
        with lock:
            yield
