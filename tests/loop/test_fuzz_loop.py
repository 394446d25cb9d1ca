"""A loop-level fuzz test: hostile turns from a ``FunctionModel``, hostile tools, the journal
on; then the journal is read back and checked against the ``RunResult``.

For every run: ``Agent.run`` returns (nothing escapes), the journal holds exactly one ``stop``
and it is the last event, every call in the history is answered exactly once before the next
model turn, and the journal's tool calls and results equal the history's. The seed is fixed
and the budget bounded (``REACTLOOP_FUZZ_RUNS``, ``REACTLOOP_FUZZ_SEED`` scale it up).
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import threading
from pathlib import Path
from typing import Any

from reactloop import (
    Agent,
    FunctionModel,
    Journal,
    Limits,
    Message,
    ModelError,
    ModelRequest,
    ModelTurn,
    RunResult,
    StopReason,
    ToolCall,
    ToolError,
    read_journal,
    tool,
)

RUNS = int(os.environ.get("REACTLOOP_FUZZ_RUNS", "250"))
SEED = int(os.environ.get("REACTLOOP_FUZZ_SEED", "20261201"))
release = threading.Event()  # set at the end: lets abandoned tools finish


class HostileStr:
    def __init__(self, error: BaseException) -> None:
        self.error = error

    def __str__(self) -> str:
        raise self.error

    __repr__ = __str__


class HostileError(Exception):
    def __str__(self) -> str:
        raise RuntimeError("no message")


def nested(depth: int, leaf: Any = 0) -> Any:
    for _ in range(depth):
        leaf = [leaf]
    return leaf


OUTPUTS: list[Any] = [
    "plain",
    "\ud83d\ude00 pair as two code points, lone \udc80",
    10**5000,
    float("nan"),
    nested(300),
    nested(50),
    {"k": [1, 2.5, None, True]},
    "x" * 20_000,
    HostileStr(ValueError("str fails")),
    HostileStr(SystemExit(1)),
    b"bytes",
]
RAISES: list[BaseException] = [
    ValueError("bad"),
    ToolError("expected failure"),
    HostileError(),
    SystemExit(2),
    RecursionError("deep"),
]


@tool(read_only=True)
def echo(n: Any = None) -> Any:
    """Echo n."""
    return n


@tool(read_only=True)
def emit(i: int = 0) -> Any:
    """A hostile output."""
    return OUTPUTS[i % len(OUTPUTS)]


@tool
def fail(i: int = 0) -> str:
    """Raise something."""
    raise RAISES[i % len(RAISES)]


@tool
def write(path: str = "", text: str = "") -> str:
    """A side effect."""
    return f"wrote {len(text)}"


@tool(read_only=True)
async def aecho(n: Any = None) -> Any:
    """Echo n, asynchronously."""
    await asyncio.sleep(0)
    return n


@tool
async def afail(i: int = 0) -> str:
    """Raise, asynchronously."""
    raise RAISES[i % len(RAISES)]


@tool
def stall(n: Any = None) -> str:
    """Wait past a short time limit."""
    release.wait(5)
    return "late"


@tool
def interrupt(n: Any = None) -> str:
    """Ctrl-C."""
    raise KeyboardInterrupt


TOOLS = [echo, emit, fail, write, aecho, afail, stall, interrupt]
NAMES = [t.name for t in TOOLS if t.name not in ("stall", "interrupt")]
RARE = [*NAMES, "unknown", "", "stall", "interrupt"]


def hostile_arguments(rng: random.Random) -> Any:
    makers = [
        lambda: json.dumps({"n": rng.randint(-5, 5)}),
        lambda: json.dumps({"i": rng.randint(0, 20)}),
        lambda: {"n": "dict arguments"},
        lambda: "[" * rng.choice([10, 1000, 100_000]),
        lambda: '{"n": ' + "9" * rng.choice([10, 4301, 6000]) + "}",
        lambda: '{"n": ' + "[" * 200 + "]" * 200 + "}",
        lambda: "not json",
        lambda: "[1, 2]",
        lambda: "",
        lambda: json.dumps({"n": "\ud83d\ude00 \udc80"}),
        lambda: '{"n": "\\ud83d\\ude00"}',
        lambda: json.dumps({"n": 1, "extra": 2}),
        lambda: None,
        lambda: json.dumps({"path": "a", "text": "b" * rng.randint(0, 50)}),
    ]
    return rng.choice(makers)()


def hostile_call(rng: random.Random, index: int) -> ToolCall:
    name = rng.choice(RARE if rng.random() < 0.15 else NAMES)
    call_id = rng.choice(["", "dup", f"id{index}", "x" * 300])
    return ToolCall(id=call_id, name=name, arguments=hostile_arguments(rng))


def hostile_turn(rng: random.Random) -> Any:
    roll = rng.random()
    if roll < 0.55:
        calls = tuple(hostile_call(rng, i) for i in range(rng.randint(1, 4)))
        raw: Any = rng.choice([None, nested(990), {"o": HostileStr(ValueError("raw"))}])
        return ModelTurn(tool_calls=calls, raw_message=raw, text=rng.choice(["", "thinking"]))
    if roll < 0.62:
        return {"tool_calls": [{"name": rng.choice(NAMES), "arguments": {"n": rng.randint(0, 3)}}]}
    if roll < 0.70:
        odd = [
            None,
            42,
            ["a"],
            object(),
            {"tool_calls": "x"},
            {"content": HostileStr(ValueError())},
        ]
        return rng.choice(odd)
    if roll < 0.76:
        raise rng.choice([ModelError("provider said no"), RuntimeError("adapter bug")])
    if roll < 0.84:
        return ModelTurn(
            text=rng.choice(["", "cut"]),
            tool_calls=(hostile_call(rng, 9),) if rng.random() < 0.5 else (),
            finish_reason=rng.choice(["length", "content_filter", "stop"]),
            format_error=rng.choice([None, "unreadable"]),
        )
    return rng.choice(["the answer", "\ud83d\ude00", "  ", ModelTurn(text="done")])


def one_run(rng: random.Random, path: Path) -> tuple[RunResult, list[dict[str, Any]]]:
    turns: list[Any] = []

    def model(request: ModelRequest) -> Any:
        if turns and rng.random() < 0.25:  # the same turn again: loops and repeats
            return turns[-1]
        turns.append(hostile_turn(rng))
        return turns[-1]

    limits = Limits(
        max_model_calls=rng.randint(1, 6),
        max_tool_calls=rng.randint(1, 8),
        max_seconds=rng.choice([None, 60.0, 60.0, 0.3]),
    )
    # The stalling tool only where the limit is short (elsewhere it is an unknown tool).
    tools = TOOLS if limits.max_seconds == 0.3 else [t for t in TOOLS if t is not stall]
    with Journal(path) as journal:
        agent = Agent(FunctionModel(model), tools, limits=limits, journal=journal)
        result = agent.run("fuzz")
    return result, read_journal(path)


def check(result: RunResult, events: list[dict[str, Any]]) -> None:
    types = [e["type"] for e in events]
    assert types.count("stop") == 1 and types[-1] == "stop", types
    assert events[-1]["stop_reason"] == str(result.stop_reason)
    assert isinstance(result.stop_reason, StopReason)
    check_history_answers_every_call(result.history)
    history_calls = [c.id for m in result.history if m.role == "assistant" for c in m.tool_calls]
    assert [e["call"]["id"] for e in events if e["type"] == "tool_call"] == history_calls
    history_results = [m.content for m in result.history if m.role == "tool"]
    assert [e["content"] for e in events if e["type"] == "tool_result"] == history_results


def check_history_answers_every_call(history: tuple[Message, ...]) -> None:
    waiting: list[str] = []
    for message in history:
        if message.role == "assistant":
            assert not waiting, f"calls {waiting} unanswered before the next turn"
            waiting = [call.id for call in message.tool_calls]
            assert len(set(waiting)) == len(waiting)
        elif message.role == "tool":
            assert message.tool_call_id == waiting.pop(0)
    assert not waiting, f"calls {waiting} unanswered at the end"


def test_hostile_runs_end_cleanly_and_the_journal_matches_the_result(tmp_path: Path) -> None:
    rng = random.Random(SEED)
    reasons: dict[str, int] = {}
    try:
        for number in range(RUNS):
            result, events = one_run(rng, tmp_path / f"run-{number}.jsonl")
            check(result, events)
            reasons[str(result.stop_reason)] = reasons.get(str(result.stop_reason), 0) + 1
    finally:
        release.set()
    # The campaign reaches the stops it is meant to exercise.
    for reason in ("final_answer", "model_error", "max_model_calls", "cancelled"):
        assert reasons.get(reason, 0) > 0, reasons
