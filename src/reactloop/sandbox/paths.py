"""Open files and folders *beneath* a workspace root, whatever the path or the disk says.

Every check is made on file descriptors, never on path strings, so a symlink swapped in during
the call cannot redirect it. Resolution uses ``openat2(2)`` with ``RESOLVE_BENEATH |
RESOLVE_NO_MAGICLINKS`` when the kernel has it; otherwise (and whenever the kernel refuses
something that may still be legal, such as an absolute symlink that points inside) each
component is opened with ``O_NOFOLLOW`` from the folder before it, and symlinks are resolved
here, component by component, so the kernel never follows one across the boundary.

After opening, ``fstat`` refuses anything that is not a regular file or a folder (FIFOs and
devices are opened with ``O_NONBLOCK``, so they never block) and regular files with more than
one hard link (the other link may be outside). ``O_TRUNC`` is applied only after those checks.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path
from typing import Any

from reactloop.errors import ToolError, UsageError
from reactloop.sandbox.openat2 import openat2, openat2_available

__all__ = [
    "Workspace",
    "WorkspacePathError",
    "check_regular_file",
    "file_kind",
    "open_entry",
    "openat2_available",
]

_FALLBACK_ERRNOS = (errno.EXDEV, errno.ELOOP, errno.EAGAIN, errno.ENOSYS)
MAX_SYMLINKS = 40
MAX_PATH_CHARS = 4096
_DIR_STEP = os.O_PATH | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_DIR_OPEN = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC
_SAFE_OPEN = os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC
_ERRNO_TEXT = {
    errno.EISDIR: "is a directory, not a file",
    errno.ENXIO: "not a regular file",  # a FIFO opened for writing with no reader
}


class WorkspacePathError(ToolError):
    """A path was refused or could not be opened; ``errno`` is set when the OS said why."""

    def __init__(self, message: str, *, errno: int | None = None) -> None:
        super().__init__(message)
        self.errno = errno


class Workspace:
    """A folder that file tools may not leave. Paths are relative to ``root``.

    ``use_openat2``: ``None`` uses it when the kernel has it, ``False`` forces the
    component-by-component fallback, ``True`` requires it (``UsageError`` if missing).
    Methods return raw file descriptors; the caller closes them.
    """

    def __init__(self, root: str | os.PathLike[str], *, use_openat2: bool | None = None) -> None:
        resolved = Path(os.path.realpath(root))
        if not resolved.is_dir():
            raise UsageError(f"workspace {str(root)!r} is not a directory")
        available = openat2_available()
        if use_openat2 and not available:
            raise UsageError("openat2(2) is not available on this kernel or architecture")
        self.root = resolved
        self.uses_openat2 = available if use_openat2 is None else use_openat2

    def __repr__(self) -> str:
        mode = "openat2" if self.uses_openat2 else "O_NOFOLLOW walk"
        return f"Workspace({str(self.root)!r}, {mode})"

    def validate(self, relpath: str) -> list[str]:
        """The path's components, or ``WorkspacePathError`` if the text alone is refused."""
        return _split(relpath)

    def open_file(self, relpath: str, flags: int = os.O_RDONLY, mode: int = 0o644) -> int:
        """Open a regular file beneath the root; ``O_TRUNC`` happens only after the checks."""
        parts = _split(relpath)
        if relpath.endswith("/") or not parts or parts[-1] == "..":
            raise WorkspacePathError(f"{_show(relpath)} is a directory, not a file")
        open_flags = (flags & ~(os.O_TRUNC | os.O_NOFOLLOW)) | _SAFE_OPEN
        fd = self._open(relpath, parts, open_flags, mode, want_dir=False)
        try:
            check_regular_file(fd, relpath, writing=bool(flags & (os.O_WRONLY | os.O_RDWR)))
            if flags & os.O_TRUNC:
                os.ftruncate(fd, 0)
        except BaseException:
            os.close(fd)
            raise
        return fd

    def open_dir(self, relpath: str = ".") -> int:
        """Open a folder beneath the root for reading (``os.scandir(fd)``, ``dir_fd=``)."""
        return self._open(relpath, _split(relpath), _DIR_OPEN, 0, want_dir=True)

    def make_dirs(self, relpath: str) -> None:
        """Create ``relpath`` and its missing parents, each with ``mkdirat`` beneath the root."""
        parts = _split(relpath)
        for count in range(1, len(parts) + 1):
            here = "/".join(parts[:count])
            try:
                os.close(self.open_dir(here))
                continue
            except WorkspacePathError as exc:
                if exc.errno != errno.ENOENT:
                    raise
            parent = self.open_dir("/".join(parts[: count - 1]) or ".")
            try:
                os.mkdir(parts[count - 1], 0o777, dir_fd=parent)
            except FileExistsError:
                pass  # made meanwhile, or a dangling symlink: the next open_dir decides
            except OSError as exc:
                raise _os_error(here, exc) from None
            finally:
                os.close(parent)
        os.close(self.open_dir(relpath))

    def _open(self, relpath: str, parts: list[str], flags: int, mode: int, want_dir: bool) -> int:
        try:
            root_fd = os.open(self.root, _DIR_STEP & ~os.O_NOFOLLOW)
        except OSError as exc:
            raise WorkspacePathError(f"the workspace {str(self.root)!r} is gone: {exc}") from None
        try:
            if self.uses_openat2:
                try:
                    return openat2(root_fd, relpath, flags, mode if flags & os.O_CREAT else 0)
                except OSError as exc:
                    if exc.errno not in _FALLBACK_ERRNOS:
                        raise _os_error(relpath, exc) from None
            return _Walk(root_fd, self.root, relpath, flags, mode, want_dir).run(parts)
        finally:
            os.close(root_fd)


