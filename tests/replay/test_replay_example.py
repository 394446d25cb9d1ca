"""The README's coding example (examples/failing_test), recorded and replayed through the CLI:
`reactloop run ... --trace T`, then `reactloop replay T` says identical (the replay starts from
the workspace as the run found it, and pytest's timings are normalised).

Runs the example's real tools: bash in bubblewrap where it works (as here and in CI), else in
the weak mode; the replay uses the same mode either way, so both cases are covered alike.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

from reactloop.journal.writer import read_journal

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "failing_test"


def reactloop(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", "from reactloop.cli import main; main()", *args],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def test_the_recorded_coding_example_replays_identical(tmp_path: Path) -> None:
    workspace = tmp_path / "failing_test"
    shutil.copytree(EXAMPLE, workspace)
    trace = tmp_path / "run.jsonl"
    run = reactloop(
        "run", "Make the failing test pass",
        "--model", f"scripted:{EXAMPLE / 'script.json'}",
        "--workspace", str(workspace), "--tools", "files,bash", "--trace", str(trace),
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    outputs = [
        e["result"]["output"]["output"]
        for e in read_journal(trace)
        if e["type"] == "tool_result" and e["result"]["name"] == "bash"
    ]
    assert [re.search(r"passed in \d+\.\d+s", o) is not None for o in outputs] == [True, True]

    replayed = reactloop("replay", str(trace), "--tools", "files,bash", "--json")
    assert replayed.returncode == 0, replayed.stdout + replayed.stderr
    report = json.loads(replayed.stdout)
    assert report["identical"] is True and report["compared"] == 5
    assert report["plan"]["workspace_is"] == "snapshot"
    assert "restored from the journal's snapshot" in replayed.stderr
    plain = reactloop("replay", str(trace), "--tools", "files,bash")
    assert plain.returncode == 0 and plain.stdout.startswith("identical (5 tool results compared)")

    # The workspace as the run left it (calc.py fixed) is not where the run started.
    refused = reactloop(
        "replay", str(trace), "--tools", "files,bash", "--workspace", str(workspace)
    )
    assert refused.returncode == 2
    (line,) = refused.stderr.strip().splitlines()
    assert line.startswith(f"reactloop: error: the given workspace {workspace}")
    assert "(calc.py changed)" in line  # the caches pytest left (__pycache__, …) are not compared
