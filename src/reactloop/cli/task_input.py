"""Where ``reactloop run`` reads its task: the TASK argument, ``-`` or a pipe (stdin), or
``--task-file FILE``. Stdin and files have no command-line length limit (``ARG_MAX``)."""

from __future__ import annotations

import sys
from pathlib import Path

from reactloop.cli.file_checks import check_input_file
from reactloop.cli.usage_errors import CliError
from reactloop.errors import UsageError

STDIN = "-"
# A task larger than this is refused, not read into memory (a model's context is far smaller).
MAX_TASK_BYTES = 16 * 1024 * 1024


def read_task(task: str | None, task_file: Path | None) -> str:
    """The task's text: TASK itself; ``-`` (TASK or --task-file) or, without TASK, a stdin
    that is not a terminal: what stdin holds; --task-file FILE: that file (UTF-8)."""
    if task is not None and task_file is not None:
        raise CliError("give the task as TASK or as --task-file, not both")
    if task_file is not None:
        return _read_stdin() if str(task_file) == STDIN else _read_file(task_file)
    if task == STDIN or (task is None and not _stdin_is_terminal()):
        return _read_stdin()
    if task is None:
        raise CliError(
            "Missing argument 'TASK' (or '-' to read it from stdin, or --task-file FILE)"
        )
    return task


def _stdin_is_terminal() -> bool:
    stream = sys.stdin
    return stream is None or stream.closed or stream.isatty()


def _read_stdin() -> str:
    """Standard input's bytes (click's ``get_binary_stream`` is deprecated from Click 8.5)."""
    stream = getattr(sys.stdin, "buffer", None)
    if stream is None:  # a text stream of its own (an embedding program's): its text, as bytes
        text = sys.stdin.read(MAX_TASK_BYTES + 1)
        return _text(text.encode("utf-8", "surrogateescape"), "stdin")
    data: bytes = stream.read(MAX_TASK_BYTES + 1)
    return _text(data, "stdin")


def _read_file(path: Path) -> str:
    try:
        check_input_file(path, "task file")
        with path.open("rb") as file:
            data = file.read(MAX_TASK_BYTES + 1)
    except UsageError as exc:
        raise CliError(str(exc)) from None
    except OSError as exc:
        raise CliError(f"cannot read task file {path}: {exc.strerror}") from None
    return _text(data, f"task file {path}")


def _text(data: bytes, source: str) -> str:
    if len(data) > MAX_TASK_BYTES:
        raise CliError(f"the task in {source} is over {MAX_TASK_BYTES // (1024 * 1024)} MiB")
    try:
        return data.decode("utf-8-sig").strip()
    except UnicodeDecodeError as exc:
        raise CliError(f"the task in {source} is not UTF-8 text (byte {exc.start})") from None
