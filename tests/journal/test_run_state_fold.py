"""The one fold (``journal/run_state.py``): for a scripted run of any shape (calls of tools
with and without side effects, alone and several in a turn, repeats the loop guard catches,
unreadable, empty and cut-off replies, answers, every budget running out), cut after any
event *i*, the fold of the journal's first *i* events equals the live loop's state when it
wrote event *i*: its budget's counts, its step, its flags, the messages it has sent, and its
history."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from reactloop import Agent, Journal, Limits, ModelTurn, ScriptedModel, ToolCall, Usage, tool
from reactloop.journal.events import Event
from reactloop.journal.fold import LiveState, advance
from reactloop.journal.reader import read_events
from reactloop.journal.run_state import RunState
from reactloop.loop.run_loop import RunLoop
from reactloop.loop.tree_budget import current_run


@tool(read_only=True)
def peek(key: str) -> str:
    """Read a key."""
    return f"value of {key}"


@tool
def bump(n: int) -> int:
    """Add one to n (a tool with side effects)."""
    return n + 1


def _call(name: str, n: int) -> ToolCall:
    arguments = f'{{"key": "k{n}"}}' if name == "peek" else f'{{"n": {n}}}'
    return ToolCall(id="", name=name, arguments=arguments)


CALL = st.tuples(st.sampled_from(["peek", "bump"]), st.integers(0, 1))  # repeats are common
TURN = st.one_of(
    st.lists(CALL, min_size=1, max_size=3).map(lambda calls: ("calls", calls)),
    st.just(("format_error", [])),
    st.just(("empty", [])),
    st.lists(CALL, max_size=2).map(lambda calls: ("cut_off", calls)),
    st.just(("answer", [])),
)


def _turn(shape: tuple[str, list[tuple[str, int]]], tokens: int) -> ModelTurn:
    kind, calls = shape
    usage = Usage(input_tokens=tokens, output_tokens=3)
    made = tuple(_call(name, n) for name, n in calls)
    if kind == "format_error":
        return ModelTurn(text="{broken", format_error="the reply is not JSON", usage=usage)
    if kind == "empty":
        return ModelTurn(text="", usage=usage)
    if kind == "cut_off":
        return ModelTurn(text="half", tool_calls=made, finish_reason="length", usage=usage)
    if kind == "answer":
        return ModelTurn(text="the answer", usage=usage)
    return ModelTurn(text="working", tool_calls=made, usage=usage)


def _live(loop: RunLoop) -> dict[str, Any]:
    budget, flags = loop.budget, loop.flags
    return {
        "model_calls": budget.model_calls,
        "tool_calls": budget.tool_calls,
        "usage": budget.usage,
        "last_usage": budget.last_usage,
        "step": loop.step,
        "sent": loop.sent,
        "format_errors": flags.format_errors,
        "truncations": flags.truncations,
        "wound_down": flags.wound_down,
        "history": [m.to_dict() for m in loop.history],
    }


def _folded(state: RunState) -> dict[str, Any]:
    return {
        "model_calls": state.model_calls,
        "tool_calls": state.tool_calls,
        "usage": state.usage,
        "last_usage": state.last_usage,
        "step": state.step,
        "sent": state.sent,
        "format_errors": state.format_errors,
        "truncations": state.truncations,
        "wound_down": state.wound_down,
        "history": [m.to_dict() for m in [*state.messages, *state.notices]],
    }


LIMITS = st.builds(
    Limits,
    max_model_calls=st.integers(1, 10),
    max_tool_calls=st.integers(1, 10),
    max_tokens=st.none() | st.none() | st.integers(20, 600),
    max_format_errors=st.integers(1, 3),
    max_truncation_retries=st.integers(0, 2),
    repeat_warn=st.just(2),
    repeat_stop=st.just(3),
    budget_notices=st.booleans(),
    wind_down=st.booleans(),
    max_seconds=st.sampled_from([None, 600.0]),
)


REPEATS = [("calls", [("peek", 0)])] * 3 + [("calls", [("bump", 0)])] * 3
MIXED = [
    ("calls", [("peek", 0), ("peek", 1)]),
    ("format_error", []),
    ("cut_off", [("bump", 1)]),
    ("empty", []),
    ("calls", [("bump", 0), ("peek", 0)]),
    ("answer", []),
]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@example(shapes=REPEATS, limits=Limits(max_seconds=None), tokens=10)
@example(shapes=MIXED, limits=Limits(max_tool_calls=3, max_format_errors=3), tokens=10)
@example(shapes=MIXED, limits=Limits(max_model_calls=4, max_tokens=60), tokens=25)
@given(shapes=st.lists(TURN, min_size=1, max_size=8), limits=LIMITS, tokens=st.integers(1, 60))
def test_the_fold_of_any_cut_is_the_live_loops_state_there(
    shapes: list[tuple[str, list[tuple[str, int]]]], limits: Limits, tokens: int
) -> None:
    turns = [_turn(shape, tokens) for shape in shapes] + [ModelTurn(text="done")]
    live: list[dict[str, Any]] = []
    folding = LiveState()

    def sink(event: Event) -> None:
        loop = current_run()
        assert isinstance(loop, RunLoop)
        live.append(_live(loop))

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "run.jsonl"
        with Journal(path) as journal:
            agent = Agent(ScriptedModel(turns), [peek, bump], limits=limits, journal=journal)
            agent.run("go", observers=[sink, folding])
        events = read_events(path)
    assert len(events) == len(live)
    state = RunState()
    for index, event in enumerate(events):
        advance(state, event)
        assert _folded(state) == live[index], f"after event {index} ({event.type})"
    # the run's events folded as they came are the journal's, folded
    own = folding.state
    assert _folded(own) == _folded(state)
    calls = [(c.call, c.state) for c in own.calls]  # ``started_t``: the journal's clock alone
    assert calls == [(c.call, c.state) for c in state.calls]
    assert (own.decisions, own.not_run) == (state.decisions, state.not_run)
