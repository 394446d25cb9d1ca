"""``TerminalApprover``: ask the person at the terminal before a call with side effects runs.

The agent consults an approver before every call to a tool that is not read-only
(``write_file``, ``edit_file``, ``bash``), with the call prepared (``PreparedCall``: its
arguments decoded once, the same ones that will run). The answer is ``True`` (run it) or a
string: the reason the call was declined, which the model receives as an error observation.

Allow-list patterns let common commands through without a question:

- ``"pytest*"``, ``"ls *"``: shell-style patterns (``fnmatch``) matched against a bash command;
- ``"re:git (status|diff)( .*)?"``: a regular expression that must match the whole command;
- ``"tool:write_file"``: every call of that tool.

A bash command that contains shell control characters (``; & | ` $ < > ( )``, newlines) is
never allowed by a command pattern: ``pytest*`` must not let ``pytest; rm -rf ~`` through.
Without a terminal (stdin is not a TTY, or it is closed) every call is declined.

``DecidingApprover`` is a resumed run's: the decisions given on its pending calls first.
"""

from __future__ import annotations

import dataclasses
import inspect
import json
import re
import sys
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from fnmatch import fnmatchcase
from typing import Any, TextIO

from reactloop.errors import UsageError
from reactloop.messages import ToolCall
from reactloop.messages.calls import ArgumentsError, decode_arguments
from reactloop.tools.base import Tool
from reactloop.tools.prepared import Approver, Defer, PreparedCall, prepare

SHELL_CONTROL = re.compile(r"[;&|`$<>()\n\r\\]")
MAX_SHOWN_CHARS = 2000
YES = {"y", "yes"}
ALWAYS = {"a", "always"}


@dataclass(frozen=True)
class AllowRule:
    """One allow-list entry, parsed."""

    text: str
    tool: str | None = None
    regex: re.Pattern[str] | None = None

    @classmethod
    def parse(cls, text: str) -> AllowRule:
        if text.startswith("tool:"):
            name = text[len("tool:") :].strip()
            if not name:
                raise UsageError(f"allow pattern {text!r} names no tool")
            return cls(text, tool=name)
        if text.startswith("re:"):
            try:
                return cls(text, regex=re.compile(text[len("re:") :]))
            except re.error as exc:
                raise UsageError(f"allow pattern {text!r} is not a valid regex: {exc}") from None
        if not text.strip():
            raise UsageError("an allow pattern is empty")
        return cls(text)

    def allows(self, tool: str, command: str | None) -> bool:
        if self.tool is not None:
            return self.tool == tool
        if command is None or SHELL_CONTROL.search(command):
            return False
        if self.regex is not None:
            return self.regex.fullmatch(command) is not None
        return fnmatchcase(command, self.text)


class TerminalApprover:
    """Asks y/N on a terminal; ``allow`` patterns and "always" answers skip the question.

    ``input``/``output`` default to stdin/stderr; with the default input, a missing terminal
    declines every call. Answers: ``y`` runs the call, ``a`` runs it and every identical call
    after it, ``n`` or Enter declines, ``n <reason>`` declines and tells the model why.
    """

    def __init__(
        self,
        allow: Iterable[str] = (),
        *,
        input: TextIO | None = None,
        output: TextIO | None = None,
    ) -> None:
        self.rules = [AllowRule.parse(text) for text in allow]
        self._input = input
        self._output = output
        self._always: set[str] = set()  # canonical keys of calls answered "always"
        self._lock = threading.Lock()

    def __call__(
        self, call: PreparedCall | ToolCall, tool: Tool, note: str | None = None
    ) -> bool | str:
        """``note``: why this call needs a fresh look (a resumed run's call that may already
        have run): it is shown first, and neither the allow list nor "always" skips it."""
        prepared = call if isinstance(call, PreparedCall) else prepare(call, tool, "")
        if prepared.name != tool.name:  # a deferred tool through call_tool: judge the real one
            prepared = prepared._replace(call=dataclasses.replace(prepared.call, name=tool.name))
        command = bash_command(prepared)
        if note is None and any(rule.allows(prepared.name, command) for rule in self.rules):
            return True
        with self._lock:  # one question at a time, even when tools run in threads
            if note is None and prepared.key in self._always:
                return True
            return self._ask(prepared, command, note)

    def _ask(self, call: PreparedCall, command: str | None, note: str | None = None) -> bool | str:
        stream = self._input if self._input is not None else sys.stdin
        output = self._output if self._output is not None else sys.stderr
        if self._input is None and not _is_terminal(stream):
            return "declined: approval is required but there is no terminal to ask"
        if note is not None:
            output.write(f"note: {visible(note)}\n")
        output.write(describe(call, command) + "\nAllow? [y]es / [a]lways / [N]o (+ reason): ")
        output.flush()
        try:
            line = stream.readline()
        except (OSError, ValueError):
            line = ""
        if not line:
            output.write("\n")
            return "declined: no answer (end of input)"
        return self._verdict(call, line.strip())

    def _verdict(self, call: PreparedCall, answer: str) -> bool | str:
        word, _, reason = answer.partition(" ")
        if word.lower() in YES:
            return True
        if word.lower() in ALWAYS:
            self._always.add(call.key)
            return True
        if word.lower() in {"n", "no"} and reason.strip():
            return f"declined by the user: {reason.strip()}"
        return "declined by the user"


