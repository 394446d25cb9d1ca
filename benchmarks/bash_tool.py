"""Overhead of one sandboxed bash call: ``run_command("true")`` in each available mode.

    python benchmarks/bash_tool.py [--repeat 50]

Prints medians (ms) of: a plain ``bash -c true`` (the floor: a process start), bubblewrap
alone with our flags, and ``run_command("true")`` in the bwrap, weak+landlock and weak modes
(as root, also bwrap without the pids cgroup a root run joins: what a non-root user pays).
Figures are recorded in docs/benchmarks.md. The rows are interleaved, so machine load affects
them alike.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from reactloop.sandbox import landlock, launch
from reactloop.sandbox.bwrap import bwrap_argv, bwrap_problem
from reactloop.sandbox.command import minimal_env, run_command


def without_cgroup(action: Callable[[], object]) -> object:
    """As for a user who is not root: RLIMIT_NPROC suffices, so no pids cgroup is joined."""
    original = launch.PidsCgroup.create
    launch.PidsCgroup.create = lambda max_pids: None  # type: ignore[method-assign,assignment]
    try:
        return action()
    finally:
        launch.PidsCgroup.create = original  # type: ignore[method-assign]


def candidates(workspace: Path) -> dict[str, Callable[[], object]]:
    rows: dict[str, Callable[[], object]] = {
        "bash -c true (floor)": lambda: subprocess.run(["bash", "-c", "true"], check=True),
    }
    if bwrap_problem() is None:
        argv = bwrap_argv("true", workspace=workspace, env=minimal_env(workspace, "/tmp"))
        rows["bwrap alone, our flags"] = lambda: subprocess.run(argv, check=True)
        rows["run_command: bwrap"] = lambda: run_command("true", workspace=workspace, mode="bwrap")
        if os.geteuid() == 0:
            rows["run_command: bwrap, no cgroup"] = lambda: without_cgroup(
                lambda: run_command("true", workspace=workspace, mode="bwrap")
            )
    if landlock.abi_version() >= 1:
        rows["run_command: weak+landlock"] = lambda: run_command(
            "true", workspace=workspace, mode="weak"
        )
    rows["run_command: weak"] = lambda: run_command(
        "true", workspace=workspace, mode="weak", use_landlock=False
    )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=50)
    options = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="reactloop-bench-") as folder:
        rows = candidates(Path(folder))
        times: dict[str, list[float]] = {name: [] for name in rows}
        # One mode at a time: interleaved, each call would also pay for the previous mode's
        # teardown (the weak mode's supervisor and cgroup exiting in the background).
        for name, action in rows.items():
            action()  # warm-up: bwrap's first-use check, page cache
            for _ in range(options.repeat):
                started = time.perf_counter()
                action()
                times[name].append(time.perf_counter() - started)
    load = os.getloadavg()[0]
    print(f"median of {options.repeat} runs, load average {load:.1f}, euid {os.geteuid()}")
    for name, samples in times.items():
        print(f"{name:32} {statistics.median(samples) * 1000:7.1f} ms")


if __name__ == "__main__":
    main()
