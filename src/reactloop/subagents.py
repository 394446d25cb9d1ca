"""An agent as another agent's tool: ``Agent.as_tool(name, description)``.

The tool takes a ``task`` and runs the agent on it as a *child* of the run that called it
(``reactloop.loop.tree_budget``):

- **One budget.** The child's limits are its own, never more than its parent has left; its
  model calls, tool calls, tokens, dollars and seconds count in every ancestor's budget, so
  the root's ``Limits`` bound the whole tree. The delegation itself is one tool call of the
  parent.
- **Cancellation.** The child shares its parent's cancel flag: ``cancel()`` on the root, a
  Ctrl-C or the time limit (the child's is never later than its parent's) stop every level.
- **Depth.** A child deeper than ``max_depth`` (the root is at 0) is refused with an error
  observation, and no model is asked.
- **Approvals.** Each call with side effects a child makes is put to the root's approver
  first (one question at a time for the whole tree); only if it allows the call is the
  child's own approver, if it has one, asked too. The rule for tools: a child uses its own
  tools, and an agent tool is read-only only if every tool of the child is (a read-only
  delegation cannot reach a tool with side effects, and is never approved for one). A call
  of a child that the root defers (``Defer``) stops the child ``awaiting_approval``, and its
  parent's call with it: the tree stops awaiting, the root's ``pending`` naming the call and
  its agent; ``Agent.resume`` with the decision takes it down (``subagent_resume``).
- **Reach.** Never more than its parent: under a read-only run a child that could write is
  refused, and a child's ``bash`` gets its parent's sandbox (``reactloop.subagent_reach``).
- **One record.** The parent's journal gets a ``child_start`` and a ``child_stop`` event
  (``agent_path``, the child's ``trace``; ``child_stop`` has its stop reason, counts, usage
  and cost, its descendants' included); the child's events go to a journal of its own beside
  its parent's, ``<parent>.<tool>-<n>.jsonl``, when the parent's journal is a file (else to
  the child agent's own journal, if it has one); the child agent's observers see them too.
- **Resume.** A parent resumed after a kill calls the agent tool again (it is ``idempotent``)
  for the call it died in: that call's child goes on in its own journal, resumed as a child;
  one that had stopped gives its recorded outcome; one that never began starts afresh.
- **The observation.** ``{"ok": true, "output": {"answer": ..., "stop_reason":
  "final_answer"}}`` (with ``"output"``: the typed answer's JSON, when the child has an
  ``output_type``); a forced answer (the child ran out of its budget and was made to answer)
  has ``"forced": true`` and its stop reason; a child that stopped without an answer is an
  error observation that says why.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

from pydantic_core import to_jsonable_python

from reactloop.errors import ToolError
from reactloop.journal.schema import (
    ChildStartEvent,
    ChildStopEvent,
)
from reactloop.journal.writer import Journal
from reactloop.limits import StopReason
from reactloop.loop.run_loop import RunLoop
from reactloop.loop.settings import RunSettings
from reactloop.loop.tree_budget import RunView, capped, count_spent, current_run
from reactloop.result import RunResult
from reactloop.subagent_reach import AGENT_KEY, Reach, ceiling_of, fitted
from reactloop.subagent_resume import decisions_below, left_child, resumed, waiting
from reactloop.tools.base import Tool, make_tool
from reactloop.tools.context import current_call_id
from reactloop.tools.prepared import Approver, PreparedCall

if TYPE_CHECKING:
    from pydantic import BaseModel

    from reactloop.agent import Agent

DEFAULT_MAX_DEPTH = 3


def agent_tool(
    agent: Agent,
    name: str,
    description: str,
    *,
    read_only: bool | None = None,
    max_depth: int = DEFAULT_MAX_DEPTH,
    input_type: type[BaseModel] | None = None,
) -> Tool:
    """The tool that runs ``agent`` on a ``task`` (see the module docstring); with
    ``input_type`` (a pydantic model), the tool takes that model's fields instead, and the
    child's task is their JSON."""
    if max_depth < 1:
        raise ValueError("max_depth must be at least 1")
    tools = [agent.toolbox.get(n) for n in agent.toolbox.names]
    all_read_only = all(t is not None and t.read_only for t in tools)
    if read_only is None:
        read_only = all_read_only
    elif read_only and not all_read_only:
        raise ValueError(f"agent tool {name!r}: read_only, but the agent has tools that write")

    def delegate(task: str) -> dict[str, Any]:
        """Hand a task to the agent.

        Args:
            task: what the agent should do, in full: it sees nothing else
        """
        return observation(name, run_child(agent, name, task, max_depth))

    made = make_tool(delegate, name=name, description=description, read_only=read_only)
    if input_type is not None:
        typed = input_type

        def delegate_typed(**fields: Any) -> dict[str, Any]:
            return delegate(typed(**fields).model_dump_json())

        made = dataclasses.replace(made, function=delegate_typed, arguments_model=typed)
    made.function.__dict__[AGENT_KEY] = agent  # for ``agent_of``: replay reads the child's tools
    # ``bounded``: it ends by the run's deadline itself; ``idempotent``: called again with the
    # same call id (a resumed parent), it resumes its child instead of starting one
    return dataclasses.replace(made, bounded=True, idempotent=not read_only)


