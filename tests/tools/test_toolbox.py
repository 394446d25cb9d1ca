"""Every way a tool call can go wrong becomes an observation; nothing raises."""

from __future__ import annotations

import json
import threading
from typing import Literal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reactloop import Toolbox, ToolCall, ToolError, tool
from reactloop.loop.runtime.executor import run_now
from reactloop.tools.output_text import cut_head_tail


@tool(read_only=True)
def add(a: int, b: int = 0) -> int:
    """Add two integers."""
    return a + b


@tool
def shout(text: str, style: Literal["upper", "lower"] = "upper") -> str:
    """Change the case of a text."""
    return text.upper() if style == "upper" else text.lower()


@tool
def ping() -> str:
    """Answer pong."""
    return "pong"


@tool
def broken(x: int) -> int:
    """Raise."""
    raise ValueError("bad x")


@tool
def refuses(x: int) -> int:
    """Raise a ToolError."""
    raise ToolError("x must be prime")


@tool
def big(n: int) -> str:
    """A long text."""
    return "".join(str(i % 10) for i in range(n))


BOX = Toolbox([add, shout, ping, broken, refuses, big], max_output_chars=100)


def run(name: str, arguments: str) -> dict:
    result = BOX.execute(ToolCall(id="c1", name=name, arguments=arguments))
    body = json.loads(result.to_content())
    assert body["ok"] is result.ok
    return body


def test_success_is_structured_json():
    assert run("add", '{"a": 2, "b": 3}') == {"ok": True, "output": 5}


def test_unknown_tool_lists_the_available_ones():
    body = run("nope", "{}")
    assert body["ok"] is False
    assert "unknown tool 'nope'" in body["error"]
    for name in ("add", "shout", "ping"):
        assert name in body["error"]


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        ('{"a": 2', "not valid JSON"),
        ("[1, 2]", "must be a JSON object"),
        ('"2"', "must be a JSON object"),
        ("{}", "a: Field required"),
        ('{"a": "two"}', "a: Input should be a valid integer"),
        ('{"a": 1, "c": 2}', "c: Extra inputs are not permitted"),
    ],
)
def test_bad_arguments_are_reported_with_the_reason(arguments, expected):
    body = run("add", arguments)
    assert body["ok"] is False
    assert expected in body["error"]


def test_enum_violation_is_reported():
    body = run("shout", '{"text": "a", "style": "loud"}')
    assert "style" in body["error"] and "upper" in body["error"]


def test_empty_arguments_for_a_tool_without_parameters():
    assert run("ping", "") == {"ok": True, "output": "pong"}
    assert run("ping", "  ") == {"ok": True, "output": "pong"}


def test_exception_inside_a_tool_is_an_observation():
    assert run("broken", '{"x": 1}') == {"ok": False, "error": "ValueError: bad x"}


def test_tool_error_shows_only_its_message():
    assert run("refuses", '{"x": 4}') == {"ok": False, "error": "x must be prime"}


def test_long_output_keeps_head_and_tail_and_spills_to_disk(tmp_path):
    box = Toolbox([big], max_output_chars=100, spill_dir=tmp_path)
    result = box.execute(ToolCall(id="c/1", name="big", arguments='{"n": 1000}'))
    full = "".join(str(i % 10) for i in range(1000))
    assert result.truncated and len(result.output) <= 100
    assert result.output.startswith(full[:20]) and result.output.endswith(full[-20:])
    assert "characters cut" in result.output
    body = json.loads(result.to_content())
    assert body["truncated"] is True
    with open(body["full_output"], encoding="utf-8") as handle:
        assert handle.read() == full


def test_output_that_cannot_be_saved_is_still_cut_and_sent(tmp_path):
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("x", encoding="utf-8")
    box = Toolbox([big], max_output_chars=100, spill_dir=blocker / "outputs")
    result = box.execute(ToolCall(id="c1", name="big", arguments='{"n": 1000}'))
    assert result.ok and result.truncated and result.full_output_path is None
    assert "full_output" not in json.loads(result.to_content())


def test_output_with_a_lone_surrogate_is_saved_escaped(tmp_path):
    @tool
    def undecodable() -> str:
        """Text decoded from bytes that were not UTF-8."""
        return b"\xff".decode("utf-8", "surrogateescape") * 200

    box = Toolbox([undecodable], max_output_chars=50, spill_dir=tmp_path)
    result = box.execute(ToolCall(id="c1", name="undecodable", arguments="{}"))
    assert result.full_output_path is not None
    with open(result.full_output_path, encoding="utf-8") as handle:
        assert handle.read() == "\\udcff" * 200


def test_read_only_calls_run_concurrently():
    barrier = threading.Barrier(2, timeout=10)

    @tool(read_only=True)
    def meet(who: str) -> str:
        """Wait for the other call."""
        barrier.wait()  # raises BrokenBarrierError if the calls ran one after another
        return who

    box = Toolbox([meet])
    calls = [
        ToolCall(id=str(i), name="meet", arguments=json.dumps({"who": w}))
        for i, w in enumerate("ab")
    ]
    results = run_now(box, calls)
    assert [r.output for r in results] == ["a", "b"]


def test_calls_with_side_effects_run_in_order():
    order: list[int] = []
    active = threading.Lock()

    @tool
    def step(n: int) -> int:
        """Record n."""
        assert active.acquire(blocking=False), "two side-effecting calls overlapped"
        order.append(n)
        active.release()
        return n

    box = Toolbox([step])
    calls = [ToolCall(id=str(n), name="step", arguments=json.dumps({"n": n})) for n in range(5)]
    assert [r.output for r in run_now(box, calls)] == [0, 1, 2, 3, 4]
    assert order == [0, 1, 2, 3, 4]


def test_duplicate_tool_names_are_refused():
    with pytest.raises(ValueError, match="two tools are named 'add'"):
        Toolbox([add, add])


@given(name=st.text(max_size=20), arguments=st.text(max_size=200))
@settings(max_examples=300, deadline=None)
def test_arbitrary_calls_never_raise(name, arguments):
    result = BOX.execute(ToolCall(id="h", name=name, arguments=arguments))
    json.loads(result.to_content())


@given(text=st.text(max_size=500), limit=st.integers(min_value=40, max_value=300))
def test_cut_head_tail_respects_the_limit(text, limit):
    cut = cut_head_tail(text, limit)
    assert len(cut) <= max(limit, len(text) if len(text) <= limit else limit)
    if len(text) <= limit:
        assert cut == text
