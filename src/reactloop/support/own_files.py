"""Files the harness itself writes (journals, full tool output), opened without following a
link a run could have planted.

The harness writes outside every sandbox, so a symbolic link in its way would let a model's
command choose where the harness writes. Each file is opened with ``O_NOFOLLOW`` (a link as
the file is refused, ``ELOOP``); a new file in a folder is created ``O_EXCL`` beneath that
folder opened ``O_NOFOLLOW | O_DIRECTORY`` (a link as the folder is refused too, and so is a
hard link or a link planted as the file: what is there is removed, never written through).
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import IO

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)


def open_own_file(path: Path, mode: str) -> IO[bytes]:
    """``path`` opened for writing (``"wb"``) or appending (``"ab"``), unbuffered, never
    through a link at ``path`` itself."""
    flags = os.O_WRONLY | os.O_CREAT | _NOFOLLOW | _CLOEXEC
    flags |= os.O_APPEND if mode == "ab" else os.O_TRUNC
    return os.fdopen(os.open(path, flags, 0o644), mode, buffering=0)


def create_in_folder(folder: Path, name: str) -> IO[bytes]:
    """A new file ``name`` in ``folder`` (made, with its parents, when missing), unbuffered.

    ``folder`` must be a real folder, not a link to one; whatever ``name`` was (an old output,
    a link, a hard link to another file) is removed first, so the bytes land in a new file."""
    folder.mkdir(parents=True, exist_ok=True)
    folder_fd = os.open(folder, os.O_RDONLY | _DIRECTORY | _NOFOLLOW | _CLOEXEC)
    try:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(name, dir_fd=folder_fd)
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC
        fd = os.open(name, flags, 0o644, dir_fd=folder_fd)
    finally:
        os.close(folder_fd)
    return os.fdopen(fd, "wb", buffering=0)
