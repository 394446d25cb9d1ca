"""Resuming runs that used MCP servers: ``reactloop resume`` starts the recorded servers again when
the command line gives them again (``--mcp``, ``--mcp-url``, ``--mcp-config``), as ``reactloop
run`` started them, keeps them for the resumed run and stops them after; the resumed run has
exactly the recorded tools, or is refused in one line (exit 2, the journal byte for byte as it
was) unless ``--force``. An ``Agent`` built on ``open_mcp_tools`` resumes the same way from
Python. Real servers: ``tests/tools/mcp``'s ``misbehaving_server.py`` (``echo`` is annotated
``readOnlyHint``, ``hang`` blocks until killed) and ``schema_server.py`` (the tools of a JSON
file, changed between the run and its resume).
"""

from __future__ import annotations

import json
import os
import select
import shlex
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from helpers import reactloop

pytest.importorskip("mcp", reason="the MCP tests need the mcp extra: pip install 'reactloop[mcp]'")

from reactloop import Agent, Journal, Limits, ScriptedModel, read_journal
from reactloop.errors import UsageError
from reactloop.tools.mcp import ServerConfig, open_mcp_tools

MCP_TESTS = Path(__file__).parents[1] / "tools" / "mcp"
MISBEHAVING = MCP_TESTS / "misbehaving_server.py"
SCHEMAS = MCP_TESTS / "schema_server.py"
UNCERTAIN = "may already have run"
CITY = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
NOTE = {"type": "object", "properties": {"text": {"type": "string"}}}
SUM = {"type": "object", "properties": {"a": {"type": "number"}}}


def call(name: str, call_id: str, **arguments: Any) -> dict[str, Any]:
    return {"tool_calls": [{"id": call_id, "name": name, "arguments": arguments}]}


def write_script(tmp_path: Path, turns: list[Any]) -> Path:
    script = tmp_path / "script.json"
    script.write_text(json.dumps(turns), encoding="utf-8")
    return script


def pids(starts: Path) -> list[int]:
    return [int(line) for line in starts.read_text().split()] if starts.exists() else []


def gone(pid: int, timeout: float = 10.0) -> bool:
    """Wait (on a pidfd, no polling) until the process has exited."""
    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        return True
    try:
        ready, _, _ = select.select([fd], [], [], timeout)
    finally:
        os.close(fd)
    return bool(ready)


def wait_for_call(fifo: Path) -> None:
    """Block until the server has the ``hang`` call (it opens the FIFO to write first)."""
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    try:
        ready, _, _ = select.select([reader], [], [], 30)
        assert ready, "the hang call never reached the server"
    finally:
        os.close(reader)


def results(events: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {e["result"]["call_id"]: e for e in events if e["type"] == "tool_result"}


def ends_once(events: list[dict[str, Any]], resumes: int = 1) -> None:
    """One run, resumed ``resumes`` times, that ends with one final ``stop``: every earlier
    ``stop`` is superseded by the ``resume`` right after it."""
    kinds = [e["type"] for e in events]
    assert kinds.count("run_start") == 1 and kinds.count("resume") == resumes, kinds
    assert events[-1]["type"] == "stop" and events[-1]["stop_reason"] == "final_answer"
    for index, kind in enumerate(kinds[:-1]):
        assert kind != "stop" or kinds[index + 1] == "resume", kinds


def test_a_killed_mcp_run_resumes_with_the_servers_tools(tmp_path: Path) -> None:
    """SIGKILL ``reactloop run`` while the server holds a call; the resume starts the server
    again, the uncertain call (no ``readOnlyHint``) is not run again, the next call goes to
    the new server, and both servers are gone at the end."""
    starts, fifo = tmp_path / "starts.txt", tmp_path / "hang.fifo"
    os.mkfifo(fifo)
    server = shlex.join(
        [sys.executable, str(MISBEHAVING), "--starts", str(starts), "--hang-fifo", str(fifo)]
    )
    turns = [
        call("echo", "e1", text="before"),
        call("hang", "h1"),
        call("echo", "e2", text="after"),
    ]
    script = write_script(tmp_path, [*turns, "done"])
    trace = tmp_path / "run.jsonl"
    command = [sys.executable, "-m", "reactloop", "run", "q", "--model", f"scripted:{script}"]
    command += ["--mcp", server, "--trace", str(trace), "--json"]
    process = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=tmp_path
    )
    try:
        wait_for_call(fifo)
        process.send_signal(signal.SIGKILL)
        process.communicate(timeout=30)
    finally:
        process.kill()
    assert process.returncode == -signal.SIGKILL
    (first,) = pids(starts)
    assert gone(first)  # the reaper stops the server when its harness dies
    killed = read_journal(trace)
    assert not any(e["type"] == "stop" for e in killed)
    assert killed[-1]["type"] == "tool_start" and killed[-1]["call_id"] == "h1"

    resumed = reactloop("resume", str(trace), "--mcp", server, "--json", cwd=tmp_path)
    assert resumed.returncode == 0, resumed.stderr
    assert json.loads(resumed.stdout)["answer"] == "done"
    events = read_journal(trace)
    ends_once(events)
    assert [e["type"] for e in events].count("stop") == 1
    (resume,) = [e for e in events if e["type"] == "resume"]
    assert [(c["call_id"], c["state"]) for c in resume["calls"]] == [("h1", "uncertain")]
    done = results(events)
    assert done["h1"]["result"]["executed"] is False and UNCERTAIN in done["h1"]["content"]
    assert done["e2"]["result"]["ok"] and "after" in done["e2"]["content"]
    assert done["e2"]["result"]["executed"] is True
    first_again, second = pids(starts)
    assert first_again == first and second != first  # a server of the resume's own
    assert gone(second)  # stopped when the resumed run ended


