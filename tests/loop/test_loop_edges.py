"""The loop's decisions at the edges: mixed turns, limits mid-turn, odd tools, odd replies."""

from __future__ import annotations

import itertools
import json
import sys
import threading
from collections.abc import Sequence
from typing import Any

import pytest

from helpers import call
from reactloop import (
    Agent,
    FunctionModel,
    Limits,
    Message,
    ModelRequest,
    ModelTurn,
    ScriptedModel,
    StopReason,
    Tool,
    ToolCall,
    tool,
)
from reactloop.journal.events import Event

ran: list[str] = []


@pytest.fixture(autouse=True)
def _forget_what_ran() -> None:
    ran.clear()


@tool(read_only=True)
def look(key: str) -> str:
    """Read a value.

    Args:
        key: what to read
    """
    ran.append(f"look {key}")
    return f"value of {key}"


@tool
def write(key: str) -> str:
    """Write a value.

    Args:
        key: what to write
    """
    ran.append(f"write {key}")
    return "written"


def turns(*replies: ModelTurn | str) -> ScriptedModel:
    return ScriptedModel(replies)


def make(model: Any, tools: Sequence[Tool] = (look, write), **options: Any) -> Agent:
    return Agent(model, list(tools), limits=options.pop("limits", Limits()), **options)


def calls_answered_in_order(messages: Sequence[Message]) -> bool:
    """Right after each assistant message, one tool message per call, in call order."""
    for index, message in enumerate(messages):
        expected = [c.id for c in message.tool_calls]
        following = messages[index + 1 : index + 1 + len(expected)]
        if [m.tool_call_id for m in following] != expected:
            return False
    return True


def observations(messages: Sequence[Message]) -> list[dict[str, Any]]:
    return [json.loads(m.content) for m in messages if m.role == "tool"]


class Log:
    def __init__(self) -> None:
        self.events: list[Event] = []

    def __call__(self, event: Event) -> None:
        self.events.append(event)

    def of(self, event_type: str) -> list[dict[str, Any]]:
        return [e.data for e in self.events if e.type == event_type]


# --- every call gets exactly one answer, in order -----------------------------------------


def test_calls_in_a_cut_off_reply_are_answered_before_the_retry() -> None:
    cut = ModelTurn(tool_calls=(call("look", "a", key="k"),), finish_reason="length")
    model = turns(cut, "done")
    result = make(model).run("q")
    retry = model.requests[1].messages
    assert calls_answered_in_order(retry) and retry[-1].kind == "truncated"
    assert (result.answer, result.tool_calls, ran) == ("done", 0, [])


def test_calls_in_an_unreadable_reply_are_answered_before_the_notice() -> None:
    bad = ModelTurn(tool_calls=(call("look", "a", key="k"),), format_error="broken call")
    model = turns(bad, "done")
    make(model).run("q")
    retry = model.requests[1].messages
    assert calls_answered_in_order(retry) and retry[-1].kind == "format_error"
    assert ran == []


def test_a_mixed_turn_is_answered_in_call_order_and_counted_once() -> None:
    log = Log()
    mixed = ModelTurn(
        tool_calls=(
            call("look", "a", key="1"),  # runs
            call("write", "b", key="2"),  # declined
            call("look", "c", key="1"),  # a repeat: not run
            call("look", "d", key="3"),  # runs: the last call the budget allows
            call("look", "e", key="4"),  # over the budget
        )
    )
    limits = Limits(max_tool_calls=2)
    result = make(
        turns(mixed, "done"), approve=lambda c, t: "no", limits=limits, observers=[log]
    ).run("q")
    assert calls_answered_in_order(result.history)
    ok = [o["ok"] for o in observations(result.history)]
    assert ok == [True, False, False, True, False]
    assert (result.tool_calls, ran) == (2, ["look 1", "look 3"])
    journaled = [r["result"]["call_id"] for r in log.of("tool_result")]
    assert journaled == [c["call"]["id"] for c in log.of("tool_call")] == list("abcde")
    assert log.of("stop")[0]["tool_calls"] == result.tool_calls


