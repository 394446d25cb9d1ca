"""A server's question to the user during a call (MCP elicitation), and who answers it.

A server may ask, in the middle of a ``tools/call``, for information only the user has
(``elicitation/create``: a message and a flat form schema). reactloop answers through an
``Elicit`` function given to ``MCPServers`` / ``open_mcp_tools`` (``elicit=``): the terminal
asks the user (``ask_on_terminal``); a run with no one to ask gives none, and then the client
does not say it can be asked, so servers that need an answer do without or refuse the call.

An answer accepted with fields left out gets the form's defaults for them (SEP-1034: a form
is shown filled in with its defaults, so a user who accepts it accepts them). A question for
a URL (``mode: "url"``, the user is to open a page) is declined: a run does not open pages.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

Action = Literal["accept", "decline", "cancel"]


@dataclass(frozen=True, kw_only=True)
class ElicitationRequest:
    """What ``server`` asks: ``message``, and the form (``schema``, a flat object schema)."""

    server: str
    message: str
    schema: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class ElicitationAnswer:
    """``accept`` with ``content`` (the form's values), ``decline``, or ``cancel``;
    ``journaled=False``: the journal records the answer's action, not its values."""

    action: Action
    content: Mapping[str, Any] = field(default_factory=dict)
    journaled: bool = True


Elicit = Callable[[ElicitationRequest], ElicitationAnswer]


def with_defaults(schema: Mapping[str, Any], content: Mapping[str, Any]) -> dict[str, Any]:
    """``content`` with each property it leaves out that has a ``default`` set to it."""
    filled = dict(content)
    properties = schema.get("properties")
    if isinstance(properties, Mapping):
        for name, spec in properties.items():
            if name not in filled and isinstance(spec, Mapping) and "default" in spec:
                filled[name] = spec["default"]
    return filled


def answered(request: ElicitationRequest, answer: ElicitationAnswer) -> ElicitationAnswer:
    """The answer as sent: an accepted form with its defaults filled in."""
    if answer.action != "accept":
        return ElicitationAnswer(answer.action, journaled=answer.journaled)
    content = with_defaults(request.schema, answer.content)
    return ElicitationAnswer("accept", content, journaled=answer.journaled)


def sdk_callback(elicit: Elicit, server: str) -> Any:
    """The SDK's ``elicitation_callback`` for ``server``: ``elicit`` runs on a worker thread
    (a person may take minutes to answer; the connection's loop goes on meanwhile)."""

    async def callback(context: Any, params: Any) -> Any:
        import anyio
        import mcp_types as types

        if getattr(params, "mode", "form") == "url":
            return types.ElicitResult(action="decline")
        schema = getattr(params, "requested_schema", None)
        if schema is not None and not isinstance(schema, Mapping):
            schema = schema.model_dump(by_alias=True, exclude_none=True)
        as_dict = dict(schema or {})
        request = ElicitationRequest(server=server, message=params.message, schema=as_dict)
        answer = answered(request, await anyio.to_thread.run_sync(elicit, request))
        content = dict(answer.content) if answer.action == "accept" else None
        return types.ElicitResult(action=answer.action, content=content)

    return callback


def ask_on_terminal(request: ElicitationRequest) -> ElicitationAnswer:
    """Ask the user on the terminal, one field at a time (an empty line keeps the default);
    ``n`` declines and end of input cancels."""
    print(f"\nMCP server {request.server!r} asks: {request.message}", file=sys.stderr)
    try:
        if input("answer it? [Y/n] ").strip().lower() in ("n", "no"):
            return ElicitationAnswer("decline")
        content: dict[str, Any] = {}
        properties = request.schema.get("properties") or {}
        for name, spec in properties.items():
            value = _ask_field(name, spec if isinstance(spec, Mapping) else {})
            if value is not None:
                content[name] = value
    except EOFError:
        return ElicitationAnswer("cancel")
    return ElicitationAnswer("accept", content)


_YES_NO = {"y": True, "yes": True, "true": True, "n": False, "no": False, "false": False}


def _ask_field(name: str, spec: Mapping[str, Any]) -> Any:
    """One field's value (None: left to its default); asked again until it reads as its type."""
    hint = spec.get("description") or spec.get("title") or ""
    default = f" [{spec['default']}]" if "default" in spec else ""
    while True:
        text = input(f"  {name}{f' ({hint})' if hint else ''}{default}: ").strip()
        if not text:
            return None
        value = _typed(text, spec.get("type"))
        if value is not None:
            return value
        print(f"  {name} must be {spec.get('type')}: {text!r} is not", file=sys.stderr)


def _typed(text: str, kind: Any) -> Any:
    if kind == "boolean":
        return _YES_NO.get(text.lower())
    if kind in ("integer", "number"):
        try:
            number = json.loads(text)
        except ValueError:
            return None
        wanted = int if kind == "integer" else (int, float)
        return number if isinstance(number, wanted) and not isinstance(number, bool) else None
    return text
