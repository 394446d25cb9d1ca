"""An interrupted episode continued by ``--resume`` from its journal, or started again.

With ``--resume``, an episode that left a journal in ``traces/`` and no final record (the
eval was killed or Ctrl-C'd, its worker died, ``--episode-seconds`` stopped it) goes on from
that journal through ``Agent.resume``: one journal, one run, a ``resume`` event, then its
``stop``; the calls with a recorded result never run again, and its record says
``resumed_from_step``. It continues only when ``reactloop resume`` would (``prepare_resume``:
the journal parses up to a torn last line, no live process writes it) and the run was
interrupted: killed (no ``stop``), cancelled (a Ctrl-C of the eval: the calls it left unrun
run then, the one it interrupted keeps its result, the model call in flight is made again;
its workspace is kept for it) or stalled (the ``timeout`` of a stall-limited episode; a run
stopped by its own limits had ended); when the agent is the recorded one (the same checks,
``mismatch``: model, protocol, tools, output type) on the same task; and, for a task with a
workspace, when the workspace its journal names is still there (the work goes on in it).
Otherwise the episode starts again from the task in a fresh workspace, its old journal renamed
``NAME.jsonl.restarted-N`` (kept, never overwritten) and its record saying ``restarted``.

Each attempt of a stall-limited episode has ``episode_seconds`` of its own: a stalled episode
continues with that much more time, never beyond the run's own ``max_seconds`` in all.
"""

from __future__ import annotations

import dataclasses
import shutil
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from reactloop import Agent, Journal, Limits, RunResult, StopReason, Tool
from reactloop.errors import UsageError
from reactloop.eval.records.record import EpisodeRecord, Resumed
from reactloop.eval.tasks.toolset import make_workspace, needs_workspace
from reactloop.journal.event_value import JournalEvent
from reactloop.journal.events import Observer
from reactloop.journal.one_run import as_one_run
from reactloop.journal.reader import readable_events
from reactloop.journal.resume_point import ResumeState
from reactloop.journal.schema import ToolCallEvent, TurnEvent
from reactloop.resume.checks import mismatch
from reactloop.resume.resume_run import prepare_resume

if TYPE_CHECKING:
    from reactloop.eval.run.spec import EpisodeSpec

Build = Callable[[Path | None, Limits], tuple[Agent, list[Tool]]]
"""The episode's agent (and its tools) for a workspace and limits; without a journal."""

ASIDE = ".restarted-"


@dataclass(kw_only=True)
class Attempt:
    """How an episode runs this time: ``state`` set, it continues its journal; else it
    starts from the task (``restarted`` saying why an earlier journal was set aside).
    ``cancelled``: its run stopped ``cancelled`` (set by ``execute``)."""

    agent: Agent
    tools: list[Tool]
    workspace: Path | None
    limits: Limits
    stall_cut: bool  # whether ``limits.max_seconds`` is the stall window, not the run's own
    state: ResumeState | None = None
    restarted: dict[str, str] | None = None
    cancelled: bool = False

    def execute(self, trace: Path, task: str, tally: Observer) -> RunResult:
        """Run it; ``tally`` observes a fresh run's events (a continued one is counted from
        its whole journal)."""
        if self.state is not None:
            result = self.agent.resume(trace, limits=self.limits)
        else:
            with Journal(trace) as journal:
                observers = [*self.agent.observers, tally]
                result = self.agent.run(task, journal=journal, observers=observers)
        self.cancelled = result.stop_reason == StopReason.CANCELLED
        return result

    def clean_up(self, record: EpisodeRecord | None) -> None:
        """Remove the workspace, unless ``--resume`` may continue the work in it (a stalled
        or cancelled episode: killed ones never get here)."""
        stalled = record is not None and record.reason == "stalled"
        if self.workspace is not None and not stalled and not self.cancelled:
            shutil.rmtree(self.workspace, ignore_errors=True)

    def resumed(self) -> Resumed | None:
        """What the record says of a continued attempt: from which step, after what (a
        restarted one says ``restarted``)."""
        if self.state is None:
            return None
        return Resumed(step=self.state.step, after=self.state.why)


