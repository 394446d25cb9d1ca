"""``OTelObserver``: spans after the GenAI semantic conventions, checked with the SDK's
in-memory exporter: one ``invoke_agent`` span per run, a ``chat`` span per model call, an
``execute_tool`` span per tool call; content only when asked for."""

from __future__ import annotations

import asyncio
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar

import pytest

pytest.importorskip("opentelemetry.sdk")

from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode

from helpers import add
from reactloop import Agent, FunctionModel, ModelRequest, ModelTurn, ScriptedModel, ToolCall
from reactloop.errors import ModelError
from reactloop.journal.otel import OTelObserver


def setup(**options: Any) -> tuple[InMemorySpanExporter, TracerProvider, OTelObserver]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return exporter, provider, OTelObserver(tracer_provider=provider, **options)


SCRIPT = [
    {
        "tool_calls": [
            {"id": "c1", "name": "add", "arguments": {"a": 2, "b": 3}},
            {"id": "c2", "name": "nope", "arguments": {}},
        ],
        "usage": {"input_tokens": 100, "output_tokens": 7, "cached_tokens": 60},
    },
    {"content": "5", "usage": {"input_tokens": 130, "output_tokens": 2}},
]


def by_name(spans: tuple[ReadableSpan, ...], prefix: str) -> list[ReadableSpan]:
    return [s for s in spans if s.name.startswith(prefix)]


def test_a_run_is_an_agent_span_with_chat_and_tool_spans_under_it() -> None:
    exporter, _, observer = setup(provider_name="openai", conversation_id="conv-1")
    result = Agent(ScriptedModel(SCRIPT, name="gpt-test"), [add], observers=[observer]).run("q")
    assert result.answer == "5"
    spans = exporter.get_finished_spans()
    (root,) = by_name(spans, "invoke_agent")
    chats = by_name(spans, "chat ")
    tools = by_name(spans, "execute_tool ")
    assert len(spans) == 5 and len(chats) == 2 and len(tools) == 2
    assert root.parent is None
    assert all(
        s.parent is not None and s.parent.span_id == root.context.span_id for s in spans[:-1]
    )
    assert root.attributes["gen_ai.operation.name"] == "invoke_agent"
    assert root.attributes["gen_ai.provider.name"] == "openai"
    assert root.attributes["gen_ai.conversation.id"] == "conv-1"
    assert root.attributes["gen_ai.usage.input_tokens"] == 230
    assert root.attributes["reactloop.stop_reason"] == "final_answer"
    assert root.status.status_code is StatusCode.UNSET
    first = chats[0]
    assert first.name == "chat gpt-test" and first.kind is trace.SpanKind.CLIENT
    assert first.attributes["gen_ai.request.model"] == "gpt-test"
    assert first.attributes["gen_ai.usage.input_tokens"] == 100
    assert first.attributes["gen_ai.usage.output_tokens"] == 7
    assert first.attributes["gen_ai.usage.cache_read.input_tokens"] == 60
    assert first.attributes["gen_ai.response.finish_reasons"] == ("tool_calls",)
    ok, unknown = sorted(tools, key=lambda s: s.attributes["gen_ai.tool.call.id"])
    assert ok.name == "execute_tool add" and ok.attributes["gen_ai.tool.type"] == "function"
    assert ok.status.status_code is StatusCode.UNSET
    assert unknown.status.status_code is StatusCode.ERROR
    assert unknown.attributes["error.type"] == "not_executed"  # an unknown tool
    assert first.end_time <= ok.start_time and ok.end_time <= chats[1].start_time
    assert not any("gen_ai.tool.call.arguments" in s.attributes for s in spans)
    assert not any("gen_ai.input.messages" in s.attributes for s in spans)


def test_content_is_captured_only_when_asked() -> None:
    exporter, _, observer = setup(capture_content=True)
    Agent(ScriptedModel(SCRIPT), [add], observers=[observer]).run("What is 2 + 3?")
    spans = exporter.get_finished_spans()
    (root,) = by_name(spans, "invoke_agent")
    assert json.loads(root.attributes["gen_ai.input.messages"])[0]["content"] == "What is 2 + 3?"
    assert json.loads(root.attributes["gen_ai.output.messages"])[0]["content"] == "5"
    add_span = next(s for s in spans if s.name == "execute_tool add")
    assert json.loads(add_span.attributes["gen_ai.tool.call.arguments"]) == {"a": 2, "b": 3}
    assert json.loads(add_span.attributes["gen_ai.tool.call.result"])["output"] == 5
    chat = by_name(spans, "chat ")[0]
    assert (
        json.loads(chat.attributes["gen_ai.output.messages"])[0]["tool_calls"][0]["name"] == "add"
    )


