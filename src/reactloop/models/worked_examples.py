"""The worked examples the small models' prompts show (native JSON and text ReAct), as data —
and the check that an answer is not one of their strings.

A very small model copies what it reads: with a worked example whose answer was ``43`` it
answered ``43`` to "What is the capital of France?". The examples live here as values, so the
prompt is rendered from them and ``example_strings`` knows every string the model was shown;
``parroted`` tells whether an answer is one of them (or one of them repeated, ``43.43.43``).
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

FORMAT_THOUGHT = "your reasoning"
FORMAT_TOOL = "TOOL NAME"
FORMAT_ANSWER = "the final answer"
# The field names and labels the prompts show (native JSON and text ReAct): as an answer,
# each is the format copied ("answer", "Thought"), never an answer.
FORMAT_WORDS = (
    "thought", "tool", "arguments", "answer", "action", "observation", "question", "finish",
    "argument", "your reasoning", "tool name", "final answer", "example",
)  # fmt: skip

NATIVE_FORMAT = f"""Reply with exactly one JSON object per step. To call a tool:
{{"thought": "{FORMAT_THOUGHT}", "tool": "{FORMAT_TOOL}", "arguments": {{...}}}}
When you know the answer:
{{"thought": "{FORMAT_THOUGHT}", "answer": "{FORMAT_ANSWER}"}}
After a tool call, stop: the Observation comes back to you."""


@dataclass(frozen=True, kw_only=True)
class Step:
    """One reply of a worked example and, after a tool call, the observation it got."""

    reply: Mapping[str, Any]
    observation: str | None = None


@dataclass(frozen=True, kw_only=True)
class Example:
    question: str
    steps: tuple[Step, ...]
    needs_tool: str | None = None  # shown only when the run has this tool


CALCULATOR = Example(
    question="What is 6 times 7, plus 1?",
    needs_tool="calculator",
    steps=(
        Step(
            reply={
                "thought": "I will compute it with the calculator.",
                "tool": "calculator",
                "arguments": {"expression": "6 * 7 + 1"},
            },
            observation='{"ok": true, "output": "43"}',
        ),
        Step(reply={"thought": "The calculator returned 43.", "answer": "43"}),
    ),
)

LOOKUP = Example(
    question="What is the door code? The notes have door_code.",
    needs_tool="lookup",
    steps=(
        Step(
            reply={
                "thought": "The notes have it.",
                "tool": "lookup",
                "arguments": {"key": "door_code"},
            },
            observation='{"ok": true, "output": "4711"}',
        ),
        Step(reply={"thought": "The lookup returned 4711.", "answer": "4711"}),
    ),
)

NO_TOOL = Example(
    question="Which is heavier, a mouse or an elephant?",
    steps=(
        Step(
            reply={"thought": "I know this without a tool.", "answer": "An elephant."},
        ),
    ),
)

EXAMPLES = (LOOKUP, CALCULATOR, NO_TOOL)


def chosen_examples(tool_names: Iterable[str]) -> tuple[Example, ...]:
    """The examples a prompt with these tools shows: each of its tools' (the calculator's last),
    else the one without a tool. Measured: showing the one without a tool next to the
    calculator's made SmolLM2 answer arithmetic without computing it (docs/local_models.md)."""
    names = set(tool_names)
    chosen = tuple(e for e in EXAMPLES if e.needs_tool is not None and e.needs_tool in names)
    return chosen or (NO_TOOL,)


def render(example: Example) -> str:
    lines = [f"Question: {example.question}"]
    for step in example.steps:
        lines.append(json.dumps(dict(step.reply), ensure_ascii=False))
        if step.observation is not None:
            lines.append(f"Observation: {step.observation}")
    return "Example:\n" + "\n".join(lines)


def example_strings(examples: Iterable[Example] = EXAMPLES) -> frozenset[str]:
    """Every string the format line and these examples show the model, normalized."""
    found = {FORMAT_THOUGHT, FORMAT_TOOL, FORMAT_ANSWER, *FORMAT_WORDS}
    for example in examples:
        found.add(example.question)
        for step in example.steps:
            found.update(_leaves(step.reply))
            if step.observation is not None:
                found.update(_leaves(json.loads(step.observation)))
    return frozenset(n for n in map(normalize, found) if n)


_LEAD_IN = re.compile(r"^(?:the\s+)?(?:final\s+)?answer(?:\s+is)?\s*[:=]?\s*")


def normalize(text: str) -> str:
    return text.strip().strip("\"'`.!?,;: ").casefold()


def parroted(answer: str, strings: frozenset[str] | None = None) -> str | None:
    """The example string ``answer`` is (alone or repeated), else None."""
    known = example_strings() if strings is None else strings
    text = normalize(answer)
    bare = normalize(_LEAD_IN.sub("", text))
    for string in known:
        if string in (text, bare) or _repeated(string).fullmatch(bare):
            return string
    return None


@functools.lru_cache(maxsize=256)
def _repeated(string: str) -> re.Pattern[str]:
    """``string`` twice or more, separated by punctuation, maybe cut off inside the last one."""
    prefixes = "|".join(re.escape(string[:end]) for end in range(len(string), 0, -1))
    return re.compile(f"(?:{re.escape(string)}[\\s.,;:!?]*){{2,}}(?:{prefixes})?")


def _leaves(value: Any) -> Iterable[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for item in value.values():
            yield from _leaves(item)
    elif isinstance(value, list):
        for item in value:
            yield from _leaves(item)
