"""The lines of Python a step executes (``sys.settrace``): a count that a loaded machine does
not disturb, for this tree and, given its ``src``, another checkout.

    python benchmarks/step_lines.py [/tmp/base/src]

The run is ``benchmarks/overhead.py``'s (a scripted model whose every turn calls a trivial
read-only tool), journal off and on; a step's lines are those of a 200-step run less those of
a 100-step run, over 100.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent / "src"

CHILD = """
import sys, tempfile
from pathlib import Path
from reactloop import Agent, Journal, Limits, ModelTurn, ScriptedModel, ToolCall, tool

@tool(read_only=True)
def echo(n: int) -> int:
    "Return n."
    return n

def lines(steps, folder):
    turns = [ModelTurn(tool_calls=(ToolCall(id=f"c{i}", name="echo", arguments=f'{{"n": {i}}}'),))
             for i in range(steps)] + [ModelTurn(text="done")]
    limits = Limits(max_model_calls=steps + 1, max_tool_calls=steps, max_seconds=None)
    journal = Journal(folder / f"run-{steps}.jsonl") if folder else None
    agent = Agent(ScriptedModel(turns, keep_requests=False), [echo], limits=limits, journal=journal)
    count = [0]
    def tracer(frame, event, arg):
        count[0] += event == "line"
        return tracer
    sys.settrace(tracer)
    result = agent.run("count")
    sys.settrace(None)
    if journal:
        journal.close()
    assert result.answer == "done", result.stop_reason
    return count[0]

with tempfile.TemporaryDirectory() as name:
    folder = Path(name)
    lines(5, None), lines(5, folder)  # first-run work (imports, caches) left out
    for label, where in (("journal off", None), ("journal on", folder)):
        print(label, (lines(200, where) - lines(100, where)) / 100)
"""


def counts(src: Path) -> dict[str, float]:
    env = {**os.environ, "PYTHONPATH": str(src)}
    out = subprocess.run(
        [sys.executable, "-c", CHILD], env=env, capture_output=True, text=True, check=True
    ).stdout
    return {line.rsplit(" ", 1)[0]: float(line.rsplit(" ", 1)[1]) for line in out.splitlines()}


def main() -> None:
    sides = {"this": counts(HERE)}
    if len(sys.argv) > 1:
        sides["other"] = counts(Path(sys.argv[1]))
    print("lines a step  " + "  ".join(f"{name:>7}" for name in sides))
    for row in sides["this"]:
        print(f"{row:<12}  " + "  ".join(f"{side[row]:>7.1f}" for side in sides.values()))


if __name__ == "__main__":
    main()
