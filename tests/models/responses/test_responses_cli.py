"""``reactloop run --model responses:…`` and ``--api responses`` against the fake Responses
server: the answer, the console's reasoning line, the journal's response ids, what ``reactloop
cost`` makes of the usage, and the usage errors of ``--server-state`` and ``--api``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from reactloop.cli import main
from reactloop.errors import UsageError
from reactloop.models import ModelSettings, resolve_model
from reactloop.models.responses import from_spec
from reactloop.testing import FakeResponsesServer, function_call, reasoning_item, response
from reactloop.viewer import render_html

USAGE = {
    "input_tokens": 1000,
    "input_tokens_details": {"cached_tokens": 600, "cache_write_tokens": 0},
    "output_tokens": 200,
    "output_tokens_details": {"reasoning_tokens": 150},
}


def script() -> list[Any]:
    thought = reasoning_item("Add two and three.", encrypted_content="enc")
    call = function_call("calculator", {"expression": "2+3"})
    return [response(reasoning=[thought], calls=[call], usage=USAGE), response("5", usage=USAGE)]


def cli_run(tmp_path: Path, *flags: str) -> tuple[Any, FakeResponsesServer, Path]:
    trace = tmp_path / "run.jsonl"
    with FakeResponsesServer(script()) as server:
        result = CliRunner().invoke(
            main, ["run", "2+3?", "--base-url", server.base_url, "--trace", str(trace), *flags]
        )
    return result, server, trace


@pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])
def test_a_responses_run_answers_and_shows_the_reasoning(tmp_path: Path, stream: bool) -> None:
    flags = ["--model", "responses:gpt-5-mini", *(["--stream"] if stream else [])]
    result, server, trace = cli_run(tmp_path, *flags)
    assert result.exit_code == 0, result.stderr
    assert result.stdout.strip() == "5"
    assert "thinking: Add two and three." in result.stderr
    assert all(r.path == "/v1/responses" for r in server.requests)
    assert server.requests[0].json["include"] == ["reasoning.encrypted_content"]
    events = [json.loads(line) for line in trace.read_text().splitlines()]
    turns = [e for e in events if e.get("type") == "turn"]
    assert turns[0]["turn"]["raw_message"]["response_id"] == "resp_1"
    assert events[-1]["type"] == "stop"
    assert "Add two and three." in render_html(trace)  # the viewer shows it too


def test_api_responses_speaks_it_to_an_openai_compatible_provider(tmp_path: Path) -> None:
    result, server, _ = cli_run(tmp_path, "--model", "openai:gpt-5-mini", "--api", "responses")
    assert result.exit_code == 0, result.stderr
    assert server.requests[0].json["model"] == "gpt-5-mini"


def test_server_state_sends_the_previous_response_id(tmp_path: Path) -> None:
    result, server, _ = cli_run(tmp_path, "--model", "responses:gpt-5-mini", "--server-state")
    assert result.exit_code == 0, result.stderr
    assert server.requests[1].json["previous_response_id"] == "resp_1"


@pytest.mark.parametrize(
    ("flags", "said"),
    [
        (["--model", "openai:gpt-4o", "--server-state"], "--server-state is for the Responses"),
        (["--model", "responses:gpt-5", "--api", "chat"], "disagree"),
        (["--model", "anthropic:claude-x", "--api", "responses"], "not an OpenAI-compatible"),
    ],
)
def test_usage_errors_say_what_is_wrong(tmp_path: Path, flags: list[str], said: str) -> None:
    result = CliRunner().invoke(main, ["run", "q", "--no-trace", *flags])
    assert result.exit_code == 2
    assert said in result.stderr


def test_cost_prices_cached_and_reasoning_tokens_of_a_responses_run(tmp_path: Path) -> None:
    result, _, trace = cli_run(tmp_path, "--model", "responses:gpt-5-mini")
    assert result.exit_code == 0, result.stderr
    prices = tmp_path / "prices.json"
    prices.write_text(
        json.dumps({"gpt-5-mini": {"input": 0.25, "cached_input": 0.025, "output": 2}})
    )
    printed = CliRunner().invoke(main, ["cost", str(trace), "--prices", str(prices), "--json"])
    assert printed.exit_code == 0, printed.output
    report = json.loads(printed.output)
    assert report["total"]["cached_tokens"] == 1200 and report["total"]["reasoning_tokens"] == 300
    # two calls of 400 fresh + 600 cached input tokens and 200 output tokens each
    assert report["money"] == pytest.approx(2 * (400 * 0.25 + 600 * 0.025 + 200 * 2) / 1e6)


def test_reasoning_without_a_summary_is_shown_as_redacted(tmp_path: Path) -> None:
    hidden = reasoning_item(encrypted_content="x" * 28)
    call = function_call("calculator", {"expression": "2+3"})
    trace = tmp_path / "run.jsonl"
    with FakeResponsesServer([response(reasoning=[hidden], calls=[call]), "5"]) as server:
        result = CliRunner().invoke(
            main, ["run", "2+3?", "--model", "responses:o4-mini", "--base-url", server.base_url,
                   "--trace", str(trace)],
        )  # fmt: skip
    assert result.exit_code == 0, result.stderr
    placeholder = "redacted by the provider: 28 bytes of opaque data, echoed back unchanged"
    assert f"thinking: {placeholder}" in result.stderr
    assert server.requests[1].json["input"][1]["encrypted_content"] == "x" * 28


def test_a_spec_without_a_name_says_which_to_give_except_for_llamacpp() -> None:
    with pytest.raises(UsageError, match=r"--model responses:gpt-5-mini"):
        resolve_model("responses", ModelSettings())
    settings = ModelSettings(base_url="http://127.0.0.1:8080/v1")
    assert from_spec("llamacpp", "", settings).base_url == "http://127.0.0.1:8080/v1"
