"""What a workspace refuses, and how it says so: a path's text (``split_path``: not a string,
empty, a NUL byte, too long, absolute, above the root) and what an open descriptor is
(``check_regular_file``: a folder, a FIFO or device, a file with more than one hard link).
``paths.py`` resolves a path beneath the root with these.
"""

from __future__ import annotations

import errno
import os
import stat
from typing import Any

from reactloop.errors import ToolError

MAX_PATH_CHARS = 4096
SAFE_OPEN = os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC
_ERRNO_TEXT = {
    errno.EISDIR: "is a directory, not a file",
    errno.ENXIO: "not a regular file",  # a FIFO opened for writing with no reader
}


class WorkspacePathError(ToolError):
    """A path was refused or could not be opened; ``errno`` is set when the OS said why."""

    def __init__(self, message: str, *, errno: int | None = None) -> None:
        super().__init__(message)
        self.errno = errno


def check_regular_file(fd: int, relpath: str, *, writing: bool) -> os.stat_result:
    """Refuse anything but a regular file with a single link (the other may be outside)."""
    info = os.fstat(fd)
    if stat.S_ISDIR(info.st_mode):
        raise WorkspacePathError(f"{shown(relpath)} is a directory, not a file", errno=errno.EISDIR)
    if not stat.S_ISREG(info.st_mode):
        raise WorkspacePathError(f"{shown(relpath)} is a {file_kind(info.st_mode)}; refused")
    if info.st_nlink > 1:
        action = "writing" if writing else "reading"
        raise WorkspacePathError(
            f"{shown(relpath)} has {info.st_nlink} hard links; {action} refused because another "
            "link may be outside the workspace"
        )
    return info


def open_entry(dir_fd: int, name: str, relpath: str) -> int:
    """Open a listed entry of an open folder for reading: no symlink, regular, one link."""
    try:
        fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | SAFE_OPEN, dir_fd=dir_fd)
    except OSError as exc:
        raise path_error(relpath, exc) from None
    try:
        check_regular_file(fd, relpath, writing=False)
    except BaseException:
        os.close(fd)
        raise
    return fd


def file_kind(st_mode: int) -> str:
    kinds = (
        (stat.S_ISREG, "file"),
        (stat.S_ISDIR, "directory"),
        (stat.S_ISLNK, "symlink"),
        (stat.S_ISFIFO, "FIFO"),
        (stat.S_ISSOCK, "socket"),
        (stat.S_ISCHR, "character device"),
        (stat.S_ISBLK, "block device"),
    )
    return next((name for test, name in kinds if test(st_mode)), "special file")


def split_path(relpath: Any) -> list[str]:
    """Validate a workspace-relative path and return its components (``.`` and ``//`` dropped)."""
    if not isinstance(relpath, str):
        raise WorkspacePathError(f"path must be a string, got {type(relpath).__name__}")
    if not relpath:
        raise WorkspacePathError("path is empty; use '.' for the workspace root")
    if "\x00" in relpath:
        raise WorkspacePathError(f"path contains a NUL byte: {shown(relpath)}")
    if len(relpath) > MAX_PATH_CHARS:
        raise WorkspacePathError(f"path is longer than {MAX_PATH_CHARS} characters")
    try:
        os.fsencode(relpath)
    except UnicodeEncodeError:
        raise WorkspacePathError(f"path is not valid text: {shown(relpath)}") from None
    if relpath.startswith("/"):
        raise WorkspacePathError(
            f"path escapes the workspace: {shown(relpath)} is absolute; "
            "use a path relative to the workspace"
        )
    parts = path_components(relpath)
    depth = 0
    for part in parts:
        depth += -1 if part == ".." else 1
        if depth < 0:
            raise WorkspacePathError(
                f"path escapes the workspace: {shown(relpath)} goes above the workspace root"
            )
    return parts


def path_components(path: str) -> list[str]:
    return [part for part in path.split("/") if part not in ("", ".")]


def shown(relpath: str) -> str:
    return repr(relpath if len(relpath) <= 200 else relpath[:200] + "…")


def path_error(relpath: str, exc: OSError) -> WorkspacePathError:
    code = exc.errno or 0
    text = _ERRNO_TEXT.get(code) or (exc.strerror or str(exc)).lower()
    return WorkspacePathError(f"{shown(relpath)}: {text}", errno=code)
