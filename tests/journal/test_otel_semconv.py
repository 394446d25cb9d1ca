"""``OTelObserver`` after the latest GenAI conventions, checked with the SDK's in-memory span
exporter and metric reader: ``gen_ai.provider.name`` from the recorded model spec, counts a
provider did not report left out, the metrics, and content in ``parts`` only when opted in
(``OTEL_SEMCONV_STABILITY_OPT_IN=gen_ai_latest_experimental``)."""

from __future__ import annotations

import json
from typing import Any

import pytest

pytest.importorskip("opentelemetry.sdk")

from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from helpers import add
from reactloop import Agent, FunctionModel, ModelRequest, ModelTurn, ScriptedModel
from reactloop.errors import ModelError
from reactloop.journal.otel import OTelObserver

SCRIPT: list[dict[str, Any]] = [
    {
        "tool_calls": [{"id": "c1", "name": "add", "arguments": {"a": 2, "b": 3}}],
        "usage": {"input_tokens": 100, "output_tokens": 7, "cached_tokens": 60},
    },
    {"content": "5"},  # a provider that reported no usage for this call
]


class Telemetry:
    def __init__(self, **options: Any) -> None:
        self.spans = InMemorySpanExporter()
        tracer_provider = TracerProvider()
        tracer_provider.add_span_processor(SimpleSpanProcessor(self.spans))
        self.reader = InMemoryMetricReader()
        meters = MeterProvider(metric_readers=[self.reader])
        self.observer = OTelObserver(
            tracer_provider=tracer_provider, meter_provider=meters, **options
        )

    def span(self, name: str) -> ReadableSpan:
        (found,) = [s for s in self.spans.get_finished_spans() if s.name == name]
        return found

    def chats(self) -> list[ReadableSpan]:
        return [s for s in self.spans.get_finished_spans() if s.name.startswith("chat ")]

    def points(self, metric: str) -> list[Any]:
        data = self.reader.get_metrics_data()
        assert data is not None
        return [
            point
            for resource in data.resource_metrics
            for scope in resource.scope_metrics
            for found in scope.metrics
            if found.name == metric
            for point in found.data.data_points
        ]


def attrs(span: ReadableSpan) -> dict[str, Any]:
    return dict(span.attributes or {})


def run(telemetry: Telemetry, config: dict[str, Any] | None = None, task: str = "q") -> None:
    model = ScriptedModel(SCRIPT, name="gpt-4o")
    agent = Agent(model, [add], observers=[telemetry.observer], config=config or {})
    assert agent.run(task).answer == "5"


def test_the_provider_comes_from_the_recorded_model_spec() -> None:
    telemetry = Telemetry()
    run(telemetry, {"model_spec": "responses:gpt-4o"})
    for span in (telemetry.span("invoke_agent reactloop"), *telemetry.chats()):
        assert attrs(span)["gen_ai.provider.name"] == "openai"
    other = Telemetry()
    run(other, {"model_spec": "ollama:qwen3:8b"})
    assert attrs(other.chats()[0])["gen_ai.provider.name"] == "ollama"
    given = Telemetry(provider_name="azure.ai.openai")
    run(given, {"model_spec": "openai:gpt-4o"})
    assert attrs(given.span("invoke_agent reactloop"))["gen_ai.provider.name"] == "azure.ai.openai"
    unknown = Telemetry()
    run(unknown)
    assert attrs(unknown.chats()[0])["gen_ai.provider.name"] == "unknown"


def test_counts_the_provider_did_not_report_are_left_out() -> None:
    telemetry = Telemetry()
    run(telemetry)
    first, second = (attrs(s) for s in telemetry.chats())
    assert first["gen_ai.usage.input_tokens"] == 100
    assert first["gen_ai.usage.cache_read.input_tokens"] == 60
    assert "gen_ai.usage.reasoning.output_tokens" not in first  # not reported: not 0
    assert "gen_ai.usage.cache_creation.input_tokens" not in first
    assert not any(key.startswith("gen_ai.usage.") for key in second)
    root = attrs(telemetry.span("invoke_agent reactloop"))
    assert root["gen_ai.usage.input_tokens"] == 100 and root["gen_ai.usage.output_tokens"] == 7
    assert "gen_ai.usage.reasoning.output_tokens" not in root