# --- the loop guard and the approver see what earlier calls of the turn did ---------------


def test_a_side_effect_earlier_in_the_turn_lets_a_read_run_again() -> None:
    turn = ModelTurn(
        tool_calls=(
            call("look", "a", key="k"),
            call("write", "b", key="k"),
            call("look", "c", key="k"),
        )
    )
    result = make(turns(turn, "done")).run("q")
    assert ran == ["look k", "write k", "look k"]
    assert [o["ok"] for o in observations(result.history)] == [True, True, True]


def test_a_repeat_in_the_same_turn_does_not_say_the_first_call_was_not_run() -> None:
    turn = ModelTurn(tool_calls=(call("look", "a", key="k"), call("look", "b", key="k")))
    result = make(turns(turn, "done")).run("q")
    first, repeat = observations(result.history)
    assert ran == ["look k"] and first["ok"]
    assert "not run" not in repeat["error"]


def test_the_approver_is_asked_after_the_earlier_calls_ran() -> None:
    seen_when_asked: list[list[str]] = []

    def approve(c: ToolCall, t: Tool) -> bool:
        seen_when_asked.append(list(ran))
        return True

    turn = ModelTurn(tool_calls=(call("write", "a", key="1"), call("write", "b", key="2")))
    make(turns(turn, "done"), approve=approve).run("q")
    assert seen_when_asked == [[], ["write 1"]]


def test_ctrl_c_at_the_approval_counts_only_the_calls_that_ran() -> None:
    def approve(c: ToolCall, t: Tool) -> bool:
        if c.id == "b":
            raise KeyboardInterrupt
        return True

    turn = ModelTurn(tool_calls=(call("write", "a", key="1"), call("write", "b", key="2")))
    result = make(turns(turn, "done"), approve=approve).run("q")
    assert result.stop_reason is StopReason.CANCELLED
    assert (result.tool_calls, ran) == (1, ["write 1"])


# --- tools that misbehave -----------------------------------------------------------------


@pytest.mark.parametrize("error", [SystemExit(2), GeneratorExit()], ids=type)
def test_a_tool_raising_a_base_exception_is_an_observation(error: BaseException) -> None:
    @tool
    def fails() -> str:
        """Fail."""
        raise error

    result = make(turns(ModelTurn(tool_calls=(call("fails", "a"),)), "done"), [fails]).run("q")
    assert result.answer == "done"
    (observation,) = observations(result.history)
    assert observation["error"].startswith(type(error).__name__)


class NoText:
    def __str__(self) -> str:
        raise RuntimeError("no text")


def deeply_nested() -> list[Any]:
    value: list[Any] = []
    for _ in range(sys.getrecursionlimit() * 2):
        value = [value]
    return value


@pytest.mark.parametrize(
    "output", [10**5000, NoText(), deeply_nested()], ids=["huge_int", "failing_str", "deep"]
)
def test_an_output_without_a_text_form_is_an_observation(output: Any) -> None:
    @tool(read_only=True)
    def odd() -> Any:
        """Return something odd."""
        return output

    result = make(turns(ModelTurn(tool_calls=(call("odd", "a"),)), "done"), [odd]).run("q")
    assert result.answer == "done"
    (observation,) = observations(result.history)
    assert "the output cannot be shown" in observation["error"]


# --- time and cancellation ----------------------------------------------------------------


def test_no_tool_starts_after_the_time_limit_ran_out(monkeypatch: pytest.MonkeyPatch) -> None:
    now = [1000.0]
    monkeypatch.setattr("reactloop.loop.budget.time.monotonic", lambda: now[0])

    @tool
    def slow(key: str) -> str:
        """Take a minute."""
        now[0] += 60.0
        ran.append(key)
        return "ok"

    turn = ModelTurn(tool_calls=(call("slow", "a", key="1"), call("slow", "b", key="2")))
    result = make(turns(turn, "late"), [slow], limits=Limits(max_seconds=30)).run("q")
    assert result.stop_reason is StopReason.TIMEOUT
    assert (result.tool_calls, ran) == (1, ["1"])
    assert calls_answered_in_order(result.history)


