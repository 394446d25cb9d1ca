"""The workspace as a run found it, recorded in its ``run_start`` so that a replay can start
from there (a coding run changes its workspace: the folder after the run is not the one the
model saw at step 1).

A run whose tools use a workspace (the ``files`` or ``bash`` family) records, under
``run_start``'s ``workspace``:

- ``kind: "snapshot"`` — a workspace of at most ``SNAPSHOT_MAX_BYTES`` in at most
  ``SNAPSHOT_MAX_ENTRIES`` entries: the whole of it (a gzipped tar, base64, in ``snapshot``)
  and a digest per entry (``entries``); a replay starts from the snapshot.
- ``kind: "digests"`` — larger, up to ``DIGEST_MAX_BYTES`` in ``DIGEST_MAX_ENTRIES``: the
  digests alone, without the contents of ``UNCOMPARED`` folders (version control, caches:
  a fresh clone is the same workspace); a replay refuses a workspace that differs from them.
- ``kind: "too_big"`` — larger still: nothing to check against, and a replay says so
  (``"unrecorded"``, the same, when reading it failed).

An entry is ``"dir"``, ``"link TARGET"``, ``"file SHA256"`` or ``"exec SHA256"`` (a file its
owner may run), by its path beneath the workspace with ``/`` between names. Symbolic links
are recorded as links, never followed; FIFOs, sockets and devices are left out (as the
replay's copy leaves them out), and so are reactloop's own journals (files named
``*.jsonl`` that begin as one: ``runs/`` of ``reactloop run`` beneath the workspace, the
journal being written) with the folder of full outputs beside each (``NAME-outputs``): they
are the harness's, and grow after the run.
"""

from __future__ import annotations

import io
import os
import stat
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any, NamedTuple

SNAPSHOT_MAX_BYTES = 4 * 1024 * 1024
SNAPSHOT_MAX_ENTRIES = 2_000
DIGEST_MAX_BYTES = 64 * 1024 * 1024
DIGEST_MAX_ENTRIES = 10_000
WORKSPACE_FAMILIES = ("files", "bash")  # the built-in tool families that use the workspace
UNCOMPARED = (
    *(".git", ".hg", ".svn"),
    *("__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache", ".hypothesis", ".benchmarks"),
)
# How a journal's first line begins (``reactloop.journal`` writes it; a test pins the two).
JOURNAL_START = b'{"type":"journal","format":"reactloop-journal"'
_CHUNK = 1 << 20


