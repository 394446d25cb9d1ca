"""``--tool-search native`` on ``reactloop run``, ``tools`` and ``resume``: the provider's own
tool search through the command line, against the fake Anthropic server (which searches the
request's deferred tools and refuses what the API refuses); a model without one gets the
harness's pair, and a line says so."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from helpers import invoke, script
from reactloop import read_journal
from reactloop.testing import (
    FakeAnthropicServer,
    FakeResponsesServer,
    function_call,
    message,
    response,
    tool_use,
)
from reactloop.testing.anthropic_tool_search import search_blocks, searching

MODEL = "anthropic:claude-test"
NATIVE = ("--defer-tools", "lookup", "--tool-search", "native")


def notes(tmp_path: Path) -> Path:
    path = tmp_path / "notes.json"
    path.write_text(json.dumps({"price": "7", "guests": "10"}))
    return path


def run(tmp_path: Path, server: FakeAnthropicServer, *flags: str) -> tuple[int, str, str, Path]:
    trace = tmp_path / "run.jsonl"
    code, out, err = invoke(
        "run", "What does tea cost?", "--model", MODEL, "--base-url", server.base_url,
        "--notes", str(notes(tmp_path)), "--trace", str(trace), *flags,
    )  # fmt: skip
    return code, out, err, trace


def tool_names(body: dict[str, Any]) -> list[str]:
    return [str(t["name"]) for t in body["tools"]]


def test_run_sends_the_deferred_tools_to_the_providers_search(tmp_path: Path) -> None:
    responder = searching("read a note by its key", {"key": "price"}, answer="7")
    with FakeAnthropicServer(responder=responder) as server:
        code, out, err, trace = run(tmp_path, server, *NATIVE)
    assert code == 0 and out.strip() == "7", err
    first, second = (r.json for r in server.requests)
    assert tool_names(first) == ["calculator", "lookup", "tool_search_tool_bm25"]
    assert [t["name"] for t in first["tools"] if t.get("defer_loading")] == ["lookup"]
    assert second["tools"] == first["tools"]
    events = read_journal(trace)
    start = next(e for e in events if e["type"] == "run_start")
    assert start["config"]["tool_search"] == "native"
    search = next(e for e in events if e["type"] == "tool_search")
    assert search["by"] == "provider" and search["revealed"] == ["lookup"]
    result = next(e["result"] for e in events if e["type"] == "tool_result")
    assert result["name"] == "lookup" and result["output"] == "7"


def test_run_sends_them_to_the_responses_apis_hosted_search(tmp_path: Path) -> None:
    searched = response(calls=[function_call("lookup", {"key": "price"})])
    loaded = {"type": "function", "name": "lookup", "parameters": {"type": "object"}}
    searched["output"][:0] = [
        {"type": "tool_search_call", "id": "tsc_1", "call_id": "ts_1", "execution": "server",
         "arguments": {"query": "read a note"}, "status": "completed"},
        {"type": "tool_search_output", "id": "tso_1", "call_id": "ts_1", "execution": "server",
         "status": "completed", "tools": [loaded]},
    ]  # fmt: skip
    trace = tmp_path / "run.jsonl"
    with FakeResponsesServer([searched, response("7")]) as server:
        code, out, err = invoke(
            "run", "What does tea cost?", "--model", "responses:gpt-test", "--base-url",
            server.base_url, "--notes", str(notes(tmp_path)), "--trace", str(trace), *NATIVE,
        )  # fmt: skip
    assert code == 0 and out.strip() == "7", err
    first, second = (r.json for r in server.requests)
    assert [t.get("name") for t in first["tools"]] == ["calculator", "lookup", None]
    assert first["tools"][1]["defer_loading"] is True
    assert first["tools"][-1] == {"type": "tool_search"} and second["tools"] == first["tools"]
    search = next(e for e in read_journal(trace) if e["type"] == "tool_search")
    assert search["by"] == "provider" and search["revealed"] == ["lookup"]


def test_the_default_is_the_harnesss_pair_on_a_claude_without_tool_search(
    tmp_path: Path,
) -> None:
    call = tool_use("search_tools", {"queries": ["read a note"]})
    with FakeAnthropicServer([message(content=[call]), message("7")]) as server:
        code, _, err, trace = run(tmp_path, server, "--defer-tools", "lookup")
    assert code == 0, err
    assert tool_names(server.requests[0].json) == ["calculator", "search_tools", "call_tool"]
    start = next(e for e in read_journal(trace) if e["type"] == "run_start")
    assert start["config"]["tool_search"] == "auto"
    assert start["config"]["tool_search_used"] == {"mode": "own", "deferred": ["lookup"]}


def test_native_asked_of_a_model_without_a_search_says_so(tmp_path: Path) -> None:
    model = script(tmp_path, ["Finish[7]"])
    trace = tmp_path / "t.jsonl"
    code, _, err = invoke(
        "run", "q", "--model", model, "--defer-tools", "calc*", "--tool-search", "native",
        "--trace", str(trace),
    )  # fmt: skip
    assert code == 0, err
    assert (
        "--tool-search native: scripted:script.json has no tool search of its own (anthropic: and "
        "responses: models do); the harness's search_tools and call_tool serve"
    ) in err.replace("\n", " ")
    start = next(e for e in read_journal(trace) if e["type"] == "run_start")
    assert [t["name"] for t in start["tools"]] == ["search_tools", "call_tool"]


def test_native_with_nothing_deferred_says_so(tmp_path: Path) -> None:
    with FakeAnthropicServer([message("7")]) as server:
        code, _, err, _ = run(tmp_path, server, "--tool-search", "native")
    assert code == 0, err
    assert "no tool is deferred (--defer-tools PATTERN): none is searched" in err
    assert tool_names(server.requests[0].json) == ["calculator", "lookup"]


def cut_after_first_result(trace: Path) -> None:
    """The journal as a process killed right after the first tool result would leave it."""
    lines = trace.read_text().splitlines(keepends=True)
    first = next(i for i, line in enumerate(lines) if json.loads(line).get("type") == "tool_result")
    trace.write_text("".join(lines[: first + 1]))


@pytest.mark.parametrize("how", ["stopped", "killed"])
def test_resume_rebuilds_the_providers_search_and_what_it_revealed(
    tmp_path: Path, how: str
) -> None:
    searched = [*search_blocks("read a note", ["lookup"]), tool_use("lookup", {"key": "price"})]
    replies = [
        message(content=searched),
        message(content=[tool_use("calculator", {"expression": "7*10"})]),  # over the limit
        message(content=[tool_use("lookup", {"key": "guests"})]),
        message("70"),
    ]
    with FakeAnthropicServer(replies) as server:
        code, out, err, trace = run(tmp_path, server, *NATIVE, "--max-tool-calls", "1", "--json")
        assert json.loads(out)["stop_reason"] == "max_tool_calls", err
        if how == "killed":
            cut_after_first_result(trace)
        sent = len(server.requests)
        code, out, err = invoke(
            "resume", str(trace), "--base-url", server.base_url, "--notes",
            str(tmp_path / "notes.json"), "--tool-search", "native", "--max-tool-calls", "6",
            "--json",
        )  # fmt: skip
        assert code == 0 and json.loads(out)["answer"] == "70", err
    resume = next(e for e in read_journal(trace) if e["type"] == "resume")
    assert resume["why"] == ("no_stop" if how == "killed" else "max_tool_calls")
    resumed = server.requests[sent].json
    assert tool_names(resumed) == ["calculator", "lookup", "tool_search_tool_bm25"]
    assert "search_tools" not in tool_names(resumed)
    echoed = [b["type"] for b in resumed["messages"][1]["content"]]
    assert echoed[:2] == ["server_tool_use", "tool_search_tool_result"]
    results = [e["result"] for e in read_journal(trace) if e["type"] == "tool_result"]
    guests = next(r for r in results if r["name"] == "lookup" and r.get("output") == "10")
    assert guests["ok"]  # revealed before the stop: served, not refused, after the resume


def test_resume_refuses_a_tool_search_other_than_the_runs(tmp_path: Path) -> None:
    replies = [
        message(
            content=[
                *search_blocks("read a note", ["lookup"]),
                tool_use("lookup", {"key": "price"}),
            ]
        ),
        message(content=[tool_use("calculator", {"expression": "7*10"})]),
    ]
    with FakeAnthropicServer(replies) as server:
        run(tmp_path, server, *NATIVE, "--max-tool-calls", "1", "--json")
        base = ("resume", str(trace := tmp_path / "run.jsonl"), "--base-url", server.base_url,
                "--notes", str(tmp_path / "notes.json"))  # fmt: skip
        before = trace.read_bytes()
        code, _, err = invoke(*base)
        assert code == 2
        assert "the run chose its tool search with --tool-search native: give it again" in err
        code, _, err = invoke(*base, "--tool-search", "own")
        assert code == 2 and "(--tool-search native)" in err
        assert trace.read_bytes() == before
        tampered = before.replace(b'"tool_search":"native"', b'"tool_search":["x"]', 1)
        assert tampered != before
        trace.write_bytes(tampered)
        code, _, err = invoke(*base, "--tool-search", "native")
        assert code == 2 and "the journal's tool search is not one of auto, own, native" in err


def test_tools_shows_the_providers_array(tmp_path: Path) -> None:
    flags = ("tools", "--notes", str(notes(tmp_path)), *NATIVE)
    code, out, err = invoke(*flags, "--model", MODEL)
    assert code == 0, err
    shown = json.loads(out)
    assert [t["name"] for t in shown] == ["calculator", "lookup", "tool_search_tool_bm25"]
    assert shown[1]["defer_loading"] is True and shown[-1]["type"].startswith("tool_search_tool")
    assert "1 deferred tools (lookup) sent with defer_loading" in err
    code, out, err = invoke(*flags, "--model", "responses:gpt-test")
    assert code == 0, err
    assert json.loads(out)[-1] == {"type": "tool_search"}
    code, out, err = invoke(*flags, "--model", "local:SmolLM2-135M-Instruct-Q8_0.gguf")
    assert code == 0, err
    assert [t["name"] for t in json.loads(out)] == ["calculator", "search_tools", "call_tool"]
    assert "has no tool search of its own" in err and "wait for search_tools" in err
    code, _, err = invoke(*flags)
    assert code == 2 and "--tool-search native needs --model" in err


def test_chat_takes_it_as_run_does(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from reactloop.cli import main

    responder = searching("read a note by its key", {"key": "price"}, answer="7")
    with FakeAnthropicServer(responder=responder) as server:
        done = CliRunner().invoke(
            main,
            ["chat", "--model", MODEL, "--base-url", server.base_url, "--notes",
             str(notes(tmp_path)), "--no-trace", *NATIVE],
            input="What does tea cost?\n",
        )  # fmt: skip
    assert done.exit_code == 0, done.stderr
    assert tool_names(server.requests[0].json)[-1] == "tool_search_tool_bm25"
    assert "7" in done.stdout
