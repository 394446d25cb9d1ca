"""The pids cgroups of harnesses that were killed are emptied and removed by the next one.

Root only (only root makes pids cgroups). The cgroups are made where the harness makes its own
(``PidsCgroup.create``): the v1 ``pids`` hierarchy on a v1 or hybrid layout, the v2 hierarchy
when it delegates ``pids`` on a pure v2 one; the code under test is the same in both.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from reactloop.sandbox.cgroup import PidsCgroup

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="only root makes pids cgroups")


@pytest.fixture
def base() -> Iterator[Path]:
    """The folder the harness makes its cgroups in; skipped where it makes none."""
    probe = PidsCgroup.create(16)
    if probe is None:
        pytest.skip("no pids cgroup can be made here")
    probe.remove()
    yield probe.path.parent


def dead_pid() -> int:
    done = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)  # fmt: skip
    return int(done.stdout)


def left_behind(folder: Path) -> subprocess.Popen[bytes]:
    """A cgroup as a killed harness leaves it: with a process still in it."""
    folder.mkdir()
    sleeper = subprocess.Popen(["sleep", "600"])
    (folder / "cgroup.procs").write_text(str(sleeper.pid))
    return sleeper


@pytest.mark.parametrize("name", ["reactloop-{dead}-123-0", "reactloop-{dead}-0"],
                         ids=["named-with-start-time", "older-name"])  # fmt: skip
def test_a_dead_harness_cgroup_with_processes_is_emptied_and_removed(base: Path, name: str) -> None:
    stale = base / name.format(dead=dead_pid())
    sleeper = left_behind(stale)
    try:
        fresh = PidsCgroup.create(16)
        assert fresh is not None
        fresh.remove()
        assert not stale.exists()
        assert sleeper.wait(timeout=10) == -9
    finally:
        sleeper.kill()
        sleeper.wait()
        PidsCgroup(stale).remove()


def test_a_reused_process_id_does_not_keep_a_dead_harness_cgroup(base: Path) -> None:
    """The owner's pid is alive (ours), but its start time says another process had it."""
    stale = base / f"reactloop-{os.getpid()}-1-0"
    sleeper = left_behind(stale)
    try:
        fresh = PidsCgroup.create(16)
        assert fresh is not None and fresh.path.name.startswith(f"reactloop-{os.getpid()}-")
        fresh.remove()
        assert not stale.exists() and sleeper.wait(timeout=10) == -9
    finally:
        sleeper.kill()
        sleeper.wait()
        PidsCgroup(stale).remove()


def test_a_living_harness_cgroup_is_left_alone(base: Path) -> None:
    mine = PidsCgroup.create(16)
    assert mine is not None
    sleeper = subprocess.Popen(["sleep", "600"])
    try:
        (mine.path / "cgroup.procs").write_text(str(sleeper.pid))
        other = PidsCgroup.create(16)
        assert other is not None
        other.remove()
        assert mine.path.is_dir() and sleeper.poll() is None
    finally:
        mine.remove()
        sleeper.wait()
