"""``reactloop resume TRACE``: continue a run from its journal, in the same journal.

The agent is rebuilt from the journal's ``run_start``: its protocol and tool choice, its
instructions and limits (raised by the options given), what it accepted as an answer and
counted (``--checklist``, ``--output-schema``, the price of ``--max-cost``,
``--exit-zero-on-forced``: ``checks_record.py``), and the model of ``--model``, else the spec
``reactloop run`` recorded. What starts a process, widens a permission or sends the
conversation elsewhere comes from the command line (``resume_trust.py``), and must be what the
run recorded: the MCP servers, the approval, ``--sandbox``, ``--base-url``, the tools that
write, run commands or reach the network (``--tools``, ``--read-only``, ``--workspace``,
``--notes``), the ``--verify`` command and ``--tool-search``. Exit codes are ``run``'s.
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
from reactloop.cli.approval_policy import check_resumable, given_policy, record_approvals
from reactloop.cli.checks_record import recorded_checks, recorded_output_type, recorded_price
from reactloop.cli.console import ConsoleObserver, print_result
from reactloop.cli.exitcodes import run_exit_code
from reactloop.cli.file_checks import check_input_file
from reactloop.cli.mcp_options import mcp_options
from reactloop.cli.model_record import recorded_model
from reactloop.cli.options import MAX_SECONDS
from reactloop.cli.record_place import check_sandbox_keeps_record
from reactloop.cli.resume_trust import (
    check_reach,
    confirmed_mcp,
    confirmed_tool_search,
    resume_approver,
    resume_base_url,
    resume_spec,
    trusted_config,
)
from reactloop.cli.run_tools import started_mcp
from reactloop.cli.usage_errors import CliError, FiniteFloat
from reactloop.errors import ModelError, UsageError
from reactloop.journal.events import Event
from reactloop.journal.resume_point import ResumeState
from reactloop.limits import Limits
from reactloop.replay.rebuild import recorded_workspace, tools_from_config
from reactloop.result import RunResult
from reactloop.resume.resume_run import prepare_resume
from reactloop.tools.base import Tool
from reactloop.tools.search import SEARCH_MODES, defer_as_recorded
from reactloop.tools.skills import recorded_skills

_RAISED = {
    "max_steps": "max_model_calls",
    "max_tool_calls": "max_tool_calls",
    "max_seconds": "max_seconds",
    "max_tokens": "max_tokens",
    "max_cost": "max_cost",
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
@click.option(
    "--max-cost",
    type=FiniteFloat(min=0, min_open=True),
    help="Dollar budget of the whole run (at the price the run recorded from --prices).",
)
@click.option("--approve", is_flag=True, help="Ask before every call with side effects.")
@click.option(
    "--allow",
    multiple=True,
    help="Command pattern that needs no approval from now on (with --approve or "
    "--defer-approval; recorded, and given again on a later resume).",
)
@click.option(
    "--defer-approval",
    is_flag=True,
    help="Ask nobody now: calls with side effects wait, the run stops awaiting_approval.",
)
@click.option(
    "--approve-pending",
    is_flag=True,
    help="Approve the calls the run waits for (as `reactloop approve TRACE`), then go on.",
)
@click.option("--who", help="Who approves, with --approve-pending [default: the user name].")
@click.option(
    "--sandbox",
    type=click.Choice(["auto", "bwrap", "weak"]),
    default="auto",
    show_default=True,
    help="How the bash tool and --verify isolate commands (never taken from the journal).",
)
@click.option(
    "--tools",
    help="The run's tool families, given again: a journal never chooses tools that write, "
    "run commands or reach the network (files, bash, web).",
)
@click.option(
    "--workspace",
    type=click.Path(file_okay=False, path_type=Path),
    help="The run's workspace, given again [default: the current folder].",
)
@click.option("--read-only", is_flag=True, help="The run was --read-only: give it again.")
@click.option(
    "--notes", type=click.Path(dir_okay=False, path_type=Path), help="The run's notes file."
)
@click.option(
    "--verify",
    help="The run's --verify command, given again: reactloop runs no command from a journal.",
)
@click.option(
    "--tool-search",
    type=click.Choice(SEARCH_MODES),
    help="The run's --tool-search; it must resolve to the run's search. [default: auto]",
)
@mcp_options
@click.option("--force", is_flag=True, help="Resume though the model, tools or workspace differ.")
@click.option("--fsync", is_flag=True, help="fsync the journal after every line.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
def resume(trace: Path, **options: Any) -> None:
    """Continue the run journaled in TRACE (killed, Ctrl-C'd, awaiting approval, or stopped by
    a limit), with the checks, schema and price it was run with.

    The run goes on in TRACE: a resume event, then its steps, then one stop. A call with a
    recorded result never runs again; one that started without a result runs again only if
    its tool is read-only or idempotent, or when approved. --approve-pending approves the
    calls the run waits for first (one command for approve and resume); --allow with
    --defer-approval runs the calls it allows and defers the rest. Both are recorded in TRACE
    (approval events); a later resume applies only what its own options give. Exit 0 with a
    clean answer, 1 without one, 2 on a usage error (a journal that cannot be resumed is left
    as it was), 3 with an answer forced or refused by its checks, 130 when interrupted.
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
    recorded = _config_of(state)
    try:  # what the command line must give again: refused before anything starts
        check_reach(trace, recorded, force=options["force"])
        config = trusted_config(options, recorded)
        check_sandbox_keeps_record(config["tools"], options["sandbox"])
        servers_given = confirmed_mcp(options, config)
        given_policy(options)
        approver = resume_approver(options, config)
        spec = resume_spec(options, config, state.run_start.get("model"))
        base_url = resume_base_url(options, config)
        config["tool_search"] = confirmed_tool_search(options["tool_search"], config)
    except UsageError as exc:
        raise UsageError(f"cannot resume {trace}: {exc}") from None
    model = recorded_model(spec, config, base_url=base_url)
    builtin = _builtin_tools(trace, config, options)
    with contextlib.ExitStack() as servers:
        try:  # the servers given again, open while the run goes on, stopped after
            names = [t.name for t in builtin]
            mcp = servers.enter_context(_mcp_tools(servers_given, names, options))
        except UsageError as exc:  # a server that does not start: the journal is untouched
            raise UsageError(f"cannot resume {trace}: {exc}") from None
        tools = defer_as_recorded([*builtin, *mcp], config)
        result = _resumed(trace, options, (state, config), (model, approver), tools, stderr)
    if options["as_json"]:
        payload = result.to_dict()
        if state.run_start.get("output_schema") is not None:
            payload["output"] = result.output
        sys.stdout.write(json.dumps(payload, ensure_ascii=False) + "\n")
    else:
        print_result(stderr, result)
        for call in result.pending:
            line = f"pending: {call.id} {call.name} {json.dumps(call.arguments)}"
            stderr.print(line, markup=False)
        if result.answer is not None:
            sys.stdout.write(result.answer + "\n")
    return run_exit_code(result, zero_on_forced=config.get("exit_zero_on_forced") is True)


