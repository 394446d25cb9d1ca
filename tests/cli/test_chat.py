"""``reactloop chat`` driven through a real pseudo-terminal: typed lines, answers, Ctrl-C, Ctrl-D.

The command runs in a process of its own whose controlling terminal is the pty, so ``\\x03``
is the terminal's SIGINT, as for a user. The test waits on what the terminal shows (select
with a timeout on the pty), never on sleeps.
"""

from __future__ import annotations

import json
import os
import pty
import select
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from reactloop import read_journal

# Makes the pty the controlling terminal of a new session, then becomes the command.
_LAUNCH = (
    "import fcntl, os, sys, termios; os.setsid(); fcntl.ioctl(0, termios.TIOCSCTTY, 0); "
    "os.execv(sys.executable, [sys.executable, '-m', 'reactloop', *sys.argv[1:]])"
)


class Terminal:
    """A command on a pty: ``send`` types, ``expect`` waits until the screen shows a text."""

    def __init__(self, args: list[str], cwd: Path) -> None:
        self.fd, child = pty.openpty()
        env = {**os.environ, "TERM": "dumb", "NO_COLOR": "1", "COLUMNS": "200"}
        self.process = subprocess.Popen(
            [sys.executable, "-c", _LAUNCH, *args],
            stdin=child, stdout=child, stderr=child, cwd=cwd, env=env, close_fds=True,
        )  # fmt: skip
        os.close(child)
        self.screen = ""
        self.seen = 0

    def send(self, text: str) -> None:
        os.write(self.fd, text.encode())

    def expect(self, text: str, timeout: float = 60) -> str:
        """Everything shown since the last expectation, up to and including ``text``."""
        deadline = time.monotonic() + timeout
        while (found := self.screen.find(text, self.seen)) < 0:
            left = deadline - time.monotonic()
            if left <= 0 or not self._read(left):
                raise AssertionError(f"{text!r} not shown; the screen:\n{self.screen}")
        shown, self.seen = self.screen[self.seen : found + len(text)], found + len(text)
        return shown

    def _read(self, timeout: float) -> bool:
        ready, _, _ = select.select([self.fd], [], [], timeout)
        if not ready:
            return False
        try:
            chunk = os.read(self.fd, 65536)
        except OSError:  # EIO: the command ended and closed the terminal
            return False
        self.screen += chunk.decode(errors="replace").replace("\r\n", "\n")
        return bool(chunk)

    def close(self) -> int:
        try:
            return self.process.wait(timeout=60)
        finally:
            while self._read(0):
                pass
            os.close(self.fd)


def calls(*calls: tuple[str, dict[str, Any]]) -> dict[str, Any]:
    return {"tool_calls": [{"name": name, "arguments": args} for name, args in calls]}


SCRIPT = [
    calls(("calculator", {"expression": "2+3"})),
    "Two and three make 5.",
    calls(("calculator", {"expression": "5*4"})),
    "Times four: 20.",
    calls(("bash", {"command": "sleep 30", "timeout_seconds": 60})),
    # the cancelled turn never asks for its next turn: the follow-up gets this one
    "Still here; the slow command was stopped.",
]


@pytest.fixture
def chat(tmp_path: Path) -> Iterator[tuple[Terminal, Path]]:
    script = tmp_path / "script.json"
    script.write_text(json.dumps(SCRIPT), encoding="utf-8")
    workspace = tmp_path / "ws"
    workspace.mkdir()
    trace = tmp_path / "chat.jsonl"
    args = ["chat", "--model", f"scripted:{script}", "--tools", "calculator,bash",
            "--workspace", str(workspace), "--trace", str(trace)]  # fmt: skip
    terminal = Terminal(args, tmp_path)
    yield terminal, trace
    if terminal.process.poll() is None:
        terminal.process.kill()
        terminal.close()


