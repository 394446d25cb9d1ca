"""The Chat Completions adapter: OpenAI, DeepSeek, Qwen, Ollama, vLLM, SGLang, llama.cpp.

Built on the official ``openai`` SDK (imported on first use), with the SDK's own retries off:
``RetryPolicy`` decides what to retry (see ``openai_errors``); ``openai_deadline`` keeps a slow
server from holding a run past its time limit. Wire details live in
``openai_wire`` (history rendering), ``openai_reply`` (replies), ``openai_stream`` (streamed
chunks) and ``hermes`` (tool calls a server left in the text)::

    model = OpenAIChatModel(model="gpt-4o-mini", api_key="sk-...")
    model = from_spec("llamacpp", "", ModelSettings(base_url="http://127.0.0.1:8080/v1"))
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any

from reactloop.errors import ModelError, UsageError
from reactloop.messages import Message, ModelTurn
from reactloop.models.base import ModelRequest
from reactloop.models.openai_deadline import OutOfTime, ReplyDeadline
from reactloop.models.openai_errors import RetryPolicy, provider_error
from reactloop.models.openai_io import (
    body_text,
    keeping_start,
    preview,
    reason,
    seconds_text,
    time_left,
)
from reactloop.models.openai_reply import finish_turn, parse_completion, unique_ids
from reactloop.models.openai_wire import (
    WireMessage,
    pair_tool_calls,
    render_message,
    render_tool_choice,
    render_tools,
)
from reactloop.models.providers import (
    PLACEHOLDER_KEY,
    Provider,
    get_provider,
    resolve_endpoint,
)

if TYPE_CHECKING:
    from reactloop.models import ModelSettings

# Parameters the SDK's ``create`` takes by name; anything else travels in ``extra_body``.
SDK_PARAMETERS = frozenset(
    {
        "model", "messages", "tools", "tool_choice", "stream", "stream_options", "stop",
        "temperature", "seed", "max_tokens", "max_completion_tokens",
    }
)  # fmt: skip


class OpenAIChatModel:
    """A model behind an OpenAI-compatible ``/chat/completions`` endpoint (``native_tools``).

    ``provider`` selects quirks (see ``providers.PROVIDERS``); ``extra_body`` adds request
    fields (``{"thinking": {"type": "enabled"}}``); ``http_client`` (an ``httpx2.Client``, the
    SDK's HTTP library) and ``sleep`` are seams for tests.
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
        max_retries: int = 2,
        extra_body: dict[str, Any] | None = None,
        http_client: Any = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.provider: Provider = get_provider(provider)
        self.model = model
        self.name = f"{provider}:{model}"
        self.base_url = base_url.rstrip("/")
        self.stream = stream
        self.timeout = timeout
        self.retry = RetryPolicy(max_retries=max(max_retries, 0), sleep=sleep)
        self._options = _sampling_options(self.provider, seed, temperature, max_output_tokens)
        self._options.update(extra_body or {})
        self._api_key = api_key
        self._http_client = http_client
        self._deadlines = ReplyDeadline()
        self._client: Any = None
        self._lock = threading.Lock()
        self._source: list[Message] = []
        self._rendered: list[WireMessage] = []
        self._journaled: list[WireMessage] = []
        self._journaled_tools: Any = None
        self._journaled_history: Sequence[Message] | None = None

    def complete(self, request: ModelRequest) -> ModelTurn:
        body = self.build_request(request)
        if request.on_raw is not None:
            request.on_raw(self._journal_entry(body, request.messages))
        deadline = time.monotonic() + request.timeout if request.timeout else None
        return self.retry.run(lambda: self._attempt(body, request, deadline), deadline=deadline)

    def build_request(self, request: ModelRequest) -> dict[str, Any]:
        """The JSON body of the ``/chat/completions`` call for ``request``."""
        body: dict[str, Any] = {"model": self.model, "messages": self.render(request.messages)}
        if request.tools:
            body["tools"] = render_tools(request.tools)
            if self.provider.supports_tool_choice:
                choice = render_tool_choice(request.tool_choice, request.tools)
                if choice is not None:
                    body["tool_choice"] = choice
        if request.stop:
            body["stop"] = list(request.stop)
        if self.stream:
            body["stream"] = True
            body["stream_options"] = {"include_usage": True}
        body.update(self._options)
        return body

    def render(self, messages: Sequence[Message]) -> list[WireMessage]:
        """Wire messages for the history; renders of an unchanged prefix are reused."""
        with self._lock:
            same = 0
            limit = min(len(self._source), len(messages))
            while same < limit and self._source[same] is messages[same]:
                same += 1
            del self._source[same:], self._rendered[same:]
            for message in messages[same:]:
                self._source.append(message)
                self._rendered.append(
                    render_message(message, echo_tool_name=self.provider.echo_tool_name)
                )
            rendered = list(self._rendered)
        return pair_tool_calls(messages, rendered)

    def _journal_entry(self, body: dict[str, Any], history: Sequence[Message]) -> dict[str, Any]:
        """The request without what this history's earlier entries recorded (linear journals)."""
        messages = body["messages"]
        entry = {k: v for k, v in body.items() if k not in ("messages", "tools")}
        entry["n_messages"] = len(messages)
        with self._lock:
            previous = self._journaled if history is self._journaled_history else None
            if previous and messages[: len(previous)] == previous:
                entry["new_messages"] = messages[len(previous) :]
                if body.get("tools") != self._journaled_tools:
                    entry["tools"] = body.get("tools")
            else:
                entry["messages"] = messages
                entry["tools"] = body.get("tools")
            self._journaled, self._journaled_tools = messages, body.get("tools")
            self._journaled_history = history
        return entry

    def _attempt(
        self, body: dict[str, Any], request: ModelRequest, deadline: float | None
    ) -> ModelTurn:
        openai, httpx = _import_openai(), _import_httpx()
        timeout = time_left(deadline, self.timeout)
        streaming = bool(body.get("stream"))
        with self._deadlines.watch(deadline) as watch:
            try:
                with self._sdk().chat.completions.with_streaming_response.create(
                    **{k: v for k, v in body.items() if k in SDK_PARAMETERS},
                    extra_body={k: v for k, v in body.items() if k not in SDK_PARAMETERS} or None,
                    # without a limit the SDK's default (600 s a read) applies, not no timeout
                    timeout=openai.NOT_GIVEN if timeout is None else timeout,
                ) as response:
                    reads = watch.reads(response.iter_bytes())
                    if streaming:
                        return self._read_stream(response.headers, reads, request)
                    return self._read_body(b"".join(reads), request)
            except openai.APIStatusError as exc:
                http = exc.response
                status, headers = http.status_code, http.headers
                raise provider_error(self.name, status, headers, body_text(http)) from None
            except (openai.APIConnectionError, httpx.HTTPError, OutOfTime) as exc:
                if watch.expired or isinstance(exc, OutOfTime):
                    raise self._out_of_time(request.timeout) from None
                raise self._transport_error(exc, timeout, streaming) from None

    def _out_of_time(self, seconds_left: float | None) -> ModelError:
        left = seconds_text(seconds_left or 0.0)
        return ModelError(
            f"{self.name}: no complete reply from {self.base_url} in the {left} s left in the run"
        )

    def _transport_error(
        self, exc: Exception, timeout: float | None, streaming: bool
    ) -> ModelError:
        """What went wrong on the wire (refused, timed out, cut off), in one line; retryable."""
        openai = _import_openai()
        if isinstance(exc, openai.APITimeoutError):
            waited = "the timeout" if timeout is None else f"{seconds_text(timeout)} s"
            message = f"{self.name}: no reply from {self.base_url} within {waited}"
        elif isinstance(exc, openai.APIConnectionError):
            message = self._unreachable(exc)
        else:  # the body broke off after the headers
            what = "stream" if streaming else "reply"
            message = f"{self.name}: the {what} from {self.base_url} broke off ({reason(exc)})"
        return ModelError(message, retryable=True)

    def _read_body(self, content: bytes, request: ModelRequest) -> ModelTurn:
        try:
            data = json.loads(content.decode("utf-8", errors="replace"))
        except (ValueError, RecursionError):
            raise ModelError(
                f"{self.name} sent a reply that is not JSON: {preview(content)}"
            ) from None
        turn = parse_completion(data, provider=self.name)
        if request.on_text is not None and turn.text:
            request.on_text(turn.text)
        return turn

    def _read_stream(
        self, headers: Any, reads: Iterable[bytes], request: ModelRequest
    ) -> ModelTurn:
        from reactloop.models.openai_stream import StreamAccumulator
        from reactloop.models.sse import iter_sse_json

        content_type = str(headers.get("content-type") or "")
        if "json" in content_type:  # a server that ignored ``stream: true``
            return self._read_body(b"".join(reads), request)
        start = bytearray()
        accumulator = StreamAccumulator(provider=self.name)
        for chunk in iter_sse_json(keeping_start(reads, start)):
            text = accumulator.feed(chunk)
            if text and request.on_text is not None:
                request.on_text(text)
        if not accumulator.chunks and "event-stream" not in content_type:
            raise ModelError(
                f"{self.name} answered a streamed request with "
                f"{content_type or 'no content type'}, not an event stream: {preview(start)}"
            )
        turn = accumulator.result()
        return finish_turn(_with_calls(turn, unique_ids(turn.tool_calls)))

    def _unreachable(self, exc: Exception) -> str:
        hint = (
            f"is the {self.provider.name} server running?"
            if self.provider.is_local
            else "check the network or --base-url"
        )
        return f"cannot reach {self.base_url} ({reason(exc)}); {hint}"

    def _sdk(self) -> Any:
        if self._client is None:
            openai = _import_openai()
            self._client = openai.OpenAI(
                api_key=self._api_key,
                base_url=self.base_url,
                max_retries=0,
                http_client=self._http_client
                or openai.DefaultHttpxClient(
                    event_hooks={"response": [self._deadlines.on_response]}
                ),
                **({"timeout": self.timeout} if self.timeout else {}),
            )
        return self._client


def from_spec(provider: str, name: str, settings: ModelSettings) -> OpenAIChatModel:
    """Build the adapter for ``--model PROVIDER:NAME``; raises ``UsageError`` with the fix."""
    kind = get_provider(provider)
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
        max_retries=settings.max_retries,
        extra_body=extra_body or None,
        http_client=http_client,
    )


def _sampling_options(
    provider: Provider, seed: int | None, temperature: float | None, max_tokens: int | None
) -> dict[str, Any]:
    options: dict[str, Any] = {}
    if seed is not None:
        options["seed"] = seed
    if temperature is not None:
        options["temperature"] = temperature
    if max_tokens is not None:
        options[provider.max_tokens_field] = max_tokens
    return options


def _with_calls(turn: ModelTurn, calls: Any) -> ModelTurn:
    if calls == turn.tool_calls:
        return turn
    fields = {name: getattr(turn, name) for name in turn.__dataclass_fields__}
    return ModelTurn(**{**fields, "tool_calls": calls})


def _import_openai() -> Any:
    import openai

    return openai


def _import_httpx() -> Any:
    import httpx2

    return httpx2