def _builtin_tools(
    trace: Path, config: Mapping[str, Any], options: Mapping[str, Any]
) -> list[Tool]:
    """The recorded tools, in the recorded workspace, in the sandbox mode given now. A
    workspace that is gone is refused in one line: even with ``--force``, when the tools
    need it."""
    workspace = recorded_workspace(config)
    gone = workspace is not None and not workspace.is_dir()
    if gone and not options["force"]:
        raise UsageError(f"cannot resume {trace}: the workspace {workspace} is gone")
    try:
        return tools_from_config(config, {"sandbox_mode": options["sandbox"]})
    except UsageError:
        if not gone:
            raise
        raise UsageError(
            f"cannot resume {trace}: the workspace {workspace} is gone "
            "(--force cannot help: its tools work in it, and a workspace cannot be forced "
            "into being)"
        ) from None


def _resumed(
    trace: Path,
    options: Mapping[str, Any],
    recorded: tuple[ResumeState, Mapping[str, Any]],
    chosen: tuple[Any, Any],
    tools: list[Tool],
    stderr: Console,
) -> RunResult:
    """``recorded``: the journal's state, and its config as the command line confirmed it."""
    state, config = recorded
    model, approver = chosen
    console = None if options["as_json"] else ConsoleObserver(stderr)

    def announce(event: Event) -> None:  # once every check passed: the resume event is out
        if event.type == "resume":
            stderr.print(f"[dim]{describe(state)}[/]")

    agent = Agent(
        model,
        tools,
        protocol=_protocol(state, config),
        tool_choice=str(config.get("tool_choice") or "auto"),
        approve=approver,
        observers=[announce, console] if console is not None else [],
        config=dict(config),
        price=recorded_price(config),
        output_type=recorded_output_type(state.run_start),
        **recorded_checks(config, recorded_workspace(config), options["sandbox"]),
        skills=recorded_skills(config),
        tool_search=config["tool_search"],
    )
    limits = _limits(state, options)
    if options["approve_pending"] or options["allow"]:  # journaled once resuming is sure to go
        check_resumable(agent.settings(), state, limits, force=options["force"], trace=trace)
        record_approvals(trace, options, stderr)
    return agent.resume(trace, limits=limits, force=options["force"], fsync=options["fsync"])


def _mcp_tools(
    servers: Mapping[str, Any] | None, reserved: list[str], options: Mapping[str, Any]
) -> contextlib.AbstractContextManager[list[Tool]]:
    """The MCP servers given again started as ``reactloop run`` started them (the built-in
    tools' names reserved alike, so the same tools get the same names; their questions
    answered as the approval options given now say)."""
    if servers is None:
        return contextlib.nullcontext([])
    if servers["config"] is not None:
        check_input_file(servers["config"], "MCP config")
    configs = (servers["stdio"], servers["urls"], servers["config"])
    return started_mcp(configs, reserved, options["approve"], options["defer_approval"])


def describe(state: ResumeState) -> str:
    """One line: why the run is resumed, from where, and its calls in flight."""
    why = "its process died" if state.why == "no_stop" else f"it stopped {state.why}"
    calls = ", ".join(f"{c.call.id} {c.call.name} {c.state}" for c in state.calls)
    return f"resuming after step {state.step} ({why})" + (f"; calls: {calls}" if calls else "")


def _config_of(state: ResumeState) -> Mapping[str, Any]:
    config = state.run_start.get("config")
    return config if isinstance(config, Mapping) else {}


def _protocol(state: ResumeState, config: Mapping[str, Any]) -> Any:
    recorded = state.run_start.get("protocol")
    return recorded if recorded in ("native", "text") else config.get("protocol") or "auto"


def _limits(state: ResumeState, options: Mapping[str, Any]) -> Limits:
    limits = state.recorded_limits
    raised = {field: options[name] for name, field in _RAISED.items() if options[name]}
    if not raised:
        return limits
    values = {**vars(limits), **raised}
    try:
        return Limits(**values)
    except ValueError as exc:
        raise UsageError(f"the limits are invalid: {exc}") from None
