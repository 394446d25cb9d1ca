"""What a local model reads and writes: history → turns, and a generated reply → ``ModelTurn``.

In the native protocol the model writes one JSON object per step (the grammar guarantees its
shape): ``{"thought": ..., "tool": NAME, "arguments": {...}}`` or
``{"thought": ..., "answer": ...}``. The tools and that format are described in the system turn.
In the text protocol the text ReAct adapter has already rendered everything; turns pass through.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from typing import Any

from reactloop.messages import Message, ModelTurn, ToolCall, ToolSpec, own_call_id
from reactloop.models.local.chat_format import Turn
from reactloop.models.worked_examples import NATIVE_FORMAT, chosen_examples, render

RAW_TEXT_KEY = "local_text"


def native_system_prompt(tools: Sequence[ToolSpec], *, worked_example: bool) -> str:
    lines = ["Answer the question. You can use these tools:"]
    for spec in tools:
        arguments = json.dumps(spec.parameters.get("properties") or {}, ensure_ascii=False)
        lines.append(f"- {spec.name}: {spec.description} Arguments: {arguments}")
    parts = ["\n".join(lines) if tools else "Answer the question.", NATIVE_FORMAT]
    if worked_example:
        parts.extend(render(example) for example in chosen_examples(s.name for s in tools))
    return "\n\n".join(parts)


def to_turns(
    messages: Sequence[Message], tools: Sequence[ToolSpec], *, native: bool, worked_example: bool
) -> list[Turn]:
    """The conversation as chat turns. Native: the tool prompt leads the system turn."""
    turns = [_to_turn(message) for message in messages]
    if native:
        prompt = native_system_prompt(tools, worked_example=worked_example)
        if turns and turns[0].role == "system":
            turns[0] = Turn(role="system", text=f"{prompt}\n\n{turns[0].text}".rstrip())
        else:
            turns.insert(0, Turn(role="system", text=prompt))
    return turns


def _to_turn(message: Message) -> Turn:
    if message.role == "tool":
        return Turn(role="user", text=f"Observation: {message.content}")
    if message.role == "assistant":
        return Turn(role="assistant", text=_assistant_text(message))
    return Turn(role=message.role, text=message.content)


def _assistant_text(message: Message) -> str:
    raw = message.raw
    if isinstance(raw, dict) and isinstance(raw.get(RAW_TEXT_KEY), str):
        return str(raw[RAW_TEXT_KEY])
    if not message.tool_calls:
        return message.content
    lines = []
    for call in message.tool_calls:
        try:
            arguments: Any = json.loads(call.arguments or "{}")
        except json.JSONDecodeError:
            arguments = call.arguments
        body = {
            "thought": message.reasoning or message.content,
            "tool": call.name,
            "arguments": arguments,
        }
        lines.append(json.dumps(body, ensure_ascii=False))
    return "\n".join(lines)


def native_turn(text: str, *, step: int, base: ModelTurn) -> ModelTurn:
    """Read the JSON object the native grammar produced; anything else is a format error."""
    raw_message = {RAW_TEXT_KEY: text}
    try:
        body = json.loads(text)
    except json.JSONDecodeError as exc:
        problem = f"the reply is not one JSON object ({exc.msg} at char {exc.pos})"
        return _replace(base, text=text, format_error=problem, raw_message=raw_message)
    if not isinstance(body, dict):
        return _replace(
            base, text=text, format_error="the reply is not a JSON object", raw_message=raw_message
        )
    thought = str(body.get("thought") or "") or None
    if isinstance(body.get("tool"), str):
        call_id = own_call_id(step)
        arguments = json.dumps(body.get("arguments") or {}, ensure_ascii=False)
        call = ToolCall(id=call_id, name=body["tool"], arguments=arguments, wire_id=call_id)
        return _replace(
            base,
            text=thought or "",
            reasoning=thought,
            tool_calls=(call,),
            finish_reason="tool_calls",
            raw_message=raw_message,
        )
    if isinstance(body.get("answer"), str) and body["answer"].strip():
        # The thought is the turn's text, as text ReAct's is: the console shows it as the
        # step's Reason, not as a provider's hidden thinking.
        return _replace(
            base,
            text=thought or "",
            reasoning=thought,
            final_answer=body["answer"],
            raw_message=raw_message,
        )
    return _replace(
        base,
        text=text,
        format_error='the reply has neither "tool" nor a non-empty "answer"',
        raw_message=raw_message,
    )


def _replace(base: ModelTurn, **changes: Any) -> ModelTurn:
    return dataclasses.replace(base, **changes)
