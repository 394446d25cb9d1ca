"""``AnthropicModel``: the Messages API adapter (Claude, and compatible servers).

Built on the official ``anthropic`` SDK, imported when a model is made (never at
``import reactloop``); its client, retries and time limits are ``models/sdk_client.py``'s::

    model = AnthropicModel(model="claude-sonnet-4-6", api_key="sk-ant-...")
    model = from_spec("anthropic", "claude-sonnet-4-6", ModelSettings(extra={"cache": True}))

A ``pause_turn`` reply is sent back unchanged and continued (up to ``MAX_CONTINUATIONS``
times) inside one ``complete``: the loop sees one turn, never a pause as an answer.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from reactloop.errors import MissingDependency, ModelError, UsageError
from reactloop.messages import ModelTurn
from reactloop.models.anthropic.caching import CACHE_NOTICE, add_breakpoints, cache_notice
from reactloop.models.anthropic.endpoint import (
    DEFAULT_BASE_URL,
    EXAMPLE_MODEL,
    PLACEHOLDER_KEY,
    normal_base_url,
    resolve_endpoint,
)
from reactloop.models.anthropic.errors import provider_error
from reactloop.models.anthropic.reply import (
    blocks_of,
    cache_counts,
    is_paused,
    merge_messages,
    parse_usage,
    turn_from_message,
)
from reactloop.models.anthropic.request import (
    SEARCH_TOOLS,
    JournalEntries,
    render_messages,
    render_system,
    render_tool_choice,
    render_tools,
)
from reactloop.models.anthropic.stream import read_reply
from reactloop.models.base import ModelRequest
from reactloop.models.sdk_client import ANTHROPIC, SdkClient, make_client
from reactloop.models.tool_search_support import claude_has_tool_search, with_search_hint

if TYPE_CHECKING:
    from reactloop.models.base import ModelSettings

DEFAULT_MAX_TOKENS = 4096
MAX_CONTINUATIONS = 4
Reply = tuple[dict[str, Any], Any]  # (message, raw as received)


class AnthropicModel:
    """A model behind Anthropic's ``/v1/messages`` (``native_tools``).

    ``thinking_budget`` turns on extended thinking; ``cache`` places prompt-cache breakpoints;
    ``parallel_tool_calls=False`` sends ``disable_parallel_tool_use``; ``extra_body`` adds
    request fields; ``http_client`` (an ``httpx2.Client``) and ``sleep`` are seams for tests;
    ``idle_timeout``: the most seconds a call waits without a byte from the server;
    ``tool_search``: the variant of the server's tool search sent with deferred tools
    (``"bm25"`` or ``"regex"``; ``Agent(tool_search="native")`` defers them to it).
    What the run should know (a prompt too short to cache, why the model refused) travels in
    the turn's ``notices``, which the run makes warnings.
    """

    native_tools = True
    native_tool_search = True  # the server's tool-search tool over ``defer_loading`` tools

    def __init__(
        self,
        *,
        model: str,
        base_url: str = DEFAULT_BASE_URL,
        api_key: str = PLACEHOLDER_KEY,
        stream: bool = False,
        temperature: float | None = None,
        max_output_tokens: int | None = None,
        thinking_budget: int | None = None,
        cache: bool = False,
        parallel_tool_calls: bool = True,
        timeout: float | None = None,
        idle_timeout: float | None = None,
        max_retries: int = 2,
        extra_body: dict[str, Any] | None = None,
        http_client: Any = None,
        sleep: Callable[[float], None] = time.sleep,
        tool_search: str = "bm25",
    ) -> None:
        if tool_search not in SEARCH_TOOLS:
            raise UsageError(f"tool_search must be one of {', '.join(SEARCH_TOOLS)}")
        self.tool_search = tool_search
        self.model = model
        self.name = f"anthropic:{model}"
        self.base_url = normal_base_url(base_url)
        self.stream = stream
        self.cache = cache
        self.parallel_tool_calls = parallel_tool_calls
        self.thinking_budget = thinking_budget
        self.timeout = timeout
        self._options = _options(temperature, max_output_tokens, thinking_budget)
        self._options.update(extra_body or {})
        self._journal = JournalEntries()
        self.line = _make_client(
            name=self.name,
            base_url=self.base_url,
            api_key=api_key,
            status_error=self._status_error,
            max_retries=max_retries,
            sleep=sleep,
            timeout=timeout,
            idle_timeout=idle_timeout,
            http_client=http_client,
        )

    def _status_error(self, status: int, headers: Any, text: str) -> ModelError:
        return with_search_hint(provider_error(self.name, status, headers, text))

    @property
    def model_has_tool_search(self) -> bool:
        """Whether this model has the server's tool-search tool (``tool_search_support.py``)."""
        return claude_has_tool_search(self.model)

    def complete(self, request: ModelRequest) -> ModelTurn:
        body = self.build_request(request)
        if request.on_raw is not None:
            entry = self._journal.entry(body, request.messages)
            request.on_raw({**entry, "cache_breakpoints": True} if self.cache else entry)
        deadline = time.monotonic() + request.timeout if request.timeout else None
        replies = [self._call(add_breakpoints(body) if self.cache else body, request, deadline)]
        while is_paused(replies[-1][0]):
            if len(replies) > MAX_CONTINUATIONS:
                raise ModelError(f"{self.name} paused its turn {len(replies)} times; gave up")
            replies.append(self._call(self._continuation(body, replies), request, deadline))
        message = merge_messages([m for m, _ in replies])
        raw = replies[0][1] if len(replies) == 1 else [r for _, r in replies]
        turn = turn_from_message(message, raw=raw, provider=self.name)
        notice = self._cache_notice(message.get("usage"))
        if notice is not None:
            turn = dataclasses.replace(turn, notices=(*turn.notices, (CACHE_NOTICE, notice)))
        return turn

    def build_request(self, request: ModelRequest) -> dict[str, Any]:
        """The JSON body of the ``/v1/messages`` call for ``request`` (before cache marks)."""
        body: dict[str, Any] = {"model": self.model, "max_tokens": DEFAULT_MAX_TOKENS}
        system = render_system(request.messages)
        if system:
            body["system"] = system
        body["messages"] = render_messages(request.messages)
        if request.tools:
            body["tools"] = render_tools(request.tools, request.deferred, self.tool_search)
            body["tool_choice"] = render_tool_choice(
                request.tool_choice,
                request.tools,
                parallel=self.parallel_tool_calls,
                thinking=self.thinking_budget is not None,
            )
        if request.stop:
            body["stop_sequences"] = list(request.stop)
        if self.stream:
            body["stream"] = True
        body.update(self._options)
        return body

    def _continuation(self, body: dict[str, Any], replies: list[Reply]) -> dict[str, Any]:
        """The request that continues a paused turn: its content sent back unchanged."""
        content = [
            block
            for message, _ in replies
            for block in blocks_of(message)
            if block.get("type") != "text" or block.get("text")
        ]
        paused = {"role": "assistant", "content": content}
        continued = {**body, "messages": [*body["messages"], paused]}
        return add_breakpoints(continued) if self.cache else continued

    def _call(self, body: dict[str, Any], request: ModelRequest, deadline: float | None) -> Reply:
        def read(response: Any, chunks: Iterator[bytes]) -> Reply:
            content_type = str(response.headers.get("content-type") or "")
            return read_reply(self.name, content_type, chunks, request.on_text)

        return self.line.call(
            "/v1/messages", body, read, deadline=deadline, seconds_left=request.timeout
        )

    def _cache_notice(self, usage: Any) -> str | None:
        """Why caching cached nothing, when caching is on and the prompt is too short."""
        if not self.cache:
            return None
        written, read = cache_counts(usage)
        return cache_notice(self.model, written, read, parse_usage(usage).input_tokens)