class _Walk:
    """One component-by-component resolution; ``stack`` holds the folders walked through."""

    def __init__(
        self, root_fd: int, root: Path, relpath: str, flags: int, mode: int, want_dir: bool
    ) -> None:
        self.root, self.relpath, self.flags, self.mode = root, relpath, flags, mode
        self.want_dir = want_dir
        self.stack = [os.dup(root_fd)]
        self.links_followed = 0
        self.last_link = ""

    def run(self, parts: list[str]) -> int:
        pending = list(reversed(parts))
        try:
            while pending:
                name = pending.pop()
                if name == "..":
                    self._go_up()
                    continue
                opened = self._open_component(name, last=not pending)
                if isinstance(opened, str):
                    pending.extend(reversed(self._link_parts(name, opened)))
                elif pending:
                    self.stack.append(opened)
                else:
                    return opened
            if not self.want_dir:
                raise WorkspacePathError(f"{_show(self.relpath)} is a directory, not a file")
            return os.open(".", _DIR_OPEN, dir_fd=self.stack[-1])  # stack fds are O_PATH
        finally:
            for fd in self.stack:
                os.close(fd)

    def _go_up(self) -> None:
        if len(self.stack) == 1:
            raise self._escape("goes above the workspace root")
        os.close(self.stack.pop())

    def _open_component(self, name: str, *, last: bool) -> int | str:
        """An open descriptor, or the target text when ``name`` is a symlink."""
        symlink_errnos: tuple[int, ...]
        if last and not self.want_dir:
            flags, mode, symlink_errnos = self.flags | os.O_NOFOLLOW, self.mode, (errno.ELOOP,)
        else:
            flags = (_DIR_OPEN | os.O_NOFOLLOW) if last else _DIR_STEP
            mode, symlink_errnos = 0, (errno.ENOTDIR, errno.ELOOP)
        error = OSError(errno.ELOOP, "symlink changed during the call")
        for _attempt in range(3):
            try:
                return os.open(name, flags, mode, dir_fd=self.stack[-1])
            except OSError as exc:
                if exc.errno not in symlink_errnos:
                    raise _os_error(self.relpath, exc) from None
                error = exc
            try:
                return os.readlink(name, dir_fd=self.stack[-1])
            except OSError:
                continue  # not a symlink, or swapped meanwhile: open it again
        raise _os_error(self.relpath, error)

    def _link_parts(self, name: str, target: str) -> list[str]:
        self.links_followed += 1
        self.last_link = f"symlink {name!r} points to {target!r}"
        if self.links_followed > MAX_SYMLINKS:
            raise WorkspacePathError(f"{_show(self.relpath)}: too many levels of symbolic links")
        if "\x00" in target:
            raise self._escape("contains a NUL byte")
        if not target.startswith("/"):
            return _components(target)
        inside = _components(target)
        root_parts = _components(str(self.root))
        if inside[: len(root_parts)] != root_parts:
            raise self._escape("")
        while len(self.stack) > 1:
            os.close(self.stack.pop())
        return inside[len(root_parts) :]

    def _escape(self, why: str) -> WorkspacePathError:
        via = f" ({self.last_link})" if self.last_link else ""
        reason = f" {why}" if why else ""
        return WorkspacePathError(f"path escapes the workspace: {_show(self.relpath)}{reason}{via}")


