"""The disk budget against space reserved faster than it can be watched: parallel ``fallocate``.

Every mode (the ``run`` fixture of ``test_sandbox_containment``): no file grows past the budget
(RLIMIT_FSIZE binds ``fallocate``), and what ``fallocate --keep-size`` reserves past that is
given back once the budget stops the command: its new files go, older files keep their content.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from test_sandbox_containment import MODES, Run, runner

from reactloop.sandbox.reclaim import _Statx
from reactloop.sandbox.rlimits import MIB, ResourceLimits

BUDGET = ResourceLimits(disk_bytes=4 * MIB)
pytestmark = pytest.mark.skipif(shutil.which("fallocate") is None, reason="no fallocate here")


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """The folder the commands run in, with a file of the user's in it."""
    folder = tmp_path / "workspace"
    folder.mkdir()
    (folder / "mine.txt").write_text("the user's own words\n")
    times = _Statx().times(str(folder / "mine.txt"))
    if times is None or times[0] is None:
        pytest.skip("this file system records no creation time: files are kept (docs say so)")
    return folder


@pytest.fixture(params=MODES)
def run(request: pytest.FixtureRequest, workspace: Path) -> Run:
    return runner(request.param, workspace)


def allocated(folder: Path) -> int:
    """Bytes the files under ``folder`` hold on disk (blocks, not sizes)."""
    return sum(
        os.lstat(os.path.join(top, name)).st_blocks * 512
        for top, _dirs, files in os.walk(folder)
        for name in files
    )


def eight_at_once(option: str) -> str:
    """Eight files of 40 MiB reserved at once, and a ninth in a new folder; each says its rc."""
    reserve = "(touch {0}; fallocate " + option + ' -l 40M {0}; echo "rc=$?") &'
    eight = " ".join(reserve.format(f"f{i}") for i in range(8))
    return f"mkdir sub; {eight} {reserve.format('sub/g')} wait; echo ran"


def test_no_file_outgrows_the_budget_not_even_through_fallocate(run: Run, workspace: Path) -> None:
    """Eight ``fallocate -l 40M`` at once under a 4 MiB budget: each is refused (SIGXFSZ)."""
    result = run(eight_at_once(""), limits=BUDGET)
    assert result.output.count("rc=153") == 9 and "ran" in result.output  # 128 + SIGXFSZ
    assert allocated(workspace) <= BUDGET.disk_bytes
    assert (workspace / "mine.txt").read_text() == "the user's own words\n"


def test_files_reserved_at_once_are_removed_when_the_budget_stops(
    run: Run, workspace: Path
) -> None:
    """``--keep-size`` escapes RLIMIT_FSIZE: 360 MiB reserved in a moment, all given back."""
    result = run(eight_at_once("-n"), limits=BUDGET)
    assert result.stopped is not None and result.stopped.startswith("disk budget exceeded")
    assert "files and folders it created" in result.stopped
    assert sorted(os.listdir(workspace)) == ["mine.txt"]
    assert (workspace / "mine.txt").read_text() == "the user's own words\n"
    assert allocated(workspace) <= BUDGET.disk_bytes


def test_space_reserved_past_the_end_of_an_older_file_is_given_back(
    run: Run, workspace: Path
) -> None:
    """The file the command grew is cut back to its end (content and times kept); a file of
    the user's with a preallocation of its own, which the command did not touch, is left be."""
    theirs = workspace / "prealloc.bin"
    theirs.write_bytes(b"0123456789")
    subprocess.run(["fallocate", "-n", "-l", "2M", str(theirs)], check=True)
    os.utime(theirs, ns=(1_000_000_000, 1_000_000_000))
    before = theirs.stat()
    assert before.st_blocks * 512 >= 2 * MIB
    result = run("fallocate -n -l 40M mine.txt", limits=BUDGET)
    assert result.stopped is not None and result.stopped.startswith("disk budget exceeded")
    assert "freed 39 MiB" in result.stopped or "freed 40 MiB" in result.stopped
    assert (workspace / "mine.txt").read_text() == "the user's own words\n"
    after = theirs.stat()
    assert (after.st_blocks, after.st_mtime_ns) == (before.st_blocks, before.st_mtime_ns)
    assert allocated(workspace) <= BUDGET.disk_bytes


def test_reclaim_follows_no_link_out_of_the_workspace(tmp_path: Path) -> None:
    """A link the command made is removed; what it points to, even if newer, is not walked."""
    from reactloop.sandbox.reclaim import birth_floor, reclaim

    workspace, outside = tmp_path / "workspace", tmp_path / "outside"
    workspace.mkdir()
    outside.mkdir()
    times = _Statx().times(str(outside))
    if times is None or times[0] is None:
        pytest.skip("this file system records no creation time")
    floor = birth_floor()
    (outside / "new.txt").write_text("not the command's to remove")
    (workspace / "link").symlink_to(outside)
    (workspace / "made").mkdir()
    (workspace / "made" / "inner").write_text("x")
    done = reclaim([workspace], floor)
    assert os.listdir(workspace) == [] and done.removed == 2
    assert (outside / "new.txt").read_text() == "not the command's to remove"
