"""The text ReAct system prompt and observation lines: short, because every step resends them.

The worked examples a small model is shown are the native prompt's, as data
(``models/worked_examples.py``), written as ``Thought`` / ``Action`` lines: each answers only
with what its own question or observation holds, and none answers a question a user asks.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from reactloop.messages import ToolSpec
from reactloop.models.worked_examples import Example, chosen_examples
from reactloop.support import json_decode

_FORMAT = """Reply in exactly this format:
Thought: your reasoning
Action: tool[argument]
Then stop: the Observation comes back to you. Never write an Observation yourself.
When you know the answer: Action: Finish[answer]"""


def system_prompt(
    tools: Sequence[ToolSpec], instructions: str | None = None, *, worked_example: bool = False
) -> str:
    lines = ["Answer the question. You can use these tools:"]
    lines.extend(_tool_line(spec) for spec in tools)
    lines.append("- Finish[answer]: give the final answer and stop.")
    if any(len(_properties(spec)) > 1 for spec in tools):
        lines.append('A tool with several parameters takes a JSON object: tool[{"a": 1, "b": 2}].')
    parts = ["\n".join(lines), _FORMAT]
    if worked_example:
        parts.extend(render_example(e) for e in chosen_examples(spec.name for spec in tools))
    if instructions:
        parts.append(instructions)
    return "\n\n".join(parts)


def render_example(example: Example) -> str:
    """A worked example as the text protocol writes it: ``Question``, then each step's
    ``Thought`` and ``Action`` (a tool's, or ``Finish``), and the ``Observation`` it got."""
    lines = [f"Question: {example.question}"]
    for step in example.steps:
        reply = step.reply
        lines.append(f"Thought: {reply['thought']}")
        if "tool" in reply:
            lines.append(f"Action: {reply['tool']}[{_argument_text(reply['arguments'])}]")
        else:
            lines.append(f"Action: Finish[{reply['answer']}]")
        if step.observation is not None:
            lines.append(render_observation(step.observation))
    return "Example:\n" + "\n".join(lines)


def _argument_text(arguments: dict[str, Any]) -> str:
    """One argument bare (``calculator[6 * 7 + 1]``), several as a JSON object."""
    if len(arguments) == 1:
        (value,) = arguments.values()
        return value if isinstance(value, str) else json.dumps(value)
    return json.dumps(arguments, ensure_ascii=False)


def _tool_line(spec: ToolSpec) -> str:
    properties = _properties(spec)
    required = set(spec.parameters.get("required") or ())
    if len(properties) == 1:
        (name,) = properties
        signature = name if name in required else f"{name}?"
    elif properties:
        fields = ", ".join(f'"{n}"' if n in required else f'"{n}"?' for n in properties)
        signature = "{" + fields + "}"
    else:
        signature = ""
    return f"- {spec.name}[{signature}]: {spec.description}"


def _properties(spec: ToolSpec) -> dict[str, Any]:
    return dict(spec.parameters.get("properties") or {})


def render_observation(content: str) -> str:
    """``Observation: <output>`` or ``Observation: Error: <message>`` from a result's JSON."""
    try:
        body = json_decode.safe_loads(content)
    except json_decode.JSONRefused:
        return f"Observation: {content}"
    if not isinstance(body, dict) or "ok" not in body:
        return f"Observation: {content}"
    if body["ok"]:
        output = body.get("output")
        text = output if isinstance(output, str) else json.dumps(output, ensure_ascii=False)
    else:
        text = f"Error: {body.get('error')}"
    if body.get("truncated"):
        text += " [output truncated]"
    return f"Observation: {text}"
