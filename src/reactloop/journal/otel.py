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

Content (the task, messages, tool arguments and results, the answer) is recorded only with
``capture_content=True``. The journal stays the record of the run; these spans are a view of
it, made from the same events. One observer may serve concurrent runs: each run's events come
from the run's own thread, and the spans are kept per thread.

Needs the ``otel`` extra (``opentelemetry-api``; an exporter needs ``opentelemetry-sdk``),
imported when the observer is built.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from typing import Any

from reactloop._version import __version__
from reactloop.errors import MissingDependency
from reactloop.journal.events import Event

_OK = "final_answer"


@dataclass
class _Run:
    root: Any
    root_token: Any
    model: str
    chat: Any = None
    chat_token: Any = None
    tools: dict[str, Any] = field(default_factory=dict)


class OTelObserver:
    """An observer (``Agent(observers=[...])``) that turns events into spans."""

    def __init__(
        self,
        *,
        tracer_provider: Any = None,
        capture_content: bool = False,
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

    def _start(self, name: str, kind: Any, attributes: dict[str, Any], parent: Any) -> Any:
        context = None if parent is None else self._trace.set_span_in_context(parent)
        return self._tracer.start_span(name, context=context, kind=kind, attributes=attributes)

    def _run_start(self, data: dict[str, Any]) -> None:
        model = str(data.get("model") or "")
        attributes = {
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.agent.name": self.agent_name,
            "gen_ai.request.model": model,
            "reactloop.protocol": str(data.get("protocol") or ""),
        }
        attributes.update(self._common())
        if self.capture_content:
            attributes["gen_ai.input.messages"] = _json([{"role": "user", "content": data["task"]}])
            if data.get("instructions"):
                attributes["gen_ai.system_instructions"] = str(data["instructions"])
            attributes["gen_ai.tool.definitions"] = _json(data.get("tools") or [])
        internal = self._trace.SpanKind.INTERNAL
        root = self._start(f"invoke_agent {self.agent_name}", internal, attributes, None)
        token = self._context.attach(self._trace.set_span_in_context(root))
        self._runs[threading.get_ident()] = _Run(root=root, root_token=token, model=model)

    def _common(self) -> dict[str, Any]:
        common: dict[str, Any] = {}
        if self.provider_name:
            common["gen_ai.provider.name"] = self.provider_name
        if self.conversation_id:
            common["gen_ai.conversation.id"] = self.conversation_id
        return common

    def _request(self, data: dict[str, Any]) -> None:
        run = self._current()
        if run is None:
            return
        self._end_chat(run, None)
        attributes = {"gen_ai.operation.name": "chat", "gen_ai.request.model": run.model}
        attributes.update(self._common())
        if self.capture_content:
            attributes["gen_ai.input.messages"] = _json(data.get("messages_new") or [])
        client = self._trace.SpanKind.CLIENT
        run.chat = self._start(f"chat {run.model}", client, attributes, run.root)
        run.chat_token = self._context.attach(self._trace.set_span_in_context(run.chat))

    def _turn(self, data: dict[str, Any]) -> None:
        run = self._current()
        if run is None or run.chat is None:
            return
        turn = data.get("turn") or {}
        usage = turn.get("usage") or {}
        chat = run.chat
        chat.set_attribute("gen_ai.response.finish_reasons", [str(turn.get("finish_reason"))])
        chat.set_attribute("gen_ai.usage.input_tokens", int(usage.get("input_tokens") or 0))
        chat.set_attribute("gen_ai.usage.output_tokens", int(usage.get("output_tokens") or 0))
        cached = int(usage.get("cached_tokens") or 0)
        chat.set_attribute("gen_ai.usage.cache_read.input_tokens", cached)
        reasoning = int(usage.get("reasoning_tokens") or 0)
        chat.set_attribute("gen_ai.usage.reasoning.output_tokens", reasoning)
        if self.capture_content:
            message = {"role": "assistant", "content": turn.get("text") or ""}
            message["tool_calls"] = turn.get("tool_calls") or []
            chat.set_attribute("gen_ai.output.messages", _json([message]))
        self._end_chat(run, None)

    def _warning(self, data: dict[str, Any]) -> None:
        run = self._current()
        if run is not None and data.get("kind") in ("model_error", "internal_error"):
            self._end_chat(run, str(data.get("kind")), str(data.get("message") or ""))

    def _end_chat(self, run: _Run, error: str | None, message: str = "") -> None:
        if run.chat is None:
            return
        if error is not None:
            self._fail(run.chat, error, message)
        self._context.detach(run.chat_token)
        run.chat.end()
        run.chat = run.chat_token = None

    def _tool_call(self, data: dict[str, Any]) -> None:
        run = self._current()
        if run is None:
            return
        call = data.get("call") or {}
        name = str(call.get("name") or "")
        attributes = {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": name,
            "gen_ai.tool.call.id": str(call.get("id") or ""),
            "gen_ai.tool.type": "function",
        }
        if self.capture_content:
            attributes["gen_ai.tool.call.arguments"] = str(call.get("arguments") or "")
        internal = self._trace.SpanKind.INTERNAL
        span = self._start(f"execute_tool {name}", internal, attributes, run.root)
        run.tools[str(call.get("id"))] = span

    def _tool_result(self, data: dict[str, Any]) -> None:
        run = self._current()
        result = data.get("result") or {}
        span = None if run is None else run.tools.pop(str(result.get("call_id")), None)
        if span is None:
            return
        if self.capture_content:
            span.set_attribute("gen_ai.tool.call.result", str(data.get("content") or ""))
        if not result.get("ok"):
            kind = "tool_error" if result.get("executed") else "not_executed"
            self._fail(span, kind, str(result.get("error") or ""))
        span.end()

    def _stop(self, data: dict[str, Any]) -> None:
        run = self._runs.pop(threading.get_ident(), None)
        if run is None:
            return
        self._end_chat(run, None)
        for span in run.tools.values():
            span.end()
        root = run.root
        reason = str(data.get("stop_reason") or "")
        usage = data.get("usage") or {}
        root.set_attribute("reactloop.stop_reason", reason)
        root.set_attribute("gen_ai.usage.input_tokens", int(usage.get("input_tokens") or 0))
        root.set_attribute("gen_ai.usage.output_tokens", int(usage.get("output_tokens") or 0))
        root.set_attribute("reactloop.model_calls", int(data.get("model_calls") or 0))
        root.set_attribute("reactloop.tool_calls", int(data.get("tool_calls") or 0))
        if self.capture_content and data.get("answer") is not None:
            answer = [{"role": "assistant", "content": data["answer"]}]
            root.set_attribute("gen_ai.output.messages", _json(answer))
        if reason != _OK:
            self._fail(root, reason, str(data.get("error") or ""))
        self._context.detach(run.root_token)
        root.end()

    def _fail(self, span: Any, kind: str, message: str) -> None:
        span.set_attribute("error.type", kind)
        span.set_status(self._trace.Status(self._trace.StatusCode.ERROR, message[:500] or None))


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)
