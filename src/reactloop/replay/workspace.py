"""Where a replay's tools run: never in the recorded workspace unless asked.

A recorded run's ``edit_file`` or ``bash`` changed its workspace; running them again there
would change it again. So a replay whose tools can write (the ``files`` or ``bash`` family,
not ``read_only``) runs in a temporary copy of the recorded workspace, removed afterwards, and
refuses when that workspace is gone; ``workspace=`` (``--workspace DIR``) runs it in DIR
instead, say a fresh clone of the repository. A replay whose tools only read uses the
recorded workspace as it is. The copy keeps symbolic links as links and leaves out FIFOs,
sockets and devices (copying a FIFO would block on it).
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

WRITING_FAMILIES = ("files", "bash")  # the built-in families whose tools change the workspace


@dataclass(frozen=True, kw_only=True)
class ReplaySite:
    """``path``: where the tools run; ``how``: ``given`` (``workspace=``), ``copy`` (a
    temporary copy of ``recorded``), ``recorded`` (tools that only read: the recorded one)."""

    recorded: Path | None
    path: Path | None
    how: str

    def describe(self) -> str:
        if self.how == "given":
            return f"tools run in {self.path} (given), not in the recorded {self.recorded}"
        if self.how == "copy":
            return f"tools run in a temporary copy of {self.recorded} ({self.path}), removed after"
        return f"tools run in the recorded workspace {self.path} (they only read)"


def writes_workspace(config: Mapping[str, Any], families: tuple[str, ...]) -> bool:
    return not config.get("read_only") and any(f in WRITING_FAMILIES for f in families)


@contextlib.contextmanager
def replay_site(recorded: Path | None, given: Path | None, *, writes: bool) -> Iterator[ReplaySite]:
    """The folder the replay's tools get, for as long as the replay runs."""
    if given is not None:
        if not given.is_dir():
            raise UsageError(f"the replay workspace is not a folder: {given}")
        yield ReplaySite(recorded=recorded, path=given.resolve(), how="given")
        return
    if not writes:
        yield ReplaySite(recorded=recorded, path=recorded, how="recorded")
        return
    source = recorded or Path.cwd()
    if not source.is_dir():
        raise UsageError(
            f"the recorded workspace {source} is gone: a replay runs the tools that write in a "
            "copy of it, and will not run them elsewhere unasked; give one with --workspace DIR"
        )
    folder = Path(tempfile.mkdtemp(prefix="reactloop-replay-"))
    try:
        copy = folder / (source.name or "workspace")
        try:
            shutil.copytree(source, copy, symlinks=True, ignore=_special_files)
        except (OSError, shutil.Error) as exc:
            raise UsageError(f"cannot copy the recorded workspace {source}: {exc}") from None
        yield ReplaySite(recorded=source, path=copy, how="copy")
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
