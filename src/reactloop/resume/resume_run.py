"""``resume_run``: an agent's settings and a journal → the resumed run, to its ``stop``.

Everything is checked before the journal is touched: the journal itself
(``journal_file.py``), its last run's state (``run_state.py``), and that the agent is the one
that recorded it (the model, the tools by name and schema, the protocol, the workspace, the
output schema and the recorded checks; ``force`` resumes all the same). Then the torn last
line (if any) is set aside, the journal is opened to append, and the ``ResumedLoop`` runs.
"""

from __future__ import annotations

import dataclasses
import itertools
import typing
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from reactloop.approval import Decision, decision_data
from reactloop.errors import JournalError, UsageError
from reactloop.journal.one_run import typed_or_none
from reactloop.journal.resume_point import resume_record, uncertain_notes
from reactloop.journal.run_counts import Pricer
from reactloop.journal.schema import ApprovalEvent, ChildStartEvent
from reactloop.journal.writer import Journal
from reactloop.limits import Limits
from reactloop.loop.settings import RunSettings
from reactloop.loop.tree_budget import TreePlace
from reactloop.messages import ToolSpec
from reactloop.result import RunResult
from reactloop.resume.journal_file import Recorded, read_recorded, set_aside_torn
from reactloop.resume.resumed_loop import ResumedLoop
from reactloop.resume.run_state import ResumeState, rebuild
from reactloop.support.json_encode import canonical
from reactloop.tools.search import CALL_TOOL, SEARCH_TOOLS, SEARCH_USED
from reactloop.tools.toolbox import Toolbox


def prepare_resume(path: str | Path, price: Pricer | None = None) -> tuple[Recorded, ResumeState]:
    """The journal and the state of its last run (its cost at ``price``); a ``UsageError``
    in one line, and the file unchanged, when it cannot be resumed."""
    recorded = read_recorded(path)
    try:
        state = rebuild(recorded.events, price)
    except UsageError as exc:
        raise UsageError(f"cannot resume {recorded.path}: {exc}") from None
    return recorded, state


def resume_run(
    settings: RunSettings,
    path: str | Path,
    *,
    limits: Limits | None = None,
    decisions: Mapping[str, Decision] | None = None,
    force: bool = False,
    fsync: bool = False,
) -> RunResult:
    recorded, state = prepare_resume(path, settings.price)
    settings = resumed_settings(settings, state, limits)
    if settings.limits.max_cost is not None and settings.price is None:
        raise UsageError(
            f"cannot resume {recorded.path}: its run counts its cost against max_cost, and the "
            "agent has no price (Agent(..., price=...); reactloop run records the one of --prices)"
        )
    if not force:
        problem = mismatch(settings, state.run_start)
        if problem is not None:
            raise UsageError(f"cannot resume {recorded.path}: {problem} (--force resumes anyway)")
    given = fresh_decisions(decisions or {}, state.decisions)
    known = {**state.decisions, **given}  # a decision in the journal stands
    known = {**_leading_to(known), **known}
    journal = open_to_append(recorded.path, state, fsync=fsync)  # locked: then changed
    try:
        torn = set_aside_torn(recorded)
        settings = dataclasses.replace(
            settings, journal=journal, tree=numbered_after(settings.tree, recorded.events)
        )
        notes = uncertain_notes(state, recorded.created)
        limits_now = vars(settings.limits)
        record = resume_record(state, state.why, torn, len(recorded.torn), limits_now)
        loop = ResumedLoop(settings, state, record, decisions=known, notes=notes)
        for call_id, decision in given.items():
            loop.emit(ApprovalEvent(**decision_data(call_id, decision, who="Agent.resume")))
        return loop.execute()
    finally:
        journal.close()


def fresh_decisions(
    given: Mapping[str, Decision], recorded: Mapping[str, Decision]
) -> dict[str, Decision]:
    """The decisions given that the journal does not hold already: a decision in the journal
    stands, but an approval is answered by an answer to the question its call then asked."""
    return {
        call_id: decision
        for call_id, decision in given.items()
        if call_id not in recorded or (isinstance(decision, Mapping) and recorded[call_id] is True)
    }


def _leading_to(decisions: Mapping[str, Decision]) -> dict[str, Decision]:
    """The agent calls that lead to the sub-agents' calls decided (``call_0_0/call_1_0``):
    each runs again, to take the decision down to its child, without asking the approver
    again (``reactloop.subagent_resume``)."""
    return {key.split("/", 1)[0]: True for key in decisions if "/" in key}


def numbered_after(place: TreePlace | None, events: Sequence[Mapping[str, Any]]) -> TreePlace:
    """The resumed run's place in its tree, its children numbered after those its journal
    records (``child_start``), so that a child it starts now never takes an earlier one's
    path (``/coder#1``) in ``cost`` and ``view``."""
    paths = [e.agent_path for e in map(typed_or_none, events) if isinstance(e, ChildStartEvent)]
    numbers = [int(n) for n in (path.rsplit("#", 1)[-1] for path in paths) if n.isdigit()]
    start = max(numbers, default=0) + 1
    return dataclasses.replace(place or TreePlace(), children=itertools.count(start))


def open_to_append(path: Path, state: ResumeState, *, fsync: bool = False) -> Journal:
    """The journal, opened to go on (its lock taken); a live writer is a ``UsageError``."""
    try:
        return Journal(path, fsync=fsync, append=True, t_offset=state.t_end)
    except (JournalError, OSError) as exc:
        raise UsageError(f"cannot resume {path}: {exc}") from None


