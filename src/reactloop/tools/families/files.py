"""The ``files`` tool family: read, list, search, write and edit files inside the workspace.

Every path goes through ``reactloop.sandbox.paths.Workspace``, which opens it beneath the
workspace root or refuses it with a ``ToolError``; see docs/files.md for the guarantees.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat

from reactloop.errors import ToolError, UsageError
from reactloop.sandbox.path_checks import WorkspacePathError, file_kind
from reactloop.sandbox.paths import Workspace
from reactloop.tools.base import Tool
from reactloop.tools.context import ToolContext
from reactloop.tools.families.file_search import cut_line, looks_binary, search_workspace
from reactloop.tools.plain import plain_tool

MAX_FILE_BYTES = 5_000_000
MAX_READ_LINES = 400
MAX_LINE_CHARS = 2000
MAX_LIST_ENTRIES = 500


def tools(context: ToolContext) -> list[Tool]:
    """The ``files`` family for ``--tools files``: confined to ``context.workspace``."""
    if context.workspace is None:
        raise UsageError("the files tools need a workspace: pass --workspace DIR")
    return file_tools(Workspace(context.workspace), read_only=context.read_only)


def file_tools(workspace: Workspace, *, read_only: bool = False) -> list[Tool]:
    """Reading tools (parallel-safe) and, unless ``read_only``, the writing tools."""
    files = FileTools(workspace)
    reading = [
        plain_tool(files.read_file, read_only=True),
        plain_tool(files.list_dir, read_only=True),
        plain_tool(files.search, read_only=True, bounded=True),
    ]
    if read_only:
        return reading
    return [*reading, plain_tool(files.write_file), plain_tool(files.edit_file)]


class FileTools:
    """The functions behind the tools; their docstrings are what the model reads."""

    def __init__(self, workspace: Workspace) -> None:
        self.workspace = workspace

    def read_file(
        self, path: str, start_line: int | None = None, end_line: int | None = None
    ) -> str:
        """Read a text file of the workspace, with line numbers.

        Args:
            path: file path relative to the workspace
            start_line: first line to show (1-based); default 1
            end_line: last line to show (inclusive); default: up to 400 lines
        """
        fd = self.workspace.open_file(path)
        try:
            data = _read_capped(fd, path)
        finally:
            os.close(fd)
        if looks_binary(data):
            raise ToolError(f"{path!r} looks binary ({len(data)} bytes); read_file shows text only")
        lines = data.decode("utf-8", "replace").splitlines()
        return _numbered(path, lines, start_line, end_line)

    def list_dir(self, path: str = ".") -> str:
        """List a folder of the workspace: sub-folders end with '/', files show their size.

        Args:
            path: folder path relative to the workspace; default the workspace root
        """
        fd = self.workspace.open_dir(path)
        try:
            with os.scandir(fd) as entries:
                listed = sorted(entries, key=lambda entry: entry.name)
                rows = [_describe_entry(fd, entry) for entry in listed[:MAX_LIST_ENTRIES]]
        finally:
            os.close(fd)
        if not rows:
            return f"{path}: empty folder"
        more = len(listed) - len(rows)
        footer = [f"[{more} more entries not shown]"] if more > 0 else []
        count = f"{len(listed)} entries" if len(listed) > 1 else "1 entry"
        return "\n".join([f"{path}: {count}", *rows, *footer])

    def search(self, pattern: str, glob: str | None = None) -> str:
        """Search the workspace's text files for a regular expression; lists path:line: text.

        Args:
            pattern: Python regular expression, e.g. "def test_\\w+"
            glob: only files whose name matches (e.g. "*.py"); a glob with '/' matches the path
        """
        return search_workspace(self.workspace, pattern, glob)

    def write_file(self, path: str, content: str) -> str:
        """Create or overwrite a file in the workspace (missing folders are created).

        Args:
            path: file path relative to the workspace
            content: the complete new content of the file
        """
        self.workspace.validate(path)
        parent = os.path.dirname(path.rstrip("/"))
        if parent:
            self.workspace.make_dirs(parent)
        existed = self._exists(path)
        fd = self.workspace.open_file(path, os.O_WRONLY | os.O_CREAT)
        try:
            data = content.encode("utf-8", "surrogateescape")
            _overwrite(fd, data, path)
        finally:
            os.close(fd)
        verb = "replaced" if existed else "created"
        return f"{verb} {path}: {len(data)} bytes, {_count_lines(content)} lines"

    def edit_file(self, path: str, old_text: str, new_text: str) -> str:
        """Replace one exact, unique snippet of a workspace file with new text.

        Args:
            path: file path relative to the workspace
            old_text: the exact text to replace, including indentation; must occur exactly once
            new_text: the replacement text
        """
        if not old_text:
            raise ToolError("old_text is empty; give the exact text to replace")
        fd = self.workspace.open_file(path, os.O_RDWR)
        try:
            data = _read_capped(fd, path)
            text = data.decode("utf-8", "surrogateescape")
            start = _unique_position(text, old_text, path)
            updated = text[:start] + new_text + text[start + len(old_text) :]
            _overwrite(fd, updated.encode("utf-8", "surrogateescape"), path)
        finally:
            os.close(fd)
        first = text.count("\n", 0, start) + 1
        last = first + _count_lines(new_text) - 1
        span = f"line {first}" if last <= first else f"lines {first}-{last}"
        return f"edited {path}: replaced {_count_lines(old_text)} line(s) with {span}"

    def _exists(self, path: str) -> bool:
        try:
            os.close(self.workspace.open_file(path))
        except WorkspacePathError as exc:
            if exc.errno == errno.ENOENT:
                return False
            raise
        return True


def _read_capped(fd: int, path: str) -> bytes:
    size = os.fstat(fd).st_size
    if size > MAX_FILE_BYTES:
        raise ToolError(f"{path!r} is {size} bytes, over the {MAX_FILE_BYTES}-byte limit")
    chunks: list[bytes] = []
    total = 0
    while chunk := os.read(fd, 1 << 20):
        chunks.append(chunk)
        total += len(chunk)
        if total > MAX_FILE_BYTES:
            raise ToolError(f"{path!r} grew over the {MAX_FILE_BYTES}-byte limit while read")
    return b"".join(chunks)


def _overwrite(fd: int, data: bytes, path: str) -> None:
    """Write ``data`` over the file from offset 0, then cut it: space first, nothing lost."""
    try:
        if data:
            with contextlib.suppress(OSError):  # not every file system can reserve space
                os.posix_fallocate(fd, 0, len(data))
        view = memoryview(data)
        written = 0
        while written < len(data):
            written += os.pwrite(fd, view[written:], written)
        os.ftruncate(fd, len(data))
    except OSError as exc:
        raise ToolError(f"could not write {path!r}: {exc.strerror or exc}") from None


def _count_lines(text: str) -> int:
    return len(text.splitlines()) or 1


def _numbered(path: str, lines: list[str], start: int | None, end: int | None) -> str:
    total = len(lines)
    if total == 0:
        return f"{path}: empty file"
    first = 1 if start is None else start
    if first < 1 or first > total:
        raise ToolError(f"start_line {first} is out of range; {path!r} has {total} lines")
    last = min(total, first + MAX_READ_LINES - 1) if end is None else min(end, total)
    if last < first:
        raise ToolError(f"end_line {end} is before start_line {first}")
    last = min(last, first + MAX_READ_LINES - 1)
    width = len(str(last))
    body = [
        f"{n:>{width}}\t{cut_line(lines[n - 1], MAX_LINE_CHARS)}" for n in range(first, last + 1)
    ]
    header = f"{path} (lines {first}-{last} of {total})"
    footer = [f"[more: read_file with start_line={last + 1}]"] if last < total else []
    return "\n".join([header, *body, *footer])


def _unique_position(text: str, old_text: str, path: str) -> int:
    count = text.count(old_text)
    if count == 0:
        raise ToolError(
            f"old_text was not found in {path!r}; read the file again and copy the exact text, "
            "including indentation and line breaks"
        )
    if count > 1:
        raise ToolError(
            f"old_text matches {count} times in {path!r}; include more surrounding lines so it "
            "matches exactly once"
        )
    return text.index(old_text)


def _describe_entry(dir_fd: int, entry: os.DirEntry[str]) -> str:
    try:
        info = entry.stat(follow_symlinks=False)
    except OSError:
        return f"{entry.name}  (vanished)"
    if stat.S_ISDIR(info.st_mode):
        return f"{entry.name}/"
    if stat.S_ISREG(info.st_mode):
        return f"{entry.name}  ({info.st_size} bytes)"
    if stat.S_ISLNK(info.st_mode):
        try:
            return f"{entry.name} -> {os.readlink(entry.name, dir_fd=dir_fd)}"
        except OSError:
            return f"{entry.name} -> ?"
    return f"{entry.name}  ({file_kind(info.st_mode)})"
