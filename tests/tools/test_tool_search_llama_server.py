"""Our own tool search against a real model server no one here wrote: llama.cpp's
``llama-server`` (prebuilt, from the xllamacpp wheel) serving SmolLM2-135M-Instruct, with 40
deferred tools. Checked: the server is sent only ``search_tools`` and ``call_tool`` (its
chat template renders them; the 40 schemas stay out), the search finds the task's tool
(``slack_send_message``), every call the real model makes is one of the pair, nothing runs
that no search found, and a ``call_tool`` the server's model gets wrong is refused with how
to search.

The 135M model writes a call only after a worked one: the ChatML template with tools (as in
``tests/resume/test_resume_llama_server.py``) carries one exchange, a search and the
``call_tool`` it leads to, for a task of another family than the test's. Even so it never
searches first (it calls ``call_tool`` with a name it makes up, which is refused), so the
run's first turn, the search, is scripted; the later turns are the real model's. Observed at
temperature 0 with this seed: it searches again with the same query (it copies the call
before it); it does not go on to ``call_tool`` the found tool, which a bigger model does.
Skipped without xllamacpp or the model, unless ``REACTLOOP_REQUIRE_LLAMA_SERVER=1``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from local_servers import chat_template, llama_server
from reactloop import Agent, Journal, Limits, ModelTurn, ToolCall, read_journal
from reactloop.models.base import ModelRequest
from reactloop.models.openai import OpenAIChatModel
from reactloop.tools.base import Tool, make_tool
from reactloop.tools.search import CALL_TOOL, SEARCH_TOOLS, deferred

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]

REQUIRED_BY = "REACTLOOP_REQUIRE_LLAMA_SERVER"
SEED = 7
TASK = "Send the message 'deploy done' to the team on slack."
QUERY = "send slack message"
FAMILIES = {
    "slack": ["send_message", "list_channels", "archive_channel", "add_reaction", "invite_user"],
    "github": ["create_issue", "close_issue", "list_pulls", "merge_pull", "add_label"],
    "calendar": ["create_event", "delete_event", "list_events", "move_event", "invite_guest"],
    "weather": ["forecast", "current_temperature", "rain_chance", "wind_speed", "alerts"],
    "files": ["upload_file", "delete_file", "share_file", "rename_file", "list_files"],
    "billing": ["create_invoice", "refund_payment", "list_payments", "cancel_plan", "tax_rate"],
    "crm": ["add_contact", "update_contact", "delete_contact", "list_deals", "log_call"],
    "jira": ["create_ticket", "assign_ticket", "close_ticket", "list_sprints", "comment"],
}
EXAMPLE = (  # one worked exchange, in the template's own turns (a calendar task)
    "<|im_start|>user\\nCreate a calendar event named standup.<|im_end|>\\n"
    '<|im_start|>assistant\\n<tool_call>\\n{"name": "search_tools", "arguments": {"queries": '
    '["create calendar event"]}}\\n</tool_call><|im_end|>\\n'
    '<|im_start|>user\\nThe result was {"ok": true, "output": {"tools": [{"name": '
    '"calendar_create_event", "description": "Create event in calendar."}]}}. Make the next '
    "call of the task.<|im_end|>\\n"
    '<|im_start|>assistant\\n<tool_call>\\n{"name": "call_tool", "arguments": {"name": '
    '"calendar_create_event", "arguments": {"text": "standup"}}}\\n</tool_call><|im_end|>\\n'
    '<|im_start|>user\\nThe result was {"ok": true, "output": "calendar_create_event: done"}. '
    "Make the next call of the task.<|im_end|>\\n"
    "<|im_start|>assistant\\nThe task is done.<|im_end|>\\n"
)
CHAT_TEMPLATE = chat_template(EXAMPLE)


def registry(ran: list[tuple[str, str]]) -> list[Tool]:
    """40 deferred tools, each taking one ``text``; a run is recorded in ``ran``."""
    tools = []
    for family, verbs in FAMILIES.items():
        for verb in verbs:
            name = f"{family}_{verb}"

            def act(text: str, name: str = name) -> str:
                ran.append((name, text))
                return f"{name}: done"

            act.__name__ = name
            act.__doc__ = f"{verb.replace('_', ' ').capitalize()} in {family}."
            tools.append(deferred(make_tool(act)))
    return tools


class FirstSearch:
    """The run's first turn scripted (the search the 135M model does not write: it calls
    ``call_tool`` with a name it makes up); every later turn is the real server's."""

    native_tools = True

    def __init__(self, inner: OpenAIChatModel) -> None:
        self.inner = inner
        self.name = inner.name

    def complete(self, request: ModelRequest) -> ModelTurn:
        if any(m.role == "assistant" for m in request.messages):
            return self.inner.complete(request)
        search = ToolCall(
            id="search_0", name=SEARCH_TOOLS, arguments=json.dumps({"queries": [QUERY]})
        )
        return ModelTurn(tool_calls=(search,), finish_reason="tool_calls")


@pytest.fixture(scope="module")
def llama_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    folder = tmp_path_factory.mktemp("llama-server")
    template = folder / "tools.jinja"
    template.write_text(CHAT_TEMPLATE, encoding="utf-8")
    options = [
        "--chat-template-file", str(template), "--ctx", "4096", "--threads", "1",
        "--parallel", "1", "--no-cache-prompt", "--seed", str(SEED),
    ]  # fmt: skip
    with llama_server(folder, required_by=REQUIRED_BY, options=options) as url:
        yield f"{url}/v1"


def test_a_small_model_gets_only_the_pair_and_its_calls_go_through_it(
    llama_url: str, tmp_path: Path
) -> None:
    ran: list[tuple[str, str]] = []
    model = OpenAIChatModel(
        model="smollm2", provider="llamacpp", base_url=llama_url, temperature=0.0, seed=SEED,
        max_output_tokens=160, max_retries=0,
    )  # fmt: skip
    limits = Limits(max_model_calls=3, max_tool_calls=3, max_seconds=600)
    trace = tmp_path / "run.jsonl"
    with Journal(trace) as journal:
        agent = Agent(FirstSearch(model), registry(ran), limits=limits, journal=journal)
        result = agent.run(TASK)
    events = read_journal(trace)
    answered = [e for e in events if e["type"] == "response" and e["raw"]]
    assert answered, result.error  # the real server answered
    tools = answered[0]["request"]["tools"]  # what the server was sent: the pair only
    assert [t["function"]["name"] for t in tools] == [SEARCH_TOOLS, CALL_TOOL]
    searches = [e for e in events if e["type"] == "tool_search"]
    assert "slack_send_message" in searches[0]["matches"][0][:2]
    revealed = {name for e in searches for name in e["revealed"]}
    real = [c for m in result.history[3:] for c in m.tool_calls]  # the server's own turns
    assert real and {c.name for c in real} <= {SEARCH_TOOLS, CALL_TOOL}, result.history[3:]
    assert {name for name, _ in ran} <= revealed  # nothing ran that no search had found
    answers = {m.tool_call_id: m.content for m in result.history if m.role == "tool"}
    for call in real:
        answer = json.loads(answers[call.id])
        if call.name == CALL_TOOL and not answer["ok"]:
            assert "search" in answer["error"]  # refused, with how to find one
    print(f"the model called {[(c.name, c.arguments) for c in real]}; ran {ran}")
