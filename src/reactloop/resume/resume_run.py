"""``resume_run``: an agent's settings and a journal → the resumed run, to its ``stop``.

Everything is checked before the journal is touched: the journal itself
(``journal_file.py``), its last run's state (``run_state.py``), and that the agent is the one
that recorded it (the model, the tools by name and schema, the protocol, the workspace, the
output schema and the recorded checks; ``force`` resumes all the same). Then the torn last
line (if any) is set aside, the journal is opened to append, and the ``ResumedLoop`` runs.
"""

from __future__ import annotations

import dataclasses
import typing
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from reactloop.approval import Decision, decision_data
from reactloop.errors import JournalError, UsageError
from reactloop.journal.resume_point import resume_record, uncertain_notes
from reactloop.journal.schema import ApprovalEvent
from reactloop.journal.writer import Journal
from reactloop.limits import Limits
from reactloop.loop.settings import RunSettings
from reactloop.messages import ToolSpec
from reactloop.result import RunResult
from reactloop.resume.journal_file import Recorded, read_recorded, set_aside_torn
from reactloop.resume.resumed_loop import ResumedLoop
from reactloop.resume.run_state import ResumeState, rebuild
from reactloop.support.json_encode import canonical


def prepare_resume(path: str | Path) -> tuple[Recorded, ResumeState]:
    """The journal and the state of its last run; a ``UsageError`` in one line, and the
    file unchanged, when it cannot be resumed."""
    recorded = read_recorded(path)
    try:
        state = rebuild(recorded.events)
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
    recorded, state = prepare_resume(path)
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
    given = dict(decisions or {})
    known = {**given, **state.decisions}  # a decision in the journal stands
    journal = open_to_append(recorded.path, state, fsync=fsync)  # locked: then changed
    try:
        torn = set_aside_torn(recorded)
        settings = dataclasses.replace(settings, journal=journal)
        notes = uncertain_notes(state, recorded.created)
        limits_now = vars(settings.limits)
        record = resume_record(state, state.why, torn, len(recorded.torn), limits_now)
        loop = ResumedLoop(settings, state, record, decisions=known, notes=notes)
        for call_id, decision in given.items():
            if call_id not in state.decisions:
                data = decision_data(call_id, decision, who="Agent.resume")
                loop.emit(ApprovalEvent(**data))
        return loop.execute()
    finally:
        journal.close()


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
    tools = tools_differ(start.get("tools"), settings.toolbox.specs)
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
