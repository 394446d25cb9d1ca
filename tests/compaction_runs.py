"""Runs that overflow a small context limit, against fake OpenAI and Anthropic servers that
refuse what the real providers refuse (an orphaned call or result, a split parallel batch): the
compaction tests, the viewer's and the cost report's use them."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from reactloop import (
    Agent,
    Journal,
    Limits,
    tool,
)
from reactloop.journal.writer import read_journal
from reactloop.models.anthropic.model import AnthropicModel
from reactloop.models.openai.model import OpenAIChatModel
from reactloop.models.openai.request import NOT_EXECUTED
from reactloop.result import RunResult
from reactloop.testing.anthropic_replies import anthropic_error, message, tool_use
from reactloop.testing.fake_anthropic import FakeAnthropicServer
from reactloop.testing.fake_openai import FakeOpenAIServer, RecordedRequest
from reactloop.testing.openai_replies import Reply, completion, error_reply, json_reply, tool_call

STEPS = 14
ORPHAN = json.loads(
    (
        Path(__file__).resolve().parent
        / "wire_formats"
        / "error_openai_400_orphan_tool_message.json"
    ).read_text()
)["body"]
SUMMARY_ASKED = "The context is nearly full"


@tool(read_only=True)
def fetch(page: int) -> str:
    """Fetch one page of the catalogue."""
    return f"page {page}: " + " ".join(f"tea{page}-{i} costs {page * 7 + i}" for i in range(140))


def common_prefix(a: list[Any], b: list[Any]) -> int:
    n = 0
    while n < min(len(a), len(b)) and json.dumps(a[n]) == json.dumps(b[n]):
        n += 1
    return n


class Script:
    """The model behind both servers: two parallel fetches a step, a summary when asked, an
    answer after ``STEPS`` steps; it reports prompt tokens as the text's length / 4 and, as a
    provider's prefix cache would, the tokens of the prefix it saw in the previous request."""

    def __init__(self) -> None:
        self.step = 0
        self.previous: list[Any] = []
        self.bodies: list[dict[str, Any]] = []
        self.refused: list[str] = []

    def usage(self, body: dict[str, Any]) -> tuple[int, int]:
        messages = body["messages"]
        shared = common_prefix(self.previous, messages)
        self.previous = messages
        total = len(json.dumps(body.get("tools")) + json.dumps(messages)) // 4
        return total, len(json.dumps(messages[:shared])) // 4

    def next(self, body: dict[str, Any], last_text: str) -> tuple[str, list[int] | None]:
        self.bodies.append(body)
        if SUMMARY_ASKED in last_text:
            return "Fetched the catalogue pages so far; every page lists tea prices.", None
        self.step += 1
        if self.step > STEPS:
            return "done", None
        return "", [2 * self.step, 2 * self.step + 1]


def openai_problem(messages: list[dict[str, Any]]) -> str | None:
    """What OpenAI refuses: a tool message not answering the assistant calls just before it,
    a call left without its result before the next message; and what our renderer repairs."""
    waiting: set[str] = set()
    for number, wire in enumerate(messages):
        if wire["role"] == "tool":
            if wire.get("tool_call_id") not in waiting or wire["content"] == NOT_EXECUTED:
                return f"messages.[{number}].role: orphan or repaired tool message"
            waiting.discard(wire["tool_call_id"])
            continue
        if waiting:
            return f"messages.[{number}]: tool calls without results: {sorted(waiting)}"
        if "[result of an earlier tool call]" in str(wire.get("content")):
            return f"messages.[{number}]: a result the renderer had to repair"
        waiting = {call["id"] for call in wire.get("tool_calls") or ()}
    return None


def openai_responder(script: Script) -> Callable[[RecordedRequest], Reply]:
    def answer(request: RecordedRequest) -> Reply:
        body = request.json
        problem = openai_problem(body["messages"])
        if problem is not None:
            script.refused.append(problem)
            return error_reply(400, ORPHAN)
        total, cached = script.usage(body)
        text, pages = script.next(body, str(body["messages"][-1].get("content")))
        usage = {
            "prompt_tokens": total,
            "completion_tokens": 20,
            "prompt_tokens_details": {"cached_tokens": cached},
        }
        calls = [tool_call("fetch", {"page": p}, id=f"call_{p}") for p in pages or ()]
        return json_reply(completion(text or None, tool_calls=calls, usage=usage))

    return answer


def anthropic_orphans(messages: list[dict[str, Any]]) -> str | None:
    """What the fake's own check leaves out: results in a user turn that answer no call of
    the assistant turn before it, and notes the renderer made of orphaned results."""
    uses: set[str] = set()
    for number, wire in enumerate(messages):
        blocks = wire["content"] if isinstance(wire["content"], list) else []
        for block in blocks:
            if block.get("type") == "tool_result" and block.get("tool_use_id") not in uses:
                return f"messages.{number}: unexpected `tool_use_id`"
            if "[result of an earlier tool call]" in str(block.get("text", "")):
                return f"messages.{number}: a result the renderer had to repair"
            if block.get("content") == NOT_EXECUTED:
                return f"messages.{number}: a call the renderer had to answer"
        uses = {b["id"] for b in blocks if b.get("type") == "tool_use"}
    return None


def anthropic_responder(script: Script) -> Callable[[RecordedRequest], Any]:
    def answer(request: RecordedRequest) -> Any:
        body = request.json
        problem = anthropic_orphans(body["messages"])
        if problem is not None:
            script.refused.append(problem)
            return anthropic_error(400, "invalid_request_error", problem)
        total, cached = script.usage(body)
        last = body["messages"][-1]["content"]
        text, pages = script.next(body, json.dumps(last))
        usage = {"input_tokens": total - cached, "output_tokens": 20}
        usage["cache_read_input_tokens"] = cached
        uses = [tool_use("fetch", {"page": p}, id=f"toolu_{p}") for p in pages or ()]
        return message(text or None, content=uses, usage=usage)

    return answer


def run(
    provider: str, policy: str, tmp_path: Path, **limits: Any
) -> tuple[RunResult, Script, list[dict[str, Any]]]:
    script = Script()
    limits = {
        "max_model_calls": 40,
        "max_tool_calls": 60,
        "context_tokens": 9000,
        "context_policy": policy,
        **limits,
    }
    journal_path = tmp_path / f"{provider}-{policy}.jsonl"
    if provider == "openai":
        server: FakeOpenAIServer = FakeOpenAIServer(responder=openai_responder(script))
    else:
        server = FakeAnthropicServer(responder=anthropic_responder(script))
    with server, Journal(journal_path) as journal:
        if provider == "openai":
            model: Any = OpenAIChatModel(model="fake", base_url=server.base_url, max_retries=0)
        else:
            model = AnthropicModel(model="fake-claude", base_url=server.base_url, max_retries=0)
        agent = Agent(model, [fetch], limits=Limits(**limits), journal=journal)
        result = agent.run("Find the cheapest tea in the catalogue.")
    return result, script, read_journal(journal_path)
