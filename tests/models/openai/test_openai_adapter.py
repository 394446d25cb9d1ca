"""The adapter end to end against the fake server: specs, keys, requests, journals, the loop."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest

from reactloop import (
    Agent,
    Limits,
    Message,
    ModelRequest,
    ModelSettings,
    ToolSpec,
    tool,
)
from reactloop.errors import UsageError
from reactloop.models import resolve_model
from reactloop.models.openai import OpenAIChatModel
from reactloop.models.openai.endpoints import SERVICES, get_service, resolve_endpoint
from reactloop.testing import FakeOpenAIServer, completion, sse_reply, tool_call

CALLS: list[str] = []


@tool(read_only=True)
def add(a: int, b: int) -> int:
    """Add two integers."""
    CALLS.append(f"add({a},{b})")
    return a + b


@tool(read_only=True)
def now() -> str:
    """The time (no parameters)."""
    CALLS.append("now()")
    return "12:00"


@pytest.fixture(autouse=True)
def _clear_calls() -> None:
    CALLS.clear()


def agent_run(replies: list[Any], **options: Any) -> tuple[Any, FakeOpenAIServer]:
    limits = options.pop("limits", Limits())
    with FakeOpenAIServer(replies) as server:
        model = OpenAIChatModel(model="m", base_url=server.base_url, sleep=lambda s: None)
        result = Agent(model, [add, now], limits=limits, **options).run("task")
    return result, server


# --- specs, keys and URLs ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("provider", "variable"),
    [("openai", "OPENAI_API_KEY"), ("deepseek", "DEEPSEEK_API_KEY"), ("qwen", "DASHSCOPE_API_KEY")],
)
def test_hosted_provider_without_a_key_names_the_variable(
    provider: str, variable: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "DEEPSEEK_API_KEY", "DASHSCOPE_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(UsageError, match=f"set {variable}"):
        resolve_model(f"{provider}:some-model")


def test_keys_and_base_url_come_from_the_environment() -> None:
    env = {"OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": "http://127.0.0.1:9/v1/"}
    endpoint = resolve_endpoint(get_service("openai"), environ=env)
    assert (endpoint.base_url, endpoint.api_key) == ("http://127.0.0.1:9/v1", "sk-test")


def test_explicit_settings_win_over_the_environment() -> None:
    env = {"DEEPSEEK_API_KEY": "from-env"}
    endpoint = resolve_endpoint(get_service("deepseek"), api_key="given", environ=env)
    assert endpoint.api_key == "given" and endpoint.base_url == "https://api.deepseek.com"


def test_a_custom_base_url_needs_no_key() -> None:
    endpoint = resolve_endpoint(get_service("openai"), base_url="http://127.0.0.1:8/v1", environ={})
    assert endpoint.api_key


@pytest.mark.parametrize(
    ("provider", "url"),
    [
        ("ollama", "http://localhost:11434/v1"),
        ("vllm", "http://localhost:8000/v1"),
        ("sglang", "http://localhost:30000/v1"),
        ("llamacpp", "http://localhost:8080/v1"),
        ("qwen", "https://dashscope.aliyuncs.com/compatible-mode/v1"),
    ],
)
def test_default_base_urls(provider: str, url: str) -> None:
    assert resolve_endpoint(get_service(provider), api_key="k", environ={}).base_url == url


def test_ollama_host_variable() -> None:
    endpoint = resolve_endpoint(get_service("ollama"), environ={"OLLAMA_HOST": "10.0.0.2:11434"})
    assert endpoint.base_url == "http://10.0.0.2:11434/v1"


def test_a_bad_base_url_is_a_usage_error() -> None:
    with pytest.raises(UsageError, match="invalid base URL"):
        resolve_endpoint(get_service("vllm"), base_url="localhost:8000", environ={})


def test_every_registered_openai_compatible_provider_resolves(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    monkeypatch.setenv("DEEPSEEK_API_KEY", "k")
    monkeypatch.setenv("DASHSCOPE_API_KEY", "k")
    for provider in SERVICES:
        model = resolve_model(f"{provider}:name", ModelSettings(stream=True, seed=1))
        assert isinstance(model, OpenAIChatModel) and model.native_tools and model.stream


def test_a_model_name_is_required_except_for_llamacpp() -> None:
    with pytest.raises(UsageError, match="--model vllm:"):
        resolve_model("vllm")
    assert resolve_model("llamacpp").name == "llamacpp:default"


def test_importing_reactloop_does_not_import_the_sdk() -> None:
    code = "import sys, reactloop, reactloop.models.openai; print('openai' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


# --- the request ------------------------------------------------------------------------------


def test_request_carries_tools_choice_sampling_and_extra_fields() -> None:
    settings = ModelSettings(
        seed=7, temperature=0.0, max_output_tokens=64, extra={"thinking": {"type": "enabled"}}
    )
    with FakeOpenAIServer([completion("ok")]) as server:
        model = resolve_model(
            "vllm:m", ModelSettings(**{**vars(settings), "base_url": server.base_url})
        )
        specs = [ToolSpec(name="add", description="Add.", parameters=add.parameters)]
        model.complete(
            ModelRequest(
                messages=[Message(role="user", content="hi")],
                tools=specs,
                tool_choice="add",
                stop=["Observation:"],
            )
        )
    body = server.requests[0].json
    assert body["tool_choice"] == {"type": "function", "function": {"name": "add"}}
    assert body["tools"][0]["function"]["parameters"]["required"] == ["a", "b"]
    assert (body["seed"], body["temperature"], body["max_tokens"]) == (7, 0.0, 64)
    assert body["thinking"] == {"type": "enabled"} and body["stop"] == ["Observation:"]


def test_openai_uses_max_completion_tokens_and_sends_no_tools_when_there_are_none() -> None:
    with FakeOpenAIServer([completion("ok")]) as server:
        model = OpenAIChatModel(model="m", base_url=server.base_url, max_output_tokens=5)
        model.complete(
            ModelRequest(messages=[Message(role="user", content="hi")], tool_choice="required")
        )
    body = server.requests[0].json
    assert body["max_completion_tokens"] == 5 and "tools" not in body and "tool_choice" not in body


def test_journal_entries_hold_only_what_is_new() -> None:
    entries: list[dict[str, Any]] = []
    replies = [completion(tool_calls=[tool_call("add", {"a": 1, "b": 2})]), completion("3")]
    with FakeOpenAIServer(replies) as server:
        model = OpenAIChatModel(model="m", base_url=server.base_url)
        agent = Agent(model, [add], observers=[_collect_requests(entries)])
        agent.run("1+2?")
    first, second = entries
    assert "tools" in first and "messages" in first
    assert "tools" not in second and "messages" not in second
    assert second["n_messages"] == len(server.requests[1].json["messages"])
    assert [m["role"] for m in second["new_messages"]] == ["assistant", "tool"]


def _collect_requests(entries: list[dict[str, Any]]) -> Any:
    def observe(event: Any) -> None:
        if event.type == "response" and event.data.get("request") is not None:
            entries.append(event.data["request"])

    return observe


def test_rendered_prefix_is_reused_while_the_history_only_grows() -> None:
    model = OpenAIChatModel(model="m")
    history = [Message(role="user", content="a")]
    first = model.render(history)
    history.append(Message(role="user", content="b"))
    second = model.render(history)
    assert second[0] is first[0] and len(second) == 2
    assert model.render([Message(role="user", content="other")])[0]["content"] == "other"


# --- the cases through the loop -------------------------------------------------------


def test_invalid_json_arguments_become_an_error_observation_and_the_next_request_is_valid() -> None:
    bad = completion(tool_calls=[tool_call("add", '{"a": 1, "b": ', id="c1")])
    result, server = agent_run([bad, completion("gave up")])
    assert result.answer == "gave up" and CALLS == []
    assistant, observation = server.requests[1].json["messages"][-2:]
    assert assistant["tool_calls"][0]["function"]["arguments"] == "{}"
    assert observation["tool_call_id"] == "c1"
    assert "not valid JSON" in json.loads(observation["content"])["error"]


def test_empty_arguments_for_a_tool_without_parameters_run_it() -> None:
    result, server = agent_run(
        [completion(tool_calls=[tool_call("now", "", id="t")]), completion("noon")]
    )
    assert CALLS == ["now()"] and result.answer == "noon"
    assert server.requests[1].json["messages"][-2]["tool_calls"][0]["function"]["arguments"] == "{}"


def test_missing_ids_are_generated_and_used_consistently() -> None:
    calls = [tool_call("add", {"a": 1, "b": 1}), tool_call("add", {"a": 2, "b": 2})]
    for entry in calls:
        entry["id"] = ""
    _result, server = agent_run([completion(tool_calls=calls), completion("done")])
    assert sorted(CALLS) == ["add(1,1)", "add(2,2)"]  # read-only: the two ran concurrently
    messages = server.requests[1].json["messages"]
    ids = [c["id"] for c in messages[-3]["tool_calls"]]
    assert ids[0] != ids[1] and all(ids)
    assert [m["tool_call_id"] for m in messages[-2:]] == ids


@pytest.mark.parametrize("stream", [False, True], ids=["body", "stream"])
def test_calls_without_ids_over_two_turns_get_ids_unique_in_the_run_from_the_loop(
    stream: bool,
) -> None:
    replies: list[Any] = [
        completion(tool_calls=[tool_call("add", {"a": n, "b": k}) for k in (0, 1)]) for n in (1, 2)
    ]
    for reply in replies:  # no id at all on the wire
        for call in reply["choices"][0]["message"]["tool_calls"]:
            call.pop("id")
    if stream:
        replies = [sse_reply(stream_chunks(reply)) for reply in replies]
    replies.append(completion("done"))
    with FakeOpenAIServer(replies) as server:
        model = OpenAIChatModel(model="m", base_url=server.base_url, stream=stream)
        result = Agent(model, [add, now]).run("task")
    assert result.answer == "done"
    calls = [c for m in result.history if m.role == "assistant" for c in m.tool_calls]
    assert [c.id for c in calls] == ["call_0", "call_1", "call_2_0", "call_2_1"]
    assert all(c.wire_id == "" for c in calls)  # the server sent none
    messages = server.requests[2].json["messages"]
    echoed = [c["id"] for m in messages if m.get("tool_calls") for c in m["tool_calls"]]
    answered = [m["tool_call_id"] for m in messages if m["role"] == "tool"]
    assert echoed == answered == [c.id for c in calls]  # unique on the wire too


def stream_chunks(body: dict[str, Any]) -> list[dict[str, Any]]:
    message = body["choices"][0]["message"]
    entries = [{"index": n, **call} for n, call in enumerate(message["tool_calls"])]
    finish = {"index": 0, "delta": {}, "finish_reason": "tool_calls"}
    return [{"choices": [{"index": 0, "delta": {"tool_calls": entries}}]}, {"choices": [finish]}]


def test_parallel_safe_calls_come_back_in_the_models_order() -> None:
    calls = [tool_call("add", {"a": n, "b": 0}, id=f"c{n}") for n in range(4)]
    _, server = agent_run([completion(tool_calls=calls), completion("done")])
    messages = server.requests[1].json["messages"][-4:]
    assert [m["tool_call_id"] for m in messages] == ["c0", "c1", "c2", "c3"]
    assert [json.loads(m["content"])["output"] for m in messages] == [0, 1, 2, 3]


def test_empty_reply_is_not_an_answer_the_loop_asks_again() -> None:
    result, server = agent_run([completion(""), completion("real answer")])
    assert result.answer == "real answer" and len(server.requests) == 2
    assert server.requests[1].json["messages"][-1]["role"] == "user"


def test_streamed_text_is_shown_as_it_arrives() -> None:
    pieces = ["The ", "answer ", "is 3."]
    chunks = [{"choices": [{"index": 0, "delta": {"content": p}}]} for p in pieces]
    chunks.append({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
    chunks.append({"choices": [], "usage": {"prompt_tokens": 9, "completion_tokens": 3}})
    shown: list[str] = []
    with FakeOpenAIServer([sse_reply(chunks)]) as server:
        model = OpenAIChatModel(model="m", base_url=server.base_url, stream=True)
        result = Agent(model, [add], on_text=shown.append).run("1+2?")
    assert shown == pieces and result.answer == "The answer is 3."
    assert result.usage.input_tokens == 9


def test_each_run_journals_its_whole_first_request_even_on_a_shared_model() -> None:
    entries: list[dict[str, Any]] = []
    with FakeOpenAIServer(["one", "two"]) as server:
        model = OpenAIChatModel(model="m", base_url=server.base_url)
        agent = Agent(model, [add], observers=[_collect_requests(entries)])
        agent.run("same task")
        agent.run("same task")
    assert all("messages" in entry and "tools" in entry for entry in entries)


def test_an_injected_http_client_carries_the_requests() -> None:
    import httpx2

    seen: list[str] = []

    def handle(request: httpx2.Request) -> httpx2.Response:
        seen.append(str(request.url))
        return httpx2.Response(200, json=completion("via transport"))

    client = httpx2.Client(transport=httpx2.MockTransport(handle))
    model = OpenAIChatModel(model="m", base_url="http://example.invalid/v1", http_client=client)
    turn = model.complete(ModelRequest(messages=[Message(role="user", content="hi")]))
    assert turn.text == "via transport"
    assert seen == ["http://example.invalid/v1/chat/completions"]


def test_the_package_exports_one_model_class_and_its_factory() -> None:
    import reactloop.models.openai as package

    assert package.__all__ == ["OpenAIChatModel", "from_spec"]
    assert [name for name in dir(package) if name[0].isupper()] == ["OpenAIChatModel"]
