"""``CallRunner``: decides which of a turn's tool calls run, runs them, and reports.

For each call, in the model's order: the tool-call budget, the loop guard and the approval
policy may refuse it (the model gets an error observation saying why); the rest run through
the ``Toolbox``, each judged after the calls before it ran (a turn of only read-only calls is
judged first, then run concurrently). Results go back in call order.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from reactloop.errors import ToolError
from reactloop.limits import Budget
from reactloop.loopguard import LoopGuard
from reactloop.messages import Message, ModelTurn, ToolCall, ToolResult
from reactloop.tools.base import Tool
from reactloop.tools.toolbox import Toolbox

Emit = Callable[..., None]


@dataclass(frozen=True, kw_only=True, slots=True)
class Outcome:
    messages: list[Message]
    loop: str | None = None


class CallRunner:
    def __init__(
        self,
        *,
        toolbox: Toolbox,
        budget: Budget,
        guard: LoopGuard,
        approve: Callable[[ToolCall, Tool], bool | str] | None,
        emit: Emit,
        warn: Emit,
        observed: bool = True,
    ) -> None:
        self.toolbox = toolbox
        self.budget = budget
        self.guard = guard
        self.approve = approve
        self.emit = emit
        self.warn = warn
        self.observed = observed
        self._seen_ids: set[str] = set()
        self._keys: dict[str, str] = {}

    def unique_ids(self, turn: ModelTurn, step: int) -> ModelTurn:
        """Give every call an id unique in the run; the provider's id stays in ``wire_id``."""
        if not turn.tool_calls:
            return turn
        calls = []
        changed = False
        for index, call in enumerate(turn.tool_calls):
            if not call.id or call.id in self._seen_ids:
                wire_id = call.wire_id if call.wire_id is not None else call.id
                call = dataclasses.replace(call, id=self._fresh_id(step, index), wire_id=wire_id)
                changed = True
            self._seen_ids.add(call.id)
            calls.append(call)
        return dataclasses.replace(turn, tool_calls=tuple(calls)) if changed else turn

    def _fresh_id(self, step: int, index: int) -> str:
        candidate = f"call_{step}_{index}"
        suffix = 0
        while candidate in self._seen_ids:
            suffix += 1
            candidate = f"call_{step}_{index}_{suffix}"
        return candidate

    def run(self, calls: Sequence[ToolCall]) -> Outcome:
        if len(calls) > 1 and all(self.toolbox.is_read_only(call.name) for call in calls):
            return self._run_concurrently(calls)
        return self._run_in_order(calls)

    def _run_in_order(self, calls: Sequence[ToolCall]) -> Outcome:
        """Judge each call after the ones before it ran: their side effects reset the loop
        guard, and the approver is asked about the state they left."""
        messages = []
        loop: str | None = None
        for call in calls:
            refusal, parsed, loop = self._admit(call, loop)
            result = refusal if refusal is not None else self.toolbox.execute(call, parsed)
            messages.append(self._report(call, result))
        return Outcome(messages=messages, loop=loop)

    def _run_concurrently(self, calls: Sequence[ToolCall]) -> Outcome:
        """Read-only calls cannot change what the others see: judge all, then run them together."""
        results: list[ToolResult | None] = []  # None: to run
        to_run: list[ToolCall] = []
        arguments: list[dict[str, Any] | None] = []
        loop: str | None = None
        for call in calls:
            refusal, parsed, loop = self._admit(call, loop)
            if refusal is None:
                to_run.append(call)
                arguments.append(parsed)
            results.append(refusal)
        executed = iter(self.toolbox.execute_many(to_run, arguments))
        messages = [
            self._report(call, result if result is not None else next(executed))
            for call, result in zip(calls, results, strict=True)
        ]
        return Outcome(messages=messages, loop=loop)

    def _admit(
        self, call: ToolCall, loop: str | None
    ) -> tuple[ToolResult | None, dict[str, Any] | None, str | None]:
        """A refusal (None: run it, and count it) with the parsed arguments, and the loop."""
        if self.observed:
            self.emit("tool_call", call=call.to_dict())
        if loop is not None:
            return _refused(call, f"not run: the run stopped ({loop})"), None, loop
        parsed = self._parse(call)
        refusal, loop = self._judge(call, parsed)
        if refusal is None:
            self.budget.tool_calls += 1
        return refusal, parsed, loop

    def refuse(self, calls: Sequence[ToolCall], reason: str) -> list[Message]:
        """Answer calls that will not run, so that every call in the history has its result."""
        messages = []
        for call in calls:
            if self.observed:
                self.emit("tool_call", call=call.to_dict())
            messages.append(self._report(call, _refused(call, f"not run: {reason}")))
        return messages

    def _parse(self, call: ToolCall) -> dict[str, Any] | None:
        try:
            return self.toolbox.parse_arguments(call)
        except ToolError:
            return None  # the toolbox reports it when the call runs

    def _judge(
        self, call: ToolCall, parsed: dict[str, Any] | None
    ) -> tuple[ToolResult | None, str | None]:
        """A refusal for this call (or None to run it), and the loop message if it stops the run."""
        if self.budget.tool_calls_left <= 0:
            limit = self.budget.limits.max_tool_calls
            self.warn("budget", f"tool call limit ({limit}) reached; {call.name} not run")
            return _refused(call, f"not run: the tool call limit ({limit}) is reached"), None
        if self.budget.timed_out():
            limit_s = self.budget.limits.max_seconds
            self.warn("budget", f"time limit ({limit_s} s) reached; {call.name} not run")
            return _refused(call, f"not run: the time limit ({limit_s} s) is reached"), None
        verdict = self.guard.check(call, parsed)
        self._keys[call.id] = verdict.key
        if verdict.action == "stop":
            self.warn(verdict.kind, verdict.message, call_id=call.id)
            return _refused(call, f"not run: loop detected ({verdict.message})"), verdict.message
        if verdict.action == "warn":
            self.warn(verdict.kind, verdict.message, call_id=call.id)
            return _refused(call, verdict.message), None
        return self._ask_approval(call), None

    def _ask_approval(self, call: ToolCall) -> ToolResult | None:
        tool = self.toolbox.get(call.name)
        if self.approve is None or tool is None or tool.read_only:
            return None
        try:
            answer = self.approve(call, tool)
        except Exception as exc:  # a failing approver declines; it never crashes the run
            answer = f"the approval check failed ({type(exc).__name__}: {exc})"
        if answer is True:
            return None
        reason = answer if isinstance(answer, str) and answer else "the user declined this call"
        self.warn("declined", reason, call_id=call.id)
        return _refused(call, f"not run: {reason}")

    def _report(self, call: ToolCall, result: ToolResult) -> Message:
        content = result.to_content()
        key = self._keys.pop(call.id, None)
        if result.executed and key is not None:
            side_effects = not self.toolbox.is_read_only(call.name)
            self.guard.record(key, content, side_effects=side_effects)
        if self.observed:
            self.emit("tool_result", result=result.to_dict(), content=content)
        return Message(role="tool", content=content, tool_call_id=call.id, name=call.name)


def _refused(call: ToolCall, message: str) -> ToolResult:
    return ToolResult(call_id=call.id, name=call.name, ok=False, error=message, executed=False)
