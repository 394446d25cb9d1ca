"""``Toolbox``: finds, validates, runs and reports tool calls. It never raises for a bad call.

Every way a call can go wrong (unknown tool, arguments that are not JSON, arguments that fail
validation, an exception inside the tool, output that is too long) becomes a ``ToolResult``
with ``ok=False`` or ``truncated=True`` — an observation for the model, never a crash.
"""

from __future__ import annotations

import dataclasses
import threading
import time
from collections.abc import Coroutine, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from reactloop.errors import describe_exception
from reactloop.messages import ToolCall, ToolResult, ToolSpec
from reactloop.support.interrupts import interruptibly
from reactloop.tools.base import Tool
from reactloop.tools.context import CURRENT_CALL
from reactloop.tools.output_text import as_text, cut_head_tail, failure_message, spill
from reactloop.tools.prepared import PreparedCall, prepare
from reactloop.tools.questions import AwaitingAnswer
from reactloop.tools.read_output import READ_OUTPUT, OutputStore, read_output_tool
from reactloop.tools.search import Emit, one_at_a_time, search_for
from reactloop.tools.skills import ACTIVATE_SKILL, Skill, skills_for

DEFAULT_MAX_OUTPUT_CHARS = 8000
_NONE: frozenset[str] = frozenset()


