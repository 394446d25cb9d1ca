"""Anthropic's server-side tool search, as ``FakeAnthropicServer`` plays it.

The documented wire shape (platform.claude.com, "Tool search tool"): a request lists the
tool-search tool (``tool_search_tool_bm25_20251119`` or ``tool_search_tool_regex_20251119``)
and tools with ``defer_loading: true``; the reply holds a ``server_tool_use`` block (the
model's query) and a ``tool_search_tool_result`` block whose ``tool_search_tool_search_result``
lists ``tool_reference`` blocks, then, usually, a ``tool_use`` of a tool it loaded::

    with FakeAnthropicServer(responder=searching("create a github issue", {"repo": "a/b"})):
        ...

``searching`` runs the search on the request's own deferred tools (regex: ``re.search`` over
name, description and parameter names; BM25: ``reactloop.tools.bm25``), as the server does.
``tool_search_problem`` is what the API answers 400 to (its own wording): every tool deferred,
the search tool itself deferred, a ``tool_reference`` to a tool the request does not define.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from reactloop.testing.anthropic_replies import message, tool_use
from reactloop.testing.fake_openai import RecordedRequest
from reactloop.tools.bm25 import BM25, words

SEARCH_TYPES = {
    "tool_search_tool_bm25_20251119": "tool_search_tool_bm25",
    "tool_search_tool_regex_20251119": "tool_search_tool_regex",
}
RESULTS = 5  # the API returns 3-5 references a search


def search_tool(body: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The request's tool-search tool, or None."""
    return next((t for t in _tools(body) if t.get("type") in SEARCH_TYPES), None)


def deferred_tools(body: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    return [t for t in _tools(body) if t.get("defer_loading") is True]


def server_search(body: Mapping[str, Any], query: str) -> list[str]:
    """The names of the request's deferred tools the server's search finds for ``query``."""
    tools = deferred_tools(body)
    texts = [_text(tool) for tool in tools]
    found = search_tool(body)
    if found is not None and found.get("type") == "tool_search_tool_regex_20251119":
        pattern = re.compile(query)
        return [
            str(t["name"]) for t, text in zip(tools, texts, strict=True) if pattern.search(text)
        ][:RESULTS]
    ranked = BM25([words(text) for text in texts]).top(words(query), RESULTS)
    return [str(tools[index]["name"]) for index, _ in ranked]


def search_blocks(
    query: str, names: list[str], *, variant: str = "tool_search_tool_bm25", id: str = "srvtoolu_01"
) -> list[dict[str, Any]]:
    """The ``server_tool_use`` and ``tool_search_tool_result`` blocks of one search."""
    key = "pattern" if variant.endswith("regex") else "query"
    references = [{"type": "tool_reference", "tool_name": name} for name in names]
    return [
        {"type": "server_tool_use", "id": id, "name": variant, "input": {key: query}},
        {
            "type": "tool_search_tool_result",
            "tool_use_id": id,
            "content": {"type": "tool_search_tool_search_result", "tool_references": references},
        },
    ]


def searching(
    query: str, arguments: Mapping[str, Any] | None = None, *, answer: str = "done"
) -> Callable[[RecordedRequest], dict[str, Any]]:
    """A responder: the first request gets a search for ``query`` over its deferred tools and
    a call of the best tool found with ``arguments`` (just the search, when ``arguments`` is
    None); the next ones get ``answer``."""
    asked: list[int] = []

    def reply(request: RecordedRequest) -> dict[str, Any]:
        asked.append(1)
        if len(asked) > 1:
            return message(answer)
        body = request.json
        tool = search_tool(body) or {}
        names = server_search(body, query)
        blocks = search_blocks(query, names, variant=str(tool.get("name") or ""))
        if arguments is not None and names:
            blocks.append(tool_use(names[0], dict(arguments), id="toolu_01"))
        usage = {
            "input_tokens": 50,
            "output_tokens": 20,
            "server_tool_use": {"tool_search_requests": 1},
        }
        return message(content=blocks, usage=usage)

    return reply


def tool_search_problem(body: Mapping[str, Any]) -> str | None:
    """What the API refuses about tool search in ``body`` (its wording), or None."""
    tools = _tools(body)
    if not tools:
        return None
    if all(t.get("defer_loading") is True for t in tools):
        return "All tools have defer_loading set. At least one tool must be non-deferred."
    found = search_tool(body)
    if found is not None and found.get("defer_loading") is True:
        return "tools: the tool search tool cannot have defer_loading set"
    defined = {t.get("name") for t in tools}
    for name in _references(body.get("messages")):
        if name not in defined:
            return f"Tool reference '{name}' has no corresponding tool definition"
    return None


def _tools(body: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    tools = body.get("tools")
    return [t for t in tools if isinstance(t, Mapping)] if isinstance(tools, list) else []


def _text(tool: Mapping[str, Any]) -> str:
    schema = tool.get("input_schema")
    properties = schema.get("properties") if isinstance(schema, Mapping) else None
    parameters = " ".join(properties) if isinstance(properties, Mapping) else ""
    return f"{tool.get('name', '')} {tool.get('description', '')} {parameters}"


def _references(messages: Any) -> list[str]:
    """The tool names of every ``tool_reference`` in the history's search results."""
    results = [
        block.get("content")
        for wire in (messages if isinstance(messages, list) else [])
        if isinstance(wire, Mapping) and isinstance(wire.get("content"), list)
        for block in wire["content"]
        if isinstance(block, Mapping) and block.get("type") == "tool_search_tool_result"
    ]
    refs = [r for c in results if isinstance(c, Mapping) for r in c.get("tool_references") or []]
    return [str(r.get("tool_name")) for r in refs if isinstance(r, Mapping)]
