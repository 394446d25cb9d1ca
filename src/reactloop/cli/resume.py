"""``reactloop resume TRACE``: continue a run from its journal, in the same journal.

The agent is rebuilt from the journal's ``run_start``: the tools of its config (in the
recorded workspace: resume continues the work there; the MCP servers of ``--mcp``,
``--mcp-url`` and ``--mcp-config`` started again, as ``run`` started them, and stopped when
the run ends), its protocol and tool choice, its
instructions and limits (raised by the options given), its approval (``--approve`` or
``--defer-approval`` as recorded, unless given now), and the model of ``--model``, else the
spec ``reactloop run`` recorded. Exit codes are ``run``'s.
"""

from __future__ import annotations

import contextlib
import json
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import click
from rich.console import Console

from reactloop.agent import Agent
from reactloop.approval import TerminalApprover, defer_approval
from reactloop.cli.console import ConsoleObserver, print_result
from reactloop.cli.exitcodes import run_exit_code
from reactloop.cli.file_checks import check_input_file
from reactloop.cli.model_record import recorded_model
from reactloop.cli.options import MAX_SECONDS
from reactloop.cli.usage_errors import CliError, FiniteFloat
from reactloop.errors import ModelError, UsageError
from reactloop.journal.events import Event
from reactloop.limits import Limits
from reactloop.replay.rebuild import recorded_mcp, tools_from_config
from reactloop.result import RunResult
from reactloop.resume.resume_run import prepare_resume, recorded_limits
from reactloop.resume.run_state import ResumeState
from reactloop.tools.base import Tool

_RAISED = {
    "max_steps": "max_model_calls",
    "max_tool_calls": "max_tool_calls",
    "max_seconds": "max_seconds",
    "max_tokens": "max_tokens",
}


