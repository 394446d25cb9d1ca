"""What recording the workspace costs at a run's start, and restoring it at a replay's.

    python benchmarks/workspace_record.py --repeat 5

Workspaces of text files made up in a temporary folder (each file different, so gzip has work
to do): the README's coding example, 1 MB in 200 files and 3.8 MB in 1,900 (both snapshotted),
50 MB in 5,000 (digests). Prints the median of each measurement, and the record's size.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from reactloop.journal.workspace_record import record_workspace
from reactloop.replay.start import StartRecord, differences, restore

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "failing_test"


def make(folder: Path, files: int, size: int) -> Path:
    for number in range(files):
        path = folder / f"pkg{number % 20}" / f"module_{number}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        line = f"value_{number} = {number} * 3  # a line of module {number}\n"
        path.write_text((line * (size // len(line) + 1))[:size], encoding="utf-8")
    return folder


def median_ms(action: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        action()
        times.append(time.perf_counter() - started)
    return statistics.median(times) * 1000


def measure(name: str, root: Path, repeat: int, scratch: Path) -> None:
    record = record_workspace(root)
    recorded = median_ms(lambda: record_workspace(root), repeat)
    size = len(json.dumps(record)) / 1024
    line = f"{name:<24} {record['kind']:<9} record {recorded:8.1f} ms  {size:8.0f} KiB in run_start"
    start = StartRecord.of(record)
    assert start is not None
    if start.kind == "snapshot":

        def unpack() -> None:
            target = scratch / "restored"
            shutil.rmtree(target, ignore_errors=True)
            restore(start, target)

        line += f"  restore {median_ms(unpack, repeat):7.1f} ms"
    line += f"  compare {median_ms(lambda: differences(start, root), repeat):7.1f} ms"
    print(line)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        scratch = Path(folder)
        measure("example (4 files)", EXAMPLE, args.repeat, scratch)
        measure("1 MB, 200 files", make(scratch / "a", 200, 5_000), args.repeat, scratch)
        measure("3.8 MB, 1,900 files", make(scratch / "b", 1_900, 2_000), args.repeat, scratch)
        measure("50 MB, 5,000 files", make(scratch / "c", 5_000, 10_000), args.repeat, scratch)


if __name__ == "__main__":
    main()
