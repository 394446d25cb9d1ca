"""``OpenAIResponsesModel``: the Responses API adapter (OpenAI, and any Open Responses server).

Built on the official ``openai`` SDK like the chat adapter, imported when a model is made,
with the same client, retries and time limits (``models/sdk_client.py``) and error bodies
(``models/openai/errors.py``)::

    model = OpenAIResponsesModel(model="gpt-5-mini", api_key="sk-...")
    model = OpenAIResponsesModel(model="any", base_url="http://127.0.0.1:8080/v1")

Stateless by default: ``store: false`` and the whole history sent each call, reasoning items
echoed with their ``encrypted_content``. ``server_state=True`` stores each response on the
server and sends only what is new after ``previous_response_id`` (``server_state.py``).
"""

from __future__ import annotations

import dataclasses
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any
from urllib.parse import urlsplit

from reactloop.errors import ModelError, UsageError
from reactloop.messages import ModelTurn
from reactloop.models.base import ModelRequest, ModelSettings
from reactloop.models.openai.endpoints import (
    OPENAI_HOST,
    PLACEHOLDER_KEY,
    get_service,
    resolve_endpoint,
)
from reactloop.models.openai.errors import provider_error
from reactloop.models.responses.reply import parse_body
from reactloop.models.responses.request import (
    journal_entry,
    render_input,
    render_tool_choice,
    render_tools,
)
from reactloop.models.responses.server_state import ServerState
from reactloop.models.responses.stream import read_stream
from reactloop.models.roster import ROSTER
from reactloop.models.sdk_client import OPENAI, make_client
from reactloop.models.tool_search_support import gpt_has_tool_search, with_search_hint

REASONING_MODELS = ("o1", "o3", "o4", "gpt-5", "gpt-oss", "codex")
ENCRYPTED_REASONING = "reasoning.encrypted_content"
FINISHED = ("stop", "tool_calls")


class OpenAIResponsesModel:
    """A model behind a ``/responses`` endpoint (``native_tools``).

    ``include_reasoning`` asks for reasoning items' ``encrypted_content`` (None: for the
    reasoning models by name, since OpenAI refuses it for the others); ``answers_json_schema``
    asks for typed answers with ``text.format`` (None: on OpenAI's own host only);
    ``reasoning`` is sent as is (``{"effort": "low", "summary": "auto"}``); ``extra_body``
    adds request fields; ``http_client`` (an ``httpx2.Client``) and ``sleep`` are seams for
    tests; ``idle_timeout``: the most seconds a call waits without a byte from the server.
    """

    native_tools = True
    native_tool_search = True  # the hosted ``tool_search`` over ``defer_loading`` tools

    def __init__(
        self,
        *,
        model: str,
        base_url: str = "https://api.openai.com/v1",
        api_key: str = PLACEHOLDER_KEY,
        provider: str = "responses",
        stream: bool = False,
        server_state: bool = False,
        temperature: float | None = None,
        max_output_tokens: int | None = None,
        reasoning: dict[str, Any] | None = None,
        include_reasoning: bool | None = None,
        answers_json_schema: bool | None = None,
        timeout: float | None = None,
        idle_timeout: float | None = None,
        max_retries: int = 2,
        extra_body: dict[str, Any] | None = None,
        http_client: Any = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.model = model
        self.name = f"{provider}:{model}"
        row = ROSTER.get(provider)
        self._key_env = None if row is None else row.key_env  # named by a 401
        self.base_url = base_url.rstrip("/")
        self.stream = stream
        self.timeout = timeout
        self.state = ServerState(self.name) if server_state else None
        self.holds_history = server_state  # the server holds it: no compaction, no edits
        # a typed answer as a reply constrained by ``text.format`` where that is known to work
        # with tools (OpenAI's own API); elsewhere the run's final_answer tool asks for it
        official = urlsplit(self.base_url).hostname == OPENAI_HOST
        self.answers_json_schema = official if answers_json_schema is None else answers_json_schema
        self._options = _options(temperature, max_output_tokens, reasoning)
        self._options.update(extra_body or {})
        if include_reasoning is None:
            include_reasoning = model.lower().startswith(REASONING_MODELS)
        self._include = include_reasoning and not server_state
        self._journaled: tuple[Any, dict[str, Any]] | None = None
        self._lock = threading.Lock()
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
        )

    @property
    def model_has_tool_search(self) -> bool:
        """Whether this model has the hosted ``tool_search`` (``tool_search_support.py``)."""
        return gpt_has_tool_search(self.model)

    def complete(self, request: ModelRequest) -> ModelTurn:
        body = self.build_request(request)
        if request.on_raw is not None:
            request.on_raw(self._journal_entry(body, request))
        deadline = time.monotonic() + request.timeout if request.timeout else None
        read = self._reader(request, streamed=bool(body.get("stream")))
        turn = self.line.call(
            "/responses", body, read, deadline=deadline, seconds_left=request.timeout
        )
        turn = cut_at_limit(turn, self._options.get("max_output_tokens"))
        if self.state is not None:
            self.state.remember(request.messages, turn)
        return turn

    def build_request(self, request: ModelRequest) -> dict[str, Any]:
        """The JSON body of the ``/responses`` call for ``request`` (``stop`` is not sent:
        the API has none)."""
        instructions, items = render_input(request.messages)
        body: dict[str, Any] = {"model": self.model}
        if instructions is not None:
            body["instructions"] = instructions
        if self.state is None:
            body["input"], body["store"] = items, False
        else:
            body.update(self.state.continuation(request.messages, items))
        if request.tools:
            body["tools"] = render_tools(request.tools, request.deferred)
            body["tool_choice"] = render_tool_choice(request.tool_choice, request.tools)
            body["parallel_tool_calls"] = True
        if request.answer_schema is not None and self.answers_json_schema:
            body["text"] = {"format": answer_format(request.answer_schema)}
        if self._include:
            body["include"] = [ENCRYPTED_REASONING]
        if self.stream:
            body["stream"] = True
        body.update(self._options)
        return body

    def _journal_entry(self, body: dict[str, Any], request: ModelRequest) -> dict[str, Any]:
        with self._lock:
            same = self._journaled is not None and self._journaled[0] is request.messages
            entry = journal_entry(body, self._journaled[1] if same and self._journaled else None)
            self._journaled = (request.messages, body)
        return entry

    def _reader(
        self, request: ModelRequest, *, streamed: bool
    ) -> Callable[[Any, Iterator[bytes]], ModelTurn]:
        def read(response: Any, chunks: Iterator[bytes]) -> ModelTurn:
            if streamed:
                content_type = str(response.headers.get("content-type") or "")
                return read_stream(self.name, content_type, chunks, request.on_text)
            turn = parse_body(b"".join(chunks), provider=self.name)
            if request.on_text is not None and turn.text:
                request.on_text(turn.text)
            return turn

        return read

    def _status_error(self, status: int, headers: Any, text: str) -> ModelError:
        error = provider_error(
            self.name, status, headers, text, base_url=self.base_url, key_env=self._key_env
        )
        return with_search_hint(error)