@click.command()
@click.argument("trace", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--model", help="Model spec [default: the one the journal recorded].")
@click.option("--base-url", help="Base URL of an OpenAI-compatible server (…/v1).")
@click.option("--max-steps", type=click.IntRange(min=1), help="Most model calls, in all.")
@click.option("--max-tool-calls", type=click.IntRange(min=1), help="Most tool calls, in all.")
@click.option(
    "--max-seconds",
    type=FiniteFloat(min=0, min_open=True, max=MAX_SECONDS),
    help="Time limit of the whole run (the time it had run counts).",
)
@click.option("--max-tokens", type=click.IntRange(min=1), help="Token budget of the whole run.")
@click.option("--approve", is_flag=True, help="Ask before every call with side effects.")
@click.option("--allow", multiple=True, help="Command pattern that needs no approval.")
@click.option(
    "--defer-approval",
    is_flag=True,
    help="Ask nobody now: calls with side effects wait, the run stops awaiting_approval.",
)
@click.option("--force", is_flag=True, help="Resume though the model, tools or workspace differ.")
@click.option("--fsync", is_flag=True, help="fsync the journal after every line.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
def resume(trace: Path, **options: Any) -> None:
    """Continue the run journaled in TRACE (killed, awaiting approval, or stopped by a limit).

    The run goes on in TRACE: a resume event, then its steps, then one stop. A call with a
    recorded result never runs again; one that started without a result runs again only if
    its tool is read-only or idempotent, or when approved. Exit 0 with a clean answer, 1
    without one, 2 on a usage error (a journal that cannot be resumed is left as it was),
    3 with an answer forced or refused by its checks, 130 when interrupted.
    """
    try:
        code = _resume(trace, options)
    except UsageError as exc:
        raise CliError(str(exc)) from None
    except ModelError as exc:
        click.echo(f"reactloop: error: {exc}", err=True)
        sys.exit(1)
    sys.exit(code)


def _resume(trace: Path, options: Mapping[str, Any]) -> int:
    stderr = Console(stderr=True, highlight=False, soft_wrap=True, emoji=False)
    _, state = prepare_resume(trace)
    config = _config_of(state)
    model = recorded_model(_spec(options, config), config, base_url=options["base_url"])
    builtin = tools_from_config(config)
    with contextlib.ExitStack() as servers:
        try:  # the recorded servers, open while the run goes on, stopped after
            mcp = servers.enter_context(_mcp_tools(config, [t.name for t in builtin]))
        except UsageError as exc:  # a server that does not start: the journal is untouched
            raise UsageError(f"cannot resume {trace}: {exc}") from None
        result = _resumed(trace, options, state, model, [*builtin, *mcp], stderr)
    if options["as_json"]:
        sys.stdout.write(json.dumps(result.to_dict(), ensure_ascii=False) + "\n")
    else:
        print_result(stderr, result)
        for call in result.pending:
            line = f"pending: {call.id} {call.name} {json.dumps(call.arguments)}"
            stderr.print(line, markup=False)
        if result.answer is not None:
            sys.stdout.write(result.answer + "\n")
    return run_exit_code(result)


def _resumed(
    trace: Path,
    options: Mapping[str, Any],
    state: ResumeState,
    model: Any,
    tools: list[Tool],
    stderr: Console,
) -> RunResult:
    config = _config_of(state)
    console = None if options["as_json"] else ConsoleObserver(stderr)

    def announce(event: Event) -> None:  # once every check passed: the resume event is out
        if event.type == "resume":
            stderr.print(f"[dim]{describe(state)}[/]")

    agent = Agent(
        model,
        tools,
        protocol=_protocol(state, config),
        tool_choice=str(config.get("tool_choice") or "auto"),
        approve=_approver(options, config),
        observers=[announce, console] if console is not None else [],
        config=dict(config),
    )
    return agent.resume(
        trace, limits=_limits(state, options), force=options["force"], fsync=options["fsync"]
    )


def _mcp_tools(
    config: Mapping[str, Any], reserved: list[str]
) -> contextlib.AbstractContextManager[list[Tool]]:
    """The recorded MCP servers started again as ``reactloop run`` started them (the built-in
    tools' names reserved alike, so the same tools get the same names)."""
    servers = recorded_mcp(config)
    if servers is None:
        return contextlib.nullcontext([])
    if servers["config"] is not None:
        check_input_file(servers["config"], "MCP config")
    from reactloop.tools.mcp import open_mcp_tools  # with asyncio: only for a run with MCP

    return open_mcp_tools(servers["stdio"], servers["urls"], servers["config"], reserved=reserved)


def describe(state: ResumeState) -> str:
    """One line: why the run is resumed, from where, and its calls in flight."""
    why = "its process died" if state.why == "no_stop" else f"it stopped {state.why}"
    calls = ", ".join(f"{c.call.id} {c.call.name} {c.state}" for c in state.calls)
    return f"resuming after step {state.step} ({why})" + (f"; calls: {calls}" if calls else "")


def _config_of(state: ResumeState) -> Mapping[str, Any]:
    config = state.run_start.get("config")
    return config if isinstance(config, Mapping) else {}


def _spec(options: Mapping[str, Any], config: Mapping[str, Any]) -> str:
    spec = options["model"] or config.get("model_spec")
    if not isinstance(spec, str) or not spec:
        raise UsageError("the journal does not record its model spec: give --model SPEC")
    return spec


def _protocol(state: ResumeState, config: Mapping[str, Any]) -> Any:
    recorded = state.run_start.get("protocol")
    return recorded if recorded in ("native", "text") else config.get("protocol") or "auto"


def _limits(state: ResumeState, options: Mapping[str, Any]) -> Limits:
    limits = recorded_limits(state.run_start.get("limits"))
    raised = {field: options[name] for name, field in _RAISED.items() if options[name]}
    if not raised:
        return limits
    values = {**vars(limits), **raised}
    try:
        return Limits(**values)
    except ValueError as exc:
        raise UsageError(f"the limits are invalid: {exc}") from None


def _approver(options: Mapping[str, Any], config: Mapping[str, Any]) -> Any:
    """The approval the options ask for, else the one the run was recorded with (a run that
    asked before each side effect does not go on without asking)."""
    if options["defer_approval"]:
        return defer_approval
    if options["approve"]:
        return TerminalApprover(allow=list(options["allow"]))
    recorded = config.get("approval")
    mode = recorded.get("mode") if isinstance(recorded, Mapping) else None
    if mode == "defer":
        return defer_approval
    if mode == "ask":
        allow = recorded.get("allow") if isinstance(recorded, Mapping) else None
        return TerminalApprover(allow=[str(a) for a in allow or ()])
    return None
