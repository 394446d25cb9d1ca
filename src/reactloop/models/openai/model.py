"""``OpenAIChatModel``: the Chat Completions adapter (OpenAI, DeepSeek, Qwen, Ollama, vLLM, …).

Built on the official ``openai`` SDK, imported when a model is made (so that the import's
second of CPU is never spent inside a run's time limit); its client, retries and time limits
are ``models/sdk_client.py``'s::

    model = OpenAIChatModel(model="gpt-4o-mini", api_key="sk-...")
    model = from_spec("llamacpp", "", ModelSettings(base_url="http://127.0.0.1:8080/v1"))
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any
from urllib.parse import urlsplit

from reactloop.errors import ModelError, UsageError
from reactloop.messages import Message, ModelTurn
from reactloop.models.base import ModelRequest, ModelSettings
from reactloop.models.openai.endpoints import (
    OPENAI_HOST,
    PLACEHOLDER_KEY,
    Service,
    get_service,
    resolve_endpoint,
)
from reactloop.models.openai.errors import provider_error
from reactloop.models.openai.reply import parse_body
from reactloop.models.openai.request import (
    RequestRenderer,
    WireMessage,
    answer_format,
    render_tool_choice,
    render_tools,
)
from reactloop.models.openai.response import read_stream
from reactloop.models.roster import JsonSchemaMode
from reactloop.models.sdk_client import OPENAI, make_client


class OpenAIChatModel:
    """A model behind an OpenAI-compatible ``/chat/completions`` endpoint (``native_tools``).

    ``provider`` selects quirks (see ``endpoints.SERVICES``); ``extra_body`` adds request
    fields (``{"thinking": {"type": "enabled"}}``); ``http_client`` (an ``httpx2.Client``, the
    SDK's HTTP library) and ``sleep`` are seams for tests. ``json_schema`` overrides when a
    typed answer is asked for as a ``response_format`` (``endpoints.Service.json_schema``).
    ``idle_timeout``: the most seconds a call waits without a byte from the server.
    """

    native_tools = True

    def __init__(
        self,
        *,
        model: str,
        base_url: str = "https://api.openai.com/v1",
        api_key: str = PLACEHOLDER_KEY,
        provider: str = "openai",
        stream: bool = False,
        seed: int | None = None,
        temperature: float | None = None,
        max_output_tokens: int | None = None,
        timeout: float | None = None,
        idle_timeout: float | None = None,
        max_retries: int = 2,
        extra_body: dict[str, Any] | None = None,
        http_client: Any = None,
        sleep: Callable[[float], None] = time.sleep,
        json_schema: JsonSchemaMode | None = None,
    ) -> None:
        self.service: Service = get_service(provider)
        self.json_schema = _json_schema_mode(self.service, base_url, json_schema)
        # a typed answer is asked for as a JSON reply, not the final_answer tool (see Agent)
        self.answers_json_schema = self.json_schema == "with_tools"
        self.model = model
        self.name = f"{provider}:{model}"
        self.base_url = base_url.rstrip("/")
        self.stream = stream
        self.timeout = timeout
        self._options = _sampling_options(self.service, seed, temperature, max_output_tokens)
        self._options.update(extra_body or {})
        self._renderer = RequestRenderer(echo_tool_name=self.service.echo_tool_name)
        self.line = make_client(
            OPENAI,
            name=self.name,
            base_url=self.base_url,
            api_key=api_key or PLACEHOLDER_KEY,
            status_error=self._status_error,
            max_retries=max_retries,
            sleep=sleep,
            timeout=timeout,
            idle_timeout=idle_timeout,
            http_client=http_client,
            local=self.service.name if self.service.is_local else "",
        )

    def complete(self, request: ModelRequest) -> ModelTurn:
        body = self.build_request(request)
        if request.on_raw is not None:
            request.on_raw(self._renderer.journal_entry(body, request.messages))
        deadline = time.monotonic() + request.timeout if request.timeout else None
        read = self._reader(request, streamed=bool(body.get("stream")))
        # without a limit the SDK's default (600 s a read) applies, not no timeout
        return self.line.call(
            "/chat/completions", body, read, deadline=deadline, seconds_left=request.timeout
        )

    def build_request(self, request: ModelRequest) -> dict[str, Any]:
        """The JSON body of the ``/chat/completions`` call for ``request``."""
        body: dict[str, Any] = {"model": self.model, "messages": self.render(request.messages)}
        if request.tools:
            body["tools"] = render_tools(request.tools)
            if self.service.supports_tool_choice:
                choice = render_tool_choice(request.tool_choice, request.tools)
                if choice is not None:
                    body["tool_choice"] = choice
        if request.answer_schema is not None and self._constrains(request):
            body["response_format"] = answer_format(request.answer_schema)
        if request.stop:
            body["stop"] = list(request.stop)
        if self.stream:
            body["stream"] = True
            body["stream_options"] = {"include_usage": True}
        body.update(self._options)
        return body

    def _constrains(self, request: ModelRequest) -> bool:
        mode = self.json_schema
        return mode == "with_tools" or (mode == "alone" and request.tool_choice == "none")

    def render(self, messages: Sequence[Message]) -> list[WireMessage]:
        """Wire messages for the history; renders of an unchanged prefix are reused."""
        return self._renderer.render(messages)

    def _reader(
        self, request: ModelRequest, *, streamed: bool
    ) -> Callable[[Any, Iterator[bytes]], ModelTurn]:
        def read(response: Any, chunks: Iterator[bytes]) -> ModelTurn:
            if streamed:
                content_type = str(response.headers.get("content-type") or "")
                return read_stream(self.name, content_type, chunks, request.on_text)
            return self._read_body(b"".join(chunks), request)

        return read

    def _status_error(self, status: int, headers: Any, text: str) -> ModelError:
        return provider_error(
            self.name, status, headers, text, base_url=self.base_url, key_env=self.service.key_env
        )

    def _read_body(self, content: bytes, request: ModelRequest) -> ModelTurn:
        turn = parse_body(content, provider=self.name)
        if request.on_text is not None and turn.text:
            request.on_text(turn.text)
        return turn


def _json_schema_mode(
    service: Service, base_url: str, chosen: JsonSchemaMode | None
) -> JsonSchemaMode:
    """When typed answers go as a ``response_format``: ``chosen``, else the service's, except
    that an ``openai:`` model at another host (a compatible server: it may constrain the whole
    reply by grammar, tool calls included) gets it only on calls that may not use a tool."""
    if chosen is not None:
        return chosen
    official = urlsplit(base_url).hostname == OPENAI_HOST
    return "alone" if service.json_schema == "with_tools" and not official else service.json_schema


def from_spec(provider: str, name: str, settings: ModelSettings) -> OpenAIChatModel:
    """Build the adapter for ``--model PROVIDER:NAME``; raises ``UsageError`` with the fix."""
    kind = get_service(provider)
    if not name:
        if kind.name != "llamacpp":
            raise UsageError(
                f"{provider} needs a model name: --model {provider}:{kind.example_model}"
            )
        name = kind.example_model  # llama.cpp serves one model and ignores the name
    endpoint = resolve_endpoint(kind, base_url=settings.base_url, api_key=settings.api_key)
    extra = dict(settings.extra)
    http_client = extra.pop("http_client", None)
    extra_body = extra.pop("extra_body", None) or extra
    return OpenAIChatModel(
        model=name,
        base_url=endpoint.base_url,
        api_key=endpoint.api_key,
        provider=kind.name,
        stream=settings.stream,
        seed=settings.seed,
        temperature=settings.temperature,
        max_output_tokens=settings.max_output_tokens,
        timeout=settings.timeout,
        idle_timeout=settings.idle_timeout,
        max_retries=settings.max_retries,
        extra_body=extra_body or None,
        http_client=http_client,
    )


def _sampling_options(
    service: Service, seed: int | None, temperature: float | None, max_tokens: int | None
) -> dict[str, Any]:
    options: dict[str, Any] = {}
    if seed is not None:
        options["seed"] = seed
    if temperature is not None:
        options["temperature"] = temperature
    if max_tokens is not None:
        options[service.max_tokens_field] = max_tokens
    return options
