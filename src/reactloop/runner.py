"""What ``reactloop run`` does once its options are parsed: build, run, report, exit code."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from reactloop.agent import Agent
from reactloop.errors import UsageError
from reactloop.journal import Journal
from reactloop.tools.registry import ToolContext, build_tools, parse_families
from reactloop.tools.toolbox import Toolbox

if TYPE_CHECKING:
    from reactloop.cli import RunOptions
    from reactloop.result import RunResult


def run_from_cli(options: RunOptions) -> int:
    from rich.console import Console

    from reactloop.cli import build_limits, default_trace_path, pick_model
    from reactloop.console import ConsoleObserver

    stderr = Console(stderr=True, highlight=False, soft_wrap=True)
    families = _families(options)
    _check_files(options)
    trace_path = None if options.no_trace else (options.trace or default_trace_path())
    context = ToolContext(
        notes=options.notes,
        workspace=(options.workspace or Path.cwd()).resolve(),
        read_only=options.read_only,
        output_dir=_output_dir(trace_path),
        extra={"sandbox_mode": options.sandbox},
    )
    tools = Toolbox(build_tools(families, context), spill_dir=context.output_dir)
    model, reason = pick_model(options)
    if not options.as_json:
        stderr.print(f"[dim]model: {model.name} ({reason})[/]")
    journal = Journal(trace_path, fsync=options.fsync) if trace_path else None
    console = None if options.as_json else ConsoleObserver(stderr)
    try:
        agent = Agent(
            model,
            tools,
            limits=build_limits(options),
            journal=journal,
            observers=[console] if console else [],
            instructions=options.system,
            protocol=options.protocol,  # type: ignore[arg-type]
            tool_choice=options.tool_choice,
            approve=_approver(options),
            config=_config(options, families),
            on_text=console.on_text if console and options.stream else None,
            price=_price(options, model.name),
        )
        result = agent.run(options.task)
    finally:
        if journal is not None:
            journal.close()
    _report(options, result, model.name, stderr)
    return 0 if result.answer is not None else 1


def _families(options: RunOptions) -> tuple[str, ...]:
    if options.tools is not None:
        return parse_families(options.tools)
    return ("calculator", "lookup") if options.notes else ("calculator",)


def _check_files(options: RunOptions) -> None:
    if options.notes is not None and not options.notes.is_file():
        raise UsageError(f"notes file not found: {options.notes}")
    if options.workspace is not None and not options.workspace.is_dir():
        raise UsageError(f"workspace is not a folder: {options.workspace}")


def _price(options: RunOptions, model_name: str) -> Any:
    if options.prices is None:
        if options.max_cost is not None:
            raise UsageError("--max-cost needs a price table: --prices FILE.json")
        return None
    from reactloop.usage import PriceTable

    found = PriceTable.from_file(options.prices).lookup(model_name)
    if found is None:
        if options.max_cost is not None:
            raise UsageError(f"no price for model {model_name!r} in {options.prices}")
        return None
    return found[1]


def _output_dir(trace_path: Path | None) -> Path:
    """Where full tool output is kept: beside the journal, or a temporary folder without one."""
    if trace_path is None:
        import tempfile

        return Path(tempfile.mkdtemp(prefix="reactloop-outputs-"))
    return trace_path.with_name(trace_path.stem + "-outputs")


def _approver(options: RunOptions) -> Any:
    if not options.approve:
        return None
    from reactloop.approval import TerminalApprover

    return TerminalApprover(allow=list(options.allow))


def _config(options: RunOptions, families: tuple[str, ...]) -> dict[str, Any]:
    return {
        "tools": list(families),
        "notes": str(options.notes.resolve()) if options.notes else None,
        "workspace": str((options.workspace or Path.cwd()).resolve()),
        "read_only": options.read_only,
        "protocol": options.protocol,
        "tool_choice": options.tool_choice,
    }


def _report(options: RunOptions, result: RunResult, model_name: str, stderr: Any) -> None:
    from reactloop.console import print_result

    if options.as_json:
        payload = result.to_dict()
        payload["model"] = model_name
        sys.stdout.write(json.dumps(payload, ensure_ascii=False) + "\n")
        return
    print_result(stderr, result)
    if result.answer is not None:
        sys.stdout.write(result.answer + "\n")
