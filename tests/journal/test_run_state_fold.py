"""The one fold (``journal/fold.py``): for a scripted run of any shape (calls of tools with
and without side effects, alone and several in a turn, repeats the loop guard catches,
unreadable, empty and cut-off replies, answers, every budget running out, dollars included),
cut after any event *i*, the fold of the journal's first *i* events equals the live loop's
state when it wrote event *i*: its counters (the one ``RunCounts`` the loop keeps them in,
compared whole: the budget's spending, its cost at the run's price, the step, the messages
sent, the flags, a model call told to answer now included, the budget notices given), its
history, and its loop guard's memory (the one ``GuardState``: counts, results, the last calls
and their cycles, the turn's calls, the near-repeat streak)."""

from __future__ import annotations

import copy
import dataclasses
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from reactloop import Agent, Journal, Limits, ModelTurn, ScriptedModel, ToolCall, Usage, tool
from reactloop.journal.events import Event
from reactloop.journal.fold import advance
from reactloop.journal.guard_state import GuardState
from reactloop.journal.reader import read_events
from reactloop.journal.run_counts import RunCounts
from reactloop.journal.run_state import RunState
from reactloop.loop.run_loop import RunLoop
from reactloop.loop.tree_budget import current_run
from reactloop.usage.prices import Price


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


Cut = tuple[RunCounts, list[dict[str, Any]], GuardState]


def _live(loop: RunLoop) -> Cut:
    assert loop.counts is loop.budget.counts  # one value: the budget counts in the run's
    history = [m.to_dict() for m in loop.history]
    return copy.deepcopy(loop.counts), history, copy.deepcopy(loop.calls.guard.state)


def _folded(state: RunState) -> Cut:
    history = [m.to_dict() for m in [*state.messages, *state.notices]]
    return state.counts, history, state.guard.state


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


PRICE = Price(input=1000.0, output=3000.0, cached_input=100.0)  # a call: about $0.01 to $0.07
MAX_COST = st.sampled_from([None, 0.03, 0.1, 0.3])  # with a price: a dollar budget, or none


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@example(shapes=REPEATS, limits=Limits(max_seconds=None), tokens=10, max_cost=None)
@example(shapes=MIXED, limits=Limits(max_tool_calls=3, max_format_errors=3), tokens=10, max_cost=0)
@example(shapes=MIXED, limits=Limits(max_model_calls=4, max_tokens=60), tokens=25, max_cost=None)
@example(shapes=REPEATS, limits=Limits(), tokens=40, max_cost=0.3)  # winds down for its dollars
@given(
    shapes=st.lists(TURN, min_size=1, max_size=8),
    limits=LIMITS,
    tokens=st.integers(1, 60),
    max_cost=st.just(0) | MAX_COST,  # 0: without a price
)
def test_the_fold_of_any_cut_is_the_live_loops_state_there(
    shapes: list[tuple[str, list[tuple[str, int]]]],
    limits: Limits,
    tokens: int,
    max_cost: float | None,
) -> None:
    turns = [_turn(shape, tokens) for shape in shapes] + [ModelTurn(text="done")]
    if max_cost == 0:
        _assert_each_cut_folds_to_the_live_state(turns, limits=limits)
    else:
        limits = dataclasses.replace(limits, max_cost=max_cost)
        _assert_each_cut_folds_to_the_live_state(turns, limits=limits, price=PRICE)


def _assert_each_cut_folds_to_the_live_state(
    turns: list[ModelTurn], tools: tuple[Any, ...] = (peek, bump), **given: Any
) -> None:
    """``given``: the agent's; its ``price`` is the fold's too (a journal records no cost)."""
    live: list[Cut] = []

    def sink(event: Event) -> None:
        loop = current_run()
        assert isinstance(loop, RunLoop)
        live.append(_live(loop))

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "run.jsonl"
        with Journal(path) as journal:
            agent = Agent(ScriptedModel(turns), list(tools), journal=journal, **given)
            agent.run("go", observers=[sink])
        events = read_events(path)
    assert len(events) == len(live)
    state = RunState(price=given.get("price"))
    for index, event in enumerate(events):
        advance(state, event)
        assert _folded(state) == live[index], f"after event {index} ({event.type})"


def _typed(kind: str, tokens: int) -> ModelTurn:
    usage = Usage(input_tokens=tokens, output_tokens=2)
    if kind in ("valid", "invalid"):
        value = "5" if kind == "valid" else '"abc"'
        final = ToolCall(id="", name="final_answer", arguments=f'{{"value": {value}}}')
        return ModelTurn(tool_calls=(final,), usage=usage)
    if kind == "text":  # an answer in the text, not a number
        return ModelTurn(text="about five", usage=usage)
    if kind == "cut_off":
        return ModelTurn(text="half", finish_reason="length", usage=usage)
    return ModelTurn(text="peeking", tool_calls=(_call("peek", tokens),), usage=usage)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@example(kinds=["invalid", "cut_off", "invalid", "call", "invalid", "valid"], checklist=True)