def from_spec(provider: str, name: str, settings: ModelSettings) -> AnthropicModel:
    """Build the adapter for ``--model anthropic:NAME``; raises ``UsageError`` with the fix."""
    if not name:
        raise UsageError(f"anthropic needs a model name: --model anthropic:{EXAMPLE_MODEL}")
    endpoint = resolve_endpoint(base_url=settings.base_url, api_key=settings.api_key)
    extra = dict(settings.extra)
    thinking = extra.pop("thinking", None)
    if thinking is not None and (isinstance(thinking, bool) or not isinstance(thinking, int)):
        raise UsageError(f"--thinking takes a token budget (an integer), not {thinking!r}")
    return AnthropicModel(
        model=name,
        base_url=endpoint.base_url,
        api_key=endpoint.api_key,
        stream=settings.stream,
        temperature=settings.temperature,
        max_output_tokens=settings.max_output_tokens,
        thinking_budget=thinking,
        cache=bool(extra.pop("cache", False)),
        parallel_tool_calls=bool(extra.pop("parallel_tool_calls", True)),
        timeout=settings.timeout,
        idle_timeout=settings.idle_timeout,
        max_retries=settings.max_retries,
        http_client=extra.pop("http_client", None),
        tool_search=str(extra.pop("tool_search", "bm25")),
        extra_body=extra.pop("extra_body", None) or extra or None,
    )


def _options(
    temperature: float | None, max_tokens: int | None, thinking_budget: int | None
) -> dict[str, Any]:
    options: dict[str, Any] = {}
    if temperature is not None:
        options["temperature"] = temperature
    if thinking_budget is not None:
        if thinking_budget < 1024:
            raise UsageError(f"--thinking needs at least 1024 tokens, not {thinking_budget}")
        if max_tokens is not None and max_tokens <= thinking_budget:
            raise UsageError(
                f"the output limit ({max_tokens}) must exceed the thinking budget "
                f"({thinking_budget})"
            )
        options["thinking"] = {"type": "enabled", "budget_tokens": thinking_budget}
        max_tokens = max_tokens or thinking_budget + DEFAULT_MAX_TOKENS
    if max_tokens is not None:
        options["max_tokens"] = max_tokens
    return options


def _make_client(**options: Any) -> SdkClient:
    """``make_client`` for the ``anthropic`` SDK, which is an extra: one line when it is missing."""
    try:
        return make_client(ANTHROPIC, **options)
    except ModuleNotFoundError as exc:
        raise MissingDependency(
            f"the Anthropic adapter needs the anthropic SDK ({exc.name} is missing): "
            "pip install 'reactloop[anthropic]'"
        ) from None