def run_child(agent: Agent, name: str, task: str, max_depth: int) -> RunResult:
    """``agent`` run on ``task`` as a child of the current run (alone outside a run)."""
    parent = current_run()
    if parent is None:
        return agent.run(task)
    if parent.place.depth + 1 > max_depth:
        raise ToolError(
            f"not run: {name} would be an agent at depth {parent.place.depth + 1}, "
            f"deeper than the limit ({max_depth})"
        )
    ceiling = ceiling_of(parent.settings.toolbox, parent.settings.config)
    toolbox = fitted(name, agent.toolbox, ceiling)  # never more than the parent's modes
    call_id = current_call_id()
    left = left_child(parent, call_id)  # by an earlier run of the parent, now resumed
    if left is not None and left.ended is not None:  # it ended before the kill: it stands,
        e = left.ended  # nothing runs again, and what it spent counts in the tree (once)
        if left.counted is None:
            count_spent(parent.budget, e.model_calls, e.tool_calls, e.usage, e.cost or 0.0)
        return e
    place = parent.place.child(
        name,
        parent.budget,
        path=None if left is None else left.agent_path,
        counted=None if left is None else left.counted,
    )
    journal = None if left is not None else _child_journal(parent, name, place.path)
    settings = dataclasses.replace(
        agent.settings(),
        toolbox=toolbox,
        limits=capped(agent.limits, parent.budget),
        price=agent.price if agent.price is not None else parent.settings.price,
        cancel=parent.settings.cancel,
        approve=_root_first(parent, agent.approve),
        journal=journal if journal is not None else agent.journal,
        config={**agent.config, "agent_path": place.path, **_reach(ceiling)},
        tree=place,
    )
    trace = str(left.path) if left is not None else None if journal is None else str(journal.path)
    _emit(
        parent,
        ChildStartEvent(agent_path=place.path, tool=name, task=task, trace=trace, call_id=call_id),
    )
    if left is not None:
        result = resumed(name, settings, left.path, decisions_below(parent, call_id))
    else:
        result = _fresh(settings, task, journal)
    summary = _summary(result)
    _emit(parent, ChildStopEvent(agent_path=place.path, trace=trace, call_id=call_id, **summary))
    if result.stop_reason is StopReason.AWAITING_APPROVAL and call_id is not None:
        parent.calls.deferrals.running_waits(call_id, waiting(call_id, place.path, result))
    return result


def _fresh(settings: RunSettings, task: str, journal: Journal | None) -> RunResult:
    try:
        return RunLoop(settings, task).execute()
    finally:
        if journal is not None:
            journal.close()


def _child_journal(parent: RunView, name: str, path: str) -> Journal | None:
    own = parent.settings.journal
    if not isinstance(own, Journal):
        return None
    number = int(path.rsplit("#", 1)[-1])
    with parent.place.lock:  # siblings on other threads look for a free name too
        while True:  # a journal left by an earlier run or process is never written over
            beside = own.path.with_name(
                f"{own.path.name.removesuffix('.jsonl')}.{name}-{number}.jsonl"
            )
            if not beside.exists():
                return Journal(beside)
            number += 1


def _reach(ceiling: Reach) -> dict[str, Any]:
    return {} if ceiling == Reach() else {"reach": ceiling.to_dict()}


def _emit(parent: RunView, event: ChildStartEvent | ChildStopEvent) -> None:
    """An event in the parent's journal (when observed), from whichever thread runs the child."""
    with parent.place.lock:
        if not parent.done:  # else the parent gave up on this child, and has stopped
            parent.events.emit(event)


def _summary(result: RunResult) -> dict[str, Any]:
    return {
        "stop_reason": str(result.stop_reason),
        "forced": result.forced,
        "model_calls": result.model_calls,
        "tool_calls": result.tool_calls,
        "usage": result.usage.to_dict(),
        "cost": result.cost,
    }


def _root_first(parent: RunView, own: Approver | None) -> Approver | None:
    """The parent's approver (itself the root's first) decides, then the child's own."""
    above = parent.settings.approve
    if above is None:
        return own
    asking = parent.place.asking

    def approve(call: PreparedCall, tool: Tool) -> Any:
        with asking:  # parallel children: one question at a time
            answer = above(call, tool)
        if answer is not True or own is None:
            return answer
        return own(call, tool)

    return approve


def observation(name: str, result: RunResult) -> dict[str, Any]:
    if result.stop_reason is StopReason.AWAITING_APPROVAL:
        names = ", ".join(call.name for call in result.pending)
        raise ToolError(
            f"{name} stopped without an answer: its call to {names} was deferred, "
            "and a sub-agent cannot wait for an approval"
        )
    if result.answer is None:
        why = result.error or "no answer"
        raise ToolError(f"{name} stopped without an answer ({result.stop_reason}: {why})")
    seen: dict[str, Any] = {"answer": result.answer, "stop_reason": str(result.stop_reason)}
    if result.output is not None:
        seen["output"] = to_jsonable_python(result.output)
    if result.forced:
        seen["forced"] = True
    return seen
