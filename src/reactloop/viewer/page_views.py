"""The values the page shows, one run a ``RunView``: its steps, each with the model's turns,
the tool calls and their results, warnings, notices, checks and compactions.
``page_data.py`` reads a journal into them; ``render.py`` and its helpers draw them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from reactloop.messages import Usage
from reactloop.models.redacted import RedactedReasoning
from reactloop.viewer.compaction_view import CompactionView


@dataclass(frozen=True, kw_only=True)
class CommandStatus:
    """How a command a tool ran ended (the ``bash`` tool's ``exit_code``, ``signal``...)."""

    exit_code: int
    signal: str | None = None
    timed_out: bool = False

    @property
    def failed(self) -> bool:
        return self.exit_code != 0 or self.timed_out


@dataclass(kw_only=True)
class ToolView:
    call_id: str
    name: str
    arguments: str
    ok: bool | None = None
    output: Any = None
    error: str | None = None
    truncated: bool = False
    full_output_path: str | None = None
    executed: bool = True
    seconds: float | None = None
    command: CommandStatus | None = None
    nested_html: str = ""  # the sub-agent this call ran, its steps (``viewer/tree.py``)


@dataclass(kw_only=True)
class TurnView:
    ordinal: int = 0  # which ``turn`` event of the journal this is, from 0
    text: str = ""
    reasoning: str | None = None
    redacted: RedactedReasoning | None = None  # reasoning the provider sent only as opaque data
    finish_reason: str = ""
    format_error: str | None = None
    final_answer: str | None = None
    usage: Usage = field(default_factory=Usage)
    usage_estimated: bool = False
    seconds: float | None = None
    raw: Any = None


@dataclass(kw_only=True)
class WarningView:
    kind: str
    message: str


@dataclass(kw_only=True)
class CheckView:
    """A completion check (``completion_checks.py``): the checklist shown, or the verify result."""

    kind: str
    passed: bool
    detail: str


@dataclass(kw_only=True)
class StepView:
    number: int
    wind_down: bool = False
    n_messages: int | None = None
    turns: list[TurnView] = field(default_factory=list)
    tools: list[ToolView] = field(default_factory=list)
    warnings: list[WarningView] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)  # budget notices, after the results
    checks: list[CheckView] = field(default_factory=list)  # completion checks of an answer
    compactions: list[CompactionView] = field(default_factory=list)  # made after this step


@dataclass(kw_only=True)
class RunView:
    """One run of the journal; ``number`` from 1 (a ``reactloop chat`` journal has one run
    per turn)."""

    number: int = 1
    task: str = ""
    model: str = ""
    protocol: str = ""
    tool_names: list[str] = field(default_factory=list)
    stop: dict[str, Any] | None = None
    run_warnings: list[WarningView] = field(default_factory=list)
    steps: list[StepView] = field(default_factory=list)


def command_status(output: Any) -> CommandStatus | None:
    """The exit status in a tool's output, when it reports one as an integer ``exit_code``."""
    if not isinstance(output, Mapping):
        return None
    code = output.get("exit_code")
    if not isinstance(code, int) or isinstance(code, bool):
        return None
    signal = output.get("signal")
    return CommandStatus(
        exit_code=code,
        signal=signal if isinstance(signal, str) and signal else None,
        timed_out=output.get("timed_out") is True,
    )
