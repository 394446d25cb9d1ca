"""A fake Anthropic Messages server for tests: real sockets on 127.0.0.1, scripted replies.

Each ``POST /v1/messages`` takes the next scripted reply (a message dict, sent as JSON or, for
``"stream": true``, as events; or any ``Reply``: errors with headers, delays, trickles, broken
streams, dropped connections) and is recorded, so a test can assert what the client sent::

    with FakeAnthropicServer([message("Paris")]) as server:
        model = AnthropicModel(model="claude-test", base_url=server.base_url)
        ...
        assert server.requests[0].json["messages"][0]["role"] == "user"

Like the real API, it first checks the request (``request_problem``) and answers 400
``invalid_request_error`` with the API's own wording when a ``tool_use`` has no
``tool_result`` right after it, a result answers no call, a text block is empty, an assistant
message is empty, or a ``thinking`` block comes back with a signature it did not send, or
missing where extended thinking requires it, or tool search is misused
(``anthropic_tool_search.tool_search_problem``: every tool deferred, a ``tool_reference`` to
no defined tool). ``check_requests=False`` turns that off. ``anthropic_tool_search.searching``
answers with the server's own tool search over the request's deferred tools.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from reactloop.testing.anthropic_replies import anthropic_error, as_reply
from reactloop.testing.anthropic_tool_search import tool_search_problem
from reactloop.testing.fake_openai import FakeOpenAIServer, RecordedRequest
from reactloop.testing.openai_replies import Reply

Item = Reply | Mapping[str, Any] | str
Responder = Callable[[RecordedRequest], "Item | None"]
THINKING = ("thinking", "redacted_thinking")


class FakeAnthropicServer(FakeOpenAIServer):
    """The server; use it as a context manager (or ``start()`` / ``stop()``)."""

    def __init__(
        self,
        replies: Iterable[Item] = (),
        *,
        responder: Responder | None = None,
        model: str = "fake-claude",
        check_requests: bool = True,
        port: int = 0,
    ) -> None:
        super().__init__(model=model, port=port)
        self._script: list[Item] = list(replies)
        self._answer = responder
        self.check_requests = check_requests
        self.signatures: set[str] = set()  # of the thinking blocks sent, to check echoes

    @property
    def base_url(self) -> str:
        """What ``AnthropicModel`` and the ``anthropic`` SDK take (they add ``/v1/messages``)."""
        return self.url

    def start(self) -> FakeAnthropicServer:
        super().start()
        return self

    def __enter__(self) -> FakeAnthropicServer:
        return self.start()

    @property
    def pending(self) -> int:
        with self._lock:
            return len(self._script)

    def add(self, *replies: Item) -> FakeAnthropicServer:
        with self._lock:
            self._script.extend(replies)
        return self

    def next_reply(self, request: RecordedRequest) -> Reply:
        body = _json_of(request)
        problem = request_problem(body, self.signatures) if self.check_requests else None
        with self._lock:
            self.requests.append(request)
            if problem is not None:
                return anthropic_error(400, "invalid_request_error", problem)
            item = self._script.pop(0) if self._script else None
            number = len(self.requests)
        if item is None and self._answer is not None:
            item = self._answer(request)
        if item is None:
            text = f"fake server: no scripted reply left for request {number} ({request.path})"
            return anthropic_error(500, "api_error", text)
        reply = as_reply(item, stream=bool(isinstance(body, Mapping) and body.get("stream")))
        with self._lock:
            self.signatures.update(_signatures_sent(reply))
        return reply


def _json_of(request: RecordedRequest) -> Any:
    try:
        return request.json
    except ValueError:
        return None


def _signature(block: Mapping[str, Any]) -> str:
    return str(block.get("signature") or block.get("data") or "")


def _signatures_sent(reply: Reply) -> list[str]:
    """The signatures of the thinking blocks in a reply's JSON body or in its events."""
    if reply.pieces is None:
        payloads = [reply.body.decode("utf-8", errors="replace")]
    else:
        lines = (line for p in reply.pieces for line in p.decode(errors="replace").splitlines())
        payloads = [line[5:].strip() for line in lines if line.startswith("data:")]
    found: list[str] = []
    for payload in payloads:
        with contextlib.suppress(ValueError, RecursionError):
            found += _signatures_in(json.loads(payload))
    return found


