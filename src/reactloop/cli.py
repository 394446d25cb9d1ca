"""The ``reactloop`` command: ``run`` an agent, list ``tools``; exit 0 with an answer, 1 without,
2 on a usage error (one line on stderr, no traceback)."""

from __future__ import annotations

import json
import secrets
import sys
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import click

from reactloop.errors import UsageError
from reactloop.limits import Limits
from reactloop.models import ModelSettings, resolve_model
from reactloop.models.base import Model
from reactloop.tools.registry import FAMILIES, ToolContext, build_tools, parse_families

RUNS_DIR_ENV = "REACTLOOP_RUNS_DIR"


class CliError(click.ClickException):
    exit_code = 2

    def show(self, file: Any = None) -> None:
        click.echo(f"reactloop: error: {self.message}", err=True)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="reactloop")
def main() -> None:
    """A harness for ReAct agents: the model proposes, the code decides."""


@dataclass(frozen=True, kw_only=True)
class RunOptions:
    task: str
    model: str | None
    base_url: str | None
    protocol: str
    tool_choice: str
    tools: str | None
    notes: Path | None
    workspace: Path | None
    read_only: bool
    approve: bool
    allow: tuple[str, ...]
    stream: bool
    seed: int | None
    temperature: float | None
    max_output_tokens: int | None
    sandbox: str
    system: str | None
    max_steps: int
    max_tool_calls: int
    max_seconds: float | None
    max_tokens: int | None
    max_cost: float | None
    prices: Path | None
    trace: Path | None
    no_trace: bool
    fsync: bool
    as_json: bool


@main.command()
@click.argument("task")
@click.option("--model", help="PROVIDER[:NAME], e.g. openai:gpt-4o-mini, scripted:FILE, local.")
@click.option("--base-url", help="Base URL of an OpenAI-compatible server.")
@click.option("--protocol", type=click.Choice(["auto", "native", "text"]), default="auto")
@click.option("--tool-choice", default="auto", help="auto, none, required or a tool name.")
@click.option("--tools", help=f"Tool families, comma-separated: {', '.join(FAMILIES)}.")
@click.option("--notes", type=click.Path(path_type=Path), help="JSON notes file for lookup.")
@click.option("--workspace", type=click.Path(path_type=Path), help="Folder for file tools.")
@click.option("--read-only", is_flag=True, help="No tools that write.")
@click.option("--approve", is_flag=True, help="Ask before every call with side effects.")
@click.option("--allow", multiple=True, help="Command pattern that needs no approval.")
@click.option("--stream", is_flag=True, help="Stream the model's text as it arrives.")
@click.option("--seed", type=int, help="Sampling seed, where the model supports one.")
@click.option("--temperature", type=click.FloatRange(min=0), help="Sampling temperature.")
@click.option("--max-output-tokens", type=click.IntRange(min=1), help="Cap on each reply.")
@click.option(
    "--sandbox",
    type=click.Choice(["auto", "bwrap", "weak"]),
    default="auto",
    help="How the bash tool isolates commands (auto: bubblewrap when it works).",
)
@click.option("--system", help="Instructions for the system message.")
@click.option("--max-steps", type=click.IntRange(min=1), default=8, show_default=True)
@click.option("--max-tool-calls", type=click.IntRange(min=1), default=16, show_default=True)
@click.option("--max-seconds", type=click.FloatRange(min=0, min_open=True), default=600.0)
@click.option("--max-tokens", type=click.IntRange(min=1), help="Token budget of the run.")
@click.option("--max-cost", type=click.FloatRange(min=0, min_open=True), help="Dollar budget.")
@click.option("--prices", type=click.Path(path_type=Path), help="Price table (JSON) for cost.")
@click.option("--trace", type=click.Path(path_type=Path), help="Journal file (JSONL).")
@click.option("--no-trace", is_flag=True, help="Do not write a journal.")
@click.option("--fsync", is_flag=True, help="fsync the journal after every line.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
def run(**kwargs: Any) -> None:
    """Run an agent on TASK and print its answer."""
    from reactloop.runner import run_from_cli

    options = RunOptions(**kwargs)
    try:
        code = run_from_cli(options)
    except UsageError as exc:
        raise CliError(str(exc)) from None
    sys.exit(code)


@main.command(name="tools")
@click.option("--tools", help="Tool families to show (default: all that need no setup).")
@click.option("--notes", type=click.Path(path_type=Path))
@click.option("--workspace", type=click.Path(path_type=Path))
def list_tools(tools: str | None, notes: Path | None, workspace: Path | None) -> None:
    """Show the tools and the JSON Schema each sends to the model."""
    try:
        families = parse_families(tools or "calculator")
        context = ToolContext(notes=notes, workspace=workspace or Path.cwd())
        built = build_tools(families, context)
    except UsageError as exc:
        raise CliError(str(exc)) from None
    for item in built:
        click.echo(json.dumps(item.spec.to_dict(), ensure_ascii=False, indent=2))


def _register_trace_commands() -> None:
    from reactloop.cli_trace import cost, replay, view

    for command in (replay, view, cost):
        main.add_command(command)


_register_trace_commands()


def default_trace_path() -> Path:
    import os

    runs = Path(os.environ.get(RUNS_DIR_ENV) or "runs")
    stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
    return runs / f"{stamp}-{secrets.token_hex(3)}.jsonl"


def build_limits(options: RunOptions) -> Limits:
    return Limits(
        max_model_calls=options.max_steps,
        max_tool_calls=options.max_tool_calls,
        max_seconds=options.max_seconds,
        max_tokens=options.max_tokens,
        max_cost=options.max_cost,
    )


def pick_model(options: RunOptions) -> tuple[Model, str]:
    settings = ModelSettings(
        base_url=options.base_url,
        stream=options.stream,
        seed=options.seed,
        temperature=options.temperature,
        max_output_tokens=options.max_output_tokens,
    )
    if options.model:
        return resolve_model(options.model, settings), "chosen with --model"
    try:
        from reactloop.models.default import choose_default_model
    except ModuleNotFoundError:
        raise UsageError("no model configured: pass --model PROVIDER:NAME") from None
    spec, reason = choose_default_model()
    return resolve_model(spec, settings), reason
