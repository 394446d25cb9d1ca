"""Replay a journal: re-drive the loop with the recorded model turns against the real tools.

The model's side is fixed (``ReplayModel`` plays the journal's turns); the tools run for real,
with new notes or in another workspace if asked, and never in the recorded workspace when they
can write to it, and from the workspace as the recorded run started (``workspace.py``); what
runs again is said first (``plan.py``). ``replay`` reports ``identical`` or the first
divergence: the step, the tool, the arguments, what the tool returned then and now, and the
first difference between them once what changes by itself was normalised (``normalize.py``).

    report = replay("runs/run.jsonl")
    print(report.describe())
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Mapping, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

from reactloop.agent import Agent
from reactloop.journal.event_value import JournalEvent
from reactloop.journal.events import Event
from reactloop.journal.one_run import as_one_run, last_limits
from reactloop.journal.reader import event_of, events_of
from reactloop.journal.schema import RunStartEvent, StopEvent
from reactloop.journal.writer import open_journal, read_journal
from reactloop.limits import Limits
from reactloop.messages import ToolCall
from reactloop.models.replay import ReplayModel, turns_from_events
from reactloop.replay.children import ChildReplays, run_replay
from reactloop.replay.compare import compare
from reactloop.replay.normalize import Normalizer
from reactloop.replay.plan import (
    CancelWatch,
    ReplayPlan,
    cancel_points,
    declined_calls,
    plan,
    unrun_calls,
)
from reactloop.replay.rebuild import (
    families_of,
    first_run,
    limit_notes,
    limits_from,
    object_or_empty,
    recorded_workspace,
    run_start_of,
    tools_from_config,
)
from reactloop.replay.report import ReplayReport
from reactloop.replay.start import StartRecord
from reactloop.replay.workspace import (
    WRITING_FAMILIES,
    ReplaySite,
    replay_site,
    writes_workspace,
)
from reactloop.result import RunResult
from reactloop.tools.base import Tool
from reactloop.tools.search import defer_as_recorded
from reactloop.tools.skills import recorded_skills


def replay(
    trace_path: str | Path,
    *,
    tools: Iterable[Tool] | None = None,
    journal: str | Path | None = None,
    notes: str | Path | None = None,
    workspace: str | Path | None = None,
    sandbox: str | None = None,
    announce: Callable[[ReplayPlan], None] | None = None,
    normalize: Iterable[str] = (),
    default_normalize: bool = True,
) -> ReplayReport:
    """Re-run a journal's turns against ``tools`` (default: rebuilt from the run's config).

    ``notes`` and ``workspace`` replace the recorded run's (new notes, a fresh copy of the
    repository, which must be as the recorded run's workspace was when it started); without
    ``workspace``, tools run in the workspace restored from the journal's snapshot, or in a
    temporary copy of the recorded one when they write, never in it
    (``reactloop.replay.workspace``). ``announce`` gets the ``ReplayPlan`` (what will run
    again, and where) before anything runs. ``journal`` names a file for the replay's own
    journal. Tool results are compared after ``normalize.DEFAULT_RULES`` (unless
    ``default_normalize=False``) and the regular expressions of ``normalize``. Raises
    ``JournalError`` when the trace cannot be read and ``UsageError`` when it cannot be
    replayed (no ``run_start``, no workspace or one that differs, a pattern that is no regex).
    """
    normalizer = Normalizer(normalize, defaults=default_normalize)
    path = Path(trace_path)
    lines, runs = first_run(read_journal(path))
    limits_data = last_limits(lines, None)  # a resumed run: the limits it went on under
    recorded = events_of(as_one_run(lines), str(path))  # a malformed event: a JournalError
    start = run_start_of(recorded, path)
    config = dict(object_or_empty(start.config, "config"))
    if notes is not None:
        config["notes"] = str(Path(notes).resolve())
    families = families_of(config)
    limits = limits_from(limits_data or object_or_empty(start.limits, "limits"))
    turns = turns_from_events(recorded, path)
    model = ReplayModel(turns, name=str(start.model or "replay"))
    with _site(start, config, families, tools_given=tools is not None, workspace=workspace) as site:
        if site.path is not None:
            config["workspace"] = str(site.path)
        extra = {"sandbox_mode": sandbox} if sandbox is not None else {}
        tool_list = list(tools) if tools is not None else tools_from_config(config, extra)
        tool_list = defer_as_recorded(tool_list, config)  # as the run had them
        given = tool_list if tools is not None else None
        children = ChildReplays(recorded, path, given, replay_one=replay)
        tool_list = children.in_place_of(tool_list, start.tools)  # sub-agents from their journals
        chosen = plan(recorded, tool_list, None if tools is not None else site)
        if announce is not None:
            announce(chosen)
        agent, replayed = _replay_agent(model, limits, start, recorded, tool_list, config)
        result = _run_journaled(agent, str(start.task or ""), journal)
        normalizer = normalizer.with_workspaces(*_workspace_paths(site))
    report = _report(path, start, recorded, tool_list, result, replayed, chosen, normalizer)
    return _with_runs_note(children.added_to(report), runs)


def _site(
    start: RunStartEvent,
    config: Mapping[str, Any],
    families: tuple[str, ...],
    *,
    tools_given: bool,
    workspace: str | Path | None,
) -> AbstractContextManager[ReplaySite]:
    """Where the tools run (``workspace.replay_site``); given tools run where their maker
    said, so the journal's record of the workspace is not theirs to check."""
    return replay_site(
        recorded_workspace(config),
        Path(workspace) if workspace is not None else None,
        writes=not tools_given and writes_workspace(config, families),
        record=None if tools_given else StartRecord.of(start.workspace),
        uses=any(family in WRITING_FAMILIES for family in families),
    )


