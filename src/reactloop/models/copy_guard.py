"""The code decides: an answer copied from the prompt's own examples is not accepted.

A very small model copies what it reads. When a step's answer is one of the strings of the
prompt's format line or worked examples (``worked_examples.parroted``), and neither the question
nor any observation of this run contains it, the step becomes a format error: the loop journals
it, tells the model why, and asks again (``Limits.max_format_errors`` bound the retries). An
answer the run itself grounds — ``43`` after the calculator returned ``43`` — stands. The
embedded models' native steps are guarded in their session; a text ReAct step (``Finish[...]``)
by the text adapter, which holds the run's own history (tool results, the task, notices).
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Sequence

from reactloop.messages import Message, ModelTurn, ToolSpec
from reactloop.models.worked_examples import (
    chosen_examples,
    example_strings,
    normalize,
    parroted,
)

COPIED_ANSWER = (  # the format error of a refused copy: the model reads it, the journal keeps it
    "that answer is copied from an example in the instructions, not an answer to this "
    "question: answer this question, or call a tool"
)


def shown_strings(tools: Sequence[ToolSpec], *, worked_example: bool) -> frozenset[str]:
    """The example strings a prompt with these tools shows the model (native or text ReAct:
    the same examples, the same placeholders and field names)."""
    examples = chosen_examples(spec.name for spec in tools) if worked_example else ()
    return example_strings(examples)


def grounded(answer: str, messages: Sequence[Message], strings: frozenset[str]) -> bool:
    """Whether the run's own task or a tool's result contains ``answer`` (as a whole word).

    Not the system message (a user's instructions, or the examples), not the model's own
    replies, not the loop's notices (a refusal must not ground the next copy), not a tool's
    error (it echoes the model's request), and not the result of a call that copied an
    example's arguments (``6 * 7 + 1`` returns the example's ``43``)."""
    text = normalize(answer)
    pattern = re.compile(rf"(?<!\w){re.escape(text)}(?!\w)")
    copied_calls = {
        call.id
        for message in messages
        for call in message.tool_calls
        if any(parroted(leaf, strings) for leaf in _argument_strings(call.arguments))
    }
    return any(
        _own(message, copied_calls) and pattern.search(message.content.casefold())
        for message in messages
    )


def _own(message: Message, copied_calls: set[str]) -> bool:
    if message.role == "tool":
        return message.tool_call_id not in copied_calls and not _failed(message.content)
    return message.role == "user" and message.kind in ("", "task")


def _failed(result: str) -> bool:
    try:
        body = json.loads(result)
    except ValueError:
        return False
    return isinstance(body, dict) and body.get("ok") is False


def _argument_strings(arguments: str) -> list[str]:
    try:
        body = json.loads(arguments or "{}")
    except ValueError:
        return [arguments]
    values = body.values() if isinstance(body, dict) else [body]
    return [value for value in values if isinstance(value, str)]


def refuse_copied_answer(
    turn: ModelTurn, messages: Sequence[Message], strings: frozenset[str]
) -> ModelTurn:
    """``turn``, or a format error if its answer is an example string the run does not ground."""
    answer = turn.answer
    if answer is None:
        return turn
    return _refused(turn, answer, messages, strings)


def _refused(
    turn: ModelTurn, answer: str, messages: Sequence[Message], strings: frozenset[str]
) -> ModelTurn:
    copied = parroted(answer, strings)
    if copied is None or grounded(copied, messages, strings):
        return turn
    return dataclasses.replace(turn, format_error=COPIED_ANSWER)
