"""The text ReAct system prompt and observation lines: short, because every step resends them."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from reactloop.messages import ToolSpec
from reactloop.support import json_decode

_FORMAT = """Reply in exactly this format:
Thought: your reasoning
Action: tool[argument]
Then stop: the Observation comes back to you. Never write an Observation yourself.
When you know the answer: Action: Finish[answer]"""

_EXAMPLE_CALCULATOR = """Example:
Question: What is 6 times 7, plus 1?
Thought: I will compute it with the calculator.
Action: calculator[6 * 7 + 1]
Observation: 43
Thought: I have the answer.
Action: Finish[43]"""

_EXAMPLE_GENERIC = """Example:
Question: What is the capital of France?
Thought: I know this without a tool.
Action: Finish[Paris]"""


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
        names = {spec.name for spec in tools}
        parts.append(_EXAMPLE_CALCULATOR if "calculator" in names else _EXAMPLE_GENERIC)
    if instructions:
        parts.append(instructions)
    return "\n\n".join(parts)


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
