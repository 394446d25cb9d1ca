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
What is refused, by a path's text or an open descriptor, is ``path_checks.py``'s.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path

from reactloop.errors import UsageError
from reactloop.sandbox.openat2 import openat2, openat2_available
from reactloop.sandbox.path_checks import (
    SAFE_OPEN,
    WorkspacePathError,
    check_regular_file,
    path_components,
    path_error,
    shown,
    split_path,
)

__all__ = ["Workspace", "openat2_available"]

_FALLBACK_ERRNOS = (errno.EXDEV, errno.ELOOP, errno.EAGAIN, errno.ENOSYS)
MAX_SYMLINKS = 40
_DIR_STEP = os.O_PATH | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_DIR_OPEN = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC


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
        return split_path(relpath)

    def open_file(self, relpath: str, flags: int = os.O_RDONLY, mode: int = 0o644) -> int:
        """Open a regular file beneath the root; ``O_TRUNC`` happens only after the checks."""
        parts = split_path(relpath)
        if relpath.endswith("/") or not parts or parts[-1] == "..":
            raise WorkspacePathError(f"{shown(relpath)} is a directory, not a file")
        open_flags = (flags & ~(os.O_TRUNC | os.O_NOFOLLOW)) | SAFE_OPEN
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
        return self._open(relpath, split_path(relpath), _DIR_OPEN, 0, want_dir=True)

    def make_dirs(self, relpath: str) -> None:
        """Create ``relpath`` and its missing parents, each with ``mkdirat`` beneath the root."""
        parts = split_path(relpath)
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
                raise path_error(here, exc) from None
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
                        raise path_error(relpath, exc) from None
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
                raise WorkspacePathError(f"{shown(self.relpath)} is a directory, not a file")
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
                    raise path_error(self.relpath, exc) from None
                error = exc
            try:
                return os.readlink(name, dir_fd=self.stack[-1])
            except OSError:
                continue  # not a symlink, or swapped meanwhile: open it again
        raise path_error(self.relpath, error)

    def _link_parts(self, name: str, target: str) -> list[str]:
        self.links_followed += 1
        self.last_link = f"symlink {name!r} points to {target!r}"
        if self.links_followed > MAX_SYMLINKS:
            raise WorkspacePathError(f"{shown(self.relpath)}: too many levels of symbolic links")
        if "\x00" in target:
            raise self._escape("contains a NUL byte")
        if not target.startswith("/"):
            return path_components(target)
        inside = path_components(target)
        root_parts = path_components(str(self.root))
        if inside[: len(root_parts)] != root_parts:
            raise self._escape("")
        while len(self.stack) > 1:
            os.close(self.stack.pop())
        return inside[len(root_parts) :]

    def _escape(self, why: str) -> WorkspacePathError:
        via = f" ({self.last_link})" if self.last_link else ""
        reason = f" {why}" if why else ""
        return WorkspacePathError(f"path escapes the workspace: {shown(self.relpath)}{reason}{via}")
