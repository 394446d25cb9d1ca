"""What each speed trick kept in the code gains, against the plain code it stands in for.

    python benchmarks/speed_tricks.py [--rounds 7] [--processes 8]

Each row times the trick and the plain way in turns (``timeit``, the best of 5 repeats a
round, the median of the rounds), in ns a use; the start-up row runs processes in turns (the
order flips every pair), CPU ms. The list of tricks and why each is kept is
``reactloop.support``'s docstring; ``docs/benchmarks.md`` has the figures. A trick whose gain
is under about 1 µs a step is not worth a second copy of its code.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import statistics
import subprocess
import sys
import timeit
from collections.abc import Callable
from typing import Any

from reactloop.loop.model_call import _checked_slowly, checked_turn
from reactloop.messages import Message, ModelTurn, ToolCall, ToolResult, Usage
from reactloop.support.json_encode import dumps


def best_ns(function: Callable[[], Any], number: int = 20000) -> float:
    return min(timeit.repeat(function, number=number, repeat=5)) / number * 1e9


def row(label: str, trick: Callable[[], Any], plain: Callable[[], Any], rounds: int) -> None:
    fast, slow = [], []
    for _ in range(rounds):
        fast.append(best_ns(trick))
        slow.append(best_ns(plain))
    a, b = statistics.median(fast), statistics.median(slow)
    print(f"| {label} | {a:.0f} | {b:.0f} | {b - a:.0f} |")


def without_fast_init(cls: type) -> type:
    """``cls`` made again as the plain frozen dataclass, with the ``__init__`` it would have."""
    namespace: dict[str, Any] = {"__annotations__": {}}
    for f in dataclasses.fields(cls):
        namespace["__annotations__"][f.name] = f.type
        if f.default is not dataclasses.MISSING:
            namespace[f.name] = f.default
        elif f.default_factory is not dataclasses.MISSING:
            namespace[f.name] = dataclasses.field(default_factory=f.default_factory)
    if hasattr(cls, "__post_init__"):
        namespace["__post_init__"] = cls.__post_init__
    twin = type(cls.__name__, (), namespace)
    twin.__module__ = cls.__module__
    return dataclasses.dataclass(frozen=True, kw_only=True, slots=True)(twin)


def value_rows(rounds: int) -> None:
    call = ToolCall(id="c1", name="echo", arguments='{"n": 1}')
    turn = ModelTurn(tool_calls=(call,))
    number, text = (
        ToolResult(call_id="c1", name="e", ok=True, output=7),
        ToolResult(call_id="c1", name="e", ok=True, output="seven"),
    )
    row("`checked_turn`: its quick check", lambda: checked_turn(turn),
        lambda: _checked_slowly(turn), rounds)  # fmt: skip
    row("`ToolResult.to_content`: an `int` output", number.to_content,
        lambda: dumps({"ok": True, "output": number.output}), rounds)  # fmt: skip
    row("`ToolResult.to_content`: a `str` output", text.to_content,
        lambda: dumps({"ok": True, "output": text.output}), rounds)  # fmt: skip
    cases: dict[str, tuple[type, dict[str, Any]]] = {
        "`Message` (assistant)": (Message, {"role": "assistant", "content": "x"}),
        "`Message` (tool)": (Message, {"role": "tool", "content": "{}", "tool_call_id": "c1"}),
        "`ToolResult`": (ToolResult, {"call_id": "c1", "name": "e", "ok": True, "output": 1}),
        "`ToolCall`": (ToolCall, {"id": "c1", "name": "echo", "arguments": "{}"}),
        "`ModelTurn`": (ModelTurn, {"text": "", "finish_reason": "tool_calls"}),
        "`Usage`": (Usage, {"input_tokens": 10, "output_tokens": 2}),
    }
    for label, (cls, fields) in cases.items():
        row(f"`fast_init`: a {label}", maker(cls, fields),
            maker(without_fast_init(cls), fields), rounds)  # fmt: skip


def maker(cls: type, fields: dict[str, Any]) -> Callable[[], Any]:
    return lambda: cls(**fields)


STARTUP = r"""
import sys, time
started = time.process_time()
import reactloop.tools.plain as plain
if sys.argv[1] == "pydantic":
    plain._plain_params = lambda fn: None  # every built-in tool through make_tool
from reactloop.tools.families.calculator import calculator_tool
from reactloop.tools.families.lookup import lookup_tool
calc, look = calculator_tool(), lookup_tool({"a": "1"})
specs = [calc.spec, look.spec]
calc.validate({"expression": "1+1"}), look.validate({"key": "a"})
print((time.process_time() - started) * 1000)
"""


def startup_row(processes: int) -> None:
    times: dict[str, list[float]] = {"plain": [], "pydantic": []}
    for index in range(processes):
        order = ("plain", "pydantic") if index % 2 == 0 else ("pydantic", "plain")
        for side in order:
            out = subprocess.run(
                [sys.executable, "-c", STARTUP, side], capture_output=True, text=True, check=True
            )
            times[side].append(float(out.stdout))
    a, b = statistics.median(times["plain"]), statistics.median(times["pydantic"])
    print(
        f"| `tools/plain.py`: build calculator and lookup, validate a call of each (CPU ms, "
        f"a process) | {a:.1f} | {b:.1f} | {b - a:.1f} |"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--processes", type=int, default=8)
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.1f}")
    print("| trick | with it (ns) | plain (ns) | gain (ns) |\n|---|---|---|---|")
    value_rows(args.rounds)
    startup_row(args.processes)


if __name__ == "__main__":
    main()
