"""Where a replay's tools run: in the workspace as the recorded run found it, never in the
recorded workspace when they can write.

A recorded run's ``edit_file`` or ``bash`` changed its workspace: the folder after the run is
not the one its first step saw, and running the tools there again would change it again. The
run's ``run_start`` records the workspace as it started (``reactloop.journal.workspace_record``):

- a snapshot (a small workspace): the replay runs in a temporary folder restored from it;
- digests (a larger one): the replay runs in a temporary copy of the recorded workspace (in it,
  when the tools only read), and refuses when that workspace differs from the digests;
- ``workspace=`` (``--workspace DIR``, say a fresh clone): the replay runs in DIR, and refuses
  when DIR differs from the recorded start (snapshot or digests);
- nothing (an older journal, or a workspace too big to record): as with digests, unchecked,
  and the plan says so.

Version-control metadata and caches are left out of the comparison (``start.IGNORED``). A
temporary folder is removed afterwards. The copy keeps symbolic links as links and leaves out
FIFOs, sockets and devices (copying a FIFO would block on it).
"""

from __future__ import annotations

import contextlib
import shutil
import stat
import tempfile
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from reactloop.errors import UsageError
from reactloop.replay.start import CHECKABLE, StartRecord, differences, restore, summary

WRITING_FAMILIES = ("files", "bash")  # the built-in families whose tools change the workspace


@dataclass(frozen=True, kw_only=True)
class ReplaySite:
    """``path``: where the tools run; ``how``: ``snapshot`` (a temporary folder restored from
    the journal's snapshot of ``recorded``), ``given`` (``workspace=``), ``copy`` (a temporary
    copy of ``recorded``), ``recorded`` (tools that only read: the recorded one).
    ``checked``: whether the folder was found to be as the recorded run started (None: the
    tools use no workspace, so there is nothing to check)."""

    recorded: Path | None
    path: Path | None
    how: str
    checked: bool | None = None

    def describe(self) -> str:
        if self.how == "snapshot":
            where = (
                f"tools run in {self.path}, restored from the journal's snapshot of "
                f"{self.recorded} as the run started, removed after"
            )
        elif self.how == "given":
            where = f"tools run in {self.path} (given), not in the recorded {self.recorded}"
        elif self.how == "copy":
            where = f"tools run in a temporary copy of {self.recorded} ({self.path}), removed after"
        elif self.checked is None:
            return "the tools use no workspace"
        else:
            where = f"tools run in the recorded workspace {self.path} (they only read)"
        if self.checked is False:
            where += (
                "\nthe journal does not record the workspace as the run started: "
                "the replay cannot check that it starts from there"
            )
        return where


def writes_workspace(config: Mapping[str, Any], families: tuple[str, ...]) -> bool:
    return not config.get("read_only") and any(f in WRITING_FAMILIES for f in families)


@contextlib.contextmanager
def replay_site(
    recorded: Path | None,
    given: Path | None,
    *,
    writes: bool,
    record: StartRecord | None = None,
    uses: bool = True,
) -> Iterator[ReplaySite]:
    """The folder the replay's tools get, for as long as the replay runs; ``record``: the
    workspace as the recorded run started, from its ``run_start``; ``uses``: whether the
    tools use a workspace at all."""
    checkable = record is not None and record.kind in CHECKABLE
    checked = checkable if uses else None
    if given is not None:
        if not given.is_dir():
            raise UsageError(f"the replay workspace is not a folder: {given}")
        if record is not None and checkable:
            hint = (
                "replay without --workspace to start from the journal's snapshot"
                if record.kind == "snapshot"
                else "give one as it was then"
            )
            _refuse_if_changed(record, given, "the given workspace", hint)
        yield ReplaySite(recorded=recorded, path=given.resolve(), how="given", checked=checked)
        return
    if record is not None and record.kind == "snapshot":
        with _temporary(recorded) as folder:
            restore(record, folder)
            yield ReplaySite(recorded=recorded, path=folder, how="snapshot", checked=True)
        return
    source = recorded or Path.cwd()
    if (writes or checkable) and not source.is_dir():
        raise UsageError(
            f"the recorded workspace {source} is gone: a replay runs the tools that write in a "
            "copy of it, and will not run them elsewhere unasked; give one with --workspace DIR"
        )
    if record is not None and checkable:
        hint = "give one as it was then with --workspace DIR (a fresh checkout, say)"
        _refuse_if_changed(record, source, "the recorded workspace", hint)
    if not writes:
        yield ReplaySite(recorded=recorded, path=recorded, how="recorded", checked=checked)
        return
    with _temporary(source) as copy:
        try:
            shutil.copytree(source, copy, symlinks=True, ignore=_special_files)
        except (OSError, shutil.Error) as exc:
            raise UsageError(f"cannot copy the recorded workspace {source}: {exc}") from None
        yield ReplaySite(recorded=source, path=copy, how="copy", checked=checked)


def _refuse_if_changed(record: StartRecord, folder: Path, which: str, hint: str) -> None:
    found = differences(record, folder)
    if found:
        raise UsageError(
            f"{which} {folder} differs from the workspace the recorded run started in "
            f"({summary(found)}); {hint}"
        )


@contextlib.contextmanager
def _temporary(source: Path | None) -> Iterator[Path]:
    """A path (not yet there) in a new temporary folder, named like ``source``; removed after."""
    folder = Path(tempfile.mkdtemp(prefix="reactloop-replay-"))
    try:
        yield folder / ((source.name if source is not None else "") or "workspace")
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _special_files(directory: str, names: list[str]) -> set[str]:
    """Entries that are neither folders, regular files nor links: FIFOs, sockets, devices."""
    skipped = set()
    for name in names:
        try:
            mode = (Path(directory) / name).lstat().st_mode
        except OSError:
            skipped.add(name)
            continue
        if not (stat.S_ISDIR(mode) or stat.S_ISREG(mode) or stat.S_ISLNK(mode)):
            skipped.add(name)
    return skipped