def defer_approval(call: PreparedCall, tool: Tool) -> Defer:
    """The approver that asks nobody now: every call with side effects waits, and the run
    stops ``awaiting_approval`` (``reactloop run --defer-approval``; then ``reactloop
    approve`` and ``reactloop resume``)."""
    return Defer()


def bash_command(call: PreparedCall | ToolCall) -> str | None:
    """The command of a bash call, or None for other tools and unreadable arguments."""
    if call.name != "bash":
        return None
    arguments = call.arguments if isinstance(call, PreparedCall) else _decoded(call)
    command = arguments.get("command") if arguments is not None else None
    return command if isinstance(command, str) else None


def _decoded(call: ToolCall) -> dict[str, Any] | None:
    try:
        return decode_arguments(call.arguments)
    except ArgumentsError:
        return None


def describe(call: PreparedCall | ToolCall, command: str | None) -> str:
    """What the person is asked about, with control characters made visible."""
    if command is not None:
        return f"reactloop wants to run in the workspace:\n  $ {visible(command)}"
    raw = call.call.arguments if isinstance(call, PreparedCall) else call.arguments
    arguments = call.arguments if isinstance(call, PreparedCall) else _decoded(call)
    shown = raw if arguments is None else json.dumps(arguments, ensure_ascii=False, indent=2)
    text = visible(shown)
    if len(text) > MAX_SHOWN_CHARS:
        text = text[:MAX_SHOWN_CHARS] + f"\n  [... {len(text) - MAX_SHOWN_CHARS} more characters]"
    return f"reactloop wants to call {call.name} with:\n{text}"


def visible(text: str) -> str:
    """Escape control characters (an ANSI sequence could hide part of a command)."""
    return "".join(
        ch if ch in "\n\t" or (ch.isprintable() and ch not in "\x7f") else repr(ch)[1:-1]
        for ch in text
    )


def _is_terminal(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError, OSError):
        return False


# On a call a resumed run settles: True runs it; a reason denies it; an answer to the call's
# question (``{"action": "accept", "content": {...}}``, ``decline``, ``cancel``) runs it and
# gives the server that answer when it asks (``tools/mcp/answering.py``).
Decision = bool | str | Mapping[str, Any]


class DecidingApprover:
    """The resumed run's approver: the decisions given first (True runs, a reason denies),
    then the agent's approver (told, for an uncertain call, that it may already have run);
    without one, a call nobody decided runs, as in any run without an approver."""

    def __init__(
        self,
        approve: Approver | None,
        decisions: Mapping[str, Decision],
        notes: Mapping[str, str],
    ) -> None:
        self.approve = approve
        self.decisions = decisions
        self.notes = notes
        self.takes_note = approve is not None and _takes_note(approve)

    def __call__(self, call: PreparedCall, tool: Tool) -> bool | str | Defer:
        decided = self.decisions.get(call.id)
        if isinstance(decided, Mapping):
            return True
        if decided is not None:
            return decided if decided is True or decided else "denied by the user"
        if self.approve is None:
            return True
        note = self.notes.get(call.id)
        if note is not None and self.takes_note:
            answer: bool | str | Defer = self.approve(call, tool, note=note)  # type: ignore[call-arg]
            return answer
        return self.approve(call, tool)


def _takes_note(approve: Approver) -> bool:
    try:
        parameters = inspect.signature(approve).parameters
    except (TypeError, ValueError):
        return False
    return "note" in parameters


def decision_data(call_id: str, decision: Decision, *, who: str) -> dict[str, Any]:
    """The ``approval`` event: a person's decision on a pending call (who, when, as given),
    with the answer to the call's question when the decision is one."""
    answer = dict(decision) if isinstance(decision, Mapping) else None
    approved = decision is True or answer is not None
    data = {
        "call_id": call_id,
        "decision": "approve" if approved else "deny",
        "reason": None if approved else str(decision or "denied by the user"),
        "who": who,
        "at": datetime.now().astimezone().isoformat(timespec="seconds"),
    }
    return data if answer is None else {**data, "answer": answer}
