"""The checks before a resume, each a ``UsageError`` in one line, the journal as it was:

- the journal (``check_journal``): a file, not held by a live writer, readable to its last
  line (which may be torn: ``journal/recorded.py`` keeps it);
- its last run (``resumable``): one that stopped for a reason a run can go on from (or never
  stopped: the process died);
- the agent (``check_agent``): a price when the run has a dollar budget, and (``mismatch``)
  the one that recorded the run: the model, the tools by name and schema, the protocol, the
  tool search, the workspace, the output schema and the recorded checks (``force`` resumes
  all the same).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from reactloop.errors import JournalError, UsageError
from reactloop.journal.recorded import Recorded, read_recorded
from reactloop.journal.schema import StopEvent
from reactloop.journal.writer import is_locked
from reactloop.loop.settings import RunSettings
from reactloop.messages import ToolSpec
from reactloop.support.json_encode import canonical
from reactloop.tools.search import CALL_TOOL, SEARCH_TOOLS, SEARCH_USED
from reactloop.tools.toolbox import Toolbox

RESUMABLE = (
    "awaiting_approval",
    "timeout",
    "max_model_calls",
    "max_tool_calls",
    "max_tokens",
    "cancelled",
)


def check_journal(path: str | Path) -> Recorded:
    """The journal at ``path`` as found; a ``UsageError`` says why it cannot be resumed."""
    path = Path(path)
    if not path.is_file():
        raise UsageError(f"cannot resume {path}: no such journal file")
    if is_locked(path):
        raise UsageError(f"cannot resume {path}: a live process is still writing it")
    try:
        return read_recorded(path)
    except (OSError, JournalError) as exc:
        raise UsageError(f"cannot resume {path}: {exc}") from None


def resumable(stop: StopEvent | None) -> str:
    """Why the last run is resumed: ``no_stop`` (it has no ``stop``: the process died), or
    the reason of the stop it goes on from; a ``UsageError`` for one it cannot go on from."""
    if stop is None:
        return "no_stop"
    if stop.stop_reason == "final_answer":
        raise UsageError("the run is finished (final_answer): there is nothing to resume")
    if stop.stop_reason not in RESUMABLE:
        reason, allowed = stop.stop_reason, ", ".join(RESUMABLE)
        raise UsageError(f"a run that stopped {reason} cannot be resumed ({allowed})")
    return stop.stop_reason


def check_agent(
    settings: RunSettings, start: Mapping[str, Any], path: Path, *, force: bool
) -> None:
    """A ``UsageError`` when the agent cannot go on with the run: it counts its cost against
    ``max_cost`` and the agent has no price, or (unless ``force``) it is not the one that
    recorded it."""
    if settings.limits.max_cost is not None and settings.price is None:
        raise UsageError(
            f"cannot resume {path}: its run counts its cost against max_cost, and the agent "
            "has no price (Agent(..., price=...); reactloop run records the one of --prices)"
        )
    problem = None if force else mismatch(settings, start)
    if problem is not None:
        raise UsageError(f"cannot resume {path}: {problem} (--force resumes anyway)")


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
