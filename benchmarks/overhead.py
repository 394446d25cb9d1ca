"""The harness's own cost per step, import time, peak memory, and prompt sizes.

    python benchmarks/overhead.py [--repeat 7] [--cli]
    python benchmarks/overhead.py --limit-ab OTHER/src [--pairs 5] [--repeat 5]

Each step is one scripted model turn with one call to a trivial read-only tool, so what is
measured is the loop itself: budget checks, loop guard, validation, events, history. The
"time limit on" rows run with a ``max_seconds`` (the default ``Limits``): the run then goes on
a thread of its own, which the caller's thread gives up on at the limit, and its tools run
inline (``reactloop/loop/runtime/custody.py``). ``--limit-ab`` times only that (the default limit
against none, sync and async tools) in an interleaved A/B against another checkout
(``benchmarks/limit_ab.py``). ``--cli`` adds the command line's
path: ``reactloop run --model scripted:FILE`` at 1000, 2000 and 3000 steps (journal on,
requests kept), whose cost per step must not grow with the length of the run. The "async
tool" rows call an ``async def`` tool instead (on the run's own event loop), through ``run``
and through ``await arun`` (the same loop on a thread of its own): the async path's cost per
step must stay within 1.5x of the sync path's. ``benchmarks/overhead_ab.py OTHER/src`` runs
the same steps in an interleaved A/B against another checkout.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from reactloop import (
    Agent,
    FunctionModel,
    Journal,
    Limits,
    ModelTurn,
    RunResult,
    ScriptedModel,
    ToolCall,
    tool,
)
from reactloop.loop.notices import DEFAULT_INSTRUCTIONS
from reactloop.models.react import ReactTextModel
from reactloop.tools.families.calculator import calculator_tool
from reactloop.tools.families.lookup import lookup_tool

# CPU time of this process: on a shared, loaded machine it is far steadier than wall time,
# and the loop does no I/O but the journal's writes (which it does count, as system time).
CLOCK = time.process_time


@tool(read_only=True)
def echo(n: int) -> int:
    """Return n."""
    return n


@tool(read_only=True)
async def aecho(n: int) -> int:
    """Return n, asynchronously."""
    return n


def scripted_turns(steps: int, name: str = "echo") -> list[ModelTurn]:
    turns = [
        ModelTurn(tool_calls=(ToolCall(id=f"c{i}", name=name, arguments=f'{{"n": {i}}}'),))
        for i in range(steps)
    ]
    return [*turns, ModelTurn(text="done")]


def one_run(steps: int, journal_dir: Path | None, max_seconds: float | None = None) -> float:
    """Seconds per step of one run of ``steps`` tool steps (plus the answering step)."""
    model = ScriptedModel(scripted_turns(steps), keep_requests=False)
    limits = Limits(max_model_calls=steps + 1, max_tool_calls=steps, max_seconds=max_seconds)
    journal = Journal(journal_dir / f"run-{steps}.jsonl") if journal_dir else None
    agent = Agent(model, [echo], limits=limits, journal=journal)
    started = CLOCK()
    result = agent.run("count")
    elapsed = CLOCK() - started
    if journal:
        journal.close()
    assert result.answer == "done", result.stop_reason
    return elapsed / (steps + 1)


def async_tool_run(steps: int, use_arun: bool) -> float:
    """Seconds per step with an async tool, through ``run`` or ``await arun`` (journal off)."""
    model = ScriptedModel(scripted_turns(steps, "aecho"), keep_requests=False)
    limits = Limits(max_model_calls=steps + 1, max_tool_calls=steps, max_seconds=None)
    agent = Agent(model, [aecho], limits=limits)

    async def awaited() -> tuple[float, RunResult]:  # the caller's loop is running already
        started = CLOCK()
        result = await agent.arun("count")
        return CLOCK() - started, result

    if use_arun:
        elapsed, result = asyncio.run(awaited())
    else:
        started = CLOCK()
        result = agent.run("count")
        elapsed = CLOCK() - started
    assert result.answer == "done", result.stop_reason
    return elapsed / (steps + 1)


def bare_loop(steps: int) -> float:
    """Seconds per step of the seed's bare loop (no checks, no validation, no journal)."""
    turns = scripted_turns(steps)
    tools = {"echo": lambda n: n}
    history: list[dict[str, object]] = [{"role": "user", "content": "count"}]
    started = CLOCK()
    for turn in turns:
        history.append({"role": "assistant", "content": turn.text})
        if not turn.tool_calls:
            break
        for call in turn.tool_calls:
            try:
                result = tools[call.name](**json.loads(call.arguments))
            except Exception as exc:
                result = f"Error: {exc}"
            history.append({"role": "tool", "tool_call_id": call.id, "content": str(result)})
    return (CLOCK() - started) / (steps + 1)


