"""Loop detection: repeats (warn, then stop), ping-pong, and resets after side effects."""

from __future__ import annotations

from helpers import call
from reactloop import Limits, StopReason, ToolCall, tool
from reactloop.loop.loop_guard import LoopGuard, canonical_key


def test_canonical_key_ignores_key_order_and_spacing():
    a = ToolCall(id="1", name="t", arguments='{"a": 1, "b": [1, 2]}')
    b = ToolCall(id="2", name="t", arguments='{ "b":[1,2],"a":1 }')
    assert canonical_key(a) == canonical_key(b)
    assert canonical_key(a) != canonical_key(ToolCall(id="3", name="u", arguments=a.arguments))


def test_second_identical_call_warns_with_the_earlier_result_third_stops():
    guard = LoopGuard(Limits())
    first = call("lookup", key="k")
    assert guard.check(first).action == "run"
    guard.record(canonical_key(first), '{"ok": true, "output": "35"}', side_effects=False)
    warning = guard.check(first)
    assert warning.action == "warn" and '"35"' in warning.message
    assert guard.check(first).action == "stop"


def test_thresholds_are_configurable():
    guard = LoopGuard(Limits(repeat_warn=3, repeat_stop=5))
    actions = [guard.check(call("t", a=1)).action for _ in range(5)]
    assert actions == ["run", "run", "warn", "warn", "stop"]


def test_a_side_effect_resets_what_other_calls_can_repeat():
    guard = LoopGuard(Limits())
    test_run, edit = call("bash", command="pytest"), call("edit_file", path="a.py")
    assert guard.check(test_run).action == "run"
    guard.record(canonical_key(test_run), "failed", side_effects=True)
    assert guard.check(edit).action == "run"
    guard.record(canonical_key(edit), "ok", side_effects=True)
    assert guard.check(test_run).action == "run"  # the code changed: running tests again is fine


def test_repeating_the_same_side_effect_is_still_caught():
    guard = LoopGuard(Limits())
    test_run = call("bash", command="pytest")
    guard.check(test_run)
    guard.record(canonical_key(test_run), "failed", side_effects=True)
    assert guard.check(test_run).action == "warn"


def test_ping_pong_between_two_side_effects_is_caught():
    guard = LoopGuard(Limits())
    flip, flop = call("edit_file", new="x"), call("edit_file", new="y")
    actions = []
    for current in [flip, flop] * 3:
        verdict = guard.check(current)
        actions.append(verdict.action)
        if verdict.action == "run":
            guard.record(canonical_key(current), "ok", side_effects=True)
    assert actions == ["run", "run", "run", "warn", "warn", "stop"]


def test_ping_pong_in_a_run_stops_with_loop_detected(make_agent):
    state = {"value": 0}

    @tool
    def set_value(value: int) -> int:
        """Set the value (a side effect)."""
        state["value"] = value
        return value

    turns = [
        {"tool_calls": [{"name": "set_value", "arguments": {"value": v}}]}
        for v in [1, 2, 1, 2, 1, 2, 1]
    ]
    agent, _ = make_agent(turns, tools=[set_value], max_model_calls=10)
    result = agent.run("q")
    assert result.stop_reason is StopReason.LOOP_DETECTED
    assert "went round the same two actions 3 times" in (result.error or "")
    assert result.tool_calls == 3


def test_a_round_of_three_side_effects_is_caught():
    guard = LoopGuard(Limits())
    a, b, c = (call("edit_file", new=text) for text in "xyz")
    verdicts = []
    for current in [a, b, c] * 3:
        verdicts.append(guard.check(current))
        guard.record(canonical_key(current), "ok", side_effects=True)
    actions = [(verdict.action, verdict.kind) for verdict in verdicts]
    assert actions == [("run", "")] * 5 + [("warn", "cycle")] * 3 + [("stop", "cycle")]
    assert "going round the same three calls (edit_file is one)" in verdicts[5].message


def test_a_round_with_a_call_made_twice_is_a_cycle_of_three():
    guard = LoopGuard(Limits())
    read, write = call("read_file", path="a"), call("write_file", text="x")
    actions = []
    for current in [read, read, write] * 3:
        actions.append(guard.check(current).action)
        guard.record(canonical_key(current), "ok", side_effects=current is write)
    assert actions[-1] == "stop"


def test_new_calls_and_one_call_repeated_are_no_cycle():
    guard = LoopGuard(Limits(repeat_warn=50, repeat_stop=50))
    same = call("t", a=1)
    assert all(guard.check(same).action == "run" for _ in range(10))
    assert all(guard.check(call("t", a=n)).action == "run" for n in range(30))
    assert all(guard.check(call("t", a=n % 4)).action == "run" for n in range(12))


def test_three_alternating_edits_in_a_run_stop_with_loop_detected(make_agent):
    @tool
    def set_value(value: int) -> int:
        """Set the value (a side effect)."""
        return value

    turns = [
        {"tool_calls": [{"name": "set_value", "arguments": {"value": v}}]} for v in [1, 2, 3] * 4
    ]
    agent, _ = make_agent(turns, tools=[set_value], max_model_calls=20, max_tool_calls=20)
    result = agent.run("q")
    assert result.stop_reason is StopReason.LOOP_DETECTED
    assert "went round the same three actions 3 times" in (result.error or "")
    assert result.tool_calls == 5


def test_different_arguments_are_not_a_loop(make_agent):
    turns = [
        {"tool_calls": [{"name": "calculator", "arguments": {"expression": f"{i}*2"}}]}
        for i in range(6)
    ] + [{"content": "done"}]
    agent, _ = make_agent(turns, max_model_calls=10)
    assert agent.run("q").answer == "done"