class Toolbox:
    """The tools of one agent, by name.

    ``max_output_chars`` caps what one result sends to the model (its observation budget):
    longer output, or a longer error, keeps its head and tail, is marked ``truncated``, is
    saved whole under ``spill_dir`` when one is set, and is kept in ``outputs`` under a handle
    the cut names; from the first cut on, the built-in ``read_output`` tool is offered to read
    the rest. ``for_run`` gives each run a toolbox of its own, with its own kept outputs.
    Deferred tools (``reactloop.tools.search``) are offered through ``search_tools`` and
    ``call_tool``; ``context_tokens`` is the context their automatic deferral is a share of;
    ``tool_search="native"``: sent marked ``deferred`` to a provider that searches itself
    (``"auto"`` is an ``Agent``'s: it knows the model, a toolbox does not).
    ``skills`` (``reactloop.tools.skills``) come with the ``activate_skill`` tool.
    """

    def __init__(
        self,
        tools: Iterable[Tool] = (),
        *,
        max_output_chars: int = DEFAULT_MAX_OUTPUT_CHARS,
        spill_dir: str | Path | None = None,
        context_tokens: int | None = None,
        skills: Sequence[Skill] = (),
        tool_search: str = "own",
    ) -> None:
        if tool_search not in ("own", "native"):
            raise ValueError(
                f"Toolbox(tool_search={tool_search!r}): 'own' or 'native' ('auto' is chosen "
                "by an Agent, which knows the model: Agent(tools, tool_search='auto'))"
            )
        self._tools: dict[str, Tool] = {}
        for item in tools:
            if item.name in self._tools:
                raise ValueError(f"two tools are named {item.name!r}")
            self._tools[item.name] = item
            item.ready()
        self.search = search_for(self._tools, context_tokens, native=tool_search == "native")
        self.skills = skills_for(self._tools, skills)
        if max_output_chars < 1:
            raise ValueError("max_output_chars must be at least 1")
        self.max_output_chars = max_output_chars
        self.spill_dir = Path(spill_dir) if spill_dir is not None else None
        self._specs = tuple(t.spec for t in self._tools.values() if self._offered(t.name))
        self.outputs = OutputStore()
        self._reader: Tool | None = None  # the built-in read_output, once offered
        self._offer_lock = threading.Lock()

    def for_run(self, max_output_chars: int | None = None) -> Toolbox:
        """A toolbox with the same tools, its own kept outputs, and ``max_output_chars`` when
        given (a run's ``Limits.max_observation_chars``)."""
        run = object.__new__(type(self))  # a subclass stays itself; its own fields are kept
        run.__dict__.update(self.__dict__)
        run.max_output_chars = max_output_chars or self.max_output_chars
        run._tools = {n: t for n, t in self._tools.items() if t is not self._reader}
        run._specs = self._specs if self._reader is None else self._specs[:-1]
        run.outputs = OutputStore()
        if self.search is not None:
            run.search = self.search.for_run()
            run._tools.update((t.name, t) for t in run.search.pair)
        if self.skills is not None:
            run.skills = self.skills.for_run()
            run._tools[ACTIVATE_SKILL] = run.skills.tool
        run._reader = None
        run._offer_lock = threading.Lock()
        return run

    def with_tools(self, replaced: Mapping[str, Tool]) -> Toolbox:
        """This toolbox with some of its tools replaced by others of the same names and
        parameters (a sub-agent's ``bash`` in a narrower sandbox: ``reactloop.subagent_reach``);
        a tool searched for (deferred) is not replaced, as its search holds it."""
        deferred = set() if self.search is None else set(self.search.index.tools)
        if unknown := [n for n in replaced if n not in self._tools or n in deferred]:
            raise ValueError(f"cannot replace the tools {unknown}: not here, or deferred")
        box = object.__new__(type(self))
        box.__dict__.update(self.__dict__)
        box._tools = {**self._tools, **replaced}
        box._specs = tuple(replaced[s.name].spec if s.name in replaced else s for s in self._specs)
        return box

    def _offered(self, name: str) -> bool:
        """Whether the model is sent the tool (a deferred one: only to a provider's search)."""
        search = self.search
        return search is None or search.native or name not in search.index.tools

    @property
    def deferred(self) -> frozenset[str]:
        """The tools sent marked deferred, for the provider's own search."""
        search = self.search
        return frozenset(search.index.tools) if search is not None and search.native else _NONE

    def bind_events(self, emit: Emit) -> None:
        """Give the run's journal ``emit`` to what writes events of its own (a search, a
        skill's activation), one at a time: read-only calls of a turn run on worker threads."""
        serial = one_at_a_time(emit)
        for part in (self.search, self.skills):
            if part is not None:
                part.emit = serial

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def __len__(self) -> int:
        return len(self._tools)

    def get(self, name: str) -> Tool | None:
        return self._tools.get(name)

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(self._tools)

    @property
    def specs(self) -> tuple[ToolSpec, ...]:
        return self._specs

    def prepare(self, call: ToolCall) -> PreparedCall:
        """The call decoded and validated once (see ``reactloop.tools.prepared``)."""
        tool = self._tools.get(call.name)
        unknown = self._unknown_tool_message(call.name) if tool is None else ""
        if self.search is not None:
            return self.search.prepare(call, self._tools, unknown)
        return prepare(call, tool, unknown)

    def execute(self, call: ToolCall) -> ToolResult:
        """Run one call now, here, without a time limit (an async tool on an event loop of its
        own); every failure, a Ctrl-C included, becomes an error result. A run's calls go
        through the loop's runtime instead (``loop/runtime/``), which decides where they run."""
        prepared = self.prepare(call)
        try:
            if prepared.tool is None or prepared.values is None or not prepared.tool.is_async:
                return self.invoke(prepared)
            return _awaited(self.ainvoke(prepared))
        except KeyboardInterrupt:
            error = "cancelled: the call was interrupted while it ran"
            return ToolResult(call_id=call.id, name=call.name, ok=False, error=error, executed=True)

    def invoke(self, prepared: PreparedCall) -> ToolResult:
        """Run a prepared call of a sync tool here; KeyboardInterrupt from the tool propagates."""
        started = time.perf_counter()
        if prepared.values is None or prepared.tool is None:
            return self._refused(prepared, started)
        try:
            token = CURRENT_CALL.set(prepared.call.id)
            try:
                output = interruptibly(prepared.tool.function, **prepared.values)
            finally:
                CURRENT_CALL.reset(token)
        except KeyboardInterrupt:
            raise
        except AwaitingAnswer:  # its question waits for a person: the call is put off
            return ToolResult.refused(prepared.call.id, prepared.call.name, "deferred", "deferred")
        except BaseException as exc:  # a tool bug, sys.exit included, is an observation
            return self._failed(prepared.call, exc, started)
        return self._success(prepared.call, output, started)

    async def ainvoke(self, prepared: PreparedCall) -> ToolResult:
        """Run a prepared call of an async tool on the running event loop."""
        started = time.perf_counter()
        if prepared.values is None or prepared.tool is None:
            return self._refused(prepared, started)
        try:
            token = CURRENT_CALL.set(prepared.call.id)
            try:
                output = await prepared.tool.function(**prepared.values)
            finally:
                CURRENT_CALL.reset(token)
        except KeyboardInterrupt:
            raise
        except BaseException as exc:
            import asyncio  # loaded already: this runs on an event loop

            if isinstance(exc, asyncio.CancelledError):
                raise
            return self._failed(prepared.call, exc, started)
        return self._success(prepared.call, output, started)

    def _refused(self, prepared: PreparedCall, started: float) -> ToolResult:
        """The error result of a call that cannot run (unknown tool, invalid arguments)."""
        error = prepared.error or "the call cannot run"
        return self._error(prepared.call, error, started, False)

    def _failed(self, call: ToolCall, exc: BaseException, started: float) -> ToolResult:
        message = failure_message(exc)
        if len(message) <= self.max_output_chars:
            return self._error(call, message, started, True)
        cut, path = self._cut(call, message)
        result = self._error(call, cut, started, True)
        return dataclasses.replace(result, truncated=True, full_output_path=path)

    def _unknown_tool_message(self, name: str) -> str:
        available = ", ".join(n for n in self._tools if self._offered(n)) or "none"
        return f"unknown tool {name!r}; available tools: {available}"

    def _error(self, call: ToolCall, message: str, started: float, executed: bool) -> ToolResult:
        return ToolResult(
            call_id=call.id,
            name=call.name,
            ok=False,
            error=message,
            executed=executed,
            seconds=time.perf_counter() - started,
        )

    def _success(self, call: ToolCall, output: Any, started: float) -> ToolResult:
        """The result of a call that returned; any failure to handle its output (no text:
        a huge int, a failing ``__str__`` or ``__len__``, deep nesting) is an observation."""
        try:
            return self._shown(call, output, started)
        except BaseException as exc:
            message = f"the output cannot be shown ({describe_exception(exc)})"
            return self._error(call, message, started, True)

    def _shown(self, call: ToolCall, output: Any, started: float) -> ToolResult:
        output, text = (output, output) if type(output) is str else as_text(output)
        truncated = len(text) > self.max_output_chars
        spill_path = None
        if truncated:
            output, spill_path = self._cut(call, text)
        return ToolResult(
            call_id=call.id,
            name=call.name,
            ok=True,
            output=output,
            truncated=truncated,
            full_output_path=spill_path,
            seconds=time.perf_counter() - started,
        )

    def _cut(self, call: ToolCall, text: str) -> tuple[str, str | None]:
        """The head and tail of ``text`` with a handle to the rest, and the file it was saved
        in; the first cut offers ``read_output``."""
        path = spill(self.spill_dir, call, text)
        handle = self.outputs.keep(call.id, call.name, text, path)
        self._offer_read_output()
        return cut_head_tail(text, self.max_output_chars, handle=handle), path

    def _offer_read_output(self) -> None:
        if self._reader is not None or READ_OUTPUT in self._tools:
            return  # offered already, or the user has a tool of that name
        with self._offer_lock:
            if self._reader is None:
                reader = read_output_tool(self.outputs, self.max_output_chars)
                self._tools[READ_OUTPUT] = self._reader = reader
                self._specs = (*self._specs, reader.spec)


def _awaited(coroutine: Coroutine[Any, Any, ToolResult]) -> ToolResult:
    """``coroutine`` run to its end on an event loop of its own: on this thread, or, when this
    thread runs a loop already (a caller's async code), on a thread of its own."""
    import asyncio

    if asyncio._get_running_loop() is None:
        return asyncio.run(coroutine)
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(1, thread_name_prefix="reactloop-async-tool") as thread:
        return thread.submit(asyncio.run, coroutine).result()
