"""The workspace a recorded run started from, read back from its ``run_start``.

``StartRecord.of`` reads the record ``reactloop.journal.workspace_record`` wrote (checked: journals
come from elsewhere); ``restore`` unpacks a snapshot into a folder and checks it against the
record's digests; ``differences`` says how a folder differs from them. Comparing a folder,
version-control metadata and caches are left out (``IGNORED``): a fresh clone of the
repository, or one where the tests ran before, is the same workspace.
"""

from __future__ import annotations

import base64
import binascii
import io
import tarfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from reactloop.errors import UsageError
from reactloop.journal.workspace_record import (
    DIGEST_MAX_BYTES,
    DIGEST_MAX_ENTRIES,
    UNCOMPARED,
    TooBig,
    scan,
)

IGNORED = UNCOMPARED
KINDS = ("snapshot", "digests", "too_big", "unrecorded")
CHECKABLE = ("snapshot", "digests")
_SHOWN = 3  # differences named in a refusal


@dataclass(frozen=True, kw_only=True)
class StartRecord:
    """``kind``: ``snapshot``, ``digests`` or ``too_big`` (see ``workspace_record``)."""

    path: str
    kind: str
    entries: Mapping[str, str] = field(default_factory=dict)
    snapshot: str | None = None
    reason: str | None = None

    @classmethod
    def of(cls, data: Any) -> StartRecord | None:
        """The record ``run_start`` holds (its ``workspace``); None when it has none; a
        malformed one is refused."""
        match data:
            case None:
                return None
            case {"kind": str(how)} if how in KINDS:
                pass
            case _:
                raise UsageError("the journal's workspace record is malformed (no known kind)")
        entries = data.get("entries", {})
        if not isinstance(entries, Mapping) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in entries.items()
        ):
            raise UsageError("the journal's workspace record is malformed (entries)")
        snapshot = data.get("snapshot")
        if how == "snapshot" and not isinstance(snapshot, str):
            raise UsageError("the journal's workspace record is malformed (no snapshot)")
        return cls(
            path=str(data.get("path") or ""),
            kind=how,
            entries=dict(entries),
            snapshot=snapshot if isinstance(snapshot, str) else None,
            reason=str(data.get("reason") or "") or None,
        )


def restore(record: StartRecord, target: Path) -> None:
    """Unpack the snapshot into ``target`` (an empty folder) and check it against the digests;
    a snapshot that is not a clean archive of exactly those entries is a ``UsageError``."""
    target.mkdir(parents=True, exist_ok=True)
    try:
        data = base64.b64decode(record.snapshot or "", validate=True)
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as archive:
            members = archive.getmembers()
            _check_members(members, record)
            archive.extractall(target, members=members, filter="tar")
    except (binascii.Error, tarfile.TarError, OSError, EOFError) as exc:
        raise UsageError(f"the journal's workspace snapshot cannot be unpacked: {exc}") from None
    found = differences(record, target, ignored=())
    if found:
        raise UsageError(
            f"the journal's workspace snapshot does not match its digests ({found[0]})"
        )


def _check_members(members: list[tarfile.TarInfo], record: StartRecord) -> None:
    total = 0
    for member in members:
        name = PurePosixPath(member.name)
        if name.is_absolute() or ".." in name.parts or str(name) not in record.entries:
            raise UsageError(f"the journal's workspace snapshot holds {member.name!r}")
        if not (member.isfile() or member.isdir() or member.issym()):
            raise UsageError(f"the journal's workspace snapshot holds a special file {name}")
        total += member.size
        if total > DIGEST_MAX_BYTES:
            raise UsageError("the journal's workspace snapshot is larger than its record")


def differences(
    record: StartRecord, folder: Path, *, ignored: tuple[str, ...] = IGNORED
) -> list[str]:
    """How ``folder`` differs from the record's digests, one phrase each, in path order."""
    try:
        now = scan(
            folder, max_entries=DIGEST_MAX_ENTRIES * 2, max_bytes=DIGEST_MAX_BYTES * 2, skip=ignored
        )
    except TooBig as exc:
        return [f"it holds {exc.reason}"]
    then = record.entries
    found = []
    for path in sorted({*then, *now}):
        if _is_ignored(path, ignored):
            continue
        if path not in now:
            found.append(f"{path} is missing")
        elif path not in then:
            found.append(f"{path} was not there")
        elif now[path] != then[path]:
            found.append(f"{path} {_changed(then[path], now[path])}")
    return found


def summary(found: list[str]) -> str:
    """The first differences, and how many more: for a one-line refusal."""
    shown = "; ".join(found[:_SHOWN])
    more = len(found) - _SHOWN
    return shown + (f"; and {more} more" if more > 0 else "")


def _changed(then: str, now: str) -> str:
    kind_then, kind_now = then.split(" ", 1)[0], now.split(" ", 1)[0]
    if {kind_then, kind_now} == {"file", "exec"} and then.split()[1:] == now.split()[1:]:
        return "changed its executable bit"
    return "changed" if kind_then == kind_now else f"was a {kind_then}, is a {kind_now}"


def _is_ignored(path: str, ignored: tuple[str, ...]) -> bool:
    return any(part in ignored for part in path.split("/"))