def per_step(repeat: int) -> dict[str, dict[int, float]]:
    """Median seconds per step; the three variants take turns, so a drift of the machine's
    speed (large on shared VMs) hits them alike and their ratios stay fair."""
    labels = ("bare loop", "journal off", "journal on", "time limit on", "async tool", "arun async")
    samples: dict[str, dict[int, list[float]]] = {label: {} for label in labels}
    with tempfile.TemporaryDirectory() as folder:
        for steps in (10, 100, 1000):
            for _ in range(repeat):
                samples["bare loop"].setdefault(steps, []).append(bare_loop(steps))
                samples["journal off"].setdefault(steps, []).append(one_run(steps, None))
                samples["journal on"].setdefault(steps, []).append(one_run(steps, Path(folder)))
                timed = one_run(steps, Path(folder), max_seconds=600.0)
                samples["time limit on"].setdefault(steps, []).append(timed)
                samples["async tool"].setdefault(steps, []).append(async_tool_run(steps, False))
                samples["arun async"].setdefault(steps, []).append(async_tool_run(steps, True))
    return {
        label: {steps: statistics.median(values) for steps, values in rows.items()}
        for label, rows in samples.items()
    }


def marginal(per_step: dict[int, float]) -> tuple[float, float]:
    """What one more step costs (from the 100- and 1000-step runs, whose cost per step includes
    the run's fixed cost spread over its steps) and that fixed cost of a run."""
    short, long = per_step[100] * 101, per_step[1000] * 1001
    step = (long - short) / 900
    return step, short - step * 101


def early_and_late_step_costs(repeat: int) -> tuple[float, float, float]:
    """Cost per step over steps 5–55 and 945–995 of a 1000-step run (journal off): medians of
    each, and the median of their ratio within one run, which a drift of the machine's speed
    between runs does not touch."""
    early, late, ratios = [], [], []
    for _ in range(repeat):
        stamps: list[float] = []
        turns = scripted_turns(1000)

        def model_fn(
            request: object, turns: list[ModelTurn] = turns, stamps: list[float] = stamps
        ) -> ModelTurn:
            stamps.append(CLOCK())
            return turns[len(stamps) - 1]

        limits = Limits(max_model_calls=1001, max_tool_calls=1000, max_seconds=None)
        Agent(FunctionModel(model_fn), [echo], limits=limits).run("count")
        first = (stamps[55] - stamps[5]) / 50
        last = (stamps[995] - stamps[945]) / 50
        early.append(first)
        late.append(last)
        ratios.append(last / first)
    return statistics.median(early), statistics.median(late), statistics.median(ratios)


# Peak RSS from /proc (VmHWM, in kB): getrusage's ru_maxrss survives fork+exec, so a child of
# this busy process would report this process's peak instead of its own.
PEAK_KB = "int(open('/proc/self/status').read().split('VmHWM:')[1].split()[0])"


def import_and_memory(repeat: int) -> dict[str, float]:
    code = (
        "import time; t = time.perf_counter(); import reactloop; "
        f"d = time.perf_counter() - t; print(d, {PEAK_KB})"
    )
    times, rss, cached = [], [], []
    with tempfile.TemporaryDirectory() as caches:
        # With a bytecode cache, as an installed package has (this environment may run Python
        # with PYTHONDONTWRITEBYTECODE=1, which compiles every module at every start).
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        env["PYTHONPYCACHEPREFIX"] = caches
        for attempt in range(repeat + 1):
            out = subprocess.run(
                [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env
            )
            if attempt:  # the first one writes the cache
                cached.append(float(out.stdout.split()[0]))
    for _ in range(repeat):
        out = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=True
        )
        seconds, kilobytes = out.stdout.split()
        times.append(float(seconds))
        rss.append(int(kilobytes) / 1024)
    run_code = (
        "import sys; sys.path.insert(0, 'benchmarks'); import overhead; "
        f"overhead.one_run(1000, None); print({PEAK_KB})"
    )
    out = subprocess.run(
        [sys.executable, "-c", run_code], capture_output=True, text=True, check=True
    )
    return {
        "import_s": statistics.median(times),
        "import_cached_bytecode_s": statistics.median(cached),
        "import_peak_mb": statistics.median(rss),
        "run_1000_peak_mb": int(out.stdout.strip()) / 1024,
    }


