"""The workspace as a run found it, recorded in its ``run_start`` so that a replay can start
from there (a coding run changes its workspace: the folder after the run is not the one the
model saw at step 1).

A run whose tools use a workspace (the ``files`` or ``bash`` family) records, under
``run_start``'s ``workspace``:

- ``kind: "snapshot"`` — a workspace of at most ``SNAPSHOT_MAX_BYTES`` in at most
  ``SNAPSHOT_MAX_ENTRIES`` entries: the whole of it (a gzipped tar, base64, in ``snapshot``)
  and a digest per entry (``entries``); a replay starts from the snapshot.
- ``kind: "digests"`` — larger, up to ``DIGEST_MAX_BYTES`` in ``DIGEST_MAX_ENTRIES``: the
  digests alone; a replay refuses a workspace that differs from them.
- ``kind: "too_big"`` — larger still: nothing to check against, and a replay says so.

An entry is ``"dir"``, ``"link TARGET"``, ``"file SHA256"`` or ``"exec SHA256"`` (a file its
owner may run), by its path beneath the workspace with ``/`` between names. Symbolic links
are recorded as links, never followed; FIFOs, sockets and devices are left out (as the
replay's copy leaves them out), and so are reactloop's own journals (``runs/`` of
``reactloop run`` beneath the workspace, the journal being written) with the folder of full
outputs beside each (``NAME-outputs``): they are the harness's, and grow after the run.
"""

from __future__ import annotations

import base64
import hashlib
import io
import os
import stat
import tarfile
from collections.abc import Iterator, Mapping
from pathlib import Path, PurePosixPath
from typing import Any

SNAPSHOT_MAX_BYTES = 4 * 1024 * 1024
SNAPSHOT_MAX_ENTRIES = 2_000
DIGEST_MAX_BYTES = 64 * 1024 * 1024
DIGEST_MAX_ENTRIES = 10_000
WORKSPACE_FAMILIES = ("files", "bash")  # the built-in tool families that use the workspace
_CHUNK = 1 << 20
# How a journal's first line begins (``reactloop.journal`` writes it; a test pins the two).
JOURNAL_START = b'{"type":"journal","format":"reactloop-journal"'
_JOURNAL = "journal"


class TooBig(Exception):
    """The workspace holds more than the caps allow (``reason`` says which)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def uses_workspace(config: Mapping[str, Any]) -> bool:
    """Whether a run's ``config`` names a workspace and a tool family that uses it."""
    families = config.get("tools")
    if isinstance(families, str):
        names = {name.strip() for name in families.split(",")}
    elif isinstance(families, list | tuple):
        names = {str(name).strip() for name in families}
    else:
        return False
    workspace = config.get("workspace")
    return isinstance(workspace, str) and bool(workspace) and bool(names & {*WORKSPACE_FAMILIES})


def record_for(config: Mapping[str, Any]) -> dict[str, Any] | None:
    """The record of the workspace ``config`` names, when its tools use one and it is there."""
    if not uses_workspace(config):
        return None
    root = Path(str(config["workspace"]))
    if not root.is_dir():
        return None
    return record_workspace(root)


def record_workspace(root: Path) -> dict[str, Any]:
    """The ``run_start`` record of ``root``: a snapshot, digests, or only that it is too big."""
    record: dict[str, Any] = {"path": str(root)}
    try:
        entries, size = scan(root, max_entries=DIGEST_MAX_ENTRIES, max_bytes=DIGEST_MAX_BYTES)
    except TooBig as exc:
        return {**record, "kind": "too_big", "reason": exc.reason}
    record.update(entries=entries, bytes=size)
    small = size <= SNAPSHOT_MAX_BYTES and len(entries) <= SNAPSHOT_MAX_ENTRIES
    if not small or any(value == "unreadable" for value in entries.values()):
        return {**record, "kind": "digests"}
    return {**record, "kind": "snapshot", "snapshot": snapshot_of(root, entries)}


def scan(root: Path, *, max_entries: int, max_bytes: int) -> tuple[dict[str, str], int]:
    """Every entry beneath ``root`` (sorted by path) and the bytes its files hold; raises
    ``TooBig`` as soon as there are more entries or bytes than allowed."""
    entries: dict[str, str] = {}
    sizes: dict[str, int] = {}
    total = 0
    for relative, path, mode in _walk(root, ""):
        if len(entries) >= max_entries:
            raise TooBig(f"more than {max_entries} entries")
        if stat.S_ISREG(mode):
            sizes[relative] = path.lstat().st_size
            total += sizes[relative]
            if total > max_bytes:
                raise TooBig(f"more than {max_bytes // (1024 * 1024)} MiB")
        entries[relative] = describe(path, mode)
    kept = _without_journals(entries)
    return kept, sum(size for name, size in sizes.items() if name in kept)


def _without_journals(entries: dict[str, str]) -> dict[str, str]:
    """``entries`` without reactloop's journals and the ``NAME-outputs`` folder beside each."""
    journals = [name for name, value in entries.items() if value == _JOURNAL]
    if not journals:
        return entries
    folders = tuple(f"{PurePosixPath(name).with_suffix('')}-outputs" for name in journals)
    return {
        name: value
        for name, value in entries.items()
        if value != _JOURNAL and not any(name == f or name.startswith(f + "/") for f in folders)
    }


def describe(path: Path, mode: int) -> str:
    """An entry as the record spells it (see the module's docstring)."""
    if stat.S_ISDIR(mode):
        return "dir"
    if stat.S_ISLNK(mode):
        return f"link {os.readlink(path)}"
    digest = file_digest(path)
    if digest is None:
        return "unreadable"
    if digest == _JOURNAL:
        return _JOURNAL
    return f"{'exec' if mode & stat.S_IXUSR else 'file'} {digest}"


def file_digest(path: Path) -> str | None:
    """The SHA-256 of a file's bytes (never through a link); None when it cannot be read,
    ``"journal"`` for a reactloop journal."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    digest = hashlib.sha256()
    with os.fdopen(fd, "rb") as file:
        first = file.read(_CHUNK)
        if first.startswith(JOURNAL_START):
            return _JOURNAL
        digest.update(first)
        while chunk := file.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def snapshot_of(root: Path, entries: Mapping[str, str]) -> str:
    """The entries of ``root`` as a gzipped tar, in base64."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz", format=tarfile.PAX_FORMAT) as archive:
        for relative in entries:
            archive.add(root / relative, arcname=relative, recursive=False)
    return base64.b64encode(buffer.getvalue()).decode("ascii")


def _walk(root: Path, prefix: str) -> Iterator[tuple[str, Path, int]]:
    """(path beneath the workspace, path, mode) of each folder, file and link, sorted."""
    try:
        with os.scandir(root / prefix if prefix else root) as found:
            items = sorted(found, key=lambda item: item.name)
    except OSError:
        return
    for item in items:
        try:
            mode = item.stat(follow_symlinks=False).st_mode
        except OSError:
            continue
        if not (stat.S_ISDIR(mode) or stat.S_ISREG(mode) or stat.S_ISLNK(mode)):
            continue  # a FIFO, a socket, a device
        relative = f"{prefix}/{item.name}" if prefix else item.name
        yield relative, Path(item.path), mode
        if stat.S_ISDIR(mode):
            yield from _walk(root, relative)
