"""The sub-agents on a page: under each call of an agent tool (``Agent.as_tool``), the steps of
the child it ran, in a collapsed ``<details class="child">`` the reader opens.

The parent's journal names each child in a ``child_start`` (``usage.children``): the
``call_id`` of the call that ran it (journals written before it: the children of a tool, in
order) and its ``trace``, the child's own journal, read here (``usage.children.child_journal``
finds it beside the parent's when the journals were moved together). A grandchild is nested
the same way inside its parent's steps, down to ``MAX_DEPTH``. A child whose journal cannot be
read is shown as a line that says why, never left out.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence
from html import escape
from pathlib import Path

from reactloop.errors import JournalError
from reactloop.journal.event_value import JournalEvent
from reactloop.journal.reader import Records, readable_events
from reactloop.journal.schema import RunStartEvent
from reactloop.journal.writer import read_journal
from reactloop.usage.children import ChildUsage, child_journal, child_usages
from reactloop.viewer.page_data import build_views
from reactloop.viewer.page_views import RunView, ToolView
from reactloop.viewer.run_html import steps_html
from reactloop.viewer.step_html import block_html

MAX_DEPTH = 8  # a deeper tree is a loop of journals naming each other, or not worth a page


def attach_children(
    views: Sequence[RunView],
    events: Records,
    journal: Path | None,
    depth: int = 0,
) -> None:
    """Give each call of the views that ran a child that child's steps (``nested_html``);
    each run's calls are matched with its own children (call ids repeat from run to run)."""
    typed = list(readable_events(events))
    runs = _by_run(typed)
    if len(runs) != len(views):
        runs = [typed] * len(views)
    for view, run in zip(views, runs, strict=True):
        children = child_usages(run)
        by_call = {child.call_id: child for child in children if child.call_id}
        unnamed = [child for child in children if not child.call_id]
        for tool in (t for step in view.steps for t in step.tools):
            child = by_call.get(tool.call_id) or _first_of(unnamed, tool)
            if child is not None:
                tool.nested_html = child_html(child, journal, depth + 1)


def _by_run(events: Sequence[JournalEvent]) -> list[Sequence[JournalEvent]]:
    """The events of each run of a journal (``build_views`` makes one view of each)."""
    starts = [i for i, event in enumerate(events) if isinstance(event, RunStartEvent)]
    if not starts:
        return [events]
    bounds = [0, *starts[1:], len(events)]
    return [events[a:b] for a, b in itertools.pairwise(bounds)]


def _first_of(unnamed: list[ChildUsage], tool: ToolView) -> ChildUsage | None:
    """A journal written before ``call_id``: the next child of the tool, in order."""
    found = next((child for child in unnamed if child.tool == tool.name), None)
    if found is not None:
        unnamed.remove(found)
    return found


def child_html(child: ChildUsage, parent: Path | None, depth: int) -> str:
    """The child's ``<details>``: a summary line, then its steps (or why they are not here)."""
    path = child_journal(child.trace, parent)
    summary = _summary(child)
    if depth > MAX_DEPTH:
        return _details(summary, _muted(f"deeper than {MAX_DEPTH} levels: not shown"))
    if path is None:
        where = child.trace or "none: its parent's journal was not a file"
        return _details(summary, _muted(f"its journal is not here ({where})"))
    try:
        events = read_journal(path)
    except (JournalError, OSError) as exc:
        return _details(summary, _muted(f"its journal {path} cannot be read: {exc}"))
    views = build_views(events)
    attach_children(views, events, path, depth)
    anchor = "sub" + re.sub(r"[^A-Za-z0-9_-]", "-", child.agent_path)
    body = "".join(steps_html(view, anchor=anchor) for view in views)
    answer = (views[-1].stop or {}).get("answer") if views else None
    if isinstance(answer, str):
        body += block_html("Its answer", answer, "final")
    return _details(summary, _muted(str(path)) + body)


def _summary(child: ChildUsage) -> str:
    ended = child.stop_reason or "no child_stop: cut off"
    if child.forced:
        ended += ", forced"
    usage = child.usage
    return (
        f"Sub-agent {child.agent_path} · {ended} · {child.model_calls} model calls · "
        f"in {usage.input_tokens:,} · out {usage.output_tokens:,}"
    )


def _details(summary: str, body: str) -> str:
    return (
        f'<details class="child"><summary>{escape(summary)}</summary>'
        f'<div class="child-steps">{body}</div></details>'
    )


def _muted(text: str) -> str:
    return f'<div class="muted">{escape(text)}</div>'
