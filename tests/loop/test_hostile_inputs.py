"""One regression test per finding of the hostile-input campaign (issue 12, loop and tools):
nothing a model or a tool does takes ``Agent.run`` down, and the journal keeps all of it."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from reactloop import (
    Agent,
    FunctionModel,
    Journal,
    Limits,
    ModelRequest,
    ModelTurn,
    ScriptedModel,
    StopReason,
    Toolbox,
    ToolCall,
    UsageError,
    read_journal,
    tool,
)
from reactloop.journal.events import Event
from reactloop.loop.loop_guard import canonical_key

DEEP = "[" * 100_000
HUGE = '{"n": ' + "7" * 5000 + "}"


@tool(read_only=True)
def echo(n: Any = 0) -> Any:
    """Return n."""
    return n


def one_call(arguments: Any, name: str = "echo") -> ScriptedModel:
    return ScriptedModel(
        [ModelTurn(tool_calls=(ToolCall(id="a", name=name, arguments=arguments),)), "done"]
    )


def journaled(tmp_path: Path, model: Any, tools: Any, **limits: Any) -> tuple[Any, list[dict]]:
    path = tmp_path / "run.jsonl"
    with Journal(path) as journal:
        result = Agent(model, tools, journal=journal, limits=Limits(**limits)).run("q")
    return result, read_journal(path)


def tool_errors(events: list[dict]) -> list[str]:
    return [e["result"]["error"] for e in events if e["type"] == "tool_result"]


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [(DEEP, "nested deeper than"), (HUGE, "not valid JSON"), ('{"n": ' + DEEP + "}", "nested")],
    ids=["deep", "huge-int", "deep-inside"],
)
def test_arguments_deep_or_with_huge_integers_are_an_observation(
    tmp_path: Path, arguments: str, expected: str
) -> None:
    result, events = journaled(tmp_path, one_call(arguments), [echo])
    assert (result.stop_reason, result.answer) == (StopReason.FINAL_ANSWER, "done")
    (error,) = tool_errors(events)
    assert expected in error
    assert [e["type"] for e in events].count("stop") == 1


@pytest.mark.parametrize("arguments", [DEEP, HUGE])
def test_the_loop_guards_key_never_raises(arguments: str) -> None:
    key = canonical_key(ToolCall(id="a", name="echo", arguments=arguments))
    assert key.startswith("echo\x00")


def test_a_value_nested_990_deep_is_journaled_in_a_safe_form(tmp_path: Path) -> None:
    deep: Any = "bottom"
    for _ in range(990):
        deep = [deep]

    def model(request: ModelRequest) -> ModelTurn:
        return ModelTurn(text="done", raw_message={"deep": deep})

    result, events = journaled(tmp_path, FunctionModel(model), [])
    assert result.stop_reason is StopReason.FINAL_ANSWER
    turn = next(e for e in events if e["type"] == "turn")
    assert "not written: nested too deeply" in json.dumps(turn["turn"]["raw_message"])
    assert events[-1]["type"] == "stop"


def test_a_deep_tool_output_is_an_error_observation(tmp_path: Path) -> None:
    @tool(read_only=True)
    def deep() -> Any:
        """Deep."""
        value: Any = 1
        for _ in range(500):
            value = [value]
        return value

    result, events = journaled(tmp_path, one_call("{}", "deep"), [deep])
    (error,) = tool_errors(events)
    assert "nested deeper than" in error and result.answer == "done"


class _FullDisk:
    """A journal whose writes fail from the first ``turn`` event on, but for the ``stop``."""

    def __init__(self) -> None:
        self.seen: list[str] = []

    def __call__(self, event: Event) -> None:
        self.seen.append(event.type)
        if "turn" in self.seen and event.type != "stop":
            raise OSError(28, "No space left on device")


def test_a_failing_journal_ends_the_run_loudly_and_still_gets_its_stop() -> None:
    journal = _FullDisk()
    model = ScriptedModel([{"tool_calls": [{"name": "echo", "arguments": {"n": 1}}]}, "done"])
    result = Agent(model, [echo], journal=journal).run("q")
    assert result.stop_reason is StopReason.JOURNAL_ERROR
    assert "could not write a turn event" in (result.error or "")
    assert "No space left on device" in (result.error or "")
    assert journal.seen[-1] == "stop" and journal.seen.count("stop") == 1
    assert result.model_calls == 1  # no second model call once the journal failed


def test_a_journal_failing_on_the_last_event_turns_the_answer_into_a_journal_error() -> None:
    journal = _FullDisk()
    result = Agent(ScriptedModel(["42"]), [], journal=journal, protocol="native").run("q")
    assert (result.stop_reason, result.answer) == (StopReason.JOURNAL_ERROR, "42")
    assert "the run itself ended by final_answer" in (result.error or "")


def test_a_failing_plain_observer_is_still_dropped_with_a_warning() -> None:
    def broken(event: Event) -> None:
        raise RuntimeError("observer bug")

    result = Agent(ScriptedModel(["42"]), [], observers=[broken], protocol="native").run("q")
    assert result.stop_reason is StopReason.FINAL_ANSWER
    assert any(w.startswith("observer_failed") for w in result.warnings)


@pytest.mark.parametrize("reply", [None, 42, ["a"], object()], ids=type)
def test_a_function_model_returning_something_else_is_a_clear_model_error(reply: Any) -> None:
    result = Agent(FunctionModel(lambda request: reply), []).run("q")
    assert result.stop_reason is StopReason.MODEL_ERROR
    assert "return a ModelTurn, a string or a dict" in (result.error or "")


def test_a_function_model_returning_a_script_entry_dict_is_accepted() -> None:
    replies = iter([{"tool_calls": [{"name": "echo", "arguments": {"n": 7}}]}, {"content": "7"}])
    result = Agent(FunctionModel(lambda request: next(replies)), [echo]).run("q")
    assert (result.stop_reason, result.answer, result.tool_calls) == ("final_answer", "7", 1)


def test_a_function_model_returning_a_malformed_dict_says_what_is_wrong() -> None:
    result = Agent(FunctionModel(lambda request: {"tool_calls": "echo"}), []).run("q")
    assert result.stop_reason is StopReason.MODEL_ERROR
    assert "tool_calls must be a list" in (result.error or "")


def test_a_model_turn_with_foreign_calls_is_a_model_error() -> None:
    turn = ModelTurn(tool_calls=({"name": "echo"},))  # type: ignore[arg-type]
    result = Agent(FunctionModel(lambda request: turn), [echo]).run("q")
    assert result.stop_reason is StopReason.MODEL_ERROR
    assert "not ToolCall values" in (result.error or "")


def test_a_tool_call_with_dict_arguments_is_normalised() -> None:
    call = ToolCall(id="a", name="echo", arguments={"n": 5})  # type: ignore[arg-type]
    assert call.arguments == '{"n": 5}'
    result = Agent(one_call({"n": 5}), [echo]).run("q")
    assert json.loads(result.history[-2].content) == {"ok": True, "output": 5}
    assert ToolCall(id="a", name="echo", arguments=None).arguments == ""  # type: ignore[arg-type]


class _Hostile(Exception):
    def __str__(self) -> str:
        raise ValueError("no message for you")


class _Exits:
    def __init__(self, error: BaseException) -> None:
        self.error = error

    def __str__(self) -> str:
        raise self.error

    __repr__ = __str__


@pytest.mark.parametrize(
    "output",
    [_Exits(ValueError("x")), _Exits(SystemExit(3)), _Exits(KeyboardInterrupt())],
    ids=["ValueError", "SystemExit", "KeyboardInterrupt"],
)
def test_an_output_whose_str_raises_is_an_observation(output: Any) -> None:
    @tool
    def odd() -> Any:
        """Odd."""
        return output

    result = Agent(one_call("{}", "odd"), [odd]).run("q")
    assert (result.stop_reason, result.answer) == (StopReason.FINAL_ANSWER, "done")
    assert "cannot be shown" in json.loads(result.history[-2].content)["error"]


class _NoLength(str):
    """A ``str`` whose own methods raise (issue 33: its ``__len__`` escaped ``Agent.run``)."""

    def __len__(self) -> int:
        raise RuntimeError("no length")

    def __iter__(self) -> Any:
        raise RuntimeError("no iteration")

    def __str__(self) -> str:
        raise RuntimeError("no text")


class _TextIsHostile:
    def __str__(self) -> str:
        return _NoLength("made of text")


@pytest.mark.parametrize(
    ("output", "shown"),
    [
        (_NoLength("hello"), "hello"),
        ({"a": _NoLength("hello")}, {"a": "hello"}),
        (_NoLength("x" * 500), "x" * 5),
        (_TextIsHostile(), "made of text"),
    ],
    ids=["str", "in-a-dict", "long", "str-of-an-object"],
)
def test_a_str_subclass_whose_methods_raise_is_shown_as_its_text(
    tmp_path: Path, output: Any, shown: Any
) -> None:
    @tool
    def odd() -> Any:
        """Odd."""
        return output

    with Journal(tmp_path / "run.jsonl") as journal:
        toolbox = Toolbox([odd], max_output_chars=100)
        result = Agent(one_call("{}", "odd"), toolbox, journal=journal).run("q")
    events = read_journal(tmp_path / "run.jsonl")
    assert (result.stop_reason, events[-1]["type"]) == (StopReason.FINAL_ANSWER, "stop")
    seen = json.loads(result.history[-2].content)
    if seen.get("truncated"):
        assert seen["output"].startswith(shown)
    else:
        assert seen == {"ok": True, "output": shown}


def test_an_exception_whose_str_raises_is_an_observation() -> None:
    @tool
    def fails() -> str:
        """Fail."""
        raise _Hostile

    result = Agent(one_call("{}", "fails"), [fails]).run("q")
    assert result.answer == "done"
    assert "_Hostile" in json.loads(result.history[-2].content)["error"]


@pytest.mark.parametrize("max_seconds", [None, 60.0], ids=["inline", "worker"])
def test_ctrl_c_in_the_middle_of_a_turn_keeps_what_ran_and_answers_the_rest(
    tmp_path: Path, max_seconds: float | None
) -> None:
    @tool
    def stop() -> str:
        """Ctrl-C."""
        raise KeyboardInterrupt

    calls = (
        ToolCall(id="a", name="echo", arguments='{"n": 1}'),
        ToolCall(id="b", name="stop", arguments="{}"),
        ToolCall(id="c", name="echo", arguments='{"n": 3}'),
    )
    model = ScriptedModel([ModelTurn(tool_calls=calls), "x"])
    result, events = journaled(tmp_path, model, [echo, stop], max_seconds=max_seconds)
    assert result.stop_reason is StopReason.CANCELLED
    contents = [json.loads(m.content) for m in result.history if m.role == "tool"]
    assert contents[0] == {"ok": True, "output": 1}
    assert contents[1]["error"].startswith("cancelled")
    assert contents[2]["error"] == "not executed: cancelled"
    journaled_results = [e["content"] for e in events if e["type"] == "tool_result"]
    assert journaled_results == [m.content for m in result.history if m.role == "tool"]
    assert [e["call"]["id"] for e in events if e["type"] == "tool_call"] == ["a", "b", "c"]
    assert events[-1]["type"] == "stop" and events[-1]["stop_reason"] == "cancelled"


def test_a_surrogate_pair_as_two_code_points_reads_back_exactly(tmp_path: Path) -> None:
    text = "\ud83d\ude00 and \U0001f600 and lone \udc80"

    @tool
    def pair() -> str:
        """Two code points that a JSON reader would join into one."""
        return text

    result, events = journaled(tmp_path, one_call("{}", "pair"), [pair])
    (journaled_result,) = [e for e in events if e["type"] == "tool_result"]
    assert journaled_result["result"]["output"] == text
    assert journaled_result["content"] == result.history[-2].content
    task = tmp_path / "task.jsonl"  # a task no model can take is refused before the run
    with Journal(task) as journal, pytest.raises(UsageError, match="surrogate code point"):
        Agent(ScriptedModel(["ok"]), [], journal=journal, protocol="native").run(text)
    assert read_journal(task) == []


def test_a_sync_tool_that_overruns_the_time_limit_is_abandoned(tmp_path: Path) -> None:
    import threading

    release = threading.Event()

    @tool
    def slow() -> str:
        """Sleep."""
        release.wait(30)
        return "late"

    started = time.monotonic()
    try:
        result, events = journaled(tmp_path, one_call("{}", "slow"), [slow], max_seconds=1.0)
    finally:
        release.set()
    assert time.monotonic() - started < 4  # at the 1 s limit, not at the tool's 30 s
    assert result.stop_reason is StopReason.TIMEOUT
    (error,) = tool_errors(events)
    assert error.startswith("abandoned at the time limit") and "discarded" in error
    assert any(e["type"] == "warning" and e["kind"] == "tool_timeout" for e in events)


def test_keep_requests_holds_views_not_copies() -> None:
    turns = [{"tool_calls": [{"name": "echo", "arguments": {"n": i}}]} for i in range(50)]
    model = ScriptedModel([*turns, "done"])
    Agent(model, [echo], limits=Limits(max_model_calls=60, max_tool_calls=60)).run("q")
    first, last = model.requests[0], model.requests[-1]
    # 50 turns and results, and the budget notice once 14 of 60 calls of each kind were left
    assert len(first.messages) == 2 and len(last.messages) == 2 + 2 * 50 + 1
    assert last.messages[2 + 2 * 46].content == "budget: 14 model calls, 14 tool calls left"
    assert list(first.messages) == list(last.messages[:2])
    assert last.messages[-1].role == "tool" and first.messages[-1].role == "user"
    with pytest.raises(IndexError):
        first.messages[2]


def test_a_real_ctrl_c_while_tools_run_keeps_the_results_that_came_in(tmp_path: Path) -> None:
    import os
    import signal
    import threading

    release = threading.Event()

    @tool(read_only=True)
    def quick(n: int) -> int:
        """Answer at once."""
        return n

    @tool(read_only=True)
    def press_ctrl_c(n: int) -> int:
        """Send SIGINT to this process, then hang (on a worker thread: the loop is waiting)."""
        os.kill(os.getpid(), signal.SIGINT)
        release.wait(10)
        return n

    calls = (
        ToolCall(id="a", name="quick", arguments='{"n": 1}'),
        ToolCall(id="b", name="press_ctrl_c", arguments='{"n": 2}'),
    )
    model = ScriptedModel([ModelTurn(tool_calls=calls), "x"])
    try:
        result, events = journaled(tmp_path, model, [quick, press_ctrl_c], max_seconds=60.0)
    finally:
        release.set()
    assert result.stop_reason is StopReason.CANCELLED
    contents = [json.loads(m.content) for m in result.history if m.role == "tool"]
    assert contents[0] == {"ok": True, "output": 1}
    assert contents[1]["error"] == "cancelled: the run was interrupted while it ran"
    assert [e["content"] for e in events if e["type"] == "tool_result"] == [
        m.content for m in result.history if m.role == "tool"
    ]
    assert events[-1]["type"] == "stop"
