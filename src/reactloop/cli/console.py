"""Human output of a run: each step as Reason / Act / Observe, warnings, and a summary."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from rich.console import Console
from rich.markup import escape

from reactloop.cli.waiting import WaitingLine
from reactloop.journal.event_value import JournalEvent
from reactloop.journal.events import Event
from reactloop.journal.reader import event_of
from reactloop.journal.schema import (
    CheckEvent,
    ElicitationEvent,
    RequestEvent,
    RunStartEvent,
    ToolCallEvent,
    ToolResultEvent,
    TurnEvent,
    WarningEvent,
)
from reactloop.journal.warning_kinds import WarningKind
from reactloop.limits import StopReason
from reactloop.messages import Usage
from reactloop.models.redacted import redacted_reasoning
from reactloop.result import RunResult

_ACTION_LINE = re.compile(r"^\s*Action\s*:.*$", re.IGNORECASE | re.MULTILINE | re.DOTALL)
_THOUGHT_PREFIX = re.compile(r"^\s*Thought\s*:\s*", re.IGNORECASE)
MAX_SHOWN = 600
CHECK_TAIL_LINES = 6  # of a refused check's output; the whole output is in the journal
# Streamed text is labelled before it is known to be a thought (a call follows) or the answer.
STREAMED = "Reply  "
REFUSAL = "refusal: "  # the run warning that says why a model refused (``ModelTurn.notices``)


class ConsoleObserver:
    """Prints the steps of a run as they happen (to stderr by default).

    A model's reasoning is ``thinking:`` (the provider's reasoning channel), its stated thought
    ``Reason``; an adapter that gives its thought as both a tool call's text and its reasoning
    (the local models' JSON ``thought``) has it shown as ``Reason`` on its final answer too.
    With ``--stream`` the model's text is printed as it comes, as its ``Reply`` (an embedded
    model streams its JSON step's thought only). While a model call goes on, a line says how
    long it has been waited for (``waiting.py``).
    """

    def __init__(self, console: Console | None = None) -> None:
        self.console = console or Console(stderr=True, highlight=False, soft_wrap=True, emoji=False)
        self.streamed = False
        self.reasoning_is_thought = False
        self.waiting = WaitingLine(self.console)

    def on_text(self, fragment: str) -> None:
        if not self.streamed:
            self.waiting.stop()
            self.console.print(f"  [cyan]{STREAMED}[/] ", end="")
            self.streamed = True
        self.console.print(escape(fragment), end="")

    def __call__(self, event: Event) -> None:
        typed = event_of(event)
        if typed is not None:
            self.show(typed)

    def show(self, event: JournalEvent) -> None:
        """One event of a run, live or read back from its journal (``reactloop logs``)."""
        asked = isinstance(event, RequestEvent)
        if not asked:
            self.waiting.stop()
        handler = _HANDLERS.get(type(event))
        if handler is not None:
            handler(self, event)
        if asked:
            self.waiting.start()

    def _on_run_start(self, event: RunStartEvent) -> None:
        self.reasoning_is_thought = False
        names = ", ".join(t["name"] for t in event.tools or []) or "none"
        self.console.print(
            f"[dim]model {escape(str(event.model))} · {event.protocol} protocol · "
            f"tools: {escape(names)}[/]"
        )
        limits = event.limits or {}
        if names != "none" and limits.get("max_model_calls") == 1 and limits.get("wind_down"):
            self.console.print(
                "[dim]note: with one model call (--max-steps 1) that call is asked for the "
                "answer, so no tool can run; tools need 2 or more[/]"
            )

    def _on_request(self, event: RequestEvent) -> None:
        self.console.print(f"[bold]Step {event.step}[/]")

    def _on_turn(self, event: TurnEvent) -> None:
        """The model's reasoning (``reasoning_content``, Anthropic's thinking blocks), then its
        thought; a streamed text was printed as it came, so its reasoning follows it."""
        turn = event.turn
        thought = _thought(turn.get("text") or "")
        reasoning = (turn.get("reasoning") or "").strip()
        if turn.get("tool_calls") and reasoning and reasoning == thought:
            self.reasoning_is_thought = True
        if self.streamed:
            self.console.print()
            self.streamed = False
        elif _shows_thought(turn) and thought:
            self._print_reasoning(turn, thought)
            self.console.print(f"  [cyan]Reason [/] {escape(_short(thought))}")
            return
        elif reasoning and (self.reasoning_is_thought or reasoning == thought):
            # a final answer's stated thought; or reasoning that is the answer itself (an
            # embedded model's {"thought": "43", "answer": "43"}), shown once, not hidden twice
            self.console.print(f"  [cyan]Reason [/] {escape(_short(reasoning))}")
            return
        self._print_reasoning(turn, thought)

    def _print_reasoning(self, turn: dict[str, Any], thought: str) -> None:
        """The reasoning's text, then one short line for reasoning the provider redacted."""
        reasoning = (turn.get("reasoning") or "").strip()
        if reasoning and reasoning != thought:
            self.console.print(f"  [dim]thinking: {escape(_short(reasoning))}[/]")
        redacted = redacted_reasoning(turn.get("raw_message"))
        if redacted is not None:
            self.console.print(f"  [dim]thinking: {escape(redacted.describe())}[/]")

    def _on_tool_call(self, event: ToolCallEvent) -> None:
        call = event.call
        self.console.print(
            f"  [magenta]Act    [/] {escape(call['name'])}({escape(_short(call['arguments']))})"
        )

    def _on_tool_result(self, event: ToolResultEvent) -> None:
        result = event.result
        if result["ok"]:
            output = result["output"]
            text = output if isinstance(output, str) else json.dumps(output, ensure_ascii=False)
            self.console.print(f"  [green]Observe[/] {escape(_short(text))}")
        else:
            self.console.print(f"  [red]Observe[/] error: {escape(_short(str(result['error'])))}")

    def _on_elicitation(self, event: ElicitationEvent) -> None:
        """A server's question to the person, and what came of it (its values not shown)."""
        said = (
            "awaiting an answer (reactloop approve --answer)"
            if event.action == "awaiting"
            else event.action
        )
        asked = f"{event.server}: {_short(event.message)}"
        self.console.print(f"  [magenta]Asks[/]    {escape(asked)} → {escape(said)}")

    def _on_check(self, event: CheckEvent) -> None:
        """A refused ``--verify``: its first line and the tail of its output."""
        if event.kind != "verify" or event.passed or not event.output:
            return
        head, _, rest = event.output.partition("\n")
        lines = rest.strip().splitlines()
        tail = lines[-CHECK_TAIL_LINES:]
        self.console.print(f"  [yellow]! verify_failed:[/] {escape(_short(head))}")
        if len(lines) > len(tail):
            self.console.print(f"    [dim]… {len(lines) - len(tail)} earlier lines not shown[/]")
        for line in tail:
            self.console.print(f"    {escape(_short(line))}")

    def _on_warning(self, event: WarningEvent) -> None:
        if event.kind in _SAID_ELSEWHERE:
            return
        self.console.print(f"  [yellow]! {event.kind}:[/] {escape(_short(event.message))}")


