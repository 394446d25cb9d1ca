"""Giving back the disk a command took when its disk budget stopped it.

The budget can only see space once it is gone: ``fallocate`` reserves a gigabyte in a
millisecond, and many at once pass any polling interval. So when the budget stops a command
(all its processes are dead by then), ``reclaim`` walks the folders it may write to and

- removes every file and folder **born** while the command ran (``statx`` birth time), and
- frees the blocks reserved past the end of older files the command changed (``fallocate
  --keep-size``; truncating a file to its own size keeps every byte of its content, and its
  access and modification times are put back).

Older files keep what the command wrote into them: their earlier content is not known, and
removing them would lose the user's data. Where the file system records no birth time, the
files are kept and the note says so. The walk stays on each folder's file system and follows
no symbolic link.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import shutil
import stat
import struct
import tempfile
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Reclaimed", "birth_floor", "reclaim"]

AT_FDCWD = -100
AT_SYMLINK_NOFOLLOW = 0x100
STATX_BASIC_AND_BTIME = 0x7FF | 0x800
STATX_BTIME = 0x800
_BTIME_AT, _CTIME_AT = 80, 96  # offsets of stx_btime and stx_ctime in struct statx
MIB = 1024 * 1024


def birth_floor() -> int:
    """A time stamp that every file made before this call has at most, and later ones exceed.

    Taken from a file made for it, so it comes from the clock the file systems stamp inodes
    with (coarse, or fine-grained where they have multigrain stamps). A file of the command's
    stamped within the same tick is kept: the doubt goes to not deleting.
    """
    try:
        fd, path = tempfile.mkstemp(prefix="reactloop-clock-")
    except OSError:
        return time.time_ns()  # no later than any stamp made before: keeps more, never less
    try:
        times = _Statx().times(path)
        if times is not None and times[0] is not None:
            return max(times[0], times[1])
        return os.fstat(fd).st_ctime_ns
    finally:
        os.close(fd)
        os.unlink(path)


@dataclass
class Reclaimed:
    removed: int = 0
    freed_bytes: int = 0
    failed: int = 0
    no_birth_time: bool = False

    def note(self) -> str:
        """How the result tells the model (and the user) what was given back."""
        parts = [f"removed {self.removed} files and folders it created"] if self.removed else []
        if self.freed_bytes:
            parts.append(f"freed {self.freed_bytes // MIB} MiB")
        if self.failed:
            parts.append(f"{self.failed} could not be removed")
        if self.no_birth_time:
            parts.append("kept its files where the file system records no creation time")
        return "; ".join(parts) or "it left no new files"


class _Statx:
    def __init__(self) -> None:
        self._libc = ctypes.CDLL(None, use_errno=True)
        self._buffer = ctypes.create_string_buffer(256)

    def times(self, path: str) -> tuple[int | None, int] | None:
        """(birth ns or None when unknown, change ns), or None when the path is gone."""
        statx = getattr(self._libc, "statx", None)
        if statx is None:
            try:
                return None, os.lstat(path).st_ctime_ns
            except OSError:
                return None
        flags, mask = AT_SYMLINK_NOFOLLOW, STATX_BASIC_AND_BTIME
        if statx(AT_FDCWD, os.fsencode(path), flags, mask, self._buffer) != 0:
            return None
        got = struct.unpack_from("I", self._buffer, 0)[0]
        born = _stamp(self._buffer, _BTIME_AT) if got & STATX_BTIME else None
        return born, _stamp(self._buffer, _CTIME_AT)


def _stamp(buffer: ctypes.Array[ctypes.c_char], offset: int) -> int:
    seconds, nanoseconds = struct.unpack_from("qI", buffer, offset)
    return int(seconds) * 1_000_000_000 + int(nanoseconds)


def reclaim(folders: Iterable[Path], since_ns: int) -> Reclaimed:
    """Remove what was born under ``folders`` after ``since_ns``; free space past older ends."""
    done = Reclaimed()
    statx = _Statx()
    for top in folders:
        with contextlib.suppress(OSError):
            _reclaim_under(str(top), os.lstat(top).st_dev, since_ns, statx, done)
    return done


def _reclaim_under(top: str, device: int, since: int, statx: _Statx, done: Reclaimed) -> None:
    for folder, dirs, files in os.walk(top):
        for name in list(dirs):
            path = os.path.join(folder, name)
            if os.path.islink(path) or _device(path) != device:
                dirs.remove(name)
                if os.path.islink(path):
                    _settle(path, statx, since, done)
                continue
            times = statx.times(path)
            if times is not None and times[0] is not None and times[0] > since:
                dirs.remove(name)
                shutil.rmtree(path, onerror=lambda *_: _failed(done))
                done.removed += 1
        for name in files:
            _settle(os.path.join(folder, name), statx, since, done)


def _settle(path: str, statx: _Statx, since: int, done: Reclaimed) -> None:
    times = statx.times(path)
    if times is None:
        return
    born, changed = times
    if born is None:
        done.no_birth_time = done.no_birth_time or changed > since
    elif born > since:
        try:
            os.unlink(path)
            done.removed += 1
        except OSError:
            done.failed += 1
        return
    if changed > since:  # fallocate changes it, keep-size too; other files are left alone
        done.freed_bytes += _free_past_end(path)


def _free_past_end(path: str) -> int:
    """Blocks a regular file holds past its end (``fallocate --keep-size``), given back."""
    try:
        before = os.lstat(path)
        if not stat.S_ISREG(before.st_mode):
            return 0
        allocated = before.st_blocks * 512
        if allocated <= before.st_size + before.st_blksize:
            return 0
        os.truncate(path, before.st_size)  # the same size: the content stays, the rest goes
        os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns), follow_symlinks=False)
        return max(allocated - os.lstat(path).st_blocks * 512, 0)
    except OSError:
        return 0


def _device(path: str) -> int:
    try:
        return os.lstat(path).st_dev
    except OSError:
        return -1


def _failed(done: Reclaimed) -> None:
    done.failed += 1