@example(kinds=["invalid", "invalid", "text"], checklist=False)  # stops on a text answer's notice
@example(kinds=["invalid", "invalid", "cut_off", "cut_off", "invalid", "invalid"], checklist=True)
@given(
    kinds=st.lists(st.sampled_from(["valid", "invalid", "text", "cut_off", "call"]), max_size=7),
    checklist=st.booleans(),
)
def test_a_typed_runs_counts_fold_as_they_were_live(kinds: list[str], checklist: bool) -> None:
    """A typed run (its invalid answers in a row, judged again after a cut-off reply) with or
    without a checklist (shown once): each cut folds to the live ``RunCounts``."""
    turns = [_typed(kind, n) for n, kind in enumerate(kinds)] + [_typed("valid", 9)] * 2
    limits = Limits(max_format_errors=3, max_truncation_retries=3)
    _assert_each_cut_folds_to_the_live_state(
        turns, limits=limits, output_type=int, checklist=["a number"] if checklist else ()
    )


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    verdicts=st.lists(st.sampled_from([True, "not yet: show the sum"]), min_size=1, max_size=4),
    checklist=st.booleans(),
)
def test_a_verified_runs_refusals_fold_as_they_were_live(
    verdicts: list[bool | str], checklist: bool
) -> None:
    """A run whose answers a verify refuses (told to the model, the run going on) then
    accepts, with or without a checklist: each cut folds to the live history and counts."""
    left = list(verdicts)

    def verify(answer: str) -> bool | str:
        return left.pop(0) if left else True

    turns = [_typed("valid", n) for n in range(len(verdicts) + 2)]
    _assert_each_cut_folds_to_the_live_state(
        turns, output_type=int, verify=verify, checklist=["a number"] if checklist else ()
    )


@tool(read_only=True)
def pages(query: str, page: int) -> str:
    """Search, a page at a time (always the same page: near repeats)."""
    return f"nothing new for {query}"


@tool(idempotent=True)
def put(key: str) -> str:
    """Store a key (idempotent)."""
    return key


@tool
def fail(n: int) -> str:
    """A tool with side effects that always fails (a failure counts as a near repeat)."""
    raise ValueError(f"no {n}")


def _guard_call(name: str, n: int) -> ToolCall:
    arguments = {
        "peek": f'{{"key": "k{n % 2}"}}',
        "bump": f'{{"n": {n % 2}}}',
        "pages": f'{{"query": "tea price", "page": {n}}}',
        "put": f'{{"key": "k{n % 2}"}}',
        "fail": f'{{"n": {n}}}',
    }[name]
    return ToolCall(id="", name=name, arguments=arguments)


GUARD_CALL = st.tuples(st.sampled_from(["peek", "bump", "pages", "put", "fail"]), st.integers(0, 3))
GUARD_TURN = st.lists(GUARD_CALL, min_size=1, max_size=3)  # several: run together if read-only


def _guard_limits(repeat_warn: int, pingpong_warn: int, near: int | None, tools: int) -> Limits:
    return Limits(
        max_seconds=None,
        max_tool_calls=tools,
        repeat_warn=repeat_warn,
        repeat_stop=4,
        pingpong_warn=pingpong_warn,
        pingpong_stop=4,
        near_repeat_warn=near,
        near_repeat_stop=None if near is None else 4,
    )


GUARD_LIMITS = st.builds(
    _guard_limits,
    st.integers(2, 3),
    st.integers(2, 3),
    st.sampled_from([None, 2, 3]),
    st.integers(4, 30),
)
PINGPONG = [[("peek", 0)], [("bump", 0)]] * 4  # A, B, A, B: a cycle of two
CYCLE = [[("peek", 0)], [("put", 1)], [("pages", 2)]] * 3  # A, B, C, A, B, C
NEAR = [[("pages", n)] for n in range(6)]  # one tool, a page number changed, the same result
TWICE = [
    [("bump", 0), ("bump", 0), ("bump", 1)],
    [("peek", 1), ("peek", 1), ("pages", 1)],
    [("fail", 1)],
]


def _declining(prepared: Any, tool_: Any) -> bool | str:
    """Approves every call but ``bump`` of an odd number: judged, then declined."""
    odd = prepared.name == "bump" and '"n": 1' in prepared.call.arguments
    return "not that one" if odd else True


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@example(
    shapes=PINGPONG, limits=Limits(max_seconds=None, repeat_warn=3, repeat_stop=4), approve=False
)
@example(shapes=CYCLE, limits=Limits(max_seconds=None, repeat_warn=3, repeat_stop=4), approve=False)
@example(shapes=NEAR, limits=Limits(max_seconds=None), approve=False)
@example(shapes=TWICE * 2, limits=Limits(max_seconds=None), approve=True)
@given(
    shapes=st.lists(GUARD_TURN, min_size=1, max_size=8), limits=GUARD_LIMITS, approve=st.booleans()
)
def test_the_fold_of_any_cut_is_the_live_loop_guards_memory_there(
    shapes: list[list[tuple[str, int]]], limits: Limits, approve: bool
) -> None:
    """Runs the loop guard has much to say about: repeats (refused, and stopping the run),
    ping-pong and cycles, near repeats (a page number changed, the same result), tools with
    side effects (each resetting its memory), idempotent ones, failures, a call asked for twice
    in one turn, several read-only calls judged together, calls an approver declines after the
    guard judged them: each cut folds to the live guard's ``GuardState``."""
    turns = [
        ModelTurn(text="working", tool_calls=tuple(_guard_call(n, i) for n, i in shape))
        for shape in shapes
    ] + [ModelTurn(text="done")]
    approver = {"approve": _declining} if approve else {}
    _assert_each_cut_folds_to_the_live_state(
        turns, tools=(peek, bump, pages, put, fail), limits=limits, **approver
    )