# The warnings the console does not print: the summary says them; a refused check is shown
# by its ``check`` event.
_SAID_ELSEWHERE = frozenset(
    {WarningKind.INTERNAL_ERROR, WarningKind.MODEL_ERROR, WarningKind.VERIFY_FAILED}
)
_HANDLERS: dict[type[JournalEvent], Callable[[ConsoleObserver, Any], None]] = {
    RunStartEvent: ConsoleObserver._on_run_start,
    RequestEvent: ConsoleObserver._on_request,
    TurnEvent: ConsoleObserver._on_turn,
    ToolCallEvent: ConsoleObserver._on_tool_call,
    ToolResultEvent: ConsoleObserver._on_tool_result,
    CheckEvent: ConsoleObserver._on_check,
    ElicitationEvent: ConsoleObserver._on_elicitation,
    WarningEvent: ConsoleObserver._on_warning,
}


def print_result(console: Console, result: RunResult) -> None:
    print_outcome(console, result)
    if result.trace:
        console.print(f"[dim]trace: {escape(result.trace)}[/]")


def print_outcome(console: Console, result: RunResult) -> None:
    """Why there is no answer, or that it was forced; then the run's stop line."""
    usage = result.usage
    if result.answer is None:
        console.print(f"[bold red]No answer[/] ({escape(_why(result))})")
    elif result.forced:
        console.print(
            "[bold yellow]Forced answer[/]: the model answered only because it was told to "
            f"({escape(_first_line(result.error) or 'its last allowed call')}); check it "
            "before you trust it"
        )
    elif result.error is not None:
        console.print(
            f"[bold yellow]Untrusted answer[/] ({escape(_first_line(result.error))}); check it "
            "before you trust it"
        )
    console.print(
        f"[dim]stop: {result.stop_reason} · {_count(result.model_calls, 'model call')} · "
        f"{_count(result.tool_calls, 'tool call')} · {_tokens(usage)} · {result.seconds:.2f} s[/]"
    )


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}" if number == 1 else f"{number} {noun}s"


def _first_line(text: str | None) -> str:
    """A multi-line error (a refused check's output) as its first line; the rest is above."""
    if not text:
        return ""
    first, newline, _ = text.strip().partition("\n")
    return f"{first.rstrip(':')} …" if newline else first


def _why(result: RunResult) -> str:
    """Why a run gave no answer; a refusal with the reason the model gave (its warning)."""
    why = result.error or str(result.stop_reason)
    if result.stop_reason == StopReason.CONTENT_FILTER:
        reasons = [w.partition(": ")[2] for w in result.warnings if w.startswith(REFUSAL)]
        if reasons and reasons[0] not in why:
            why = f"{why}: {reasons[0]}"
    return why


def _tokens(usage: Usage) -> str:
    if not (usage.input_tokens or usage.output_tokens):
        return "tokens not reported by the model"
    cache = f"cached {usage.cached_tokens}"
    if usage.cache_write_tokens:
        cache += f", written to the cache {usage.cache_write_tokens}"
    return f"tokens in {usage.input_tokens} ({cache}) out {usage.output_tokens}"


def _shows_thought(turn: dict[str, Any]) -> bool:
    """A native final answer's text is the answer itself, printed once at the end."""
    return bool(turn.get("tool_calls") or turn.get("format_error") or turn.get("final_answer"))


def _thought(text: str) -> str:
    return _THOUGHT_PREFIX.sub("", _ACTION_LINE.sub("", text)).strip()


def _short(text: str) -> str:
    text = text.strip()
    return text if len(text) <= MAX_SHOWN else text[:MAX_SHOWN] + "…"
