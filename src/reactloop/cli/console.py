"""Human output of a run: each step as Reason / Act / Observe, warnings, and a summary."""

from __future__ import annotations

import json
import re
from typing import Any

from rich.console import Console
from rich.markup import escape

from reactloop.journal.events import Event
from reactloop.limits import StopReason
from reactloop.messages import Usage
from reactloop.models.redacted import redacted_reasoning
from reactloop.result import RunResult

_ACTION_LINE = re.compile(r"^\s*Action\s*:.*$", re.IGNORECASE | re.MULTILINE | re.DOTALL)
_THOUGHT_PREFIX = re.compile(r"^\s*Thought\s*:\s*", re.IGNORECASE)
MAX_SHOWN = 600
REFUSAL = "refusal: "  # the run warning that says why a model refused (``ModelTurn.notices``)


class ConsoleObserver:
    """Prints the steps of a run as they happen (to stderr by default)."""

    def __init__(self, console: Console | None = None) -> None:
        self.console = console or Console(stderr=True, highlight=False, soft_wrap=True, emoji=False)
        self.streamed = False

    def on_text(self, fragment: str) -> None:
        if not self.streamed:
            self.console.print("[bold cyan]Reason [/]", end="")
            self.streamed = True
        self.console.print(escape(fragment), end="")

    def __call__(self, event: Event) -> None:
        handler = getattr(self, f"_on_{event.type}", None)
        if handler is not None:
            handler(event.step, event.data)

    def _on_run_start(self, step: int, data: dict[str, Any]) -> None:
        names = ", ".join(t["name"] for t in data.get("tools", [])) or "none"
        self.console.print(
            f"[dim]model {escape(str(data.get('model')))} · {data.get('protocol')} protocol · "
            f"tools: {escape(names)}[/]"
        )

    def _on_request(self, step: int, data: dict[str, Any]) -> None:
        self.console.print(f"[bold]Step {step}[/]")

    def _on_turn(self, step: int, data: dict[str, Any]) -> None:
        """The model's reasoning (``reasoning_content``, Anthropic's thinking blocks), then its
        thought; a streamed text was printed as it came, so its reasoning follows it."""
        turn = data["turn"]
        thought = _thought(turn.get("text") or "")
        if self.streamed:
            self.console.print()
            self.streamed = False
        elif _shows_thought(turn) and thought:
            self._print_reasoning(turn, thought)
            self.console.print(f"  [cyan]Reason [/] {escape(_short(thought))}")
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

    def _on_tool_call(self, step: int, data: dict[str, Any]) -> None:
        call = data["call"]
        self.console.print(
            f"  [magenta]Act    [/] {escape(call['name'])}({escape(_short(call['arguments']))})"
        )

    def _on_tool_result(self, step: int, data: dict[str, Any]) -> None:
        result = data["result"]
        if result["ok"]:
            output = result["output"]
            text = output if isinstance(output, str) else json.dumps(output, ensure_ascii=False)
            self.console.print(f"  [green]Observe[/] {escape(_short(text))}")
        else:
            self.console.print(f"  [red]Observe[/] error: {escape(_short(str(result['error'])))}")

    def _on_warning(self, step: int, data: dict[str, Any]) -> None:
        if data.get("kind") in ("internal_error", "model_error"):  # the summary says it
            return
        self.console.print(f"  [yellow]! {data.get('kind')}:[/] {escape(_short(data['message']))}")


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
            f"({escape(result.error or 'its last allowed call')}); check it before you trust it"
        )
    console.print(
        f"[dim]stop: {result.stop_reason} · {result.model_calls} model calls · "
        f"{result.tool_calls} tool calls · {_tokens(usage)} · {result.seconds:.2f} s[/]"
    )


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
