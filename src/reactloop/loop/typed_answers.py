"""``AnswerGate``: the typed answers of one run (``Agent(..., output_type=T)``), judged.

The loop hands it every turn. A turn that answers — a ``final_answer`` call, or a reply
without calls — is read with the run's ``OutputSpec``; a valid answer ends the run with its
value, an invalid one is told to the model (the ``final_answer`` call's error result, or a
user message), journaled as an ``invalid_output`` warning with its count (and that message), and
``Limits.max_format_errors`` of them in a row end the run with ``format_errors``. Every
``final_answer`` call gets its result here (no tool runs it, and it is no tool call of the
budget), so the history stays valid for every provider.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from reactloop.journal.run_counts import RunCounts, count_invalid_answer
from reactloop.journal.warning_kinds import WarningKind
from reactloop.limits import StopReason
from reactloop.messages import Message, ModelTurn, ToolCall, ToolResult
from reactloop.output.spec import FINAL_TOOL, InvalidOutput, OutputSpec, invalid_notice
from reactloop.result import Stop

if TYPE_CHECKING:
    from reactloop.loop.tool_calls import CallRunner

Warn = Callable[..., None]


@dataclass(frozen=True, slots=True)
class Judged:
    """A turn read as an answer: ``value`` and ``text`` when valid, ``error`` when not, and
    ``notice``, what the model is to be told of it (None when a ``final_answer`` call's
    result tells it); ``others`` are the turn's calls to other tools (then it is no answer:
    they run)."""

    value: Any = None
    text: str | None = None
    error: str | None = None
    notice: str | None = None
    others: tuple[ToolCall, ...] = ()


class AnswerGate:
    def __init__(
        self,
        spec: OutputSpec,
        calls: CallRunner,
        *,
        warn: Warn,
        record: Callable[[Message], None],
        limit: int,
        counts: RunCounts,
    ) -> None:
        """``counts``: the run's, where the invalid answers in a row are counted (from the
        count before the turn: a resumed run's last turn is judged again, as it was)."""
        self.spec = spec
        self.calls = calls
        self.warn = warn
        self.record = record
        self.limit = limit
        self.counts = counts

    def judge(self, turn: ModelTurn) -> Judged | None:
        """The turn read as an answer; None when it is none (calls to other tools only, or
        a reply with neither an answer nor a valid one in its text)."""
        return self._judge(turn)

    def settle(self, judged: Judged, forced: bool) -> Stop | None:
        """How the run ends with this answer, or None when the model is to try again."""
        if judged.error is None:
            return Stop(StopReason.FINAL_ANSWER, judged.text, None, forced, judged.value)
        invalid = count_invalid_answer(self.counts)
        self.warn(WarningKind.INVALID_OUTPUT, judged.error, count=invalid, notice=judged.notice)
        if judged.notice is not None:
            self.record(Message(role="user", content=judged.notice, kind="format_error"))
        if invalid >= self.limit:
            error = f"{invalid} answers in a row were invalid: {judged.error}"
            return Stop(StopReason.FORMAT_ERRORS, None, error)
        return None

    def _judge(self, turn: ModelTurn) -> Judged | None:
        if turn.tool_calls:
            if not any(call.name == FINAL_TOOL for call in turn.tool_calls):
                return None
            return self._judge_calls(turn.tool_calls)
        if turn.format_error is not None:  # text ReAct without Finish: a bare JSON answer?
            try:
                value = self.spec.from_text(turn.text, json_only=True)
            except InvalidOutput:
                return None
            return Judged(value=value, text=turn.text.strip())
        if turn.answer is None:
            return None
        try:
            return Judged(value=self.spec.from_text(turn.answer), text=turn.answer)
        except InvalidOutput as exc:
            return Judged(error=str(exc), notice=invalid_notice(str(exc), tool=self.spec.tool))

    def _judge_calls(self, calls: tuple[ToolCall, ...]) -> Judged:
        finals = [c for c in calls if c.name == FINAL_TOOL]
        others = tuple(c for c in calls if c.name != FINAL_TOOL)
        if others:
            for call in finals:
                self._reply(call, f"not taken: call {FINAL_TOOL} alone, once the results are in")
            return Judged(others=others)
        first, *extra = finals
        for call in extra:
            self._reply(call, f"not taken: only the first {FINAL_TOOL} call counts")
        try:
            value = self.spec.from_arguments(first.arguments)
        except InvalidOutput as exc:
            self._reply(first, invalid_notice(str(exc), tool=True))
            return Judged(error=str(exc))
        self._reply(first, None)
        return Judged(value=value, text=self.spec.dump(value))

    def _reply(self, call: ToolCall, error: str | None) -> None:
        result = ToolResult(
            call_id=call.id,
            name=call.name,
            ok=error is None,
            output="accepted" if error is None else None,
            error=error,
            executed=False,
        )
        self.calls.answer(call, result)
