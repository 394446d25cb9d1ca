"""What resuming costs: the journal per step with the write-ahead ``tool_start`` on (with and
without ``fsync``), the bytes a step adds, and the time to rebuild a run from a journal of
1,000 and of 10,000 events (read, checked, its state rebuilt: ``prepare_resume``).

    python benchmarks/resume.py [--repeat 5]

A scripted run, one call of a side-effect tool a step (every call is written ahead), budget
notices off. Medians of ``--repeat`` runs; figures in docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path

from reactloop import Agent, Journal, Limits, ModelTurn, ScriptedModel, ToolCall, tool
from reactloop.journal.writer import read_journal
from reactloop.loop.tool_calls import CallRunner
from reactloop.resume.resume_run import prepare_resume

WRITE_AHEAD = CallRunner._start


@tool
def touch(n: int) -> int:
    """Return n (a tool with side effects, as far as the loop knows).

    Args:
        n: a number
    """
    return n


def limits(steps: int) -> Limits:
    return Limits(
        max_model_calls=steps + 1,
        max_tool_calls=steps + 1,
        max_seconds=None,
        budget_notices=False,
        repeat_warn=2,
        near_repeat_warn=None,
        near_repeat_stop=None,
    )


def scripted_run(steps: int, journal: Journal | None) -> float:
    turns = [
        ModelTurn(tool_calls=(ToolCall(id=f"c{i}", name="touch", arguments=f'{{"n": {i}}}'),))
        for i in range(steps)
    ] + [ModelTurn(text="done")]
    agent = Agent(ScriptedModel(turns, keep_requests=False), [touch], journal=journal)
    agent.limits = limits(steps)
    started = time.perf_counter()
    result = agent.run("touch")
    elapsed = time.perf_counter() - started
    assert result.answer == "done", result.error
    return elapsed


def per_step(
    steps: int, repeat: int, folder: Path, *, fsync: bool | None, ahead: bool = True
) -> float:
    """Median seconds a step of a run (``fsync`` None: not journaled; ``ahead`` False: without
    the write-ahead ``tool_start``, as before it, for comparison)."""
    CallRunner._start = WRITE_AHEAD if ahead else (lambda self, prepared: None)  # type: ignore[method-assign]
    times = []
    for n in range(repeat):
        if fsync is None:
            times.append(scripted_run(steps, None))
            continue
        with Journal(folder / f"run{n}.jsonl", fsync=fsync) as journal:
            times.append(scripted_run(steps, journal))
    return statistics.median(times) / steps


def journal_without_stop(events: int, folder: Path) -> Path:
    """A journal of about ``events`` events, its ``stop`` cut off (a killed run)."""
    steps = max(1, events // 5)  # request, turn, tool_call, tool_start, tool_result
    path = folder / f"killed{events}.jsonl"
    with Journal(path) as journal:
        scripted_run(steps, journal)
    lines = path.read_bytes().split(b"\n")[:-2]  # the stop and the final empty piece
    path.write_bytes(b"\n".join(lines) + b"\n")
    return path


def rebuild_time(path: Path, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        _, state = prepare_resume(path)
        times.append(time.perf_counter() - started)
        assert state.why == "no_stop"
    return statistics.median(times)


def decode_time(path: Path, repeat: int) -> float:
    """The journal's lines through ``json.loads`` alone: the floor of any reading of it."""
    lines = path.read_bytes().split(b"\n")[:-1]
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        decoded = [json.loads(line) for line in lines]
        times.append(time.perf_counter() - started)
        del decoded
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--steps", type=int, default=500)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        rows: dict[str, list[float]] = {}
        for _ in range(3):  # interleaved rounds: the machine's load falls on every row alike
            for ahead in (False, True):
                key = "on" if ahead else "off"
                rows.setdefault(f"bare {key}", []).append(
                    per_step(args.steps, args.repeat, folder, fsync=None, ahead=ahead)
                )
                rows.setdefault(f"plain {key}", []).append(
                    per_step(args.steps, args.repeat, folder, fsync=False, ahead=ahead)
                )
                synced_steps = max(50, args.steps // 10)
                rows.setdefault(f"fsync {key}", []).append(
                    per_step(synced_steps, args.repeat, folder, fsync=True, ahead=ahead)
                )
        best = {key: min(values) for key, values in rows.items()}
        lines = (folder / "run0.jsonl").read_bytes().split(b"\n")  # the last: write-ahead on
        size = sum(len(line) + 1 for line in lines[:-1]) / synced_steps
        start_line = next(len(line) + 1 for line in lines if b'"type":"tool_start"' in line)
        print(f"run without a journal: {best['bare on'] * 1e6:.1f} µs a step")
        for key in ("off", "on"):
            plain = (best[f"plain {key}"] - best[f"bare {key}"]) * 1e6
            synced = (best[f"fsync {key}"] - best[f"bare {key}"]) * 1e3
            print(f"journal, write-ahead {key}: {plain:.1f} µs a step; with fsync {synced:.2f} ms")
        print(f"journal bytes a step: {size:.0f}, of which tool_start {start_line}")
        previous: tuple[float, float] | None = None
        for count in (1_000, 10_000):
            path = journal_without_stop(count, folder)
            n = len(read_journal(path))
            seconds, floor = rebuild_time(path, args.repeat), decode_time(path, args.repeat)
            ratio = floor_ratio = ""
            if previous is not None:
                ratio = f" ({seconds / previous[0]:.1f}× the 1,000)"
                floor_ratio = f" ({floor / previous[1]:.1f}×)"
            print(f"rebuild from {n:,} events: {seconds * 1e3:.1f} ms{ratio}, "
                  f"{seconds * 1e3 / n * 1000:.1f} ms per 1,000 events; json.loads of its "
                  f"lines alone {floor * 1e3:.1f} ms{floor_ratio}")  # fmt: skip
            previous = seconds, floor


if __name__ == "__main__":
    main()