def check_regular_file(fd: int, relpath: str, *, writing: bool) -> os.stat_result:
    """Refuse anything but a regular file with a single link (the other may be outside)."""
    info = os.fstat(fd)
    if stat.S_ISDIR(info.st_mode):
        raise WorkspacePathError(f"{_show(relpath)} is a directory, not a file", errno=errno.EISDIR)
    if not stat.S_ISREG(info.st_mode):
        raise WorkspacePathError(f"{_show(relpath)} is a {file_kind(info.st_mode)}; refused")
    if info.st_nlink > 1:
        action = "writing" if writing else "reading"
        raise WorkspacePathError(
            f"{_show(relpath)} has {info.st_nlink} hard links; {action} refused because another "
            "link may be outside the workspace"
        )
    return info


def open_entry(dir_fd: int, name: str, relpath: str) -> int:
    """Open a listed entry of an open folder for reading: no symlink, regular, one link."""
    try:
        fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | _SAFE_OPEN, dir_fd=dir_fd)
    except OSError as exc:
        raise _os_error(relpath, exc) from None
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


def _split(relpath: Any) -> list[str]:
    """Validate a workspace-relative path and return its components (``.`` and ``//`` dropped)."""
    if not isinstance(relpath, str):
        raise WorkspacePathError(f"path must be a string, got {type(relpath).__name__}")
    if not relpath:
        raise WorkspacePathError("path is empty; use '.' for the workspace root")
    if "\x00" in relpath:
        raise WorkspacePathError(f"path contains a NUL byte: {_show(relpath)}")
    if len(relpath) > MAX_PATH_CHARS:
        raise WorkspacePathError(f"path is longer than {MAX_PATH_CHARS} characters")
    try:
        os.fsencode(relpath)
    except UnicodeEncodeError:
        raise WorkspacePathError(f"path is not valid text: {_show(relpath)}") from None
    if relpath.startswith("/"):
        raise WorkspacePathError(
            f"path escapes the workspace: {_show(relpath)} is absolute; "
            "use a path relative to the workspace"
        )
    parts = _components(relpath)
    depth = 0
    for part in parts:
        depth += -1 if part == ".." else 1
        if depth < 0:
            raise WorkspacePathError(
                f"path escapes the workspace: {_show(relpath)} goes above the workspace root"
            )
    return parts


def _components(path: str) -> list[str]:
    return [part for part in path.split("/") if part not in ("", ".")]


def _show(relpath: str) -> str:
    return repr(relpath if len(relpath) <= 200 else relpath[:200] + "…")


def _os_error(relpath: str, exc: OSError) -> WorkspacePathError:
    code = exc.errno or 0
    text = _ERRNO_TEXT.get(code) or (exc.strerror or str(exc)).lower()
    return WorkspacePathError(f"{_show(relpath)}: {text}", errno=code)
