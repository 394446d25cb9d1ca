"""What ``OTelObserver`` writes into attributes, read from the events' data: the provider,
the token counts that were reported, and the content in the shape of the conventions chosen.

Two shapes of content, after the GenAI conventions' rule for a change of their version
(``OTEL_SEMCONV_STABILITY_OPT_IN``): by default the shape reactloop always wrote (messages as
``{"role", "content", "tool_calls"}``, instructions as a string, tools as reactloop specs),
so that dashboards built on it keep working; with ``gen_ai_latest_experimental`` in that
variable (or ``OTelObserver(semconv="latest")``) the latest conventions' shape, in ``parts``:

    [{"role": "user", "parts": [{"type": "text", "content": "What is 2 + 3?"}]}]
    [{"role": "assistant", "parts": [{"type": "tool_call", "id": "c1", "name": "add",
      "arguments": {"a": 2, "b": 3}}], "finish_reason": "tool_call"}]
    [{"role": "tool", "parts": [{"type": "tool_call_response", "id": "c1", "response": ...}]}]

Nothing here imports OpenTelemetry: these are plain functions of plain data.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from typing import Any

from reactloop.models.roster import ROSTER

OPT_IN = "OTEL_SEMCONV_STABILITY_OPT_IN"
LATEST = "gen_ai_latest_experimental"

# The conventions' well-known provider names, where reactloop's roster calls them otherwise;
# any other provider of the roster is named as in ``--model`` (a custom value).
_WELL_KNOWN = {"responses": "openai"}
_UNKNOWN_PROVIDER = "unknown"
# reactloop's finish reasons in the latest conventions' words.
_FINISH = {"tool_calls": "tool_call", "other": "stop"}
# Counts that are part of another: 0 is what a provider that does not report them gives.
_PART_COUNTS = {
    "cached_tokens": "gen_ai.usage.cache_read.input_tokens",
    "cache_write_tokens": "gen_ai.usage.cache_creation.input_tokens",
    "reasoning_tokens": "gen_ai.usage.reasoning.output_tokens",
}


def latest_opted_in(semconv: str | None, environ: Mapping[str, str] = os.environ) -> bool:
    """``semconv`` ("latest" or "default"), else whether the environment opts in."""
    if semconv is not None:
        if semconv not in ("latest", "default"):
            raise ValueError(f"semconv must be 'latest' or 'default', not {semconv!r}")
        return semconv == "latest"
    values = environ.get(OPT_IN, "").split(",")
    return LATEST in (value.strip() for value in values)


def provider_of(run_start: Mapping[str, Any]) -> str:
    """``gen_ai.provider.name`` from the model spec the run recorded (``openai:gpt-4o`` →
    ``openai``); ``unknown`` when it recorded none (a model built in Python, not from a spec:
    give ``OTelObserver(provider_name=...)``)."""
    config = run_start.get("config")
    spec = config.get("model_spec") if isinstance(config, Mapping) else None
    name = spec.partition(":")[0].strip().lower() if isinstance(spec, str) else ""
    if name not in ROSTER:
        return _UNKNOWN_PROVIDER
    return _WELL_KNOWN.get(name, name)


def usage_attributes(usage: Any) -> dict[str, int]:
    """The token counts a provider reported: input and output unless both are 0 (nothing was
    reported), and the cached, cache-write and reasoning parts only when not 0."""
    if not isinstance(usage, Mapping):
        return {}
    counts = {key: _count(usage.get(key)) for key in ("input_tokens", "output_tokens")}
    attributes: dict[str, int] = {}
    if any(counts.values()):
        attributes["gen_ai.usage.input_tokens"] = counts["input_tokens"]
        attributes["gen_ai.usage.output_tokens"] = counts["output_tokens"]
    for key, name in _PART_COUNTS.items():
        if count := _count(usage.get(key)):
            attributes[name] = count
    return attributes


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def task_messages(task: str, latest: bool) -> str:
    if latest:
        return as_json([{"role": "user", "parts": [_text(task)]}])
    return as_json([{"role": "user", "content": task}])


def system_instructions(text: str, latest: bool) -> str:
    return as_json([_text(text)]) if latest else text


def tool_definitions(tools: Any, latest: bool) -> str:
    specs = tools if isinstance(tools, list) else []
    if not latest:
        return as_json(specs)
    return as_json([{"type": "function", **spec} for spec in specs if isinstance(spec, Mapping)])


def input_messages(messages: Any, latest: bool) -> str:
    """A request's new messages (``Message.to_dict`` values)."""
    listed = messages if isinstance(messages, list) else []
    if not latest:
        return as_json(listed)
    return as_json([_message(m) for m in listed if isinstance(m, Mapping)])


def output_messages(text: str, tool_calls: Any, finish: str, latest: bool) -> str:
    """The model's reply: its text and the calls it asked for."""
    calls = tool_calls if isinstance(tool_calls, list) else []
    if not latest:
        return as_json([{"role": "assistant", "content": text, "tool_calls": calls}])
    parts = ([_text(text)] if text else []) + [_call(c) for c in calls if isinstance(c, Mapping)]
    reason = _FINISH.get(finish, finish)
    return as_json([{"role": "assistant", "parts": parts, "finish_reason": reason}])


def answer_messages(answer: str, latest: bool) -> str:
    """The run's answer, on the agent's span."""
    if not latest:
        return as_json([{"role": "assistant", "content": answer}])
    return as_json([{"role": "assistant", "parts": [_text(answer)], "finish_reason": "stop"}])


def _message(message: Mapping[str, Any]) -> dict[str, Any]:
    role = str(message.get("role") or "user")
    content = str(message.get("content") or "")
    if role == "tool":
        response = {"type": "tool_call_response", "id": message.get("tool_call_id")}
        return {"role": "tool", "parts": [{**response, "response": _decoded(content)}]}
    parts = [_text(content)] if content else []
    calls = message.get("tool_calls")
    parts += [_call(c) for c in calls if isinstance(c, Mapping)] if isinstance(calls, list) else []
    return {"role": role, "parts": parts}


def _text(content: str) -> dict[str, str]:
    return {"type": "text", "content": content}


def _call(call: Mapping[str, Any]) -> dict[str, Any]:
    arguments = call.get("arguments")
    decoded = _decoded(arguments) if isinstance(arguments, str) else arguments
    return {
        "type": "tool_call",
        "id": call.get("id"),
        "name": call.get("name"),
        "arguments": decoded,
    }


def _decoded(text: str) -> Any:
    """JSON text as its value (the conventions want structure where there is some)."""
    try:
        return json.loads(text)
    except ValueError:
        return text


def as_json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)
