"""A Ctrl-C campaign: scripted runs in a child process, each sent SIGINT at a random (seeded)
instant, once or twice; every journal is checked (``ctrl_c_campaign.py`` says what).

The child runs the tools on the loop's thread, on worker threads (the default time limit) and
behind an approver; and, in fresh processes, a first run whose lazy import of a module is
interrupted (the loop's own modules load with the first ``Agent``: these are what only some
runs need). The counts are small here; ``REACTLOOP_CTRL_C_RUNS`` (runs a mode, several
hundred for a real campaign) and ``REACTLOOP_CTRL_C_SEED`` scale it up, and
``REACTLOOP_CTRL_C_FIRST`` is how many of those modules get a fresh process each.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest

CHILD = Path(__file__).with_name("ctrl_c_campaign.py")
RUNS = int(os.environ.get("REACTLOOP_CTRL_C_RUNS", "150"))
SEED = int(os.environ.get("REACTLOOP_CTRL_C_SEED", "20261201"))
FIRST = int(os.environ.get("REACTLOOP_CTRL_C_FIRST", "2"))


def child(*args: str, tmp_path: Path) -> dict[str, object]:
    done = subprocess.run(
        [sys.executable, str(CHILD), *args, str(tmp_path)],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    report: dict[str, object] = json.loads(done.stdout.splitlines()[-1])
    return report


@pytest.mark.parametrize("mode", ["here", "workers", "approver"])
def test_no_ctrl_c_corrupts_the_record(mode: str, tmp_path: Path) -> None:
    report = child(mode, str(RUNS), str(SEED), tmp_path=tmp_path)
    assert report["problems"] == []
    signalled = report["signalled"]
    assert isinstance(signalled, int) and signalled > 0  # the campaign did interrupt runs


@pytest.mark.parametrize("index", range(FIRST))
def test_a_ctrl_c_while_the_first_run_loads_its_modules_cancels_it(
    index: int, tmp_path: Path
) -> None:
    loaded = child("modules", tmp_path=tmp_path)["modules"]
    assert isinstance(loaded, list) and loaded  # an observed run's workspace record
    assert not [m for m in loaded if m.startswith("reactloop.loop.")]  # loaded by Agent(...)
    module = random.Random(SEED + index).choice(sorted(loaded))
    report = child("first", module, tmp_path=tmp_path)
    assert report["problems"] == [], module
