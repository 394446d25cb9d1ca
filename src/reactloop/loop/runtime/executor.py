"""``ToolExecutor``: where and when a turn's prepared calls run, under the run's deadline.

The toolbox gives each call (``Toolbox.prepare``) and turns a call into its result
(``Toolbox.invoke``, ``ainvoke``); the executor decides only where it runs and how long it is
waited for. A run with a time limit goes on a thread of its own, which the caller's thread
gives up on at the deadline (``custody.py``): there, one call runs inline, a sync tool on the
run's thread and an async one on the event loop that thread runs (``async_calls.OwnLoop``), no
hand-off a call. A turn of read-only calls runs concurrently, at most ``MAX_PARALLEL`` at a
time: sync tools on daemon worker threads (``workers.py``), abandoned at the deadline (Python
cannot stop a thread: it runs on, and whatever it returns is discarded, as its result says),
async ones on that loop, cancelled at the deadline (or on a loop thread when this thread
already runs a loop). Without a deadline, or for a tool that bounds its own time
(``Tool.bounded``), a sync call runs on the caller's thread. A result that comes after the
deadline is discarded (``unfinished.py``: the results of calls that did not finish).

An interruption (Ctrl-C while a tool runs, or a tool raising ``KeyboardInterrupt``) never
escapes: the call gets an error result and ``interrupted`` is set, for the caller to stop.
``asyncio`` is imported by the first async tool's call and ``concurrent.futures`` by the first
call on a thread, so that a run without them loads neither.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol

from reactloop.loop.runtime.async_calls import LoopThread, OwnLoop
from reactloop.loop.runtime.custody import ASYNC_GRACE, OWN_END_GRACE, Custody, RunTaken
from reactloop.loop.runtime.custody import current as current_custody
from reactloop.loop.runtime.unfinished import (
    abandoned,
    cancelled_at_limit,
    interrupted,
    late,
    not_started,
    ran_without_result,
)
from reactloop.loop.runtime.workers import Workers, wait_all
from reactloop.messages import ToolCall, ToolResult
from reactloop.support.interrupts import NotStarted
from reactloop.tools.context import run_deadline_scope
from reactloop.tools.prepared import PreparedCall
from reactloop.tools.toolbox import Toolbox

if TYPE_CHECKING:
    from concurrent.futures import Future

MAX_PARALLEL = 8


class _Interrupted(Exception):
    pass


class _Pending(Protocol):
    """A call under way: a ``concurrent.futures.Future`` or an ``asyncio.Task``."""

    def result(self) -> Any: ...

    def cancel(self) -> bool: ...


class ToolExecutor:
    """Runs one run's prepared calls (``CallRunner``); ``close`` ends its threads and loops."""

    def __init__(self, toolbox: Toolbox) -> None:
        self._toolbox = toolbox
        self._workers: Workers | None = None
        self._own = OwnLoop()
        self._loop_thread = LoopThread()
        self.interrupted = False
        self.cancel: threading.Event | None = None  # set: stop waiting, as for a Ctrl-C

    def run_one(self, prepared: PreparedCall, deadline: float | None) -> ToolResult:
        """Run one call; ``deadline`` is a ``time.monotonic()`` value, or None."""
        tool = prepared.tool
        if prepared.values is None or tool is None:
            return self._toolbox.invoke(prepared)  # refused: the toolbox says why
        if self.cancel is not None and self.cancel.is_set():
            return self._not_started(prepared)
        custody = None if deadline is None else current_custody()
        if not tool.is_async and (deadline is None or tool.bounded or custody is not None):
            try:
                if deadline is None:  # the common case, without a context manager to enter
                    return self._toolbox.invoke(prepared)
                if custody is None:
                    with run_deadline_scope(deadline):
                        return self._toolbox.invoke(prepared)
                return self._inline(prepared, deadline, custody)
            except NotStarted:  # a Ctrl-C just before it started
                return self._not_started(prepared)
            except KeyboardInterrupt:
                return self._interrupted(prepared, "the run was interrupted while it ran")
        if tool.is_async and OwnLoop.usable():
            return self._run_here([prepared], deadline)[0]
        return self._collect([prepared], [self._submit(prepared, deadline)], deadline)[0]

    def _inline(self, prepared: PreparedCall, deadline: float, custody: Custody) -> ToolResult:
        """A sync call run by the run's own thread, which the waiting thread gives up on at
        the deadline (``custody.py``); a result that comes after it is discarded."""
        assert prepared.tool is not None
        custody.enter_tools((prepared,), OWN_END_GRACE if prepared.tool.bounded else 0.0)
        try:  # ``run_deadline()`` is the run's on its thread (``custody._drive``)
            result = self._toolbox.invoke(prepared)
        finally:
            custody.leave()
        return abandoned(prepared) if late(prepared, deadline) else result

    def run_batch(self, batch: Sequence[PreparedCall], deadline: float | None) -> list[ToolResult]:
        """Concurrently when every call is read-only, else one after another, in order."""
        if len(batch) > 1 and all(p.read_only for p in batch):
            results: list[ToolResult] = []
            here = any(p.tool is not None and p.tool.is_async for p in batch) and OwnLoop.usable()
            for start in range(0, len(batch), MAX_PARALLEL):
                chunk = batch[start : start + MAX_PARALLEL]
                results.extend(
                    self._run_mixed(chunk, deadline) if here else self._run_all(chunk, deadline)
                )
            return results
        return [self.run_one(p, deadline) for p in batch]

    def _run_all(self, chunk: Sequence[PreparedCall], deadline: float | None) -> list[ToolResult]:
        return self._collect(chunk, [self._submit(p, deadline) for p in chunk], deadline)

    def _run_mixed(self, chunk: Sequence[PreparedCall], deadline: float | None) -> list[ToolResult]:
        """Sync calls on the workers while the async ones run on this thread's loop."""
        is_async = [p.tool is not None and p.values is not None and p.tool.is_async for p in chunk]
        sync = [p for p, a in zip(chunk, is_async, strict=True) if not a]
        futures = [self._submit(p, deadline) for p in sync]
        done_here = iter(
            self._run_here([p for p, a in zip(chunk, is_async, strict=True) if a], deadline)
        )
        done_there = iter(self._collect(sync, futures, deadline))
        return [next(done_here) if a else next(done_there) for a in is_async]

    def _run_here(self, batch: Sequence[PreparedCall], deadline: float | None) -> list[ToolResult]:
        """Async calls on the executor's loop, run by this thread until they end."""
        if not batch:
            return []
        if self.cancel is not None and self.cancel.is_set():
            return [self._not_started(p) for p in batch]
        coroutines = [self._guarded(p) for p in batch]
        custody = None if deadline is None else current_custody()
        own = self._own
        if custody is not None:
            custody.enter_tools(batch, ASYNC_GRACE)
        try:
            tasks, unfinished, stopped = own.run(coroutines, deadline, self.cancel)
        finally:
            if custody is not None:
                _leave(custody, own)
        self.interrupted = self.interrupted or stopped
        return [
            self._give_up(p, t) if t in unfinished else self._finished(p, t, deadline)
            for p, t in zip(batch, tasks, strict=True)
        ]

    def _finished(
        self, prepared: PreparedCall, task: _Pending, deadline: float | None
    ) -> ToolResult:
        """An async call's outcome, discarded when it ended after the deadline (as a sync
        call's is, ``_invoke_until``)."""
        return abandoned(prepared) if late(prepared, deadline) else self._outcome(prepared, task)

    def _submit(self, prepared: PreparedCall, deadline: float | None) -> Future[ToolResult]:
        from concurrent.futures import Future  # loaded by the first call on a thread

        tool = prepared.tool
        if prepared.values is None or tool is None or self._cancelled():
            done: Future[ToolResult] = Future()
            done.set_result(self.run_one(prepared, deadline))  # refused, or not started
            return done
        if tool.is_async:
            return self._loop_thread.submit(self._guarded(prepared))
        if self._workers is None:
            self._workers = Workers()
        return self._workers.submit(self._invoke_until, prepared, deadline)

    def _cancelled(self) -> bool:
        return self.cancel is not None and self.cancel.is_set()

    def _invoke_until(self, prepared: PreparedCall, deadline: float | None) -> ToolResult:
        """On a worker thread: the call, with ``run_deadline()`` telling it when the run ends."""
        if deadline is None:
            return self._toolbox.invoke(prepared)
        with run_deadline_scope(deadline):
            result = self._toolbox.invoke(prepared)
        return abandoned(prepared) if late(prepared, deadline) else result

    async def _guarded(self, prepared: PreparedCall) -> ToolResult:
        try:
            return await self._toolbox.ainvoke(prepared)
        except KeyboardInterrupt:  # out of the task, it would stop the loop's thread
            raise _Interrupted from None

    def _collect(
        self,
        batch: Sequence[PreparedCall],
        futures: Sequence[Future[ToolResult]],
        deadline: float | None,
    ) -> list[ToolResult]:
        try:
            if wait_all(futures, deadline, self.cancel):
                self.interrupted = True
        except KeyboardInterrupt:
            self.interrupted = True
        done = {f for f in futures if f.done()}
        return [
            self._outcome(prepared, future) if future in done else self._give_up(prepared, future)
            for prepared, future in zip(batch, futures, strict=True)
        ]

    def _outcome(self, prepared: PreparedCall, future: _Pending) -> ToolResult:
        try:
            result: ToolResult = future.result()
            return result
        except (KeyboardInterrupt, _Interrupted):
            return self._interrupted(prepared, "the tool raised KeyboardInterrupt")
        except BaseException as exc:  # a bug of the harness's own: still a result
            return ran_without_result(prepared, f"the call failed in the harness ({exc!r})")

    def _give_up(self, prepared: PreparedCall, future: _Pending) -> ToolResult:
        assert prepared.tool is not None
        if self.interrupted:
            future.cancel()
            return self._interrupted(prepared, "the run was interrupted while it ran")
        if prepared.tool.is_async:
            future.cancel()
            return cancelled_at_limit(prepared)
        return abandoned(prepared)

    def given_up(self, prepared: PreparedCall, why: str) -> ToolResult:
        """The result of a call whose run the waiting thread took (``RunLoop.take_over``)."""
        if why == "cancelled":
            return interrupted(prepared, "the run was interrupted while it ran")
        return abandoned(prepared)

    def leave_behind(self) -> None:
        """The run was taken from its thread, which may be running the event loop: leave
        that loop to it (``close`` would touch it from another thread), start afresh."""
        self._own = OwnLoop()

    def _interrupted(self, prepared: PreparedCall, why: str) -> ToolResult:
        self.interrupted = True
        return interrupted(prepared, why)

    def _not_started(self, prepared: PreparedCall) -> ToolResult:
        self.interrupted = True
        return not_started(prepared)

    def close(self) -> None:
        """End the workers and the event loops; async tools still running are cancelled."""
        self._own.close()
        if self._workers is not None:
            self._workers.close()
            self._workers = None
        self._loop_thread.close()


def run_now(toolbox: Toolbox, calls: Sequence[ToolCall]) -> list[ToolResult]:
    """Run ``calls`` now without a time limit, as a run's turn runs them: concurrently when all
    are read-only, else in order; the results in the calls' order."""
    executor = ToolExecutor(toolbox)
    try:
        return executor.run_batch([toolbox.prepare(call) for call in calls], None)
    finally:
        executor.close()


def _leave(custody: Custody, own: OwnLoop) -> None:
    """Leave a region of async calls; if the run was taken meanwhile, the loop was left to
    this thread (``leave_behind``), which closes it before it ends."""
    try:
        custody.leave()
    except RunTaken:
        own.close()
        raise
