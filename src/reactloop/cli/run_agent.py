"""What ``reactloop run`` does once its options are parsed: build, run, report, exit code.

``reactloop chat`` builds the same agent and gives it a ``Session`` of its own instead of one
run.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape

from reactloop.agent import Agent
from reactloop.cli.console import ConsoleObserver, print_result
from reactloop.cli.exitcodes import run_exit_code
from reactloop.cli.file_checks import (
    check_input_file,
    check_output_file,
    check_run_files,
    default_trace_path,
    model_file,
)
from reactloop.cli.options import RunOptions, build_limits, pick_model
from reactloop.cli.record_place import check_out_of_reach, check_sandbox_keeps_record
from reactloop.cli.run_record import run_config
from reactloop.cli.run_settings import (
    answer_checks,
    approver,
    check_tool_choice,
    price_of,
    typed_answer,
)
from reactloop.cli.run_tools import mcp_tools, run_toolbox, search_note
from reactloop.cli.telemetry import otel_observer
from reactloop.cli.unloaded import UnloadedModel, unstarted_run
from reactloop.errors import ModelError, UsageError
from reactloop.journal.writer import Journal, open_journal
from reactloop.models.default import choose_default_model
from reactloop.result import RunResult
from reactloop.tools.context import ToolContext
from reactloop.tools.registry import build_tools, parse_families
from reactloop.tools.skills import trusted_skills
from reactloop.tools.toolbox import Toolbox

# What runs the built agent: one run (``reactloop run``), or a conversation (``chat``).
Session = Callable[[Agent, Journal | None, Console], int]


def run_from_cli(options: RunOptions, session: Session | None = None) -> int:
    families = _families(options)
    check_run_files(options)
    trace_path = _trace_path(options, families)
    output_dir = _output_dir(trace_path)
    try:
        return _run(options, families, trace_path, output_dir, session)
    finally:
        if trace_path is None:
            _remove_if_empty(output_dir)


def _run(
    options: RunOptions,
    families: tuple[str, ...],
    trace_path: Path | None,
    output_dir: Path,
    session: Session | None,
) -> int:
    """Build the run, then open the journal: a usage error found first leaves no file behind.
    The model comes before the toolbox, whose search is the model's where
    ``--tool-search`` lets it (``run_tools.py``), and before any MCP server starts."""

    context = ToolContext(
        notes=options.notes,
        workspace=(options.workspace or Path.cwd()).resolve(),
        read_only=options.read_only,
        output_dir=output_dir,
        sandbox_mode=options.sandbox,
    )
    builtin = build_tools(families, context)
    if options.mcp_config is not None:
        check_input_file(options.mcp_config, "MCP config")
    reserved = [item.name for item in builtin]
    skills = trusted_skills(options.skills, options.trust_skills)  # before a server starts
    chosen = _pick_model(options)
    if isinstance(chosen[0], UnloadedModel) and session is not None:
        raise ModelError(chosen[0].message, kind=chosen[0].kind)
    with mcp_tools(options, reserved) as mcp, otel_observer(options.otel) as telemetry:
        tools = run_toolbox([*builtin, *mcp], options, chosen[0], skills, output_dir)
        return _run_agent(options, families, trace_path, tools, chosen, telemetry, session)


def _run_agent(
    options: RunOptions,
    families: tuple[str, ...],
    trace_path: Path | None,
    tools: Toolbox,
    chosen: tuple[Any, str, str],
    telemetry: Any,
    session: Session | None,
) -> int:
    """``chosen``: the model, why it was chosen, and its spec. ``session`` None: one run
    (``reactloop run``), which a model that failed to load ends ``model_error``; a
    conversation (``chat``) with such a model does not begin (``_run``)."""
    model, reason, spec = chosen
    stderr = Console(stderr=True, highlight=False, soft_wrap=True, emoji=False)
    check_tool_choice(options.tool_choice, tools)
    price = price_of(options, model.name)
    approve = approver(options)
    output_type = typed_answer(options)
    checks = answer_checks(options)
    if not options.as_json:
        stderr.print(f"[dim]model: {model.name} ({reason})[/]")
    note = search_note(options.tool_search, model, options.protocol, tools)
    if note is not None:
        stderr.print(note, markup=False)
    new_runs_dir = trace_path is not None and not options.trace and not trace_path.parent.exists()
    if new_runs_dir and trace_path is not None:  # the user's own: journals hold the conversation
        trace_path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    journal = open_journal(trace_path, fsync=options.fsync) if trace_path else None
    if new_runs_dir and trace_path is not None and not options.as_json:
        stderr.print(
            f"[dim]journals go to {trace_path.parent}/ (created now; --trace FILE, --no-trace "
            "or $REACTLOOP_RUNS_DIR to change)[/]",
        )
    console = None if options.as_json else ConsoleObserver(stderr)
    run = session or _one_run(options, model if isinstance(model, UnloadedModel) else None)
    try:
        agent = Agent(
            model,
            tools,
            limits=build_limits(options),
            journal=journal,
            observers=[o for o in (console, telemetry) if o is not None],
            instructions=options.system,
            protocol=options.protocol,  # type: ignore[arg-type]
            tool_choice=options.tool_choice,
            approve=approve,
            config=run_config(options, families, (spec, checks.get("checklist")), price),
            on_text=console.on_text if console and options.stream else None,
            price=price,
            output_type=output_type,
            **checks,
        )
        return run(agent, journal, stderr)
    finally:
        if journal is not None:
            journal.close()


def _pick_model(options: RunOptions) -> tuple[Any, str, str]:
    """``pick_model``'s model and reason, and the spec it built: the default model's too, so
    that ``reactloop resume`` finds it recorded."""
    if options.model is not None:
        return (*pick_model(options), options.model)
    spec, reason = choose_default_model()
    model, _ = pick_model(dataclasses.replace(options, model=spec))
    return model, reason, spec


def _one_run(options: RunOptions, unloaded: UnloadedModel | None) -> Session:
    """``reactloop run``: the task, the report, the exit code."""

    def run_once(agent: Agent, journal: Journal | None, stderr: Console) -> int:
        if unloaded is None:
            result = agent.run(options.task)
        else:
            result = unstarted_run(agent, options.task, unloaded)
            if options.as_json:
                stderr.print(f"reactloop: error: {escape(unloaded.message)}")
        _report(options, result, str(agent.model.name), stderr)
        return run_exit_code(result, zero_on_forced=options.exit_zero_on_forced)

    return run_once


def _families(options: RunOptions) -> tuple[str, ...]:
    if options.tools is not None:
        return parse_families(options.tools)
    return ("calculator", "lookup") if options.notes else ("calculator",)


def _trace_path(options: RunOptions, families: tuple[str, ...]) -> Path | None:
    """Where the journal goes: never a folder, a FIFO or one of the files the run reads."""
    if options.no_trace:
        if options.trace is not None:
            raise UsageError("--trace and --no-trace exclude each other")
        return None
    path = options.trace or default_trace_path()
    check_output_file(path, "journal", (options.notes, options.prices, model_file(options.model)))
    workspace = options.workspace or Path.cwd()
    check_out_of_reach(
        path, workspace, families, read_only=options.read_only, default=options.trace is None
    )
    check_sandbox_keeps_record(families, options.sandbox)
    return path


def _output_dir(trace_path: Path | None) -> Path:
    """Where full tool output is kept: beside the journal, or a temporary folder without one."""
    if trace_path is None:
        return Path(tempfile.mkdtemp(prefix="reactloop-outputs-"))
    folder = trace_path.with_name(trace_path.stem + "-outputs")
    if folder.exists() and not folder.is_dir():  # the first long output would end the run
        raise UsageError(f"{folder} (for full tool output beside the journal) is not a folder")
    return folder


def _remove_if_empty(folder: Path) -> None:
    """The temporary output folder of a run without a journal, unless a tool kept output there."""
    with contextlib.suppress(OSError):
        folder.rmdir()


def _report(options: RunOptions, result: RunResult, model_name: str, stderr: Any) -> None:
    if options.as_json:
        payload = result.to_dict()
        payload["model"] = model_name
        if options.output_schema is not None:
            payload["output"] = result.output
        sys.stdout.write(json.dumps(payload, ensure_ascii=False) + "\n")
        return
    print_result(stderr, result)
    for call in result.pending:  # what ``reactloop approve TRACE CALL_ID`` takes
        stderr.print(f"pending: {call.id} {call.name} {json.dumps(call.arguments)}", markup=False)
    if result.answer is not None:
        sys.stdout.write(result.answer + "\n")