def test_a_failed_model_call_and_a_failed_run_are_error_spans() -> None:
    exporter, _, observer = setup()

    def broken(request: ModelRequest) -> ModelTurn:
        raise ModelError("HTTP 503: overloaded")

    Agent(FunctionModel(broken), [add], observers=[observer]).run("q")
    spans = exporter.get_finished_spans()
    (chat,) = by_name(spans, "chat ")
    (root,) = by_name(spans, "invoke_agent")
    assert chat.status.status_code is StatusCode.ERROR
    assert chat.attributes["error.type"] == "model_error"
    assert "overloaded" in (chat.status.description or "")
    assert root.attributes["error.type"] == "model_error"


def test_the_run_span_is_a_child_of_the_callers_span_and_parents_client_spans() -> None:
    exporter, provider, observer = setup()
    tracer = provider.get_tracer("app")
    inner: list[Any] = []

    def model(request: ModelRequest) -> ModelTurn:
        with tracer.start_as_current_span("http POST") as span:  # an instrumented client
            inner.append(span)
        return ModelTurn(text="done")

    agent = Agent(FunctionModel(model), [add], observers=[observer])

    async def handler() -> None:
        with tracer.start_as_current_span("GET /ask"):
            await agent.arun("q")

    asyncio.run(handler())
    spans = {s.name: s for s in exporter.get_finished_spans()}
    root = spans["invoke_agent reactloop"]
    assert root.parent is not None and root.parent.span_id == spans["GET /ask"].context.span_id
    chat = spans["chat function"]
    assert spans["http POST"].parent.span_id == chat.context.span_id
    assert trace.get_current_span() is trace.INVALID_SPAN  # nothing left attached


def test_concurrent_runs_on_one_observer_keep_their_spans_apart() -> None:
    exporter, _, observer = setup()

    def answer(request: ModelRequest) -> ModelTurn:
        results = [m for m in request.messages if m.role == "tool"]
        if results:
            return ModelTurn(text=json.loads(results[-1].content)["output"].__str__())
        task = next(m.content for m in request.messages if m.kind == "task")
        n = int(task.split()[-1])
        return ModelTurn(
            tool_calls=(ToolCall(id="c", name="add", arguments=f'{{"a": {n}, "b": 1}}'),)
        )

    agent = Agent(FunctionModel(answer), [add], observers=[observer])

    async def main() -> list[Any]:
        return await asyncio.gather(*(agent.arun(f"add {n}") for n in range(8)))

    results = asyncio.run(main())
    assert [r.answer for r in results] == [str(n + 1) for n in range(8)]
    spans = exporter.get_finished_spans()
    roots = by_name(spans, "invoke_agent")
    assert len(roots) == 8
    for root in roots:
        children = [s for s in spans if s.parent and s.parent.span_id == root.context.span_id]
        assert sorted(s.name for s in children) == [
            "chat function",
            "chat function",
            "execute_tool add",
        ]
        assert {s.context.trace_id for s in children} == {root.context.trace_id}


class _Collector(BaseHTTPRequestHandler):
    """An OTLP/HTTP trace receiver: each POST body is kept for the test to decode."""

    bodies: ClassVar[list[tuple[str, bytes]]] = []

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        self.bodies.append((self.path, self.rfile.read(length)))
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", "0")
        self.end_headers()


def test_spans_reach_a_local_otlp_http_receiver_named_by_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    otlp = pytest.importorskip("opentelemetry.exporter.otlp.proto.http.trace_exporter")
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceRequest,
    )

    server = ThreadingHTTPServer(("127.0.0.1", 0), _Collector)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    _Collector.bodies = []
    try:
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", f"http://127.0.0.1:{server.server_port}")
        provider = TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(otlp.OTLPSpanExporter()))
        observer = OTelObserver(tracer_provider=provider)
        Agent(ScriptedModel(SCRIPT, name="gpt-test"), [add], observers=[observer]).run("q")
        provider.shutdown()
    finally:
        server.shutdown()
        server.server_close()
    assert {path for path, _ in _Collector.bodies} == {"/v1/traces"}
    names: list[str] = []
    attributes: dict[str, Any] = {}
    for _, body in _Collector.bodies:
        request = ExportTraceServiceRequest.FromString(body)
        for resource in request.resource_spans:
            for scope in resource.scope_spans:
                assert scope.scope.name == "reactloop"
                for span in scope.spans:
                    names.append(span.name)
                    values = {a.key: a.value for a in span.attributes}
                    attributes[span.name] = values
    assert sorted(names) == [
        "chat gpt-test", "chat gpt-test", "execute_tool add", "execute_tool nope",
        "invoke_agent reactloop",
    ]  # fmt: skip
    root = attributes["invoke_agent reactloop"]
    assert root["gen_ai.operation.name"].string_value == "invoke_agent"
    assert root["gen_ai.usage.input_tokens"].int_value == 230
