"""Provider errors and outages, end to end through ``Agent.run`` and ``reactloop run``.

Every case must end the run with one stop reason, a one-line error that says what happened, a
journal that reads back, and within ``Limits.max_seconds`` plus a small margin. Misbehaviour the
fake server cannot produce (a body cut mid-JSON, headers then silence, a trickle) comes from
``RawServer``, a few lines of sockets on 127.0.0.1.
"""

from __future__ import annotations

import contextlib
import importlib
import json
import re
import socket
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from reactloop import Agent, Journal, Limits, RunResult, StopReason, read_journal, tool
from reactloop.cli import main
from reactloop.models.openai import OpenAIChatModel
from reactloop.testing import (
    FakeOpenAIServer,
    Reply,
    completion,
    disconnect,
    error_reply,
    free_port,
    json_reply,
    sse_reply,
    tool_call,
)

LIMIT = 1.0  # max_seconds of the runs that meet a hung server
MARGIN = 0.35  # how far past the limit such a run may end
JSON_TYPE = "application/json"
SSE_TYPE = "text/event-stream"


@tool(read_only=True)
def lookup(key: str) -> str:
    """Look a key up."""
    return key.upper()


@pytest.fixture(scope="module", autouse=True)
def _sdk_loaded() -> None:
    """Import the SDK once, so that no timed run pays for it."""
    importlib.import_module("openai")


# --- a raw server for what the fake cannot do --------------------------------------------------

Handler = Callable[[socket.socket, threading.Event], None]


class RawServer:
    """Runs ``handler(connection, stopping)`` for each connection to 127.0.0.1.

    ``stopping`` is set when the ``with`` block ends, so a handler that hangs
    (``stopping.wait()``) or trickles (``stopping.wait(interval)``) ends with the test.
    """

    def __init__(self, handler: Handler) -> None:
        self.handler = handler
        self.connections = 0
        self.stopping = threading.Event()
        self._listener = socket.create_server(("127.0.0.1", 0))
        self._listener.settimeout(0.05)
        self._threads: list[threading.Thread] = []

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._listener.getsockname()[1]}/v1"

    def __enter__(self) -> RawServer:
        self._spawn(self._accept)
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stopping.set()
        for thread in self._threads:
            thread.join(timeout=5)
        self._listener.close()

    def _spawn(self, target: Callable[..., None], *args: Any) -> None:
        thread = threading.Thread(target=target, args=args, daemon=True)
        self._threads.append(thread)
        thread.start()

    def _accept(self) -> None:
        while not self.stopping.is_set():
            try:
                connection, _ = self._listener.accept()
            except TimeoutError:
                continue
            self.connections += 1
            self._spawn(self._serve, connection)

    def _serve(self, connection: socket.socket) -> None:
        with connection, contextlib.suppress(OSError):  # the client gave up: tests wait for that
            read_request(connection)
            self.handler(connection, self.stopping)


def read_request(connection: socket.socket) -> None:
    data = b""
    while b"\r\n\r\n" not in data:
        received = connection.recv(65536)
        if not received:
            return
        data += received
    head, _, body = data.partition(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n"):
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value)
    while len(body) < length:
        body += connection.recv(65536)


def head(status: str = "200 OK", content_type: str = JSON_TYPE, length: int | None = None) -> bytes:
    framing = "transfer-encoding: chunked" if length is None else f"content-length: {length}"
    return f"HTTP/1.1 {status}\r\ncontent-type: {content_type}\r\n{framing}\r\n\r\n".encode()


def chunk(data: bytes) -> bytes:
    return f"{len(data):x}\r\n".encode() + data + b"\r\n"


def silent(connection: socket.socket, stopping: threading.Event) -> None:
    stopping.wait()


def late_headers_then_silence(content_type: str) -> Handler:
    """Headers well into the run, then nothing: each read's own timeout would end past it."""

    def handler(connection: socket.socket, stopping: threading.Event) -> None:
        if not stopping.wait(0.6 * LIMIT):
            connection.sendall(head(content_type=content_type))
            stopping.wait()

    return handler


