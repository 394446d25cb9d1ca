"""``Agent``: a model, its tools and its limits; ``run(task)`` drives one loop to a stop.

One ``Agent`` serves many runs, one after another or at once; each run has its own history,
budget and loop guard (``reactloop.loop.RunLoop``, which gets the agent's ``RunSettings``, not
the agent). ``arun`` and ``astream`` run the same loop on a thread of their own
(``reactloop.loop.async_runner``). ``history=`` continues an earlier run with a follow-up task;
``resume(trace)`` (``aresume`` for asyncio) continues a run from its journal
(``reactloop.resume``).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from reactloop.agent_runs import Prior, RunCancels, load_loop, resumed_run, run_loop
from reactloop.agent_setup import (
    ProtocolName,
    agent_instructions,
    agent_toolbox,
    output_spec,
    pick_protocol,
)
from reactloop.journal.events import Observer
from reactloop.journal.run_counts import Pricer
from reactloop.limits import Limits
from reactloop.loop.completion_checks import Verify, as_verify
from reactloop.loop.settings import RunSettings
from reactloop.models.base import Model
from reactloop.models.react import ReactTextModel
from reactloop.result import RunResult
from reactloop.support.interrupts import guard_run
from reactloop.tools.base import Tool
from reactloop.tools.prepared import Approver
from reactloop.tools.skills import Skill
from reactloop.tools.toolbox import Toolbox

if TYPE_CHECKING:
    from reactloop.loop.async_runner import RunStream
    from reactloop.loop.run_loop import RunLoop

_AGENT = "reactloop_agent"  # an agent tool's function holds its agent (``subagent_reach``)


class Agent:
    """``Agent(model, tools).run(task) -> RunResult``; never raises for what a model or tool does.

    ``instructions`` become the system message; None means the protocol's default (a short
    note for native calling, nothing beyond the format prompt for text ReAct).
    ``protocol``: ``"native"`` sends tool schemas and reads structured calls, ``"text"`` wraps
    the model in text ReAct (``Thought:`` / ``Action: tool[arg]`` / ``Finish[answer]``),
    ``"auto"`` picks native when the model supports it. ``approve(call, tool)`` is asked before
    every call to a tool with side effects that can run; ``call`` is the ``PreparedCall``, whose
    ``arguments`` are the decoded arguments that will run; ``False`` or a reason string
    declines it. ``journal`` must take every event: if it raises, the run ends with
    ``journal_error``; an observer in ``observers`` that raises is dropped with a warning.
    ``output_type`` (a pydantic model, a dataclass, a type like ``int``) makes the answer a
    validated value, in ``RunResult.output`` (see ``reactloop.output.spec``). ``verify`` (a
    callable given the answer; ``CommandCheck`` for a command) and ``checklist`` are checked
    before a final answer is accepted (``reactloop.loop.completion_checks``). ``skills``
    (folders of ``*/SKILL.md``, or ``Skill`` values) are listed in the instructions and loaded
    by the model with ``activate_skill`` (``reactloop.tools.skills``); skills given here are
    trusted: the code that gives them chose them. ``tool_search``: who searches the deferred
    tools; by default (``"auto"``) the provider, where the model's adapter has a search of its
    own (``native_tool_search``) and the model supports it (``model_has_tool_search``), and
    the harness's ``search_tools`` everywhere else (``reactloop.tools.search``); ``"native"``
    the provider's search on any model of such an adapter, ``"own"`` always the harness's.
    """

    def __init__(
        self,
        model: Model,
        tools: Toolbox | Iterable[Tool] = (),
        *,
        limits: Limits | None = None,
        journal: Observer | None = None,
        observers: Sequence[Observer] = (),
        instructions: str | None = None,
        protocol: ProtocolName = "auto",
        tool_choice: str = "auto",
        approve: Approver | None = None,
        config: dict[str, Any] | None = None,
        on_text: Callable[[str], None] | None = None,
        price: Pricer | None = None,
        output_type: Any = None,
        verify: Verify | None = None,
        checklist: Sequence[str] = (),
        skills: Sequence[str | Path | Skill] = (),
        tool_search: Literal["auto", "own", "native"] = "auto",
    ) -> None:
        self.limits = limits or Limits()
        self.protocol = pick_protocol(model, protocol)
        self.toolbox = agent_toolbox(tools, model, self.protocol, self.limits, skills, tool_search)
        self.model: Model = ReactTextModel(model) if self.protocol == "text" else model
        if self.limits.max_cost is not None and price is None:
            raise ValueError("Limits.max_cost needs the model's price: Agent(..., price=...)")
        self.price = price
        self.journal = journal
        self.observers = tuple(observers)
        native = self.protocol == "native"
        self.output = None if output_type is None else output_spec(output_type, self.model, native)
        self.instructions = agent_instructions(instructions, native, self.toolbox, self.output)
        self.tool_choice = tool_choice
        self.approve = approve
        self.config = dict(config or {})
        if any(
            hasattr(getattr(self.toolbox.get(n), "function", None), _AGENT)
            for n in self.toolbox.names
        ):
            from reactloop.subagent_reach import refuse_wider

            refuse_wider(self.toolbox, self.config)  # a read-only agent with a writing child
        self.on_text = on_text
        self.verify = as_verify(verify)
        self.checklist = tuple(checklist)
        self._cancels = RunCancels()
        self._cancel = self._cancels.main
        load_loop(self.limits)  # here, not at the first run (nor at ``import reactloop``)

    def cancel(self) -> None:
        """Ask the running runs to stop at the next step boundary (thread-safe)."""
        self._cancels.set_all()

    @property
    def cancel_requested(self) -> bool:
        """Whether a run of this agent was asked to stop (by ``cancel`` or, for ``arun`` and
        ``astream``, by the cancellation of its task) and is still going."""
        return self._cancels.any_set()

    def as_tool(
        self,
        name: str,
        description: str,
        *,
        read_only: bool | None = None,
        max_depth: int = 3,
        input_type: Any = None,
    ) -> Tool:
        """This agent as another agent's tool: it takes a ``task`` and runs as a child of the
        run that calls it, within that run's budget (``reactloop.subagents``). ``read_only``:
        None makes it read-only when every tool of this agent is (so that several run at
        once); ``max_depth``: the deepest a child may be (the root is at 0); ``input_type``
        (a pydantic model): the tool takes its fields, and the task is their JSON."""
        from reactloop.subagents import agent_tool

        return agent_tool(
            self, name, description, read_only=read_only, max_depth=max_depth, input_type=input_type
        )

    def settings(self) -> RunSettings:
        """What a run takes from this agent, as a frozen value."""
        return RunSettings(
            model=self.model,
            toolbox=self.toolbox,
            protocol=self.protocol,
            limits=self.limits,
            instructions=self.instructions,
            tool_choice=self.tool_choice,
            journal=self.journal,
            observers=self.observers,
            approve=self.approve,
            price=self.price,
            config=self.config,
            on_text=self.on_text,
            cancel=self._cancel,
            output=self.output,
            verify=self.verify,
            checklist=self.checklist,
        )

    def run(
        self,
        task: str,
        *,
        history: Prior = None,
        journal: Observer | None = None,
        observers: Sequence[Observer] | None = None,
    ) -> RunResult:
        """Run ``task`` to a stop. ``history`` (an earlier ``RunResult``, or its ``history``)
        makes ``task`` a follow-up of that run: the model sees the conversation so far, and
        the journal's ``run_start`` links to the earlier run's. ``journal`` and ``observers``
        replace the agent's for this run. On the main thread, a Ctrl-C cancels the run
        (``reactloop.support.interrupts``): it ends ``cancelled``, with its ``stop``. A task
        that UTF-8 cannot encode (bytes that were not UTF-8, decoded with ``surrogateescape``)
        is a ``UsageError`` that says where, raised before the run starts: no model takes it."""
        guard = guard_run()  # first: from here on, a Ctrl-C is the run's
        try:
            self._cancel.clear()
            if guard is not None:
                guard.watch(self._cancel)
            return self._loop(task, history, journal, observers, self._cancel).execute()
        finally:
            if guard is not None:
                guard.release()

    def resume(
        self,
        trace: str | Path,
        *,
        limits: Limits | None = None,
        decisions: Mapping[str, bool | str | Mapping[str, Any]] | None = None,
        force: bool = False,
        fsync: bool = False,
    ) -> RunResult:
        """Continue the run journaled in ``trace``: one whose process died (no ``stop``), or
        that stopped ``awaiting_approval``, ``timeout``, ``max_model_calls``,
        ``max_tool_calls``, ``max_tokens`` or ``cancelled``. The run goes on in the same journal (a
        ``resume`` event, then its events, then one ``stop``) with the recorded history,
        counts and instructions; ``limits`` replace the recorded ones for the whole run.
        ``decisions`` answer pending calls by id: True runs one, a reason denies it, and for a
        call that waits on a server's question, an answer (``{"action": "accept", "content":
        {...}}``, or ``"decline"``/``"cancel"`` as ``action``) runs it and is given to the server
        when it asks again. The
        agent's model, tools, protocol and output type must be the recorded ones (``force``
        resumes all the same); its ``verify``, ``checklist`` and ``price`` are used as given:
        pass them as the run had them. Its own ``journal`` is not used. A journal that cannot
        be resumed is a ``UsageError`` and is left as it was."""
        self._cancel.clear()
        options = {"limits": limits, "decisions": decisions, "force": force, "fsync": fsync}
        return self._resume(trace, self._cancel, **options)

    async def aresume(
        self,
        trace: str | Path,
        *,
        limits: Limits | None = None,
        decisions: Mapping[str, bool | str | Mapping[str, Any]] | None = None,
        force: bool = False,
        fsync: bool = False,
    ) -> RunResult:
        """``resume`` for asyncio, as ``arun`` is ``run``'s (a thread of its own; cancelling
        the awaiting task stops the run ``cancelled``, its journal complete)."""
        cancel = self._cancels.new()
        try:
            from reactloop.loop.async_runner import in_thread, settled

            options = {"limits": limits, "decisions": decisions, "force": force, "fsync": fsync}
            return await settled(in_thread(lambda: self._resume(trace, cancel, **options)), cancel)
        finally:
            self._cancels.drop(cancel)

    def _resume(self, trace: str | Path, cancel: threading.Event, **options: Any) -> RunResult:
        return resumed_run(self.settings(), trace, cancel, **options)

    async def arun(
        self,
        task: str,
        *,
        history: Prior = None,
        journal: Observer | None = None,
        observers: Sequence[Observer] | None = None,
    ) -> RunResult:
        """``run`` for asyncio: the run goes on a thread of its own, the caller's event loop
        stays free. Cancelling the awaiting task stops the run ``cancelled`` (its journal
        complete) and raises ``CancelledError``. Concurrent ``arun``s share nothing but the
        agent's settings: give each its own ``journal``."""
        cancel = self._cancels.new()
        run = self._loop(task, history, journal, observers, cancel)
        try:
            from reactloop.loop.async_runner import in_thread, settled

            return await settled(in_thread(run.execute), cancel)
        finally:
            self._cancels.drop(cancel)

    def astream(
        self,
        task: str,
        *,
        history: Prior = None,
        journal: Observer | None = None,
        observers: Sequence[Observer] | None = None,
    ) -> RunStream:
        """The run's events as they happen: ``async for event in agent.astream(task)``; then
        ``stream.result`` holds the ``RunResult``."""
        cancel = self._cancels.new()
        chosen = self.observers if observers is None else tuple(observers)

        def execute(observe: Observer) -> RunResult:
            try:
                run = self._loop(task, history, journal, (*chosen, observe), cancel)
                return run.execute()
            finally:
                self._cancels.drop(cancel)

        from reactloop.loop.async_runner import RunStream

        return RunStream(execute, cancel)

    def _loop(
        self,
        task: str,
        history: Prior,
        journal: Observer | None,
        observers: Sequence[Observer] | None,
        cancel: threading.Event,
    ) -> RunLoop:
        return run_loop(self.settings(), task, history, journal, observers, cancel)
