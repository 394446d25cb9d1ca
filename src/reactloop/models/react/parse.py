"""Parsing one text ReAct reply: ``Thought: …``, then ``Action: tool[arg]`` or ``Finish[answer]``.

Anything from the first ``Observation:`` on is cut first: observations are written by the
harness, never by the model. The argument runs to the bracket that balances the opening one,
so ``calculator[(2+3)*4]`` and ``lookup[a[1]]`` both work; with unbalanced brackets it runs to
the last ``]``. ``parse_reply`` never raises: a reply it cannot read is a ``FormatProblem``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from reactloop.support import json_decode

STOP = "Observation:"
FINISH = "finish"

_ACTION = re.compile(r"Action\s*:\s*([A-Za-z_][\w.\-]*)\s*\[", re.IGNORECASE)
_BARE_FINISH = re.compile(r"(?<![\w])Finish\s*\[", re.IGNORECASE)
_ACTION_NO_BRACKET = re.compile(r"Action\s*:\s*(\S+)", re.IGNORECASE)
_THOUGHT = re.compile(r"^\s*Thought\s*:\s*", re.IGNORECASE)


@dataclass(frozen=True, kw_only=True, slots=True)
class Action:
    """A parsed step: ``name`` is ``"finish"`` for a final answer."""

    thought: str
    name: str
    argument: str

    @property
    def is_finish(self) -> bool:
        return self.name.lower() == FINISH


@dataclass(frozen=True, kw_only=True, slots=True)
class FormatProblem:
    message: str


def cut_observation(text: str) -> tuple[str, bool]:
    """The reply up to the first ``Observation:``, and whether anything was cut."""
    position = text.find(STOP)
    if position < 0:
        return text, False
    return text[:position].rstrip(), True


def parse_reply(text: str) -> Action | FormatProblem:
    """Read one reply (already cut at ``Observation:``)."""
    match = _ACTION.search(text) or _BARE_FINISH.search(text)
    if match is None:
        return FormatProblem(message=_missing_action_message(text))
    name = match.group(1) if match.re is _ACTION else "Finish"
    argument = _bracket_argument(text, match.end() - 1)
    if argument is None:
        return FormatProblem(message=f"the bracket after {name} is never closed; write {name}[...]")
    thought = _THOUGHT.sub("", text[: match.start()]).strip()
    return Action(thought=thought, name=name, argument=argument.strip())


def _missing_action_message(text: str) -> str:
    loose = _ACTION_NO_BRACKET.search(text)
    if loose is not None:
        return (
            f"'Action: {loose.group(1)}' has no [argument]; write 'Action: tool[argument]' "
            "or 'Action: Finish[answer]'"
        )
    if not text.strip():
        return "the reply was empty; write 'Thought: ...' then 'Action: tool[argument]'"
    return "no 'Action: tool[argument]' or 'Action: Finish[answer]' line was found"


def _bracket_argument(text: str, open_index: int) -> str | None:
    as_json = _json_argument(text, open_index)
    if as_json is not None:
        return as_json
    depth = 0
    for index in range(open_index, len(text)):
        char = text[index]
        if char == "[":
            depth += 1
        elif char == "]":
            depth -= 1
            if depth == 0:
                return text[open_index + 1 : index]
    last = text.rfind("]")
    if last > open_index:
        return text[open_index + 1 : last]
    return None


def _json_argument(text: str, open_index: int) -> str | None:
    """A JSON object argument, whose strings may hold brackets: ``tool[{"a": "x]"}]``."""
    start = open_index + 1
    while start < len(text) and text[start].isspace():
        start += 1
    if not text.startswith("{", start):
        return None
    try:
        _, end = json_decode.raw_decode(text, start)
    except json_decode.JSONRefused:
        return None
    close = end
    while close < len(text) and text[close].isspace():
        close += 1
    if close < len(text) and text[close] == "]":
        return text[open_index + 1 : close]
    return None
