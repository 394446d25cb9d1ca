"""Input that is not UTF-8 text is one clear line where it comes in: a ``--checklist`` file
(exit 2), a TASK with bytes that are not UTF-8 (exit 2, no journal), the same task given to
``Agent.run`` (a ``UsageError`` before the run starts) and a line typed to ``chat``."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

import reactloop
from helpers import invoke, script
from reactloop import Agent, FunctionModel, ModelTurn, UsageError
from reactloop.models.openai import OpenAIChatModel
from reactloop.support.text import text_problem
from reactloop.testing import FakeOpenAIServer

BAD_TASK = b"\xff\xfe".decode("utf-8", "surrogateescape")  # what Python makes of argv bytes
SRC = str(Path(reactloop.__file__).resolve().parents[1])  # this reactloop, from any folder
ENV = {**os.environ, "LC_ALL": "C.UTF-8", "PYTHONPATH": SRC}


def run_process(*args: str | bytes, cwd: Path) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "reactloop", *args],
        capture_output=True,
        timeout=60,
        check=False,
        cwd=cwd,
        env=ENV,
    )


def test_a_checklist_that_is_not_utf8_is_one_line_and_exit_2(tmp_path: Path) -> None:
    checklist = tmp_path / "checks.txt"
    checklist.write_bytes(b"- the tests pass\n- caf\xe9 served\n")
    model = script(tmp_path, ["done"])
    trace = tmp_path / "run.jsonl"
    args = ("run", "q", "--model", model, "--checklist", str(checklist), "--trace", str(trace))
    code, out, err = invoke(*args)
    assert (code, out) == (2, "")
    assert err == (
        f"reactloop: error: checklist {checklist} is not UTF-8 text "
        "(the bytes b'\\xe9 se' at byte 22)\n"
    )
    assert not trace.exists()


def test_a_task_with_bytes_that_are_not_utf8_is_one_line_exit_2_and_no_journal(
    tmp_path: Path,
) -> None:
    model = script(tmp_path, ["done"])
    done = run_process("run", b"\xff\xfe", "--model", model, cwd=tmp_path)
    assert (done.returncode, done.stdout) == (2, b"")
    assert done.stderr == (
        b"reactloop: error: TASK is not UTF-8 text: it holds the bytes b'\\xff\\xfe' at "
        b"character 0; give it as UTF-8\n"
    )
    assert not (tmp_path / "runs").exists()


def test_agent_run_refuses_such_a_task_before_the_run_starts() -> None:
    """Chosen: a ``UsageError``, as for any argument no run can use; the alternative, a run
    ended ``model_error`` by the adapter's ``UnicodeEncodeError``, blamed the model."""
    with FakeOpenAIServer(["never asked"]) as server:
        agent = Agent(OpenAIChatModel(model="fake", base_url=server.base_url), [])
        with pytest.raises(UsageError) as refused:
            agent.run(f"summarise {BAD_TASK}")
        assert server.requests == []
    assert str(refused.value) == (
        "the task is not UTF-8 text: it holds the bytes b'\\xff\\xfe' at character 10"
    )
    lone = Agent(FunctionModel(lambda request: ModelTurn(text="x")), [])
    with pytest.raises(UsageError, match=re.escape("surrogate code point U+D83D at character 1")):
        lone.run("a\ud83d")


def test_a_line_typed_to_chat_that_is_not_utf8_is_refused_and_the_chat_goes_on(
    tmp_path: Path,
) -> None:
    model = script(tmp_path, ["the answer"])
    chat = ("chat", "--model", model, "--protocol", "native", "--no-trace")
    done = subprocess.run(
        [sys.executable, "-m", "reactloop", *chat],
        input=b"\xff\xfe\nhello\n",
        capture_output=True,
        timeout=60,
        check=False,
        cwd=tmp_path,
        env={**ENV, "PYTHONIOENCODING": "utf-8:surrogateescape"},
    )
    assert done.returncode == 0, done.stderr
    assert b"the line is not UTF-8 text: it holds the bytes b'\\xff\\xfe' at character 0" in (
        done.stderr
    )
    assert done.stdout.split(b"\n")[0] == b"> > the answer"  # the prompt twice: one answer


@given(st.text())
def test_text_problem_says_none_exactly_when_utf8_can_encode_the_text(text: str) -> None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        assert text_problem(text) is not None
    else:
        assert text_problem(text) is None