def _signatures_in(item: Any) -> list[str]:
    if not isinstance(item, Mapping):
        return []
    found = [_signature(item)] if item.get("type") in THINKING else []
    for value in item.values():
        if isinstance(value, Mapping):
            found += _signatures_in(value)
        elif isinstance(value, list):
            found += [s for v in value for s in _signatures_in(v)]
    if item.get("type") == "signature_delta":
        found.append(str(item.get("signature") or ""))
    return [s for s in found if s]


def request_problem(body: Any, signatures: set[str] | None = None) -> str | None:
    """What the Messages API would refuse in ``body`` (its own wording), or None."""
    if not isinstance(body, Mapping) or not isinstance(body.get("messages"), list):
        return "messages: Field required"
    if not isinstance(body.get("max_tokens"), int):
        return "max_tokens: Field required"
    messages = body["messages"]
    thinking_on = (body.get("thinking") or {}).get("type") == "enabled"
    for number, wire in enumerate(messages):
        blocks = _blocks(wire)
        problem = _message_problem(number, wire, blocks, messages, signatures)
        if problem is None and thinking_on and wire.get("role") == "assistant":
            problem = _thinking_problem(number, blocks, last=_is_last_tool_turn(number, messages))
        if problem is not None:
            return problem
    return tool_search_problem(body)


def _blocks(wire: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    content = wire.get("content")
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [b for b in content if isinstance(b, Mapping)] if isinstance(content, list) else []


def _message_problem(
    number: int,
    wire: Mapping[str, Any],
    blocks: list[Mapping[str, Any]],
    messages: list[Any],
    signatures: set[str] | None,
) -> str | None:
    role = wire.get("role")
    if role not in ("user", "assistant"):
        return f"messages.{number}.role: Input should be 'user' or 'assistant'"
    if not blocks and not (role == "assistant" and number == len(messages) - 1):
        return f"messages.{number}: all messages must have non-empty content"
    for index, block in enumerate(blocks):
        if block.get("type") == "text" and not block.get("text"):
            return "messages: text content blocks must be non-empty"
        kind = block.get("type")
        if signatures is not None and kind in THINKING and _signature(block) not in signatures:
            return f"messages.{number}.content.{index}: Invalid `signature` in `thinking` block"
    if role == "assistant":
        return _results_problem(number, blocks, messages)
    return None


def _results_problem(
    number: int, blocks: list[Mapping[str, Any]], messages: list[Any]
) -> str | None:
    uses = [str(b.get("id")) for b in blocks if b.get("type") == "tool_use"]
    following = messages[number + 1] if number + 1 < len(messages) else None
    if not uses or following is None:
        return None
    answers = _blocks(following) if following.get("role") == "user" else []
    first = [b for b in answers[: len(uses)] if b.get("type") == "tool_result"]
    missing = [u for u in uses if u not in {str(b.get("tool_use_id")) for b in first}]
    if missing:
        return (
            f"messages.{number}: `tool_use` ids were found without `tool_result` blocks "
            f"immediately after: {', '.join(missing)}. Each `tool_use` block must have a "
            "corresponding `tool_result` block in the next message."
        )
    for index, block in enumerate(answers):
        if block.get("type") == "tool_result" and str(block.get("tool_use_id")) not in uses:
            return (
                f"messages.{number + 1}.content.{index}: unexpected `tool_use_id` found in "
                f"`tool_result` blocks: {block.get('tool_use_id')}. Each `tool_result` block "
                "must have a corresponding `tool_use` block in the previous message."
            )
    return None


def _is_last_tool_turn(number: int, messages: list[Any]) -> bool:
    later = [m for m in messages[number + 1 :] if m.get("role") == "assistant"]
    uses = any(b.get("type") == "tool_use" for b in _blocks(messages[number]))
    return not later and uses


def _thinking_problem(number: int, blocks: list[Mapping[str, Any]], *, last: bool) -> str | None:
    if not last or (blocks and blocks[0].get("type") in THINKING):
        return None
    found = blocks[0].get("type") if blocks else "nothing"
    return (
        f"messages.{number}.content.0.type: Expected `thinking` or `redacted_thinking`, but found "
        f"`{found}`. When `thinking` is enabled, a final `assistant` message must start with a "
        "thinking block (preceeding the lastmost set of `tool_use` and `tool_result` blocks)."
    )
