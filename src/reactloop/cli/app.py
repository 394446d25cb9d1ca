"""The command group: every command by name, imported when it runs, and one-line usage errors."""

from __future__ import annotations

import difflib
import importlib
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import click

from reactloop.cli.exitcodes import INTERRUPTED
from reactloop.cli.usage_errors import CliError

# Every command, by name: "module:attribute". A command's module is imported only when it is
# the one that runs (or for ``--help``), so ``reactloop run`` does not pay for ``eval``'s.
COMMANDS = {
    "run": "reactloop.cli.run:run",
    "chat": "reactloop.cli.chat:chat",
    "tools": "reactloop.cli.tools:list_tools",
    "doctor": "reactloop.cli.doctor:doctor",
    "pull": "reactloop.cli.pull:pull",
    "eval": "reactloop.cli.eval:eval_command",
    "replay": "reactloop.cli.trace:replay",
    "view": "reactloop.cli.trace:view",
    "cost": "reactloop.cli.trace:cost",
    "resume": "reactloop.cli.resume:resume",
    "approve": "reactloop.cli.approve:approve",
    "logs": "reactloop.cli.logs:logs",
    "models": "reactloop.cli.models:models",
}


# What ``reactloop --help`` lists for each command of ``COMMANDS``, so that listing them
# imports none: the first paragraph of each command's own help (tests/test_cli.py pins them).
SUMMARIES = {
    "run": "Run an agent on TASK and print its answer.",
    "chat": "Talk to an agent: each line is a follow-up question, all turns in one journal.",
    "tools": "Print the tools as one JSON array: the schema each sends to the model.",
    "doctor": "Check this machine: the model run would use, the embedded model, the sandbox.",
    "pull": "Fetch the embedded models' weights now (default: the default model).",
    "eval": "Run a ladder of models on a suite, K times each; write the report into --out.",
    "replay": "Re-run TRACE's model turns against the real tools; report the first divergence.",
    "view": "Write TRACE as one self-contained HTML page (no network needed to open it).",
    "cost": "Tokens per step and per run, the quadratic cost model, money, the cache cost of "
    "each context compaction, and prefix warnings.",
    "resume": "Continue the run journaled in TRACE (killed, Ctrl-C'd, awaiting approval, or "
    "stopped by a limit), with the checks, schema and price it was run with.",
    "approve": "Approve (or --deny) the calls TRACE's run waits for: the ids given, else all of "
    "them.",
    "logs": "List the runs in the runs folder, newest first, one line each.",
    "models": "List the providers, which are configured, the models at hand, and the default.",
}


class OneLineErrorGroup(click.Group):
    """Turns click's usage errors (three lines with a hint) into the one-line ``CliError``;
    loads the commands of ``COMMANDS`` on first use, and lists them from ``SUMMARIES``."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return [*COMMANDS, *super().list_commands(ctx)]

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        names = self.list_commands(ctx)
        limit = formatter.width - 6 - max(len(name) for name in names)
        rows = []
        for name in names:
            if name in SUMMARIES:  # shortened by click's rules, on a command that is only its help
                summary = click.Command(name, help=SUMMARIES[name])
                rows.append((name, summary.get_short_help_str(limit)))
            elif (command := super().get_command(ctx, name)) is not None and not command.hidden:
                rows.append((name, command.get_short_help_str(limit)))
        with formatter.section("Commands"):
            formatter.write_dl(rows)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        target = COMMANDS.get(cmd_name)
        if target is None:
            return super().get_command(ctx, cmd_name)
        module_name, _, attribute = target.partition(":")
        command: click.Command = getattr(importlib.import_module(module_name), attribute)
        return command

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        """``reactloop "TASK" …`` is ``reactloop run "TASK" …``: a first word that names no
        command, or an option of ``run``'s, starts a run (a near miss of a command's name is a
        usage error, not a run)."""
        with _one_line_usage_errors():
            return super().parse_args(ctx, default_to_run(args, self.list_commands(ctx)))

    def make_context(
        self,
        info_name: str | None,
        args: list[str],
        parent: click.Context | None = None,
        **extra: Any,
    ) -> click.Context:
        with _one_line_usage_errors(), _ctrl_c_exits_130():
            return super().make_context(info_name, args, parent, **extra)

    def invoke(self, ctx: click.Context) -> Any:
        with _one_line_usage_errors(), _ctrl_c_exits_130():
            return super().invoke(ctx)

    def main(self, *args: Any, **kwargs: Any) -> Any:
        try:
            return super().main(*args, **kwargs)
        except KeyboardInterrupt:  # one that lands in click's own lines, outside the two above
            click.echo("reactloop: interrupted", err=True)
            sys.exit(INTERRUPTED)


_GROUP_OPTIONS = ("-h", "--help", "--version")


def default_to_run(args: list[str], names: list[str]) -> list[str]:
    first = args[0] if args else None
    if first is None or first in names or first in _GROUP_OPTIONS:
        return args
    if first.startswith("-") and first != "-":
        return ["run", *args]
    near = [name for name in names if _near_miss(first, name)]
    if near:
        raise CliError(
            f"no command {first!r}: did you mean {near[0]!r}? "
            f"(to give it as the task: reactloop run {first!r})"
        )
    return ["run", *args]


def _near_miss(word: str, name: str) -> bool:
    """A typo of a command's name: its letters swapped, or one letter off (not a real word
    that merely shares most letters, as "what" and "chat")."""
    if sorted(word) == sorted(name):
        return True
    return difflib.SequenceMatcher(None, word, name).ratio() > 0.75


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


@contextmanager
def _ctrl_c_exits_130() -> Iterator[None]:
    """A Ctrl-C while a command starts (its imports, the model, the MCP servers) exits 130 like
    one during the run, not with click's ``Aborted!`` and 1."""
    try:
        yield
    except KeyboardInterrupt:
        click.echo("reactloop: interrupted", err=True)
        raise click.exceptions.Exit(INTERRUPTED) from None


@click.group(cls=OneLineErrorGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="reactloop")
def main() -> None:
    """A harness for ReAct agents: the model proposes, the code decides.

    `reactloop "TASK" [OPTIONS]` is short for `reactloop run "TASK" [OPTIONS]`.

    \b
    Exit codes (every command: 2 a usage error; its --help says more):
      run, resume  0 a clean answer, 1 none, 3 an answer forced or failed its
                   checks, 130 Ctrl-C
      chat         0 the session ended, 1 the model or journal failed
      tools        0
      doctor       0, 1 a check failed
      pull         0, 1 a model could not be fetched
      eval         0 every episode ran, 130 Ctrl-C (resumable)
      replay       0 identical, 1 diverged
      view, cost   0
      approve      0
      logs         0, 1 --last found no run
      models       0
    """
    _escape_what_the_terminal_cannot_encode()


def _escape_what_the_terminal_cannot_encode() -> None:
    """An answer in a script the terminal's encoding lacks is printed escaped, not a crash."""
    for stream in (sys.stdout, sys.stderr):
        if getattr(stream, "errors", None) == "strict" and hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="backslashreplace")