def schema_run(tmp_path: Path, schemas: dict[str, Any]) -> tuple[Path, Path, list[str]]:
    """A ``reactloop run --tools calculator --mcp 'schema_server.py FILE'`` stopped by
    ``--max-steps 1`` after its first call; the journal, the schema file, the common options."""
    tools_file = tmp_path / "tools.json"
    tools_file.write_text(json.dumps(schemas), encoding="utf-8")
    server = shlex.join([sys.executable, str(SCHEMAS), str(tools_file)])
    turns = [call("where", "w1", city="Oslo"), call("note", "n1", text="seen"), "noted"]
    script = write_script(tmp_path, turns)
    trace = tmp_path / "run.jsonl"
    first = reactloop(
        "run", "q", "--model", f"scripted:{script}", "--tools", "calculator", "--mcp", server,
        "--trace", str(trace), "--max-steps", "1", "--json", cwd=tmp_path,
    )  # fmt: skip
    assert json.loads(first.stdout)["stop_reason"] == "max_model_calls", first.stderr
    return trace, tools_file, ["--max-steps", "5", "--mcp", server]


SCHEMA_TOOLS = {"where": CITY, "note": NOTE, "calculator": SUM}


def test_a_run_stopped_by_its_step_limit_goes_on_with_the_mcp_tools(tmp_path: Path) -> None:
    trace, _, raised = schema_run(tmp_path, SCHEMA_TOOLS)
    recorded = [t["name"] for t in read_journal(trace)[0]["tools"]]
    # the server's calculator is renamed beside the built-in one, on resume as in the run
    assert recorded.count("calculator") == 1 and len(recorded) == 4
    resumed = reactloop("resume", str(trace), *raised, "--json", cwd=tmp_path)
    assert resumed.returncode == 0, resumed.stderr
    payload = json.loads(resumed.stdout)
    assert payload["answer"] == "noted" and payload["model_calls"] == 3
    events = read_journal(trace)
    ends_once(events)
    done = results(events)
    reached = json.loads(json.loads(done["n1"]["content"])["output"])
    assert reached == {"tool": "note", "arguments": {"text": "seen"}}  # through the server


@pytest.mark.parametrize(
    ("changed", "said"),
    [
        ({"where": CITY, "calculator": SUM}, "missing note"),
        ({**SCHEMA_TOOLS, "extra": NOTE}, "added extra"),
        ({**SCHEMA_TOOLS, "where": NOTE}, "another schema where"),
    ],
    ids=["missing", "added", "schema"],
)
def test_a_changed_server_tool_set_is_refused_unless_forced(
    tmp_path: Path, changed: dict[str, Any], said: str
) -> None:
    trace, tools_file, raised = schema_run(tmp_path, SCHEMA_TOOLS)
    before = trace.read_bytes()
    tools_file.write_text(json.dumps(changed), encoding="utf-8")
    refused = reactloop("resume", str(trace), *raised, cwd=tmp_path)
    assert refused.returncode == 2, refused.stderr
    (line,) = refused.stderr.strip().splitlines()
    assert line.startswith("reactloop: error: cannot resume") and "the tools differ" in line
    assert said in line and "--force" in line
    assert trace.read_bytes() == before  # nothing in it changed
    assert not trace.with_name(trace.name + ".torn").exists()
    forced = reactloop("resume", str(trace), *raised, "--force", "--json", cwd=tmp_path)
    assert forced.returncode == 0, forced.stderr
    assert json.loads(forced.stdout)["answer"] == "noted"
    events = read_journal(trace)
    ends_once(events)
    note = results(events)["n1"]["result"]
    assert note["ok"] is ("note" in changed)  # a missing tool: the model is told so