def test_the_metrics_of_a_run() -> None:
    telemetry = Telemetry()
    run(telemetry, {"model_spec": "openai:gpt-4o"})
    tokens = {
        p.attributes["gen_ai.token.type"]: p for p in telemetry.points("gen_ai.client.token.usage")
    }
    assert set(tokens) == {"input", "output"}  # once each: the second call reported nothing
    assert (tokens["input"].sum, tokens["output"].sum) == (100, 7)
    assert tokens["input"].attributes == {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": "openai",
        "gen_ai.request.model": "gpt-4o",
        "gen_ai.token.type": "input",
    }
    assert tokens["input"].explicit_bounds[:3] == (1, 4, 16)
    (calls,) = telemetry.points("gen_ai.client.operation.duration")
    assert calls.count == 2 and "error.type" not in calls.attributes
    chat_seconds = sum(((s.end_time or 0) - (s.start_time or 0)) / 1e9 for s in telemetry.chats())
    assert calls.sum == pytest.approx(chat_seconds)  # each duration is its span's
    (agent,) = telemetry.points("gen_ai.invoke_agent.duration")
    root = telemetry.span("invoke_agent reactloop")
    assert agent.count == 1 and agent.attributes == {
        "gen_ai.agent.name": "reactloop",
        "gen_ai.request.model": "gpt-4o",
    }
    assert agent.sum == pytest.approx(((root.end_time or 0) - (root.start_time or 0)) / 1e9)
    (tool,) = telemetry.points("gen_ai.execute_tool.duration")
    assert tool.count == 1 and tool.attributes["gen_ai.tool.name"] == "add"


def test_failures_carry_their_error_type_in_the_metrics() -> None:
    telemetry = Telemetry()

    def broken(request: ModelRequest) -> ModelTurn:
        raise ModelError("HTTP 503: overloaded")

    Agent(FunctionModel(broken), [add], observers=[telemetry.observer]).run("q")
    (call,) = telemetry.points("gen_ai.client.operation.duration")
    assert call.attributes["error.type"] == "model_error"
    (agent,) = telemetry.points("gen_ai.invoke_agent.duration")
    assert agent.attributes["error.type"] == "model_error"
    assert telemetry.points("gen_ai.client.token.usage") == []


def test_by_default_content_keeps_the_shape_reactloop_wrote() -> None:
    telemetry = Telemetry(capture_content=True, semconv="default")
    run(telemetry, task="What is 2 + 3?")
    root = attrs(telemetry.span("invoke_agent reactloop"))
    assert json.loads(root["gen_ai.input.messages"]) == [
        {"role": "user", "content": "What is 2 + 3?"}
    ]
    assert json.loads(root["gen_ai.output.messages"]) == [{"role": "assistant", "content": "5"}]


def test_opted_in_content_is_in_parts(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OTEL_SEMCONV_STABILITY_OPT_IN", "http, gen_ai_latest_experimental")
    telemetry = Telemetry(capture_content=True)
    model = ScriptedModel(SCRIPT, name="gpt-4o")
    agent = Agent(model, [add], observers=[telemetry.observer], instructions="Be brief.")
    agent.run("What is 2 + 3?")
    root = attrs(telemetry.span("invoke_agent reactloop"))
    assert json.loads(root["gen_ai.input.messages"]) == [
        {"role": "user", "parts": [{"type": "text", "content": "What is 2 + 3?"}]}
    ]
    assert json.loads(root["gen_ai.system_instructions"]) == [
        {"type": "text", "content": "Be brief."}
    ]
    (definition,) = json.loads(root["gen_ai.tool.definitions"])
    assert definition["type"] == "function" and definition["name"] == "add"
    assert "parameters" in definition
    assert json.loads(root["gen_ai.output.messages"]) == [
        {"role": "assistant", "parts": [{"type": "text", "content": "5"}], "finish_reason": "stop"}
    ]
    first, second = (attrs(s) for s in telemetry.chats())
    assert json.loads(first["gen_ai.output.messages"]) == [
        {
            "role": "assistant",
            "parts": [
                {"type": "tool_call", "id": "c1", "name": "add", "arguments": {"a": 2, "b": 3}}
            ],
            "finish_reason": "tool_call",
        }
    ]
    sent = json.loads(second["gen_ai.input.messages"])
    assert sent[-1]["role"] == "tool"
    (response,) = sent[-1]["parts"]
    assert response["type"] == "tool_call_response" and response["id"] == "c1"
    assert response["response"]["output"] == 5  # the result's JSON, as structure
    assert all("content" not in message for message in sent)


def test_an_unknown_semconv_is_refused() -> None:
    with pytest.raises(ValueError, match="semconv"):
        OTelObserver(semconv="1.36")