def start_attempt(spec: EpisodeSpec, trace: Path, build: Build) -> Attempt:
    """The episode continued from ``trace`` when it allows it, else started afresh."""
    why = None
    if spec.continue_journal and trace.exists():
        state, why = _resumable(spec, trace)
        if state is not None:
            workspace = recorded_workspace(state.run_start)
            limits = continued_limits(spec, state)
            agent, tools = build(workspace, limits)
            why = mismatch(agent.settings(), state.run_start)
            if why is None:
                cut = limits.max_seconds != spec.limits.max_seconds
                return Attempt(
                    agent=agent,
                    tools=tools,
                    workspace=workspace,
                    limits=limits,
                    stall_cut=cut,
                    state=state,
                )
    restarted = None
    if why is not None:
        restarted = {"why": why, "journal": f"traces/{set_aside(trace).name}"}
    workspace = make_workspace(spec.task)
    try:
        agent, tools = build(workspace, spec.run_limits())
    except BaseException:
        if workspace is not None:
            shutil.rmtree(workspace, ignore_errors=True)
        raise
    return Attempt(
        agent=agent,
        tools=tools,
        workspace=workspace,
        limits=spec.run_limits(),
        stall_cut=spec.stall_limited,
        restarted=restarted,
    )


def _resumable(spec: EpisodeSpec, trace: Path) -> tuple[ResumeState | None, str | None]:
    """The journal's state when it can go on, else None and why not (in one line)."""
    try:
        _, state = prepare_resume(trace)
    except UsageError as exc:
        return None, str(exc).removeprefix(f"cannot resume {trace}: ")
    interrupted = state.why in ("no_stop", "cancelled")
    if not interrupted and not (state.why == "timeout" and spec.stall_limited):
        return None, f"its run had ended ({state.why}), not stalled"
    if state.task != spec.task.task:
        return None, "the journal's task is not the episode's (the suite changed)"
    workspace = recorded_workspace(state.run_start)
    if needs_workspace(spec.task):
        if workspace is None:
            return None, "the journal names no workspace"
        if not workspace.is_dir():
            return None, f"its workspace {workspace} is gone"
    elif workspace is not None:
        return None, "the journal names a workspace the task has none of"
    return state, None


def recorded_workspace(start: Mapping[str, Any]) -> Path | None:
    config = start.get("config")
    workspace = config.get("workspace") if isinstance(config, Mapping) else None
    return Path(workspace) if isinstance(workspace, str) and workspace else None


def continued_limits(spec: EpisodeSpec, state: ResumeState) -> Limits:
    """The episode's limits for the whole run; a stall-limited one gets ``episode_seconds``
    more than it has run, within its own ``max_seconds``."""
    if not spec.stall_limited or spec.episode_seconds is None:
        return spec.limits
    window = state.seconds + spec.episode_seconds
    own = spec.limits.max_seconds
    return dataclasses.replace(spec.limits, max_seconds=window if own is None else min(own, window))


def set_aside(trace: Path) -> Path:
    """Rename ``trace`` to the first free ``NAME.restarted-N`` beside it; the new name."""
    number = 1
    while (aside := trace.with_name(f"{trace.name}{ASIDE}{number}")).exists():
        number += 1
    trace.rename(aside)
    return aside


def one_run(events: Iterable[Mapping[str, Any]]) -> list[JournalEvent]:
    """A continued journal's events as the one run they make, for the episode's counts: the
    resumes and superseded stops and results left out (``as_one_run``), and each call asked
    for once (a call run again on resume is journaled again)."""
    seen: set[str] = set()  # the calls of the current turn (ids are unique within one)
    kept: list[JournalEvent] = []
    for event in readable_events(as_one_run(list(events))):
        if isinstance(event, TurnEvent):
            seen = set()
        elif isinstance(event, ToolCallEvent):
            call_id = str(event.call.get("id"))
            if call_id in seen:
                continue
            seen.add(call_id)
        kept.append(event)
    return kept
