"""Context compaction: keep a long run's prompt within its context limit, and its cache warm.

Before each model call ``ContextKeeper.check`` estimates the next prompt (the provider's count
for what it has seen, about four characters a token for what is new). Past ``TRIGGER`` of the
limit, ``Limits.context_policy`` decides: ``none`` stops with ``max_tokens`` and says so;
``trim`` replaces the bodies of the oldest long tool results with a one-line stub; ``summarize``
has the model summarise the oldest steps, and the summary replaces them in one message. Either
way the change is one block, made rarely (it brings the prompt down to ``TARGET``):

- it starts and ends between units (an assistant message and the results of all its calls),
  so no call loses its result, no result its call, and no parallel batch is split;
- the system prompt and the task are never compacted, nor an earlier summary, nor the latest
  turn; every message before the block stays the same object, byte-identical on the wire;
- an activated skill's instructions stay: ``trim`` leaves ``activate_skill`` results whole, and
  a summary that replaces one is followed by the skill's body again (a ``skill`` message);
- the summarising call is the run's next request with one more user message (the same system
  prompt and tools, tool choice ``none``), so it reads the cached prefix too.

Each compaction is journaled as a ``compaction`` event: what was replaced, by what, and the
estimated tokens before and after.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from reactloop.history import History
from reactloop.journal.event_value import JournalEvent
from reactloop.journal.schema import CompactionEvent
from reactloop.journal.warning_kinds import WarningKind
from reactloop.loop import notices
from reactloop.loop.budget import Budget
from reactloop.loop.model_call import ModelFailure, ask
from reactloop.loop.settings import RunSettings
from reactloop.loop.silent_truncation import CHARS_PER_TOKEN, TruncationWatch, tokens_of
from reactloop.messages import Message, ModelTurn
from reactloop.tools.skills import ACTIVATE_SKILL

TRIGGER = 0.8  # of the context limit: compaction starts past it
TARGET = 0.5  # of the context limit: what a compaction brings the prompt down to
SUMMARY_ROOM = 0.1  # of the context limit, left for the summary itself
STUB_OVER = 400  # characters: tool results longer than this are trimmed
_KEPT_KINDS = frozenset({"summary", "task", "skill"})


class Events(Protocol):
    """Where a keeper reports (the run's ``Emitter``)."""

    observed: bool

    def emit(self, event: JournalEvent) -> None: ...

    def warn(self, kind: WarningKind, message: str, **fields: Any) -> None: ...

    def warn_once(self, kind: WarningKind | str, message: str) -> None: ...


@dataclass(frozen=True, slots=True)
class Checked:
    """``sent``: the loop's count of messages already sent, after a compaction; ``stop``:
    why the run must stop (the context is full and cannot be compacted), or None."""

    sent: int
    stop: str | None = None


class ContextKeeper:
    """Watches one run's prompt size and compacts its history (see the module docstring)."""

    def __init__(
        self, settings: RunSettings, budget: Budget, history: History, events: Events, *,
        limit: int | None,
    ) -> None:  # fmt: skip
        self.settings = settings
        self.policy = settings.limits.context_policy or "none"
        if getattr(settings.model, "holds_history", False):  # the server's copy: never edited
            self.policy = "none"
        self.budget = budget
        self.history = history
        self.events = events
        self.emit = events.emit
        self.limited = limit is not None
        self.limit = limit or 0
        self._stale_at = -1  # the model-call count when the provider's count went stale
        self._summary_usage: dict[str, int] | None = None
        self.watch = TruncationWatch(events.warn, lambda: self.tools_tokens)
        self._tools: int | None = None

    @property
    def tools_tokens(self) -> int:
        """About how many tokens the tool specs take (counted when first needed)."""
        if self._tools is None:
            specs = "".join(str(spec.to_dict()) for spec in self.settings.toolbox.specs)
            self._tools = len(specs) // CHARS_PER_TOKEN
        return self._tools

    @classmethod
    def for_run(
        cls, settings: RunSettings, budget: Budget, history: History, events: Events
    ) -> ContextKeeper:
        """The run's limit is ``Limits.context_tokens``, else the model's ``context_window``
        when its adapter knows it, else none (only silent truncation is watched for)."""
        limit = settings.limits.context_tokens or getattr(settings.model, "context_window", None)
        if not isinstance(limit, int) or limit <= 0:
            limit = None
        return cls(settings, budget, history, events, limit=limit)

    def estimate(self, sent: int) -> int:
        """The next prompt's tokens: the larger of the provider's count (of the last prompt and
        reply, and an estimate of what came after) and the harness's own estimate of all it
        sends; a provider's count that is plainly wrong (a constant, a cut prompt's) is
        not trusted below what is sent. The own estimate counts each message once."""
        history = self.history
        own = self.watch.tokens(history, history.revision, len(history))
        last = self.budget.counts.last_usage
        if last.input_tokens and self.budget.counts.model_calls != self._stale_at:
            counted = last.input_tokens + last.output_tokens + tokens_of(history[sent + 1 :])
            return max(counted, own)
        return own

    def check(self, step: int, sent: int) -> Checked | None:
        """Before a model call: None when the prompt fits, else a compaction or a stop."""
        reported = self.budget.counts.last_usage.input_tokens
        if reported and not self.watch.done:
            self.watch.check(self.history, self.history.revision, sent, reported)
        if not self.limited:
            return None
        tokens = self.estimate(sent)
        if self.policy == "none":
            if tokens < self.limit:
                return None
            return Checked(sent, notices.context_full_message(tokens, self.limit, "none"))
        if tokens < TRIGGER * self.limit:
            return None
        done = self._summarize(step, tokens) if self.policy == "summarize" else None
        if done is None:
            done = self._trim(tokens)
        if done is None:
            if tokens < self.limit:
                return None  # nothing to compact yet, and it still fits
            return Checked(sent, notices.context_full_message(tokens, self.limit, self.policy))
        start, end, block = done
        return Checked(self._apply(start, end, block, tokens, sent))

    def _region(self) -> tuple[int, int]:
        """Where a compaction may take place: after the system prompt, the task and the
        latest summary; before the latest assistant turn."""
        messages = self.history
        start = 0
        for index, message in enumerate(messages):
            if message.role == "system" or message.kind in _KEPT_KINDS:
                start = index + 1
        last_turn = max(
            (i for i in range(start, len(messages)) if messages[i].role == "assistant"),
            default=start,
        )
        return start, last_turn

    def _boundaries(self, start: int, end: int) -> list[int]:
        """Where a unit starts: every message but a tool result (it belongs to its call)."""
        return [i for i in range(start, end + 1) if self.history[i].role != "tool"]

    def _trim(self, tokens: int) -> tuple[int, int, list[Message]] | None:
        """Stubs for the oldest long results, up to the unit where enough is saved; the block
        runs from the first result trimmed, so everything before it stays as it was."""
        start, last_turn = self._region()
        goal = tokens - TARGET * self.limit
        saved, first, end = 0, None, start
        for index in range(start, last_turn):
            message = self.history[index]
            if saved >= goal and message.role != "tool":
                break  # enough, at a unit's start
            end = index + 1
            if _trimmable(message):
                first = index if first is None else first
                saved += tokens_of([message]) - tokens_of([_stub(message)])
        else:
            end = last_turn
        if first is None:
            return None
        block = [_stub(m) if _trimmable(m) else m for m in self.history[first:end]]
        return first, end, block

    def _summarize(self, step: int, tokens: int) -> tuple[int, int, list[Message]] | None:
        start, last_turn = self._region()
        keep = (TARGET - SUMMARY_ROOM) * self.limit - tokens_of(self.history[:start])
        cut = last_turn
        for boundary in reversed(self._boundaries(start, last_turn)):
            if tokens_of(self.history[boundary:]) > keep:
                break
            cut = boundary
        if cut <= start or self._cannot_ask():
            return None
        summary = self._ask_summary(step, cut - start)
        if summary is None:
            return None
        content = notices.summary_block(summary, cut - start)
        pinned = self._skill_bodies(self.history[start:cut])
        return start, cut, [Message(role="user", content=content, kind="summary"), *pinned]

    def _skill_bodies(self, replaced: Sequence[Message]) -> list[Message]:
        """The instructions of each skill activated in ``replaced``, to follow the summary:
        the model goes on following them after its context is compacted."""
        skills = self.settings.toolbox.skills
        return [
            Message(role="user", content=notices.skill_kept_notice(name, body), kind="skill")
            for name, body in (skills.activated_in(replaced) if skills is not None else [])
        ]

    def _cannot_ask(self) -> bool:
        return self.budget.stop_before_model_call() is not None or self.budget.model_calls_left < 2

    def _ask_summary(self, step: int, replaced: int) -> str | None:
        request = Message(
            role="user", content=notices.summary_request_notice(replaced), kind="notice"
        )
        scratch = History([*self.history, request])
        emit = self.emit if self.events.observed else None
        asked = ask(self.settings, scratch, "none", self.budget, step, emit, self.events.warn_once)
        turn = asked.turn
        summary = "" if isinstance(turn, ModelFailure) else _reply_text(turn)
        if isinstance(turn, ModelFailure) or not summary:
            why = turn.message if isinstance(turn, ModelFailure) else "the summary was empty"
            self.events.warn(WarningKind.COMPACTION_FAILED, f"{why}; trimming instead")
            return None
        self._summary_usage = turn.usage.to_dict()
        return summary

    def _apply(self, start: int, end: int, block: list[Message], tokens: int, sent: int) -> int:
        replaced = self.history[start:end]
        self.history.compact(start, end, block)
        self._stale_at = self.budget.model_calls
        if self.settings.limits.remind:
            task = next((m.content for m in self.history if m.kind == "task"), "")
            reminder = Message(role="user", content=notices.reminder_notice(task), kind="notice")
            self.history.append(reminder)
        if self.events.observed:
            self.emit(self._record(start, replaced, block, tokens))
        self._summary_usage = None
        return sent - (end - start) + len(block) if sent >= end else min(sent, start)

    def _record(
        self, start: int, replaced: Sequence[Message], block: list[Message], tokens: int
    ) -> CompactionEvent:
        summarised = block and block[0].kind == "summary"
        return CompactionEvent(
            policy=self.policy,
            start=start,
            replaced=len(replaced),
            call_ids=[c.id for m in replaced for c in m.tool_calls],
            by=[m.to_dict() for m in block if m.kind in ("summary", "trimmed", "skill")],
            block=len(block),
            tokens_before=tokens,
            tokens_after=self.tools_tokens + tokens_of(self.history),
            prefix_tokens=self.tools_tokens + tokens_of(self.history[:start]),
            limit=self.limit,
            summary_usage=self._summary_usage if summarised else None,
        )


def _trimmable(message: Message) -> bool:
    """A long tool result, not trimmed yet, and not a skill's instructions (kept whole)."""
    return (
        message.role == "tool"
        and message.kind != "trimmed"
        and message.name != ACTIVATE_SKILL
        and len(message.content) > STUB_OVER
    )


def _stub(message: Message) -> Message:
    text = notices.trimmed_stub(message.name or "tool", len(message.content))
    if message.content.startswith('{"ok": false'):
        content = json.dumps({"ok": False, "error": text})
    else:
        content = json.dumps({"ok": True, "output": text})
    return Message(
        role="tool",
        content=content,
        tool_call_id=message.tool_call_id,
        name=message.name,
        kind="trimmed",
    )


def _reply_text(turn: ModelTurn) -> str:
    """What a reply says: its marked answer (text ReAct's ``Finish``, an embedded model's
    ``answer``) when it has one, else its text."""
    return (turn.final_answer if turn.final_answer is not None else turn.text).strip()
