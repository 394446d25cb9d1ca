"""``search``: a regular expression over the workspace's text files, never leaving it.

The walk starts from a descriptor of the workspace root and opens every folder and file with
``O_NOFOLLOW`` relative to its parent: symlinks are never followed, only regular files with a
single link are read, and binary or large files are skipped. The pattern runs in a worker
process (``regex_process``) that is killed at the search's deadline: ``SEARCH_SECONDS``, or
the run's remaining time (``registry.run_deadline``) when that comes first.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from fnmatch import fnmatchcase

from reactloop.errors import ToolError
from reactloop.sandbox.path_checks import open_entry
from reactloop.sandbox.paths import Workspace
from reactloop.tools.context import run_deadline
from reactloop.tools.families.regex_process import RegexProcess
from reactloop.tools.families.regex_worker import cut_line

__all__ = ["cut_line", "looks_binary", "search_workspace"]

SEARCH_MAX_MATCHES = 50
SEARCH_MAX_FILE_BYTES = 1_000_000
SEARCH_MAX_FILES = 20_000
SEARCH_MAX_DEPTH = 40
SEARCH_SECONDS = 10.0
SEARCH_SKIP_DIRS = frozenset(
    {".git", ".hg", ".svn", "__pycache__", "node_modules", ".venv", ".mypy_cache",
     ".pytest_cache", ".ruff_cache", ".tox"}
)  # fmt: skip
BINARY_SNIFF_BYTES = 8192


def search_workspace(workspace: Workspace, pattern: str, glob: str | None = None) -> str:
    """Matching lines as ``path:line: text``, then a summary line."""
    deadline = time.monotonic() + SEARCH_SECONDS
    run_ends = run_deadline()
    why = f"the search took over {SEARCH_SECONDS:g} s"
    if run_ends is not None and run_ends < deadline:
        deadline, why = run_ends, "the run's time limit came"
    matcher = RegexProcess(pattern, deadline)
    try:
        return _Search(workspace, matcher, glob, why).run()
    finally:
        matcher.close()


def looks_binary(data: bytes) -> bool:
    return b"\x00" in data[:BINARY_SNIFF_BYTES]


class _Search:
    """One walk over the workspace; symlinks are never followed, only regular files read."""

    def __init__(
        self, workspace: Workspace, matcher: RegexProcess, glob: str | None, why: str
    ) -> None:
        self.workspace, self.matcher, self.glob, self.why = workspace, matcher, glob, why
        self.matches: list[str] = []
        self.files = 0
        self.skipped = 0
        self.stopped = ""

    def run(self) -> str:
        root = self.workspace.open_dir(".")
        try:
            for relpath, dir_fd, name in self._walk(root, "", 0):
                self._search_file(relpath, dir_fd, name)
                if self.stopped:
                    break
        finally:
            os.close(root)
        return self._report()

    def _walk(self, dir_fd: int, prefix: str, depth: int) -> Iterator[tuple[str, int, str]]:
        with os.scandir(dir_fd) as listing:
            entries = sorted(listing, key=lambda entry: entry.name)
        for entry in entries:
            if self.stopped:
                return
            relpath = prefix + entry.name
            if entry.is_dir(follow_symlinks=False):
                if entry.name not in SEARCH_SKIP_DIRS and depth < SEARCH_MAX_DEPTH:
                    yield from self._walk_into(dir_fd, entry.name, relpath, depth)
            elif entry.is_file(follow_symlinks=False) and self._selected(relpath, entry.name):
                yield relpath, dir_fd, entry.name

    def _walk_into(
        self, dir_fd: int, name: str, relpath: str, depth: int
    ) -> Iterator[tuple[str, int, str]]:
        flags = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
        try:
            child = os.open(name, flags, dir_fd=dir_fd)
        except OSError:
            self.skipped += 1  # swapped for a symlink or removed meanwhile
            return
        try:
            yield from self._walk(child, relpath + "/", depth + 1)
        finally:
            os.close(child)

    def _selected(self, relpath: str, name: str) -> bool:
        if self.glob is None:
            return True
        return fnmatchcase(relpath if "/" in self.glob else name, self.glob)

    def _search_file(self, relpath: str, dir_fd: int, name: str) -> None:
        self.files += 1
        if self.files > SEARCH_MAX_FILES or time.monotonic() > self.matcher.deadline:
            self.stopped = f"stopped after {self.files - 1} files (search limit reached)"
            return
        text = self._read_text(relpath, dir_fd, name)
        if text is None:
            return
        try:
            self._collect(relpath, text)
        except TimeoutError:
            self.stopped = f"stopped in {relpath}: {self.why}"

    def _read_text(self, relpath: str, dir_fd: int, name: str) -> str | None:
        try:
            fd = open_entry(dir_fd, name, relpath)
        except ToolError:
            self.skipped += 1
            return None
        try:
            if os.fstat(fd).st_size > SEARCH_MAX_FILE_BYTES:
                self.skipped += 1
                return None
            data = os.read(fd, SEARCH_MAX_FILE_BYTES + 1)
        finally:
            os.close(fd)
        if looks_binary(data):
            self.skipped += 1
            return None
        return data.decode("utf-8", "replace")

    def _collect(self, relpath: str, text: str) -> None:
        room = SEARCH_MAX_MATCHES - len(self.matches)
        for line_number, line in self.matcher.matching_lines(text, room):
            self.matches.append(f"{relpath}:{line_number}: {line}")
        if len(self.matches) >= SEARCH_MAX_MATCHES:
            self.stopped = f"showing the first {SEARCH_MAX_MATCHES} matches; narrow the search"

    def _report(self) -> str:
        skipped = f"; {self.skipped} skipped (binary, too large, or not regular)"
        summary = f"{len(self.matches)} matching lines in {self.files} files searched"
        lines = [*self.matches, f"[{summary}{skipped if self.skipped else ''}]"]
        if self.stopped:
            lines.append(f"[{self.stopped}]")
        if not self.matches:
            lines[0:0] = ["no matches"]
        return "\n".join(lines)