def test_a_cancel_during_the_tools_leaves_no_last_word() -> None:
    agents: list[Agent] = []

    @tool(read_only=True)
    def cancel_run() -> str:
        """Cancel the run."""
        agents[0].cancel()
        return "x"

    same = ModelTurn(tool_calls=tuple(call("cancel_run", f"c{i}") for i in range(3)))
    agents.append(make(turns(same, "never asked"), [cancel_run]))
    result = agents[0].run("q")
    assert result.stop_reason is StopReason.LOOP_DETECTED
    assert (result.model_calls, result.answer) == (1, None)


def test_cancel_from_another_thread_while_a_tool_runs_stops_before_the_next_model_call() -> None:
    started, cancelled = threading.Event(), threading.Event()

    @tool
    def wait() -> str:
        """Wait until the run is cancelled."""
        started.set()
        assert cancelled.wait(10)
        return "woke"

    model = turns(ModelTurn(tool_calls=(call("wait", "a"),)), "never asked")
    agent = make(model, [wait])

    def cancel_when_started() -> None:
        assert started.wait(10)
        agent.cancel()
        cancelled.set()

    canceller = threading.Thread(target=cancel_when_started)
    canceller.start()
    result = agent.run("q")
    canceller.join()
    assert result.stop_reason is StopReason.CANCELLED
    assert (result.model_calls, result.tool_calls, model.remaining) == (1, 1, 1)
    assert calls_answered_in_order(result.history)


# --- wind-down at the limit boundaries ----------------------------------------------------


@pytest.mark.parametrize(("max_model_calls", "choices"), [(1, ["none"]), (2, ["auto", "none"])])
def test_wind_down_at_the_model_call_boundaries(max_model_calls: int, choices: list[str]) -> None:
    replies = [ModelTurn(tool_calls=(call("look", "a", key="k"),))] * (max_model_calls - 1)
    model = turns(*replies, "answer")
    limits = Limits(max_model_calls=max_model_calls)
    result = make(model, limits=limits, protocol="native").run("q")
    assert (result.stop_reason, result.answer) == (StopReason.FINAL_ANSWER, "answer")
    assert [r.tool_choice for r in model.requests] == choices


# --- the history is an append-only record, and the journal agrees with the result --------


def test_each_request_extends_the_previous_and_the_journal_agrees() -> None:
    log = Log()
    seen: list[tuple[Message, ...]] = []
    replies = iter(
        [
            ModelTurn(tool_calls=(call("look", "", key="a"),), finish_reason="length"),
            ModelTurn(text=""),
            ModelTurn(tool_calls=(call("look", "", key="a"), call("write", "", key="b"))),
            ModelTurn(tool_calls=(call("write", "", key="b"),)),
            ModelTurn(tool_calls=(call("write", "", key="b"),)),
            ModelTurn(text="last word"),
        ]
    )

    def reply(request: ModelRequest) -> ModelTurn:
        seen.append(tuple(request.messages))
        return next(replies)

    result = make(FunctionModel(reply), observers=[log]).run("q")
    assert (result.stop_reason, result.answer) == (StopReason.LOOP_DETECTED, "last word")
    for before, after in itertools.pairwise(seen):
        assert after[: len(before)] == before
    assert result.history[: len(seen[-1])] == seen[-1]
    assert all(calls_answered_in_order(messages) for messages in seen)
    requests = log.of("request")
    for previous, current in itertools.pairwise(requests):
        assert current["n_messages"] == previous["n_messages"] + len(current["messages_new"])
    stop = log.of("stop")[0]
    assert (stop["stop_reason"], stop["answer"]) == (result.stop_reason, result.answer)
    assert (stop["model_calls"], stop["tool_calls"]) == (result.model_calls, result.tool_calls)
    assert len(log.of("tool_result")) == len(observations(result.history))
