"""The checks every command makes on the files it reads and writes, and where journals go.

A file a command reads must be a regular file (a FIFO without a writer blocks forever); a file
it writes must be a regular file or a new one, and none of the command's inputs.
"""

from __future__ import annotations

import secrets
import stat
from collections.abc import Iterable
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from reactloop.cli.record_place import runs_dir
from reactloop.errors import UsageError
from reactloop.models import split_spec

if TYPE_CHECKING:
    from reactloop.cli.options import RunOptions

# Providers whose model spec names a file the run reads: the journal must never replace it.
FILE_PROVIDERS = ("scripted", "replay")


def default_trace_path() -> Path:
    stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
    return runs_dir() / f"{stamp}-{secrets.token_hex(3)}.jsonl"


def model_file(spec: str | None) -> Path | None:
    """The file a ``scripted:FILE`` or ``replay:TRACE`` model reads, else None."""
    if spec is None:
        return None
    provider, name = split_spec(spec)
    return Path(name) if provider in FILE_PROVIDERS and name else None


def check_input_file(path: Path, what: str) -> None:
    """A file a command reads must be a regular file: a FIFO without a writer blocks forever."""
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        raise UsageError(f"{what} not found: {path}") from None
    except OSError as exc:
        raise UsageError(f"cannot read {what} {path}: {exc.strerror}") from None
    if not stat.S_ISREG(mode):
        raise UsageError(f"{what} {path} is not a regular file")


def check_output_file(path: Path, what: str, inputs: Iterable[Path | None] = ()) -> None:
    """A file a command writes: a regular file or a new one, and none of the command's inputs.

    A folder cannot be written, a FIFO without a reader blocks forever, and replacing an input
    (the script, the notes, the journal being read) would lose it.
    """
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        return
    except OSError as exc:
        raise UsageError(f"cannot write {what} {path}: {exc.strerror}") from None
    if not stat.S_ISREG(mode):
        raise UsageError(f"{what} {path} is not a regular file")
    for source in inputs:
        if source is not None and _same_file(path, source):
            raise UsageError(f"{what} {path} would overwrite the input file {source}")


def _same_file(path: Path, other: Path) -> bool:
    try:
        return path.samefile(other)
    except OSError:
        return False


def check_run_files(options: RunOptions) -> None:
    """The files ``run`` reads, each a regular file, and its workspace a folder."""
    source = model_file(options.model)
    if source is not None and source.exists():  # a missing one: the model names it
        check_input_file(source, "model file")
    if options.notes is not None:
        check_input_file(options.notes, "notes file")
    if options.prices is not None:
        check_input_file(options.prices, "price table")
    if options.workspace is not None and not options.workspace.is_dir():
        raise UsageError(f"workspace is not a folder: {options.workspace}")