def prompt_sizes() -> dict[str, int]:
    tools = [calculator_tool(), lookup_tool({"k": "v"})]
    specs = [t.spec for t in tools]
    text_prompt = ReactTextModel(ScriptedModel([])).system_prompt(specs)
    native = json.dumps([{"type": "function", "function": s.to_dict()} for s in specs])
    return {
        "text_system_prompt_chars": len(text_prompt),
        "native_tool_specs_chars": len(native),
        "native_instructions_chars": len(DEFAULT_INSTRUCTIONS),
    }


def cli_script(steps: int, folder: Path) -> Path:
    """A script for ``--model scripted:FILE``: ``steps`` calculator calls, then the answer."""
    turns: list[object] = [
        {"tool_calls": [{"name": "calculator", "arguments": {"expression": f"{i} + 1"}}]}
        for i in range(steps)
    ]
    path = folder / f"script-{steps}.json"
    path.write_text(json.dumps([*turns, {"content": "done"}]), encoding="utf-8")
    return path


def cli_run(script: Path, steps: int, trace: Path) -> float:
    """Wall seconds of one ``reactloop run`` over ``script`` (the interpreter's start included)."""
    command = [
        sys.executable, "-m", "reactloop", "run", "count", "--model", f"scripted:{script}",
        "--tools", "calculator", "--protocol", "native", "--max-steps", str(steps + 1),
        "--max-tool-calls", str(max(steps, 1)), "--trace", str(trace),
    ]  # fmt: skip
    started = time.perf_counter()
    subprocess.run(command, capture_output=True, check=True)
    return time.perf_counter() - started


def cli_path(repeat: int) -> dict[int, float]:
    """Median wall seconds of the CLI's scripted path at 0, 1000, 2000 and 3000 steps."""
    medians: dict[int, float] = {}
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        for steps in (0, 1000, 2000, 3000):
            script = cli_script(steps, folder)
            times = [cli_run(script, steps, folder / "trace.jsonl") for _ in range(repeat)]
            medians[steps] = statistics.median(times)
    return medians


def print_cli_path(repeat: int) -> None:
    medians = cli_path(repeat)
    start = medians.pop(0)
    for steps, seconds in medians.items():
        per_step = (seconds - start) / steps
        print(f"cli scripted {steps:>4} steps: {seconds:.2f} s ({per_step * 1e6:.0f} µs a step)")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--cli", action="store_true", help="also time the CLI's scripted path")
    parser.add_argument(
        "--limit-ab",
        type=Path,
        metavar="OTHER_SRC",
        help="only the time limit's cost, A/B against another checkout's src",
    )
    parser.add_argument("--pairs", type=int, default=5, help="with --limit-ab")
    args = parser.parse_args()
    if args.limit_ab is not None:
        from limit_ab import limit_ab

        limit_ab(args.limit_ab, args.pairs, args.repeat)
        return
    table = per_step(args.repeat)
    for label, row in table.items():
        cells = "  ".join(
            f"{steps:>4} steps: {seconds * 1e6:7.1f} µs" for steps, seconds in row.items()
        )
        print(f"{label:13} {cells}")
    for label in ("journal off", "journal on"):
        times = table[label][100] / table["bare loop"][100]
        print(f"reactloop / bare loop at 100 steps, {label}: {times:.1f}x")
    for steps in (100, 1000):
        same_tool = table["arun async"][steps] / table["async tool"][steps]
        sync_tool = table["arun async"][steps] / table["journal off"][steps]
        print(
            f"arun / run with the async tool at {steps} steps: {same_tool:.2f}x "
            f"(arun with the async tool / run with the sync tool: {sync_tool:.2f}x)"
        )
    for label in ("journal off", "async tool", "arun async"):
        step, fixed = marginal(table[label])
        print(
            f"{label}: {step * 1e6:.1f} µs a step (100 to 1000 steps), {fixed * 1e6:.0f} µs a run"
        )
    async_step = marginal(table["arun async"])[0] / marginal(table["journal off"])[0]
    print(f"arun with the async tool / run with the sync tool, a step: {async_step:.2f}x")
    early, late, ratio = early_and_late_step_costs(args.repeat)
    print(
        f"per-step cost over steps 5-55: {early * 1e6:.1f} µs, over steps 945-995: "
        f"{late * 1e6:.1f} µs (median ratio within a run {ratio:.2f})"
    )
    for key, value in import_and_memory(args.repeat).items():
        print(f"{key}: {value:.3f}")
    for key, value in prompt_sizes().items():
        print(f"{key}: {value}")
    if args.cli:
        print_cli_path(args.repeat)


if __name__ == "__main__":
    main()