def trickle(connection: socket.socket, stopping: threading.Event) -> None:
    """A JSON body one byte at a time: every read is quick, the reply never ends in time."""
    body = json.dumps(completion("slow " * 100)).encode()
    connection.sendall(head(length=len(body)))
    for byte in body:
        connection.sendall(bytes([byte]))
        if stopping.wait(0.05):
            return


def trickle_keep_alives(connection: socket.socket, stopping: threading.Event) -> None:
    connection.sendall(head(content_type=SSE_TYPE))
    while not stopping.wait(0.05):
        connection.sendall(chunk(b": keep-alive\n\n"))


def error_head_then(rest: str) -> Handler:
    """An HTTP 500 whose JSON body is cut (``cut``), never sent (``stall``) or trickled."""
    body = json.dumps({"error": {"message": "upstream failed", "type": "server_error"}}).encode()

    def handler(connection: socket.socket, stopping: threading.Event) -> None:
        connection.sendall(head("500 Internal Server Error", length=len(body)))
        if rest == "cut":
            connection.sendall(body[:10])
        elif rest == "stall":
            stopping.wait()
        else:
            for byte in body:
                connection.sendall(bytes([byte]))
                if stopping.wait(0.1):
                    return

    return handler


def cut_json_body(connection: socket.socket, stopping: threading.Event) -> None:
    body = json.dumps(completion("never whole")).encode()
    connection.sendall(head(length=len(body)) + body[: len(body) // 2])


# --- running the agent -------------------------------------------------------------------------


def run_agent(
    base_url: str,
    trace: Path,
    *,
    stream: bool = False,
    max_seconds: float = 30.0,
    sleeps: list[float] | None = None,
    on_text: Callable[[str], None] | None = None,
) -> tuple[RunResult, list[dict[str, Any]], float]:
    """One run with a journal; checks what every run owes: one stop, a readable journal."""
    waits = [] if sleeps is None else sleeps
    model = OpenAIChatModel(model="m", base_url=base_url, stream=stream, sleep=waits.append)
    limits = Limits(max_seconds=max_seconds, max_model_calls=4)
    started = time.monotonic()
    with Journal(trace) as journal:
        agent = Agent(model, [lookup], limits=limits, journal=journal, on_text=on_text)
        result = agent.run("look up a")
    elapsed = time.monotonic() - started
    events = read_journal(trace)
    assert [e["type"] for e in events].count("stop") == 1 and events[-1]["type"] == "stop"
    assert events[-1]["stop_reason"] == str(result.stop_reason)
    assert events[-1]["error"] == result.error
    assert not [e for e in events if e.get("kind") == "internal_error"], "an adapter crash"
    return result, events, elapsed


def assert_model_error(
    result: RunResult, *fragments: str, reason: StopReason = StopReason.MODEL_ERROR
) -> None:
    assert result.stop_reason == reason and result.answer is None
    error = result.error or ""
    assert "\n" not in error and "Traceback" not in error
    for fragment in fragments:
        assert fragment in error


STREAMING = pytest.mark.parametrize("stream", [False, True], ids=["body", "stream"])


# --- outages: nothing, or not all of it, arrives ------------------------------------------------


@STREAMING
def test_connection_refused_on_this_machine_is_named_at_once(tmp_path: Path, stream: bool) -> None:
    url = f"http://127.0.0.1:{free_port()}/v1"
    sleeps: list[float] = []
    result, _, _ = run_agent(url, tmp_path / "t.jsonl", stream=stream, sleeps=sleeps)
    assert_model_error(result, f"nothing listens at {url}", "connection refused")
    assert sleeps == [] and "gave up" not in (result.error or "")


@STREAMING
def test_hang_up_before_any_byte_is_retried(tmp_path: Path, stream: bool) -> None:
    with FakeOpenAIServer([disconnect()] * 3) as server:
        result, _, _ = run_agent(server.base_url, tmp_path / "t.jsonl", stream=stream)
    assert_model_error(result, "Server disconnected", "gave up after 3 attempts")
    assert len(server.requests) == 3


def test_body_cut_in_the_middle_of_the_json_is_retried_not_a_crash(tmp_path: Path) -> None:
    with RawServer(cut_json_body) as server:
        result, _, _ = run_agent(server.base_url, tmp_path / "t.jsonl")
    assert_model_error(result, "the reply from", "broke off", "gave up after 3 attempts")
    assert server.connections == 3


@STREAMING
def test_error_status_whose_body_is_cut_is_a_model_error(tmp_path: Path, stream: bool) -> None:
    with RawServer(error_head_then("cut")) as server:
        result, _, _ = run_agent(server.base_url, tmp_path / "t.jsonl", stream=stream)
    assert_model_error(result, "broke off", "gave up after 3 attempts")


def test_stream_cut_mid_body_is_retried(tmp_path: Path) -> None:
    chunks = [{"choices": [{"index": 0, "delta": {"content": f"part{n} "}}]} for n in range(4)]
    with FakeOpenAIServer([sse_reply(chunks, break_after=2)] * 3) as server:
        result, _, _ = run_agent(server.base_url, tmp_path / "t.jsonl", stream=True)
    assert_model_error(result, "the stream from", "broke off", "gave up after 3 attempts")


def test_stream_without_done_or_finish_reason_is_not_an_answer(tmp_path: Path) -> None:
    chunks = [{"choices": [{"index": 0, "delta": {"content": "half an answ"}}]}]
    with FakeOpenAIServer([sse_reply(chunks, done=False)] * 3) as server:
        result, _, _ = run_agent(server.base_url, tmp_path / "t.jsonl", stream=True)
    assert_model_error(result, "without a finish reason", "gave up after 3 attempts")


# --- hung and slow servers: the run's time limit holds ------------------------------------------

HUNG = [
    pytest.param(silent, False, id="silent-body"),
    pytest.param(silent, True, id="silent-stream"),
    pytest.param(late_headers_then_silence(JSON_TYPE), False, id="headers-then-silence-body"),
    pytest.param(late_headers_then_silence(SSE_TYPE), True, id="headers-then-silence-stream"),
    pytest.param(trickle, False, id="trickle-body"),
    pytest.param(trickle_keep_alives, True, id="trickle-stream"),
    pytest.param(error_head_then("stall"), False, id="error-body-stalls"),
    pytest.param(error_head_then("trickle"), False, id="error-body-trickles"),
]


@pytest.mark.parametrize(("handler", "stream"), HUNG)
def test_a_hung_or_trickling_server_cannot_outlast_the_time_limit(
    tmp_path: Path, handler: Handler, stream: bool
) -> None:
    with RawServer(handler) as server:
        result, _, elapsed = run_agent(
            server.base_url, tmp_path / "t.jsonl", stream=stream, max_seconds=LIMIT
        )
    assert elapsed < LIMIT + MARGIN
    assert_model_error(result, "no complete reply from", reason=StopReason.TIMEOUT)
    # the time left when the call began: LIMIT, or a little less on a loaded machine (0.99)
    left = re.search(r"in the ([0-9.]+) s left in the run", result.error or "")
    assert left is not None and 0 < float(left.group(1)) <= LIMIT


def test_cli_run_against_a_hung_server_ends_at_its_time_limit(tmp_path: Path) -> None:
    trace = tmp_path / "t.jsonl"
    with RawServer(late_headers_then_silence(JSON_TYPE)) as server:
        started = time.monotonic()
        outcome = CliRunner().invoke(
            main,
            ["run", "look up a", "--model", "openai:m", "--base-url", server.base_url,
             "--max-seconds", str(LIMIT), "--trace", str(trace), "--json"],
        )  # fmt: skip
        elapsed = time.monotonic() - started
    assert outcome.exit_code == 1 and "Traceback" not in outcome.output
    payload = json.loads(outcome.stdout)
    assert payload["stop_reason"] == "timeout" and "left in the run" in payload["error"]
    assert elapsed < LIMIT + 1.0  # the CLI adds its own start-up
    assert read_journal(trace)[-1]["type"] == "stop"


# --- error statuses -----------------------------------------------------------------------------

RATE_LIMIT = {"error": {"message": "Rate limit reached", "code": "rate_limit_exceeded"}}


@STREAMING
def test_429_without_retry_after_backs_off_then_gives_up(tmp_path: Path, stream: bool) -> None:
    sleeps: list[float] = []
    with FakeOpenAIServer([error_reply(429, RATE_LIMIT)] * 3) as server:
        result, _, _ = run_agent(
            server.base_url, tmp_path / "t.jsonl", stream=stream, sleeps=sleeps
        )
    assert_model_error(result, "HTTP 429 [rate_limit_exceeded]: Rate limit reached", "after 3")
    assert len(sleeps) == 2 and all(0.3 < wait < 1.1 for wait in sleeps)


def test_429_asking_for_more_than_the_time_left_is_not_waited_for(tmp_path: Path) -> None:
    slow_down = error_reply(429, RATE_LIMIT, headers={"retry-after": "30"})
    sleeps: list[float] = []
    with FakeOpenAIServer([slow_down, completion("late")]) as server:
        result, _, elapsed = run_agent(
            server.base_url, tmp_path / "t.jsonl", max_seconds=5.0, sleeps=sleeps
        )
    assert_model_error(result, "HTTP 429", "no time left in the run to retry")
    assert sleeps == [] and len(server.requests) == 1 and elapsed < 5.0


@pytest.mark.parametrize(
    "value", ["nan", "inf", "-inf", "9" * 400], ids=["nan", "inf", "-inf", "1e400"]
)
def test_retry_after_that_is_not_a_finite_number_falls_back_to_backoff(
    tmp_path: Path, value: str
) -> None:
    odd = error_reply(429, RATE_LIMIT, headers={"retry-after": value})
    sleeps: list[float] = []
    with FakeOpenAIServer([odd, completion("done")]) as server:
        result, _, _ = run_agent(server.base_url, tmp_path / "t.jsonl", sleeps=sleeps)
    assert result.stop_reason == StopReason.FINAL_ANSWER and result.answer == "done"
    assert len(sleeps) == 1 and 0.3 < sleeps[0] < 1.0


NGINX_502 = (
    "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n"
    "<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>"
)


@pytest.mark.parametrize("status", [500, 502, 503])
@STREAMING
def test_an_html_error_page_is_retried_and_reported_by_its_title(
    tmp_path: Path, status: int, stream: bool
) -> None:
    page = Reply(status=status, body=NGINX_502.encode(), content_type="text/html")
    with FakeOpenAIServer([page] * 3) as server:
        result, _, _ = run_agent(server.base_url, tmp_path / "t.jsonl", stream=stream)
    assert_model_error(result, f"HTTP {status}: 502 Bad Gateway", "gave up after 3 attempts")
    assert "<" not in (result.error or "") and len(server.requests) == 3


@pytest.mark.parametrize(
    ("status", "body", "expected"),
    [
        (
            400,
            {"error": {"message": "maximum context length is 8192 tokens", "type": "invalid_"
             "request_error", "param": "messages", "code": "context_length_exceeded"}},
            "HTTP 400 [context_length_exceeded]: maximum context length is 8192 tokens",
        ),
        (
            401,
            {"error": {"message": "Incorrect API key provided", "code": "invalid_api_key"}},
            "HTTP 401 [invalid_api_key]: Incorrect API key provided",
        ),
        (401, "", "HTTP 401: (empty body)"),
    ],
)  # fmt: skip
@STREAMING
def test_client_errors_are_reported_once_without_retrying(
    tmp_path: Path, status: int, body: Any, expected: str, stream: bool
) -> None:
    sleeps: list[float] = []
    with FakeOpenAIServer([error_reply(status, body)]) as server:
        result, _, _ = run_agent(
            server.base_url, tmp_path / "t.jsonl", stream=stream, sleeps=sleeps
        )
    assert_model_error(result, expected)
    assert "gave up" not in (result.error or "") and sleeps == [] and len(server.requests) == 1


# --- 200 replies that are not usable ------------------------------------------------------------


def with_choices(choices: Any) -> dict[str, Any]:
    return {**completion("unused"), "choices": choices}


def with_message(message: Any) -> dict[str, Any]:
    return with_choices([{"index": 0, "message": message, "finish_reason": "stop"}])


BAD_BODIES = [
    pytest.param(
        Reply(body=b'{"id": "x", "choices": ['), "sent a reply that is not JSON", id="cut"
    ),
    pytest.param(Reply(body=b"[" * 100_000), "sent a reply that is not JSON", id="deep-nesting"),
    pytest.param(json_reply(with_choices([])), "a completion without choices", id="choices-[]"),
    pytest.param(json_reply(with_choices(None)), "a completion without choices", id="choices-null"),
    pytest.param(json_reply(with_message(None)), "a choice without a message", id="message-null"),
    pytest.param(json_reply([1, 2]), "a body that is not a chat completion", id="a-list"),
    pytest.param(
        json_reply({"error": {"message": "upstream overloaded", "type": "server_error"}}),
        "openai:m reported an error: upstream overloaded (gave up after 3 attempts)",
        id="error-object",
    ),
]


@pytest.mark.parametrize(("reply", "expected"), BAD_BODIES)
def test_a_200_that_is_not_a_usable_completion_is_a_model_error(
    tmp_path: Path, reply: Reply, expected: str
) -> None:
    with FakeOpenAIServer([reply] * 3) as server:
        result, events, _ = run_agent(server.base_url, tmp_path / "t.jsonl")
    assert_model_error(result, expected)
    assert [e["type"] for e in events] == ["run_start", "request", "warning", "stop"]
    failure = events[2]
    assert failure["kind"] == "model_error" and failure["message"] == result.error
    assert failure["request"]["messages"][-1]["content"] == "look up a"  # as it was sent


def test_a_message_with_neither_content_nor_calls_is_a_format_error(tmp_path: Path) -> None:
    empty = json_reply(with_message({"role": "assistant"}))
    with FakeOpenAIServer([empty, empty, completion("found it")]) as server:
        result, events, _ = run_agent(server.base_url, tmp_path / "t.jsonl")
    assert result.stop_reason == StopReason.FINAL_ANSWER and result.answer == "found it"
    warnings = [e["message"] for e in events if e.get("kind") == "format_error"]
    assert len(warnings) == 2 and all("empty reply" in message for message in warnings)


@pytest.mark.parametrize(
    ("arguments", "observation"),
    [
        ({"key": "a"}, '"output": "A"'),
        (None, "key: Field required"),
        (42, "must be a JSON object, got int"),
        (True, "must be a JSON object, got bool"),
        (["a"], "must be a JSON object, got list"),
    ],
)
@STREAMING
def test_arguments_that_are_not_a_string_reach_the_model_as_an_observation(
    tmp_path: Path, arguments: Any, observation: str, stream: bool
) -> None:
    call = {"index": 0, "id": "c1", "type": "function",
            "function": {"name": "lookup", "arguments": arguments}}  # fmt: skip
    if stream:
        finish = {"index": 0, "delta": {}, "finish_reason": "tool_calls"}
        calls: Reply | dict[str, Any] = sse_reply(
            [{"choices": [{"index": 0, "delta": {"tool_calls": [call]}}]}, {"choices": [finish]}]
        )
        answer = sse_reply([{"choices": [{"index": 0, "delta": {"content": "done"},
                                          "finish_reason": "stop"}]}])  # fmt: skip
    else:
        calls = with_message({"role": "assistant", "content": None, "tool_calls": [call]})
        answer = json_reply(completion("done"))
    with FakeOpenAIServer([calls, answer]) as server:
        result, _, _ = run_agent(server.base_url, tmp_path / "t.jsonl", stream=stream)
        echoed = server.requests[1].json["messages"]
    assert result.answer == "done"
    tool_messages = [m for m in echoed if m["role"] == "tool"]
    assert len(tool_messages) == 1 and tool_messages[0]["tool_call_id"] == "c1"
    assert observation in tool_messages[0]["content"]
    assert echoed[-2]["tool_calls"][0]["function"]["arguments"] in ('{"key": "a"}', "{}")


@pytest.mark.parametrize("ids", [["c1", "c1"], [None, None]], ids=["duplicate", "missing"])
def test_duplicate_or_missing_call_ids_still_pair_every_result(
    tmp_path: Path, ids: list[str | None]
) -> None:
    calls = [tool_call("lookup", {"key": key}, id=i) for key, i in zip("ab", ids, strict=True)]
    for call in calls:
        if call.get("id") is None:
            call.pop("id", None)
    message = {"role": "assistant", "content": None, "tool_calls": calls}
    with FakeOpenAIServer([json_reply(with_message(message)), completion("done")]) as server:
        result, _, _ = run_agent(server.base_url, tmp_path / "t.jsonl")
        echoed = server.requests[1].json["messages"]
    assert result.answer == "done" and result.tool_calls == 2
    sent_ids = [call["id"] for call in echoed[-3]["tool_calls"]]
    assert [m["tool_call_id"] for m in echoed[-2:]] == sent_ids
    assert [json.loads(m["content"])["output"] for m in echoed[-2:]] == ["A", "B"]


@STREAMING
def test_a_huge_reply_is_read_whole(tmp_path: Path, stream: bool) -> None:
    text = "y" * 3_000_000
    if stream:
        delta = {"index": 0, "delta": {"content": text}, "finish_reason": "stop"}
        reply: Reply | dict[str, Any] = sse_reply([{"choices": [delta]}])
    else:
        reply = completion(text)
    with FakeOpenAIServer([reply]) as server:
        result, _, _ = run_agent(server.base_url, tmp_path / "t.jsonl", stream=stream)
    assert result.stop_reason == StopReason.FINAL_ANSWER and result.answer == text


@pytest.mark.parametrize(
    "usage",
    [None, {"prompt_tokens": "12", "completion_tokens": "x"}, "lots", {"prompt_tokens": -3}],
)
def test_usage_missing_or_malformed_counts_what_it_can(tmp_path: Path, usage: Any) -> None:
    body = completion("ok")
    body["usage"] = usage
    with FakeOpenAIServer([body]) as server:
        result, _, _ = run_agent(server.base_url, tmp_path / "t.jsonl")
    assert result.answer == "ok"
    expected = 12 if isinstance(usage, dict) and usage.get("prompt_tokens") == "12" else 0
    assert (result.usage.input_tokens, result.usage.output_tokens) == (expected, 0)


# --- streamed requests answered with something other than a stream ------------------------------


def test_a_json_body_answering_a_streamed_request_is_used(tmp_path: Path) -> None:
    shown: list[str] = []
    with FakeOpenAIServer([completion("plain answer")]) as server:
        result, _, _ = run_agent(
            server.base_url, tmp_path / "t.jsonl", stream=True, on_text=shown.append
        )
    assert result.answer == "plain answer" and shown == ["plain answer"]
    assert len(server.requests) == 1


def test_an_html_page_answering_a_streamed_request_says_what_came(tmp_path: Path) -> None:
    page = Reply(body=b"<html>captive portal: log in</html>", content_type="text/html")
    with FakeOpenAIServer([page] * 3) as server:
        result, _, _ = run_agent(server.base_url, tmp_path / "t.jsonl", stream=True)
    assert_model_error(result, "text/html", "not an event stream", "captive portal")
    assert len(server.requests) == 1


def test_a_stream_of_only_keep_alives_and_an_empty_choices_chunk_is_retried(
    tmp_path: Path,
) -> None:
    keep_alive = ": keep-alive\n\n"
    with FakeOpenAIServer([sse_reply([keep_alive, {"choices": []}])] * 3) as server:
        result, _, _ = run_agent(server.base_url, tmp_path / "t.jsonl", stream=True)
    assert_model_error(result, "without a finish reason after 1 chunks", "gave up after 3")


def test_without_a_time_limit_each_read_still_has_the_sdks_timeout() -> None:
    import httpx2

    timeouts: list[dict[str, Any]] = []

    def handle(request: httpx2.Request) -> httpx2.Response:
        timeouts.append(request.extensions["timeout"])
        return httpx2.Response(200, json=completion("ok"))

    client = httpx2.Client(transport=httpx2.MockTransport(handle))
    model = OpenAIChatModel(model="m", base_url="http://127.0.0.1:9/v1", http_client=client)
    result = Agent(model, [lookup], limits=Limits(max_seconds=None)).run("look up a")
    assert result.answer == "ok"
    assert timeouts[0]["read"] == 600 and timeouts[0]["connect"] == 5.0
