"""``OTelObserver``: a run's events as OpenTelemetry spans, after the GenAI semantic conventions.

    from reactloop.journal.otel import OTelObserver
    agent = Agent(model, tools, observers=[OTelObserver()])

One ``invoke_agent`` span per run, and under it a ``chat {model}`` span per model call (tokens
in, out, cached and reasoning; the finish reason) and an ``execute_tool {name}`` span per tool
call (its id; an error result marks the span as failed). Spans go to the tracer provider
given, else the global one, so whatever exporter the application configured (OTLP with
``OTEL_EXPORTER_OTLP_ENDPOINT``, Langfuse, Phoenix, Logfire, Jaeger, Tempo) receives them.
The run's span is the child of the span current where the run started (``arun`` carries the
caller's context to its thread), and is itself current while the run goes, so spans that
instrumented clients open in the model call land under its ``chat`` span.

Metrics too (``otel_metrics.py``): token usage and the durations of model calls, tool calls
and runs, on the meter provider given, else the global one. ``gen_ai.provider.name`` is the
``provider_name`` given, else the provider of the model spec the run recorded
(``otel_content.provider_of``). Token counts a provider did not report are left out.

Content (the task, messages, tool arguments and results, the answer) is recorded only with
``capture_content=True``, in the shape reactloop always wrote, or in the latest conventions'
``parts`` when ``OTEL_SEMCONV_STABILITY_OPT_IN`` holds ``gen_ai_latest_experimental`` (or
``semconv="latest"``): ``otel_content.py``. The journal stays the record of the run; these
spans are a view of it, made from the same events. One observer may serve concurrent runs:
each run's events come from the run's own thread, and the spans are kept per thread.

Needs ``opentelemetry-api`` (the ``otel`` extra brings it with the SDK and the OTLP exporter),
imported when the observer is built.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import Any

from reactloop._version import __version__
from reactloop.errors import MissingDependency
from reactloop.journal import otel_content as content
from reactloop.journal.events import Event
from reactloop.journal.otel_metrics import GenAIMetrics, seconds

_OK = "final_answer"


@dataclass
class _Run:
    root: Any
    root_token: Any
    model: str
    provider: str
    started: int
    chat: Any = None
    chat_token: Any = None
    chat_started: int = 0
    tools: dict[str, tuple[Any, int, dict[str, str]]] = field(default_factory=dict)


class OTelObserver:
    """An observer (``Agent(observers=[...])``) that turns events into spans."""

    def __init__(
        self,
        *,
        tracer_provider: Any = None,
        meter_provider: Any = None,
        capture_content: bool = False,
        semconv: str | None = None,
        agent_name: str = "reactloop",
        provider_name: str | None = None,
        conversation_id: str | None = None,
    ) -> None:
        try:
            from opentelemetry import context, trace
        except ImportError:
            raise MissingDependency(
                "the OpenTelemetry observer needs it: pip install 'reactloop[otel]'"
            ) from None
        self._trace, self._context = trace, context
        self._tracer = trace.get_tracer("reactloop", __version__, tracer_provider=tracer_provider)
        self._metrics = GenAIMetrics(meter_provider)
        self.latest = content.latest_opted_in(semconv)
        self.capture_content = capture_content
        self.agent_name = agent_name
        self.provider_name = provider_name
        self.conversation_id = conversation_id
        self._runs: dict[int, _Run] = {}
        self._handlers = {
            "run_start": self._run_start,
            "request": self._request,
            "turn": self._turn,
            "warning": self._warning,
            "tool_call": self._tool_call,
            "tool_result": self._tool_result,
            "stop": self._stop,
        }

    def __call__(self, event: Event) -> None:
        handler = self._handlers.get(event.type)
        if handler is not None:
            handler(event.data)

    def _current(self) -> _Run | None:
        return self._runs.get(threading.get_ident())

    def _start(
        self, name: str, kind: Any, attributes: dict[str, Any], parent: Any, start: int
    ) -> Any:
        context = None if parent is None else self._trace.set_span_in_context(parent)
        return self._tracer.start_span(
            name, context=context, kind=kind, attributes=attributes, start_time=start
        )

    def _run_start(self, data: dict[str, Any]) -> None:
        model = str(data.get("model") or "")
        provider = self.provider_name or content.provider_of(data)
        attributes = {
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.agent.name": self.agent_name,
            "gen_ai.request.model": model,
            "gen_ai.provider.name": provider,
            "reactloop.protocol": str(data.get("protocol") or ""),
        }
        if self.conversation_id:
            attributes["gen_ai.conversation.id"] = self.conversation_id
        if self.capture_content:
            attributes.update(self._run_content(data))
        internal, now = self._trace.SpanKind.INTERNAL, time.time_ns()
        root = self._start(f"invoke_agent {self.agent_name}", internal, attributes, None, now)
        token = self._context.attach(self._trace.set_span_in_context(root))
        run = _Run(root=root, root_token=token, model=model, provider=provider, started=now)
        self._runs[threading.get_ident()] = run

    def _run_content(self, data: dict[str, Any]) -> dict[str, str]:
        latest = self.latest
        attributes = {"gen_ai.input.messages": content.task_messages(str(data["task"]), latest)}
        if data.get("instructions"):
            instructions = str(data["instructions"])
            attributes["gen_ai.system_instructions"] = content.system_instructions(
                instructions, latest
            )
        attributes["gen_ai.tool.definitions"] = content.tool_definitions(data.get("tools"), latest)
        return attributes

    def _chat_common(self, run: _Run) -> dict[str, str]:
        return {
            "gen_ai.operation.name": "chat",
            "gen_ai.provider.name": run.provider,
            "gen_ai.request.model": run.model,
        }

    def _request(self, data: dict[str, Any]) -> None:
        run = self._current()
        if run is None:
            return
        self._end_chat(run, None)
        attributes: dict[str, Any] = self._chat_common(run)
        if self.conversation_id:
            attributes["gen_ai.conversation.id"] = self.conversation_id
        if self.capture_content:
            messages = content.input_messages(data.get("messages_new"), self.latest)
            attributes["gen_ai.input.messages"] = messages
        client, run.chat_started = self._trace.SpanKind.CLIENT, time.time_ns()
        run.chat = self._start(f"chat {run.model}", client, attributes, run.root, run.chat_started)
        run.chat_token = self._context.attach(self._trace.set_span_in_context(run.chat))

    def _turn(self, data: dict[str, Any]) -> None:
        run = self._current()
        if run is None or run.chat is None:
            return
        turn = data.get("turn") or {}
        chat = run.chat
        finish = str(turn.get("finish_reason"))
        usage = content.usage_attributes(turn.get("usage"))
        chat.set_attribute("gen_ai.response.finish_reasons", [finish])
        chat.set_attributes(usage)
        if self.capture_content:
            text, calls = str(turn.get("text") or ""), turn.get("tool_calls")
            messages = content.output_messages(text, calls, finish, self.latest)
            chat.set_attribute("gen_ai.output.messages", messages)
        self._end_chat(run, None, usage=usage)

    def _warning(self, data: dict[str, Any]) -> None:
        run = self._current()
        if run is not None and data.get("kind") in ("model_error", "internal_error"):
            self._end_chat(run, str(data.get("kind")), str(data.get("message") or ""))

    def _end_chat(
        self, run: _Run, error: str | None, message: str = "", usage: dict[str, int] | None = None
    ) -> None:
        if run.chat is None:
            return
        if error is not None:
            self._fail(run.chat, error, message)
        self._context.detach(run.chat_token)
        now = time.time_ns()
        run.chat.end(end_time=now)
        duration = seconds(run.chat_started, now)
        self._metrics.chat(self._chat_common(run), duration, usage or {}, error)
        run.chat = run.chat_token = None

    def _tool_call(self, data: dict[str, Any]) -> None:
        run = self._current()
        if run is None:
            return
        call = data.get("call") or {}
        name = str(call.get("name") or "")
        measured = {
            "gen_ai.tool.name": name,
            "gen_ai.tool.type": "function",
            "gen_ai.agent.name": self.agent_name,
        }
        attributes = {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.call.id": str(call.get("id") or ""),
            **measured,
        }
        if self.capture_content:
            attributes["gen_ai.tool.call.arguments"] = str(call.get("arguments") or "")
        internal, now = self._trace.SpanKind.INTERNAL, time.time_ns()
        span = self._start(f"execute_tool {name}", internal, attributes, run.root, now)
        run.tools[str(call.get("id"))] = (span, now, measured)

    def _tool_result(self, data: dict[str, Any]) -> None:
        run = self._current()
        result = data.get("result") or {}
        open_call = None if run is None else run.tools.pop(str(result.get("call_id")), None)
        if open_call is None:
            return
        span, started, measured = open_call
        if self.capture_content:
            span.set_attribute("gen_ai.tool.call.result", str(data.get("content") or ""))
        error = None
        if not result.get("ok"):
            error = "tool_error" if result.get("executed") else "not_executed"
            self._fail(span, error, str(result.get("error") or ""))
        now = time.time_ns()
        span.end(end_time=now)
        self._metrics.tool(measured, seconds(started, now), error)

    def _stop(self, data: dict[str, Any]) -> None:
        run = self._runs.pop(threading.get_ident(), None)
        if run is None:
            return
        self._end_chat(run, None)
        for span, _, _ in run.tools.values():
            span.end()
        root = run.root
        reason = str(data.get("stop_reason") or "")
        root.set_attribute("reactloop.stop_reason", reason)
        root.set_attributes(content.usage_attributes(data.get("usage")))
        root.set_attribute("reactloop.model_calls", int(data.get("model_calls") or 0))
        root.set_attribute("reactloop.tool_calls", int(data.get("tool_calls") or 0))
        if self.capture_content and data.get("answer") is not None:
            answer = content.answer_messages(str(data["answer"]), self.latest)
            root.set_attribute("gen_ai.output.messages", answer)
        error = None if reason == _OK else reason
        if error is not None:
            self._fail(root, error, str(data.get("error") or ""))
        self._context.detach(run.root_token)
        now = time.time_ns()
        root.end(end_time=now)
        measured = {"gen_ai.agent.name": self.agent_name, "gen_ai.request.model": run.model}
        self._metrics.agent(measured, seconds(run.started, now), error)

    def _fail(self, span: Any, kind: str, message: str) -> None:
        span.set_attribute("error.type", kind)
        span.set_status(self._trace.Status(self._trace.StatusCode.ERROR, message[:500] or None))
