"""Completion checks: a final answer does not prove the task is solved, so the code checks it.

``checklist`` (items the work must satisfy): before the first final answer is accepted, the
model is shown the list, once, and asked to confirm each item or go on working. ``verify``
(a callable): run before every final answer is accepted. It gets the answer and returns
True or None (accepted), False or a reason (refused); an exception refuses too, with its
description. A command is ``reactloop.loop.command_check.CommandCheck``: it runs in the workspace,
sandboxed like the ``bash`` tool (the workspace holds what the model wrote: a test run executes
it); exit 0 accepts, anything else shows the model the command's output. A refused answer becomes an
observation and the run goes on within the usual limits; when no further model call is
possible (the last call, or an answer the model was told to give now), the run ends with the
answer and ``error`` saying it failed the check. Each check is journaled as a ``check`` event
(its class, and ``WarningKind``, are imported when a check is made: ``import reactloop`` loads
this module, and not the journal's schema).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from reactloop.errors import UsageError, describe_exception
from reactloop.history import History
from reactloop.loop import notices
from reactloop.messages import Message
from reactloop.result import Stop

if TYPE_CHECKING:
    from reactloop.journal.event_value import JournalEvent
    from reactloop.journal.run_counts import RunCounts

Verify = Callable[[str], "bool | str | None"]
Emit = Callable[["JournalEvent"], None]
MAX_CHECK_OUTPUT = 4000  # characters of a refusal shown to the model


def as_verify(verify: Verify | None) -> Verify | None:
    """The check, when it is one: a callable, or None."""
    if verify is None or callable(verify):
        return verify
    if isinstance(verify, str):
        raise TypeError(
            "verify takes a callable; for a command use "
            "reactloop.loop.command_check.CommandCheck(command, workspace=...)"
        )
    raise TypeError(f"verify must be a callable or None, not {type(verify).__name__}")


def read_checklist(path: str | Path) -> list[str]:
    """The items of a checklist file: one a line; ``-``, ``*``, ``[ ]`` and numbers before an
    item are left out, and blank lines and ``#`` comments are skipped. A file that is not
    UTF-8 text is a ``UsageError`` that says where (``reactloop run`` exits 2 with its line)."""
    items = []
    try:
        text = Path(path).read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        bad = exc.object[exc.start : exc.start + 4]
        raise UsageError(
            f"checklist {path} is not UTF-8 text (the bytes {bad!r} at byte {exc.start})"
        ) from None
    for line in text.splitlines():
        item = line.strip()
        if not item or item.startswith("#"):
            continue
        item = item.lstrip("-*").strip()
        item = item.removeprefix("[ ]").removeprefix("[x]").strip()
        head, dot, rest = item.partition(".")
        if dot and head.isdigit():
            item = rest.strip()
        if item:
            items.append(item)
    return items


class FinishChecks:
    """The checks of one run; ``review`` judges each final answer."""

    def __init__(
        self,
        checklist: Sequence[str],
        verify: Verify | None,
        *,
        history: History,
        emit: Emit,
        warn: Callable[..., None],
        observed: bool = True,
        counts: RunCounts,
    ) -> None:
        """``counts``: the run's, which say whether the checklist was shown (once, in the
        whole run: a resumed run's too)."""
        self.checklist = tuple(checklist)
        self.verify = verify
        self.history = history
        self.emit = emit
        self.warn = warn
        self.observed = observed
        self.counts = counts

    @classmethod
    def for_run(
        cls, checklist: Sequence[str], verify: Verify | None, **parts: Any
    ) -> FinishChecks | None:
        """None when there is nothing to check (a run without checks pays nothing)."""
        check = as_verify(verify)
        if not checklist and check is None:
            return None
        return cls(checklist, check, **parts)

    def review(self, stop: Stop, *, can_go_on: bool) -> Stop | None:
        """``stop`` when its answer is accepted (with ``error`` set when it failed a check
        and the run cannot go on), or None: the model was told why, and the run goes on."""
        go_on = can_go_on and not stop.forced
        answer = stop.answer or ""
        if self.checklist and not self.counts.checklist_shown and go_on:
            self.counts.checklist_shown = True
            notice = notices.checklist_notice(self.checklist)
            self.history.append(Message(role="user", content=notice, kind="notice"))
            self._journal(None, notice, checklist=True)
            return None
        if self.verify is None:
            return stop
        refused = self._verify(answer)
        told = notices.verify_failed_notice(refused) if refused is not None and go_on else None
        if told is not None:  # in the history when its event is sent, as a fold places it
            self.history.append(Message(role="user", content=told, kind="notice"))
        self._journal(refused, told)
        if refused is None:
            return stop
        if told is None:
            error = f"the answer failed its check: {refused[:1000]}"
            return dataclasses.replace(stop, error=error)
        return None

    def _journal(self, refused: str | None, notice: str | None, *, checklist: bool = False) -> None:
        """The ``check`` event: the checklist shown, or a verify's verdict (and its warning,
        when it refused), with the ``notice`` the model is told when the run goes on."""
        from reactloop.journal.schema import CheckEvent
        from reactloop.journal.warning_kinds import WarningKind

        if checklist:
            if self.observed:
                items = list(self.checklist)
                self.emit(CheckEvent(kind="checklist", passed=False, items=items, notice=notice))
            return
        if self.observed:
            self.emit(CheckEvent.verify(refused, notice))
        if refused is not None:
            self.warn(WarningKind.VERIFY_FAILED, refused[:300])

    def _verify(self, answer: str) -> str | None:
        """None when the check accepts the answer, else why not (for the model)."""
        assert self.verify is not None
        try:
            verdict = self.verify(answer)
        except Exception as exc:  # a failing check refuses; it never crashes the run
            return f"the check failed: {describe_exception(exc)}"
        if verdict is True or verdict is None:
            return None
        why = verdict if isinstance(verdict, str) and verdict else "the check refused the answer"
        if len(why) > MAX_CHECK_OUTPUT:
            half = MAX_CHECK_OUTPUT // 2
            why = f"{why[:half]}\n[... {len(why) - 2 * half} characters cut ...]\n{why[-half:]}"
        return why