def test_a_server_that_does_not_start_again_is_one_line_and_the_journal_stays(
    tmp_path: Path,
) -> None:
    trace, tools_file, raised = schema_run(tmp_path, SCHEMA_TOOLS)
    before = trace.read_bytes()
    tools_file.unlink()  # the server cannot read its tools: it exits at once
    refused = reactloop("resume", str(trace), *raised, cwd=tmp_path)
    assert refused.returncode == 2, refused.stderr
    (line,) = refused.stderr.strip().splitlines()
    assert line.startswith(f"reactloop: error: cannot resume {trace}: MCP server"), line
    assert "could not start" in line
    assert trace.read_bytes() == before


def test_a_damaged_mcp_record_is_one_line_and_the_journal_stays(tmp_path: Path) -> None:
    trace, _, raised = schema_run(tmp_path, SCHEMA_TOOLS)
    lines = trace.read_bytes().split(b"\n")
    start = json.loads(lines[1])
    start["config"]["mcp"]["stdio"] = "not a list"
    lines[1] = json.dumps(start).encode()
    trace.write_bytes(b"\n".join(lines))
    before = trace.read_bytes()
    refused = reactloop("resume", str(trace), *raised, cwd=tmp_path)
    assert refused.returncode == 2 and "mcp stdio is not a list" in refused.stderr
    assert len(refused.stderr.strip().splitlines()) == 1
    assert trace.read_bytes() == before


def cut_after_start(path: Path, call_id: str, into: Path) -> Path:
    """The journal as a kill right after ``call_id``'s ``tool_start`` leaves it."""
    lines = path.read_bytes().splitlines(keepends=True)
    at = next(
        i
        for i, line in enumerate(lines[1:], 1)
        if json.loads(line).get("type") == "tool_start" and json.loads(line)["call_id"] == call_id
    )
    into.write_bytes(b"".join(lines[: at + 1]))
    return into


def test_an_agent_on_open_mcp_tools_resumes_inside_a_with_of_its_own(tmp_path: Path) -> None:
    """From Python: the resumed ``Agent`` gets the tools of the same servers, opened again.
    An uncertain call runs again when its tool is annotated ``readOnlyHint`` (``echo``), not
    otherwise (``slow``); without the MCP tools the resume is refused, the journal unchanged."""
    starts = tmp_path / "starts.txt"
    config = ServerConfig(
        name="bad", command=sys.executable, args=(str(MISBEHAVING), "--starts", str(starts))
    )
    turns = [call("echo", "e1", text="one"), call("slow", "s1", seconds=0)]
    turns += [call("echo", "e2", text="two"), "done"]
    full = tmp_path / "full.jsonl"
    with open_mcp_tools(servers=[config]) as tools, Journal(full) as journal:
        limits = Limits(max_seconds=None)
        first = Agent(ScriptedModel(turns), tools, journal=journal, limits=limits).run("q")
    assert first.answer == "done"
    reference = [m.to_dict() for m in first.history]

    again = cut_after_start(full, "e2", tmp_path / "read_only.jsonl")
    with open_mcp_tools(servers=[config]) as tools:
        result = Agent(ScriptedModel(turns), tools).resume(again)
    assert result.answer == "done" and [m.to_dict() for m in result.history] == reference
    assert results(read_journal(again))["e2"]["result"]["executed"] is True

    uncertain = cut_after_start(full, "s1", tmp_path / "side_effect.jsonl")
    before = uncertain.read_bytes()
    with pytest.raises(UsageError, match="the tools differ: missing echo, pid"):
        Agent(ScriptedModel(turns), []).resume(uncertain)
    assert uncertain.read_bytes() == before
    with open_mcp_tools(servers=[config]) as tools:
        result = Agent(ScriptedModel(turns), tools).resume(uncertain)
    assert result.answer == "done"
    done = results(read_journal(uncertain))
    assert done["s1"]["result"]["executed"] is False and UNCERTAIN in done["s1"]["content"]
    assert done["e2"]["result"]["executed"] is True
    assert len(pids(starts)) == 3 and all(gone(pid) for pid in pids(starts))


