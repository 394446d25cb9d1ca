"""The ``reactloop`` command: ``run`` an agent, list ``tools``; exit 0 with an answer, 1 without,
2 on a usage error (one line on stderr, no traceback)."""

from __future__ import annotations

import json
import math
import secrets
import stat
import sys
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import click

from reactloop.errors import UsageError
from reactloop.limits import Limits
from reactloop.models import ModelSettings, resolve_model, split_spec
from reactloop.models.base import Model
from reactloop.tools.registry import FAMILIES, ToolContext, build_tools, parse_families

RUNS_DIR_ENV = "REACTLOOP_RUNS_DIR"
MAX_SECONDS = 365 * 24 * 3600.0  # a year; far longer deadlines overflow the platform's time_t
# Providers whose model spec names a file the run reads: the journal must never replace it.
FILE_PROVIDERS = ("scripted", "replay")


class CliError(click.ClickException):
    exit_code = 2

    def show(self, file: Any = None) -> None:
        click.echo(f"reactloop: error: {self.message}", err=True)


class OneLineErrorGroup(click.Group):
    """Turns click's usage errors (three lines with a hint) into the one-line ``CliError``."""

    def make_context(
        self,
        info_name: str | None,
        args: list[str],
        parent: click.Context | None = None,
        **extra: Any,
    ) -> click.Context:
        with _one_line_usage_errors():
            return super().make_context(info_name, args, parent, **extra)

    def invoke(self, ctx: click.Context) -> Any:
        with _one_line_usage_errors():
            return super().invoke(ctx)


# click >= 8.2 shows the help of ``reactloop`` alone by raising this usage error; keep it.
# (Older click shows it otherwise; CliError, never a click.UsageError, then matches nothing.)
_HELP_ERROR: type[Exception] = getattr(click.exceptions, "NoArgsIsHelpError", CliError)


@contextmanager
def _one_line_usage_errors() -> Iterator[None]:
    try:
        yield
    except click.UsageError as exc:
        if isinstance(exc, _HELP_ERROR):
            raise
        raise CliError(exc.format_message()) from None


class FiniteFloat(click.FloatRange):
    """A ``FloatRange`` that also refuses NaN and the infinities, which click lets through."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        number = super().convert(value, param, ctx)
        if not math.isfinite(number):
            self.fail(f"{value!r} is not a finite number.", param, ctx)
        return number


@click.group(cls=OneLineErrorGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="reactloop")
def main() -> None:
    """A harness for ReAct agents: the model proposes, the code decides."""
    _escape_what_the_terminal_cannot_encode()


def _escape_what_the_terminal_cannot_encode() -> None:
    """An answer in a script the terminal's encoding lacks is printed escaped, not a crash."""
    for stream in (sys.stdout, sys.stderr):
        if getattr(stream, "errors", None) == "strict" and hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="backslashreplace")


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
@click.option("--temperature", type=FiniteFloat(min=0), help="Sampling temperature.")
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
@click.option(
    "--max-seconds", type=FiniteFloat(min=0, min_open=True, max=MAX_SECONDS), default=600.0
)
@click.option("--max-tokens", type=click.IntRange(min=1), help="Token budget of the run.")
@click.option("--max-cost", type=FiniteFloat(min=0, min_open=True), help="Dollar budget.")
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
        families = parse_families("calculator" if tools is None else tools)
        if notes is not None:
            check_input_file(notes, "notes file")
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
    if options.model is not None:
        return resolve_model(options.model, settings), "chosen with --model"
    try:
        from reactloop.models.default import choose_default_model
    except ModuleNotFoundError:
        raise UsageError("no model configured: pass --model PROVIDER:NAME") from None
    spec, reason = choose_default_model()
    return resolve_model(spec, settings), reason


def model_file(spec: str | None) -> Path | None:
    """The file a ``scripted:FILE`` or ``replay:TRACE`` model reads, else None."""
    if spec is None:
        return None
    provider, name = split_spec(spec)
    return Path(name) if provider in FILE_PROVIDERS and name else None


def check_input_file(path: Path, what: str) -> None:
    """A file a command reads must be a regular file: a FIFO without a writer blocks forever."""
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        raise UsageError(f"{what} not found: {path}") from None
    except OSError as exc:
        raise UsageError(f"cannot read {what} {path}: {exc.strerror}") from None
    if not stat.S_ISREG(mode):
        raise UsageError(f"{what} {path} is not a regular file")


def check_output_file(path: Path, what: str, inputs: Iterable[Path | None] = ()) -> None:
    """A file a command writes: a regular file or a new one, and none of the command's inputs.

    A folder cannot be written, a FIFO without a reader blocks forever, and replacing an input
    (the script, the notes, the journal being read) would lose it.
    """
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        return
    except OSError as exc:
        raise UsageError(f"cannot write {what} {path}: {exc.strerror}") from None
    if not stat.S_ISREG(mode):
        raise UsageError(f"{what} {path} is not a regular file")
    for source in inputs:
        if source is not None and _same_file(path, source):
            raise UsageError(f"{what} {path} would overwrite the input file {source}")


def _same_file(path: Path, other: Path) -> bool:
    try:
        return path.samefile(other)
    except OSError:
        return False