def from_spec(provider: str, name: str, settings: ModelSettings) -> OpenAIResponsesModel:
    """Build the adapter for ``--model responses:NAME`` (OpenAI's endpoint, or ``--base-url``),
    or for ``PROVIDER:NAME`` of an OpenAI-compatible provider spoken to as ``--api
    responses``; raises ``UsageError`` with the fix."""
    service = get_service("openai" if provider == "responses" else provider)
    if not name and service.name == "llamacpp":
        name = service.example_model  # llama.cpp serves one model and ignores the name
    if not name:
        example = "gpt-5-mini" if provider == "responses" else service.example_model
        raise UsageError(f"{provider} needs a model name: --model {provider}:{example}")
    endpoint = resolve_endpoint(service, base_url=settings.base_url, api_key=settings.api_key)
    extra = dict(settings.extra)
    http_client = extra.pop("http_client", None)
    server_state = bool(extra.pop("server_state", False))
    reasoning = extra.pop("reasoning", None)
    extra_body = extra.pop("extra_body", None) or extra
    return OpenAIResponsesModel(
        model=name,
        base_url=endpoint.base_url,
        api_key=endpoint.api_key,
        provider=provider,
        stream=settings.stream,
        server_state=server_state,
        temperature=settings.temperature,
        max_output_tokens=settings.max_output_tokens,
        reasoning=reasoning,
        timeout=settings.timeout,
        idle_timeout=settings.idle_timeout,
        max_retries=settings.max_retries,
        extra_body=extra_body or None,
        http_client=http_client,
    )


def answer_format(schema: dict[str, Any]) -> dict[str, Any]:
    """The ``text.format`` that asks for a typed answer's JSON (not ``strict``, as for chat:
    strict mode would change the type; the run validates the answer either way)."""
    return {"type": "json_schema", "name": "final_answer", "schema": schema, "strict": False}


def cut_at_limit(turn: ModelTurn, limit: Any) -> ModelTurn:
    """A reply that used all of ``max_output_tokens`` was cut, whatever its ``status`` says:
    llama-server answers ``completed`` with the cut text and no ``incomplete_details``."""
    used = turn.usage.output_tokens
    if isinstance(limit, int) and used >= limit > 0 and turn.finish_reason in FINISHED:
        return dataclasses.replace(turn, finish_reason="length", format_error=None)
    return turn


def _options(
    temperature: float | None, max_output_tokens: int | None, reasoning: dict[str, Any] | None
) -> dict[str, Any]:
    options: dict[str, Any] = {}
    if temperature is not None:
        options["temperature"] = temperature
    if max_output_tokens is not None:
        options["max_output_tokens"] = max_output_tokens
    if reasoning:
        options["reasoning"] = dict(reasoning)
    return options