def echo_run(tmp_path: Path, *mcp: str) -> Path:
    """A ``reactloop run`` with these MCP options, stopped by ``--max-steps 1`` after its first
    ``echo``; its journal."""
    turns = [call("echo", "e1", message="one"), call("echo", "e2", message="two"), "done"]
    script = write_script(tmp_path, turns)
    trace = tmp_path / "run.jsonl"
    first = reactloop(
        "run", "q", "--model", f"scripted:{script}", *mcp, "--trace", str(trace),
        "--max-steps", "1", "--json", cwd=tmp_path,
    )  # fmt: skip
    assert json.loads(first.stdout)["stop_reason"] == "max_model_calls", first.stderr
    return trace


def test_the_servers_of_an_mcp_config_file_are_started_again(tmp_path: Path) -> None:
    starts = tmp_path / "starts.txt"
    args = [str(MISBEHAVING), "--starts", str(starts)]
    servers = {"bad": {"command": sys.executable, "args": args}}
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps({"mcpServers": servers}), encoding="utf-8")
    turns = [call("echo", "e1", text="one"), call("echo", "e2", text="two"), "done"]
    trace = tmp_path / "run.jsonl"
    first = reactloop(
        "run", "q", "--model", f"scripted:{write_script(tmp_path, turns)}", "--mcp-config",
        "mcp.json", "--trace", str(trace), "--max-steps", "1", "--json", cwd=tmp_path,
    )  # fmt: skip
    assert json.loads(first.stdout)["stop_reason"] == "max_model_calls", first.stderr
    before = trace.read_bytes()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    config.rename(tmp_path / "moved.json")
    given = ["--max-steps", "5", "--mcp-config", str(config)]
    refused = reactloop("resume", str(trace), *given, cwd=elsewhere)
    assert refused.returncode == 2 and "MCP config not found" in refused.stderr
    assert len(refused.stderr.strip().splitlines()) == 1 and trace.read_bytes() == before
    (tmp_path / "moved.json").rename(config)
    resumed = reactloop("resume", str(trace), *given, "--json", cwd=elsewhere)
    assert resumed.returncode == 0, resumed.stderr
    assert json.loads(resumed.stdout)["answer"] == "done"
    events = read_journal(trace)
    ends_once(events)
    assert "two" in results(events)["e2"]["content"] and len(pids(starts)) == 2


EVERYTHING_JS = MCP_TESTS / "node" / "node_modules" / "@modelcontextprotocol"
EVERYTHING_JS = EVERYTHING_JS / "server-everything" / "dist" / "index.js"


@pytest.fixture
def everything_url() -> Iterator[str]:
    """server-everything's streamable HTTP transport on a free port of 127.0.0.1."""
    if not EVERYTHING_JS.exists():
        pytest.skip("server-everything is not installed: npm ci --prefix tests/tools/mcp/node")
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = int(probe.getsockname()[1])
    server = subprocess.Popen(
        ["node", str(EVERYTHING_JS), "streamableHttp"],
        env={**os.environ, "PORT": str(port)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert server.stderr is not None
        for line in server.stderr:  # it says so on stderr once it listens
            if "listening on port" in line:
                break
        else:
            pytest.fail("server-everything did not start its streamable HTTP transport")
        threading.Thread(target=server.stderr.read, daemon=True).start()  # the pipe never fills
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        server.terminate()
        server.wait(10)


def test_a_server_of_an_mcp_url_is_connected_to_again(tmp_path: Path, everything_url: str) -> None:
    trace = echo_run(tmp_path, "--mcp-url", everything_url)
    given = ["--max-steps", "5", "--mcp-url", everything_url]
    resumed = reactloop("resume", str(trace), *given, "--json", cwd=tmp_path)
    assert resumed.returncode == 0, resumed.stderr
    assert json.loads(resumed.stdout)["answer"] == "done"
    events = read_journal(trace)
    ends_once(events)
    assert "Echo: two" in results(events)["e2"]["content"]
