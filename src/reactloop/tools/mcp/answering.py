"""``Answering``: who answers a server's question during a call, and the journal's record of it.

A question (``elicitation.py``) comes on the client's loop, not on the thread of the call it
belongs to: each call of an MCP tool says it is in flight on its server (``calling``), and the
question is the latest such call's. Its answer is, in order: the one a person gave for that
call (a resumed run: ``reactloop approve --answer``, ``Agent.resume(decisions=...)``), used for
the call's first question; else the ``Elicit`` function's (the terminal asks the user). When
that raises ``AwaitingAnswer`` (``await_answer``: a deferred run), the server is told
``cancel`` and the call ends waiting, as a call deferred for approval does.

Each question goes in the run's journal (an ``elicitation`` event) with its answer, or with
``action: "awaiting"``. The value of a field the form marks ``writeOnly`` is never written
there (its name is, in ``omitted``), nor any value of an answer given ``journaled=False``.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from reactloop.journal.schema import ElicitationEvent
from reactloop.tools.context import current_call_id
from reactloop.tools.mcp.elicitation import (
    Elicit,
    ElicitationAnswer,
    ElicitationRequest,
    answered,
)
from reactloop.tools.questions import AwaitingAnswer, Questions, current_questions

ACTIONS = ("accept", "decline", "cancel")


def await_answer(request: ElicitationRequest) -> ElicitationAnswer:
    """The ``Elicit`` of a deferred run (``reactloop run --defer-approval``): nobody is asked
    now; the call waits for ``reactloop approve --answer``."""
    raise AwaitingAnswer(f"{request.server} asks: {request.message}")


@dataclass
class Caller:
    """A call in flight on a server: its id, its run's channel, and whether it now waits."""

    call_id: str | None
    questions: Questions | None
    asked: int = 0
    waiting: bool = False

    def given(self) -> ElicitationAnswer | None:
        """The person's answer for this call's first question, if they gave one."""
        if self.questions is None or self.call_id is None or self.asked > 1:
            return None
        return given_answer(self.questions.answers.get(self.call_id))

    def record(self, request: ElicitationRequest, answer: ElicitationAnswer | None) -> None:
        if self.questions is None:
            return
        action, content, omitted = "awaiting", None, None
        if answer is not None:
            action = answer.action
            content, omitted = journaled_content(request.schema, answer)
        event = ElicitationEvent(
            server=request.server,
            call_id=self.call_id,
            message=request.message,
            form=dict(request.schema),
            action=action,
            content=content,
            omitted=omitted,
        )
        self.questions.emit(event)


def given_answer(data: Mapping[str, Any] | None) -> ElicitationAnswer | None:
    """An answer as a decision holds it (``{"action", "content"}``), or None."""
    if not isinstance(data, Mapping):
        return None
    action = data.get("action")
    content = data.get("content")
    if action not in ACTIONS:
        return None
    if action == "accept":
        return ElicitationAnswer("accept", dict(content) if isinstance(content, Mapping) else {})
    return ElicitationAnswer("decline" if action == "decline" else "cancel")


def journaled_content(
    schema: Mapping[str, Any], answer: ElicitationAnswer
) -> tuple[dict[str, Any] | None, list[str] | None]:
    """What the journal keeps of an answer's content, and the names of the values it leaves out."""
    if answer.action != "accept":
        return None, None
    if not answer.journaled:
        return None, sorted(answer.content)
    properties = schema.get("properties")
    hidden = {
        name
        for name, spec in (properties.items() if isinstance(properties, Mapping) else ())
        if isinstance(spec, Mapping) and spec.get("writeOnly") is True
    }
    kept = {k: v for k, v in answer.content.items() if k not in hidden}
    omitted = sorted(hidden & set(answer.content))
    return kept, omitted or None


class Answering:
    """The ``Elicit`` the servers' connections use: ``elicit`` behind the person's given answers."""

    def __init__(self, elicit: Elicit) -> None:
        self.elicit = elicit
        self._lock = threading.Lock()
        self._calls: dict[str, list[Caller]] = {}

    @contextlib.contextmanager
    def calling(self, server: str) -> Iterator[Caller]:
        """A call of ``server``'s tool in flight (on the call's own thread)."""
        caller = Caller(current_call_id(), current_questions())
        with self._lock:
            self._calls.setdefault(server, []).append(caller)
        try:
            yield caller
        finally:
            with self._lock:
                self._calls[server].remove(caller)

    def _caller(self, server: str) -> Caller | None:
        with self._lock:
            calls = self._calls.get(server)
            return calls[-1] if calls else None

    def __call__(self, request: ElicitationRequest) -> ElicitationAnswer:
        caller = self._caller(request.server)
        if caller is not None:
            caller.asked += 1
        answer = caller.given() if caller is not None else None
        if answer is None:
            try:
                answer = self.elicit(request)
            except AwaitingAnswer:
                if caller is not None:
                    caller.waiting = True
                    caller.record(request, None)
                return ElicitationAnswer("cancel")
        answer = answered(request, answer)
        if caller is not None:
            caller.record(request, answer)
        return answer


@contextlib.contextmanager
def calling(answering: Elicit | None, server: str) -> Iterator[Caller | None]:
    """``answering.calling(server)`` when the servers have an ``Answering``, else nothing."""
    if not isinstance(answering, Answering):
        yield None
        return
    with answering.calling(server) as caller:
        yield caller
