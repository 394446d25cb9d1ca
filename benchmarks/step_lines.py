"""Lines of reactloop executed per step: a deterministic count where timings are noisy.

    python benchmarks/step_lines.py [OTHER/src ...] [--steps 200] [--files 12] [--off]
                                    [--instructions]

Each side (this tree's ``src``, then each one named) runs in a process of its own with
``PYTHONPATH`` at it: ``benchmarks/overhead.py``'s run (a scripted model whose every turn calls
a trivial read-only tool), journaled unless ``--off``, under ``sys.settrace``, counting the
lines executed in reactloop's own files and in the code it makes with ``exec`` and calls (a
dataclass's ``__init__``: ``<generated>``). The per-step figure is the difference between a
run of ``2 * steps`` steps and one of ``steps`` steps, divided by ``steps``: what a run's
start and end cost falls out. The table gives it per side and, per file, where sides differ.
``--instructions`` also counts each side's machine instructions a step, the same way, with
valgrind's callgrind (the run untraced, ``PYTHONHASHSEED=0``): slow, about a minute a side on
a quiet machine, but as steady as the line count and it sees the C work the lines do not.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent / "src"

CHILD = """
import collections, json, sys, tempfile
from pathlib import Path
import reactloop
from reactloop import Agent, Journal, Limits, ModelTurn, ScriptedModel, ToolCall, tool

ROOT = str(Path(reactloop.__file__).parent) + "/"
GENERATED = ROOT + "<generated>"

@tool(read_only=True)
def echo(n: int) -> int:
    "Return n."
    return n

def one_run(steps, folder, trace=True):
    turns = [ModelTurn(tool_calls=(ToolCall(id=f"c{i}", name="echo", arguments=f'{{"n": {i}}}'),))
             for i in range(steps)] + [ModelTurn(text="done")]
    limits = Limits(max_model_calls=steps + 1, max_tool_calls=steps, max_seconds=None)
    journal = Journal(folder / f"run-{steps}.jsonl") if folder else None
    agent = Agent(ScriptedModel(turns, keep_requests=False), [echo], limits=limits, journal=journal)
    counts = collections.Counter()

    def local(frame, event, arg):
        if event == "line":
            counts[frame.f_code.co_filename] += 1
        return local

    def generated(frame, event, arg):
        if event == "line":
            counts[GENERATED] += 1
        return generated

    def tracer(frame, event, arg):
        name = frame.f_code.co_filename
        if name.startswith(ROOT):
            return local
        caller = frame.f_back
        if name == "<string>" and caller and caller.f_code.co_filename.startswith(ROOT):
            return generated  # an __init__ made by exec: a dataclass's, line_init's
        return None

    sys.settrace(tracer if trace else None)
    try:
        result = agent.run("count")
    finally:
        sys.settrace(None)
    if journal:
        journal.close()
    assert result.answer == "done", result.stop_reason
    return {name[len(ROOT):]: n for name, n in counts.items()}

steps, journaled, plain = int(sys.argv[1]), sys.argv[2] == "on", sys.argv[3:] == ["plain"]
with tempfile.TemporaryDirectory() as name:
    folder = Path(name) if journaled else None
    one_run(3, folder, not plain)  # warm-up: first validators, lazy imports
    if plain:  # under callgrind: one run of ``steps``, untraced
        one_run(steps, folder, trace=False)
        sys.exit()
    short, long = one_run(steps, folder), one_run(2 * steps, folder)
print(json.dumps({f: (long.get(f, 0) - short.get(f, 0)) / steps for f in set(short) | set(long)}))
"""


def side_counts(src: str, steps: int, journaled: bool) -> dict[str, float]:
    env = dict(os.environ, PYTHONPATH=src)
    mode = "on" if journaled else "off"
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(steps), mode],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    counts: dict[str, float] = json.loads(done.stdout)
    return counts


def side_instructions(src: str, steps: int, journaled: bool) -> float:
    """Machine instructions a step (callgrind's ``Ir``), the run untraced; hash seed fixed."""
    env = dict(os.environ, PYTHONPATH=src, PYTHONHASHSEED="0")
    mode = "on" if journaled else "off"
    totals = []
    for n in (steps, 2 * steps):
        command = ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null"]
        command += [sys.executable, "-c", CHILD, str(n), mode, "plain"]
        done = subprocess.run(command, env=env, capture_output=True, text=True, check=True)
        found = re.search(r"Collected : (\d+)", done.stderr)
        assert found, done.stderr[-2000:]
        totals.append(int(found.group(1)))
    return (totals[1] - totals[0]) / steps


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("others", nargs="*", help="other checkouts' src folders")
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--files", type=int, default=12, help="files shown, most changed first")
    parser.add_argument("--off", action="store_true", help="without a journal")
    parser.add_argument(
        "--instructions", action="store_true", help="also callgrind's instructions a step (slow)"
    )
    args = parser.parse_args()
    sides = [str(HERE), *args.others]
    if args.instructions:
        ir = [side_instructions(src, args.steps, not args.off) for src in sides]
        print("instructions a step (callgrind Ir): " + ", ".join(f"{n:,.0f}" for n in ir))
    counts = [side_counts(src, args.steps, not args.off) for src in sides]
    names = ["this", *(f"other{i + 1}" for i in range(len(args.others)))]
    for name, src in zip(names, sides, strict=True):
        print(f"{name}: {src}")
    print("| lines a step | " + " | ".join(names) + " |")
    print("|---" * (len(names) + 1) + "|")
    print("| total | " + " | ".join(f"{sum(c.values()):.1f}" for c in counts) + " |")
    files = set().union(*counts)

    def spread(name: str) -> float:
        values = [c.get(name, 0.0) for c in counts]
        return max(values) - min(values)

    for name in sorted(files, key=spread, reverse=True)[: args.files]:
        if spread(name) == 0:
            break
        cells = " | ".join(f"{c.get(name, 0.0):.1f}" for c in counts)
        print(f"| {name} | {cells} |")


if __name__ == "__main__":
    main()
