"""``reactloop chat``: the agent of ``reactloop run``, as a conversation at a prompt.

Each line is a follow-up of the turns before it (``Agent.run(line, history=last)``): the model
sees the whole conversation, tool calls and results included, and every turn has its own
budget. All turns go to ONE journal, each with its ``run_start`` and its ``stop``. Ctrl-C
during a turn cancels that turn (it ends ``cancelled``, every call answered, and the next
line goes on from its history); at the prompt it clears the line; Ctrl-D or ``exit`` ends the
session. The options are ``run``'s (without TASK and ``--json``), taken from that command, so
the two never drift apart.
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import signal
import sys
from collections.abc import Callable, Iterator
from types import FrameType
from typing import Any

import click
from rich.console import Console
from rich.markup import escape

from reactloop.agent import Agent
from reactloop.cli.console import print_outcome
from reactloop.cli.options import RunOptions
from reactloop.cli.run import run as run_command
from reactloop.cli.run_agent import run_from_cli
from reactloop.cli.usage_errors import CliError
from reactloop.errors import ModelError, UsageError
from reactloop.journal.writer import Journal
from reactloop.limits import StopReason
from reactloop.result import RunResult
from reactloop.support.text import text_problem

PROMPT = "> "
EXIT_WORDS = ("exit", "quit", ":q")
_NOT_FOR_CHAT = ("task", "task_file", "as_json", "exit_zero_on_forced")


class TurnInterrupts:
    """The SIGINT handler of a session: at the prompt, a ``KeyboardInterrupt`` (the line is
    dropped); during a turn, the agent is cancelled and the turn interrupted once; a second
    Ctrl-C while it winds down does nothing, so that the turn still writes its ``stop``.
    While a turn's run goes on the main thread, the run itself takes SIGINT and does the same
    (``reactloop.support.interrupts``: ``defers_to_runs``)."""

    defers_to_runs = True

    def __init__(self, agent: Agent) -> None:
        self.agent = agent
        self.state = "idle"  # "prompt", "turn", "cancelling" or "idle"

    def __call__(self, signum: int, frame: FrameType | None) -> None:
        if self.state == "turn":
            self.state = "cancelling"
            self.agent.cancel()
            raise KeyboardInterrupt
        if self.state == "prompt":
            raise KeyboardInterrupt

    @contextlib.contextmanager
    def installed(self) -> Iterator[None]:
        previous = signal.signal(signal.SIGINT, self)
        try:
            yield
        finally:
            signal.signal(signal.SIGINT, previous)

    def read_line(self) -> str | None:
        """The next line typed; None at Ctrl-D or an exit word."""
        while True:
            self.state = "prompt"
            try:
                line = input(PROMPT)
            except KeyboardInterrupt:
                sys.stdout.write("\n")
                continue
            except EOFError:
                sys.stdout.write("\n")
                return None
            finally:
                self.state = "idle"
            if line.strip().lower() in EXIT_WORDS:
                return None
            if line.strip():
                return line

    def turn(self, run: Callable[[], RunResult]) -> RunResult | None:
        """``run()`` with Ctrl-C cancelling it; None if the interrupt came out of the run."""
        self.state = "turn"
        try:
            return run()
        except KeyboardInterrupt:  # it landed outside the loop's own handling
            return None
        finally:
            self.state = "idle"


def converse(agent: Agent, journal: Journal | None, stderr: Console) -> int:
    """The session: read a line, run it as the next turn, print the answer, until the end."""
    with contextlib.suppress(ImportError):
        importlib.import_module("readline")  # line editing and history at the prompt
    interrupts = TurnInterrupts(agent)
    last: RunResult | None = None
    stderr.print(
        "[dim]reactloop chat: each line is a question that follows the ones before; Ctrl-C "
        "cancels a turn, Ctrl-D or `exit` ends the session.[/]"
    )
    with interrupts.installed():
        while (line := interrupts.read_line()) is not None:
            if (problem := text_problem(line, "the line")) is not None:
                stderr.print(f"[red]{escape(problem)}[/]; type it again as UTF-8")
                continue
            result = interrupts.turn(functools.partial(agent.run, line, history=last))
            if result is None:
                stderr.print("[yellow]turn interrupted[/]")
                continue
            last = result
            _show(result, stderr)
            if result.stop_reason == StopReason.JOURNAL_ERROR:
                return 1
    if last is not None and last.trace:
        stderr.print(f"[dim]trace: {escape(last.trace)}[/]")
    return 0


def _show(result: RunResult, stderr: Console) -> None:
    if result.stop_reason == StopReason.CANCELLED:
        stderr.print("[yellow]turn cancelled[/] (ask on, or Ctrl-D to end)")
        return
    print_outcome(stderr, result)  # as ``run`` prints it: a forced answer is marked
    if result.answer is not None:
        sys.stdout.write(result.answer + "\n")
        sys.stdout.flush()


def _chat(**kwargs: Any) -> None:
    options = RunOptions(task="", as_json=False, **kwargs)
    try:
        code = run_from_cli(options, converse)
    except UsageError as exc:
        raise CliError(str(exc)) from None
    except ModelError as exc:
        click.echo(f"reactloop: error: {exc}", err=True)
        sys.exit(1)
    sys.exit(code)


chat = click.Command(
    "chat",
    callback=_chat,
    params=[p for p in run_command.params if p.name not in _NOT_FOR_CHAT],
    help="Talk to an agent: each line is a follow-up question, all turns in one journal.\n\n"
    "The options are those of `reactloop run`. Ctrl-C cancels the current turn, not the "
    "session; Ctrl-D or `exit` ends it. Exit 0 when the session ends (a forced answer, or one "
    "that failed its checks, is marked where it is printed, not in the exit code: a session "
    "has many answers), 1 when the model could not be loaded or the journal could not be "
    "written, 2 on a usage error.",
)