def _run_journaled(agent: Agent, task: str, journal: str | Path | None) -> RunResult:
    as_child = run_replay(agent, task)  # a sub-agent, replayed within its parent's replay
    if as_child is not None:
        return as_child
    writer = open_journal(journal) if journal is not None else None
    try:
        return agent.run(task, journal=writer)
    finally:
        if writer is not None:
            writer.close()


def _workspace_paths(site: ReplaySite) -> list[str]:
    """The recorded workspace's path and the replay's, as the tools may print them."""
    paths = [p for p in (site.recorded, site.path) if p is not None]
    return [str(p) for p in paths] + [str(p.resolve()) for p in paths]


def _replay_agent(
    model: ReplayModel,
    limits: Limits,
    start: RunStartEvent,
    recorded: Sequence[JournalEvent],
    tool_list: list[Tool],
    config: dict[str, Any],
) -> tuple[Agent, list[JournalEvent]]:
    """The agent that replays, and the list its observer fills with the replay's events.

    It declines what the recorded run declined, and is cancelled where the recorded run was
    (``plan.cancel_points``)."""
    replayed: list[JournalEvent] = []
    watch = CancelWatch(cancel_points(recorded))

    def observe(live: Event) -> None:
        event = event_of(live)
        if event is not None:
            replayed.append(event)
            if watch.at(event):
                agent.cancel()

    agent = Agent(
        model,
        tool_list,
        limits=limits,
        observers=(observe,),
        instructions=start.instructions,
        protocol="native",
        approve=_recorded_approvals(recorded),
        config=config,
        skills=recorded_skills(config),  # as the run trusted them
    )
    return agent, replayed


def _with_runs_note(report: ReplayReport, runs: int) -> ReplayReport:
    if runs < 2:
        return report
    note = f"the journal holds {runs} runs (turns of a conversation); the first was replayed"
    return dataclasses.replace(report, notes=(*report.notes, note))


def _report(
    path: Path,
    start: RunStartEvent,
    recorded: Sequence[JournalEvent],
    tool_list: Sequence[Tool],
    result: RunResult,
    replayed: Sequence[JournalEvent],
    chosen: ReplayPlan,
    normalizer: Normalizer,
) -> ReplayReport:
    divergence, compared = compare(recorded, replayed, normalizer)
    notes = _tool_notes(start, tool_list) + limit_notes(object_or_empty(start.limits, "limits"))
    if not any(isinstance(e, StopEvent) for e in recorded):
        notes.append(
            "the recorded run has no stop event (it was interrupted); compared up to its end"
        )
    return ReplayReport(
        trace=str(path),
        identical=divergence is None,
        compared=compared,
        divergence=divergence,
        result=result,
        notes=tuple(notes),
        plan=chosen,
    )


def _recorded_approvals(events: Sequence[JournalEvent]) -> Any:
    """An approver that declines exactly the calls the recorded run declined, with its
    reasons, and those it never ran (a replay widens no approval)."""
    declined = declined_calls(events)
    for call_id in unrun_calls(events):
        declined.setdefault(call_id, "not run: the recorded run did not run it")

    def approve(call: ToolCall, tool: Tool) -> bool | str:
        return declined.get(call.id, True)

    return approve


def _tool_notes(start: RunStartEvent, tools: Sequence[Tool]) -> list[str]:
    specs = start.tools
    specs = specs if isinstance(specs, list) else []
    recorded = {str(t.get("name")) for t in specs if isinstance(t, Mapping)}
    present = {t.name for t in tools}
    notes = [
        f"tool {name!r} was in the recorded run but is not in the replay"
        for name in sorted(recorded - present)
    ]
    notes += [
        f"tool {name!r} is in the replay but was not in the recorded run"
        for name in sorted(present - recorded)
    ]
    return notes