def resumed_settings(
    settings: RunSettings, state: ResumeState, limits: Limits | None
) -> RunSettings:
    """The agent's settings with the recorded instructions, and the recorded limits unless
    others are given (the counts so far count against them)."""
    start = state.run_start
    instructions = start.get("instructions")
    chosen = limits if limits is not None else recorded_limits(start.get("limits"))
    return dataclasses.replace(
        settings,
        instructions=instructions if isinstance(instructions, str) else None,
        limits=chosen,
    )


def recorded_limits(data: Any) -> Limits:
    if not isinstance(data, Mapping):
        return Limits()
    names = typing.get_type_hints(Limits)
    try:
        return Limits(**{k: v for k, v in data.items() if k in names})
    except (TypeError, ValueError) as exc:
        raise UsageError(f"the journal's limits are invalid: {exc}") from None


def mismatch(settings: RunSettings, start: Mapping[str, Any]) -> str | None:
    """What differs between the recording and the agent that would resume it, in one line."""
    model = start.get("model")
    if model != settings.model.name:
        return f"the journal was recorded with model {model!r}, not {settings.model.name!r}"
    if start.get("protocol") not in (None, settings.protocol):
        return f"the journal used the {start.get('protocol')} protocol, not {settings.protocol}"
    tools = search_differs(start.get("tools"), settings.toolbox, start.get("config"))
    tools = tools or tools_differ(start.get("tools"), settings.toolbox.specs)
    if tools is not None:
        return tools
    config = start.get("config")
    config = config if isinstance(config, Mapping) else {}
    workspace = config.get("workspace")
    if isinstance(workspace, str) and workspace and not Path(workspace).is_dir():
        return f"the workspace {workspace} is gone"
    return answers_differ(settings, start.get("output_schema"), config.get("checks"))


def answers_differ(settings: RunSettings, schema: Any, checks: Any) -> str | None:
    """How what the agent accepts as an answer differs from the recording: its output schema
    (``run_start`` records it), and, when ``reactloop run`` recorded them (``config.checks``),
    its checklist and verify command. A library run's own checks are not recorded: the
    caller passes them as the run had them."""
    now = settings.output.schema if settings.output is not None else None
    if schema is not None and now is None:
        return "the journal's run had an output schema, and the agent has no output type"
    if schema is None and now is not None:
        return "the agent has an output type, and the journal's run had none"
    if schema is not None and canonical(schema) != canonical(now):
        return "the agent's output type has another schema than the journal's run"
    if not isinstance(checks, Mapping):
        return None
    if list(checks.get("checklist") or ()) != list(settings.checklist):
        return "the agent's checklist is not the journal's run's"
    command = checks.get("verify")
    given = getattr(settings.verify, "command", None) if settings.verify is not None else None
    if (command is None) != (settings.verify is None) or (command and given != command):
        return f"the agent's verify check is not the journal's run's ({command!r})"
    return None


def search_differs(recorded: Any, toolbox: Toolbox, config: Any = None) -> str | None:
    """Whether the run is resumed with the other tool search than it had (the harness's pair
    then and the provider's search now, or the other way round), or with other tools deferred:
    as the run's config recorded it (``tool_search_used``), else (an older reactloop's run) as
    its tools array shows."""
    used = config.get(SEARCH_USED) if isinstance(config, Mapping) else None
    if isinstance(used, Mapping) and used.get("mode") in ("own", "native"):
        return _used_differs(used, toolbox)
    names = (
        {t.get("name") for t in recorded if isinstance(t, dict)}
        if isinstance(recorded, list)
        else set()
    )
    search = toolbox.search
    if search is None:
        return None
    pair_before = SEARCH_TOOLS in names and CALL_TOOL in names
    if pair_before and search.native:
        return _OTHER_SEARCH["own"]
    if not pair_before and not search.native and set(search.index.tools) <= names:
        return _OTHER_SEARCH["native"]
    return None


_OTHER_SEARCH = {  # the run's search → why the agent's other one is refused, and what to give
    "own": (
        "the journal's run searched its deferred tools with search_tools, the agent with "
        "the provider's search: resume with tool_search='own' (--tool-search own)"
    ),
    "native": (
        "the journal's run sent the deferred tools themselves (to the provider's search), "
        "the agent search_tools: resume with tool_search='native' (--tool-search native)"
    ),
}


def _used_differs(used: Mapping[str, Any], toolbox: Toolbox) -> str | None:
    """How the agent's search differs from the recorded one (``tool_search_used``)."""
    search = toolbox.search
    if search is None:
        return "the journal's run deferred tools, and the agent defers none (--defer-tools)"
    if used["mode"] != ("native" if search.native else "own"):
        return _OTHER_SEARCH[str(used["mode"])]
    deferred = used.get("deferred")
    if isinstance(deferred, list) and set(deferred) != set(search.index.names):
        shown = ", ".join(str(name) for name in deferred) or "none"
        return f"the agent defers other tools than the journal's run ({shown})"
    return None


def tools_differ(recorded: Any, specs: Sequence[ToolSpec]) -> str | None:
    """How the tools now differ from the recorded ones (a tool missing, added, or with
    another schema: the model would be told of other tools than it was), in one line."""
    before = {
        str(t.get("name")): canonical(t.get("parameters"))
        for t in (recorded if isinstance(recorded, list) else ())
        if isinstance(t, dict)
    }
    now = {spec.name: canonical(spec.parameters) for spec in specs}
    parts = [
        (what, names)
        for what, names in (
            ("missing", [name for name in before if name not in now]),
            ("added", [name for name in now if name not in before]),
            ("another schema", [n for n in before if n in now and before[n] != now[n]]),
        )
        if names
    ]
    if not parts:
        return None
    return "the tools differ: " + "; ".join(f"{what} {', '.join(n)}" for what, n in parts)
