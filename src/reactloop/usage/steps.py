"""Per-call token counts read from a journal, measured or estimated from its text.

The readers of ``usage/`` take a journal's events typed (``journal/schema.py``) or as its
lines (``read_journal``'s dicts, read here by ``readable_events``: in a damaged journal, a
field of the wrong kind reads as unknown, a line without its type's required fields is left
out of the accounting).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from reactloop.journal.event_value import JournalEvent
from reactloop.journal.reader import Records, readable_events
from reactloop.journal.schema import RequestEvent, RunStartEvent, TurnEvent
from reactloop.messages import Usage, count_of

CHARS_PER_TOKEN = 4


@dataclass(frozen=True, kw_only=True)
class StepUsage:
    """The usage of one model call; ``step`` is the loop step it belongs to, ``run`` which run
    of the journal (from 0: a ``reactloop chat`` journal holds one run per turn), and
    ``without_tools`` says the call was told to answer now (``tool_choice`` ``none``: a
    wind-down, the last word after a loop), which some servers send without the tool schemas."""

    step: int
    usage: Usage
    run: int = 0
    without_tools: bool = False


def step_usages(events: Records) -> list[StepUsage]:
    """One entry per ``turn`` event, with the usage the provider measured."""
    calls = _Calls()
    steps = []
    for event in readable_events(events):
        turn = calls.see(event)
        if turn is not None:
            steps.append(calls.step_usage(turn, usage_from(turn.turn.get("usage"))))
    return steps


class _Calls:
    """Which run a ``turn`` event belongs to and how its request was made."""

    def __init__(self) -> None:
        self.runs = 0
        self.tool_choice: Any = None

    def see(self, event: JournalEvent) -> TurnEvent | None:
        """Take in ``event``; itself when it is a ``turn``."""
        if isinstance(event, RunStartEvent):
            self.runs += 1
        elif isinstance(event, RequestEvent):
            self.tool_choice = event.tool_choice
        return event if isinstance(event, TurnEvent) else None

    def step_usage(self, event: TurnEvent, usage: Usage) -> StepUsage:
        return StepUsage(
            step=event.step,
            usage=usage,
            run=max(self.runs - 1, 0),
            without_tools=self.tool_choice == "none",
        )


def usage_from(value: Any) -> Usage:
    """The ``Usage`` a journal recorded; fields that are not counts read as 0."""
    if not isinstance(value, Mapping):
        return Usage()
    return Usage(**{k: count_of(value, k) for k in Usage.__dataclass_fields__})


def items(value: Any) -> list[Any]:
    return list(value) if isinstance(value, list | tuple) else []


def estimated_step_usages(events: Records) -> list[StepUsage]:
    """Token counts guessed from the journal's text, for providers that report none."""
    typed = list(readable_events(events))
    start = next((e for e in typed if isinstance(e, RunStartEvent)), RunStartEvent())
    base = len(json.dumps(start.tools or [], ensure_ascii=False, default=str))
    base += len(str(start.instructions or ""))
    prompt_chars = base
    steps: list[StepUsage] = []
    calls = _Calls()
    for event in typed:
        if isinstance(event, RequestEvent):
            listed = event.messages_new
            if listed and event.n_messages == len(listed):
                prompt_chars = base  # the whole prompt again: a follow-up run's first request
            for message in listed:
                prompt_chars += len(json.dumps(message, ensure_ascii=False, default=str))
        turn_event = calls.see(event)
        if turn_event is not None:
            turn = turn_event.turn
            written = len(str(turn.get("text") or "")) + len(str(turn.get("reasoning") or ""))
            written += sum(
                len(json.dumps(call, default=str)) for call in items(turn.get("tool_calls"))
            )
            usage = Usage(input_tokens=_tokens(prompt_chars), output_tokens=_tokens(written))
            steps.append(calls.step_usage(turn_event, usage))
    return steps


def _tokens(chars: int) -> int:
    return math.ceil(chars / CHARS_PER_TOKEN)