def test_a_conversation_at_the_terminal_with_a_cancelled_turn(chat: tuple[Terminal, Path]) -> None:
    terminal, trace = chat
    terminal.expect("> ")
    terminal.send("What is 2+3?\n")
    assert "calculator" in terminal.expect("Two and three make 5.")
    terminal.expect("> ")
    terminal.send("And times four?\n")
    terminal.expect("Times four: 20.")
    terminal.expect("> ")
    terminal.send("Now the slow one.\n")
    terminal.expect("bash(")  # the slow command is under way
    started = time.monotonic()
    terminal.send("\x03")
    terminal.expect("turn cancelled")
    assert time.monotonic() - started < 25  # not the 30 s of the command
    terminal.expect("> ")  # the session goes on
    terminal.send("Are you still there?\n")
    terminal.expect("Still here; the slow command was stopped.")
    terminal.expect("> ")
    terminal.send("never mind")
    terminal.expect("never mind")  # the prompt reads (a Ctrl-C before it would wait for a key)
    terminal.send("\x03")  # at the prompt: the line is dropped, the session goes on
    try:
        terminal.expect("> ", timeout=5)
    except AssertionError:
        # CPython's readline notices a signal only when its select() is interrupted: one that
        # lands just before the select (the echo written, the process not yet waiting, which
        # a loaded machine makes likely) is handled when the line ends. The line is dropped
        # then, not run as a turn (the journal's tasks below say so).
        terminal.send("\n")
        terminal.expect("> ")
    terminal.send("exit\n")
    assert terminal.close() == 0, terminal.screen
    assert f"trace: {trace}" in terminal.screen.replace("\n", "")

    records = list(read_journal(trace))
    starts = [r for r in records if r["type"] == "run_start"]
    stops = [r for r in records if r["type"] == "stop"]
    assert [r["task"] for r in starts] == [
        "What is 2+3?", "And times four?", "Now the slow one.", "Are you still there?",
    ]  # fmt: skip
    assert [s["stop_reason"] for s in stops] == [
        "final_answer", "final_answer", "cancelled", "final_answer",
    ]  # fmt: skip
    assert "continues" not in starts[0]
    assert [s["continues"]["messages"] for s in starts[1:]] == [5, 9, 12]
    # every turn ends with its stop before the next one starts
    kinds = [r["type"] for r in records if r["type"] in ("run_start", "stop")]
    assert kinds == ["run_start", "stop"] * 4
    _assert_calls_paired(records)


def _assert_calls_paired(records: list[dict[str, Any]]) -> None:
    """Each call has one result; the cancelled bash call was answered, never completed."""
    ids = [r["call"]["id"] for r in records if r["type"] == "tool_call"]
    results = {r["result"]["call_id"]: r["result"] for r in records if r["type"] == "tool_result"}
    assert len(ids) == len(set(ids)) == 3 and set(ids) == set(results)
    bash = next(r for r in results.values() if r["name"] == "bash")
    assert bash["ok"] is False
    last_start = max(i for i, r in enumerate(records) if r["type"] == "run_start")
    follow_up = next(r for r in records[last_start:] if r["type"] == "request")
    sent = [m for m in follow_up["messages_new"] if m.get("role") == "tool"]
    assert [m["tool_call_id"] for m in sent] == ids  # the follow-up sees every call answered


def test_ctrl_d_at_the_first_prompt_ends_cleanly(chat: tuple[Terminal, Path]) -> None:
    terminal, trace = chat
    terminal.expect("> ")
    terminal.send("\x04")
    assert terminal.close() == 0, terminal.screen
    assert "Traceback" not in terminal.screen
    assert [r["type"] for r in read_journal(trace)] == []  # no turn: a journal with no run


def test_chat_takes_the_options_of_run() -> None:
    from reactloop.cli.chat import chat as chat_command
    from reactloop.cli.run import run

    ours = {p.name for p in chat_command.params}
    assert ours == {p.name for p in run.params} - {
        "task",
        "task_file",
        "as_json",
        "exit_zero_on_forced",
    }


def test_a_forced_answer_is_marked_in_chat_as_in_run(tmp_path: Path) -> None:
    again = {"tool_calls": [{"name": "calculator", "arguments": {"expression": "1 + 1"}}]}
    script = tmp_path / "script.json"
    script.write_text(json.dumps([again, again, again, {"content": "2"}]), encoding="utf-8")
    command = [sys.executable, "-m", "reactloop"]
    options = ["--model", f"scripted:{script}", "--no-trace"]
    shown = {}
    for name, args in (("run", ["run", "What is 1 + 1?"]), ("chat", ["chat"])):
        done = subprocess.run(
            [*command, *args, *options],
            input="What is 1 + 1?\n" if name == "chat" else None,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        # run: 3, an answer not to trust; chat: 0, a session of many answers, each marked
        assert done.returncode == (3 if name == "run" else 0), done.stderr
        assert "2" in done.stdout.replace("> ", "").splitlines()
        shown[name] = done.stderr
    for stderr in shown.values():
        assert "Forced answer" in stderr and "check it before you trust it" in stderr
        assert "stop: loop_detected" in stderr
