"""The channel from adapters to the run: a turn's ``notices`` become run warnings, each kind once
per run, in ``RunResult.warnings`` and the journal, observed or not."""

from __future__ import annotations

from typing import Any

from helpers import add
from reactloop import Agent, Event, ModelTurn, ScriptedModel, ToolCall

SHORT = ("cache_too_short", "nothing was cached")


def call_turn(n: int, notices: Any) -> ModelTurn:
    calls = (ToolCall(id=f"c{n}", name="add", arguments=f'{{"a": {n}, "b": 1}}'),)
    return ModelTurn(tool_calls=calls, finish_reason="tool_calls", notices=notices)


def test_each_kind_warns_once_per_run_observed_or_not() -> None:
    def script() -> list[ModelTurn]:
        return [
            call_turn(1, (SHORT,)),
            call_turn(2, (SHORT, ("other", "second kind"))),
            ModelTurn(text="done", notices=(SHORT,)),
        ]

    quiet = Agent(ScriptedModel(script()), [add], protocol="native").run("go")
    assert quiet.answer == "done"
    assert quiet.warnings == ("cache_too_short: nothing was cached", "other: second kind")
    events: list[Event] = []
    agent = Agent(ScriptedModel(script() + script()), [add], observers=[events.append])
    observed = agent.run("go")
    assert observed.warnings == quiet.warnings
    warned = [(e.data["kind"], e.data["message"]) for e in events if e.type == "warning"]
    assert warned == [SHORT, ("other", "second kind")]
    events.clear()
    again = agent.run("again")  # a new run of the same agent and model warns again
    assert again.warnings == quiet.warnings and len(events) > 0


def test_notices_that_are_not_kind_and_message_pairs_are_ignored() -> None:
    bad: Any = [("ok", "fine"), ("no message",), (1, "x"), "text", ("k", None)]
    result = Agent(
        ScriptedModel([ModelTurn(text="done", notices=bad)]), [add], protocol="native"
    ).run("go")
    assert result.answer == "done" and result.warnings == ("ok: fine",)
    garbage: Any = 42
    result = Agent(
        ScriptedModel([ModelTurn(text="done", notices=garbage)]), [add], protocol="native"
    ).run("go")
    assert result.answer == "done" and result.warnings == ()