class TooBig(Exception):
    """The workspace holds more than the caps allow (``reason`` says which)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class Listed(NamedTuple):
    relative: str  # beneath the workspace, with / between names
    path: Path
    mode: int
    size: int
    mtime: float


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
    try:
        return record_workspace(root)
    except OSError as exc:  # a folder that changed while it was read: the run goes on
        return {"path": str(root), "kind": "unrecorded", "reason": f"cannot be read: {exc}"}


def record_workspace(root: Path) -> dict[str, Any]:
    """The ``run_start`` record of ``root``: a snapshot, digests, or only that it is too big."""
    record: dict[str, Any] = {"path": str(root)}
    try:
        listed = listing(root, max_entries=SNAPSHOT_MAX_ENTRIES, max_bytes=SNAPSHOT_MAX_BYTES)
    except TooBig:
        listed = None
    snapshot = snapshot_of(listed) if listed is not None else None
    if listed is not None and snapshot is not None:
        entries, archive = snapshot
        size = sum(item.size for item in listed)
        return {
            **record,
            "kind": "snapshot",
            "entries": entries,
            "bytes": size,
            "snapshot": archive,
        }
    try:
        listed = listing(
            root, max_entries=DIGEST_MAX_ENTRIES, max_bytes=DIGEST_MAX_BYTES, skip=UNCOMPARED
        )
    except TooBig as exc:
        return {**record, "kind": "too_big", "reason": exc.reason}
    size = sum(item.size for item in listed)
    return {**record, "kind": "digests", "entries": digests(listed), "bytes": size}


def scan(
    root: Path, *, max_entries: int, max_bytes: int, skip: tuple[str, ...] = ()
) -> dict[str, str]:
    """The entries beneath ``root`` as the record spells them (``TooBig`` past the caps)."""
    return digests(listing(root, max_entries=max_entries, max_bytes=max_bytes, skip=skip))


def listing(
    root: Path, *, max_entries: int, max_bytes: int, skip: tuple[str, ...] = ()
) -> list[Listed]:
    """Every folder, file and link beneath ``root``, sorted by path, except folders named in
    ``skip`` and reactloop's journals; raises ``TooBig`` as soon as there are more entries or
    bytes than allowed. Nothing is read but the first bytes of ``*.jsonl`` files."""
    found: list[Listed] = []
    total = 0
    for item in _walk(root, "", skip):
        if len(found) >= max_entries:
            raise TooBig(f"more than {max_entries} entries")
        total += item.size
        if total > max_bytes:
            raise TooBig(f"more than {max_bytes // (1024 * 1024)} MiB")
        found.append(item)
    return found


def digests(listed: Iterable[Listed]) -> dict[str, str]:
    return {item.relative: describe(item.path, item.mode) for item in listed}


def describe(path: Path, mode: int) -> str:
    """An entry as the record spells it (see the module's docstring)."""
    if stat.S_ISDIR(mode):
        return "dir"
    if stat.S_ISLNK(mode):
        target = _link(path)
        return "unreadable" if target is None else f"link {target}"
    data = _read(path)
    if data is None:
        return "unreadable"
    return _file_entry(mode, data)


def snapshot_of(listed: Iterable[Listed]) -> tuple[dict[str, str], str] | None:
    """The entries and a gzipped tar of them, in base64; None when a file cannot be read."""
    import base64
    import tarfile  # here: only a run that records a workspace pays for loading it

    entries: dict[str, str] = {}
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz", compresslevel=1) as archive:
        for item in listed:
            info = tarfile.TarInfo(item.relative)
            info.mode, info.mtime = stat.S_IMODE(item.mode), int(item.mtime)
            data = b""
            if stat.S_ISDIR(item.mode):
                info.type, entries[item.relative] = tarfile.DIRTYPE, "dir"
            elif stat.S_ISLNK(item.mode):
                target = _link(item.path)
                if target is None:
                    return None
                info.type, info.linkname = tarfile.SYMTYPE, target
                entries[item.relative] = f"link {target}"
            else:
                read = _read(item.path)
                if read is None:
                    return None
                data, info.size = read, len(read)
                entries[item.relative] = _file_entry(item.mode, data)
            archive.addfile(info, io.BytesIO(data) if info.isfile() else None)
    return entries, base64.b64encode(buffer.getvalue()).decode("ascii")


def _file_entry(mode: int, data: bytes) -> str:
    import hashlib  # here, as tarfile: a run that records no workspace does not load them

    return f"{'exec' if mode & stat.S_IXUSR else 'file'} {hashlib.sha256(data).hexdigest()}"


def _link(path: Path) -> str | None:
    try:
        return os.readlink(path)
    except OSError:  # gone since it was listed
        return None


def _read(path: Path) -> bytes | None:
    """A file's bytes, never through a link; None when it cannot be read."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as file:
        chunks = []
        while chunk := file.read(_CHUNK):
            chunks.append(chunk)
    return b"".join(chunks)


def _walk(root: Path, prefix: str, skip: tuple[str, ...]) -> Iterator[Listed]:
    """Each folder, file and link beneath ``root / prefix``, sorted (see ``listing``)."""
    try:
        with os.scandir(root / prefix if prefix else root) as found:
            items = sorted(found, key=lambda item: item.name)
    except OSError:
        return
    journals = {item.name for item in items if _is_journal(item)}
    left_out = journals | {f"{name.removesuffix('.jsonl')}-outputs" for name in journals}
    for item in items:
        try:
            info = item.stat(follow_symlinks=False)
        except OSError:
            continue
        mode = info.st_mode
        if item.name in left_out or (stat.S_ISDIR(mode) and item.name in skip):
            continue
        if not (stat.S_ISDIR(mode) or stat.S_ISREG(mode) or stat.S_ISLNK(mode)):
            continue  # a FIFO, a socket, a device
        relative = f"{prefix}/{item.name}" if prefix else item.name
        size = info.st_size if stat.S_ISREG(mode) else 0
        yield Listed(relative, Path(item.path), mode, size, info.st_mtime)
        if stat.S_ISDIR(mode):
            yield from _walk(root, relative, skip)


def _is_journal(item: os.DirEntry[str]) -> bool:
    if not item.name.endswith(".jsonl") or not item.is_file(follow_symlinks=False):
        return False
    try:
        with open(item.path, "rb") as file:
            return file.read(len(JOURNAL_START)) == JOURNAL_START
    except OSError:
        return False
