"""``TerminalApprover``: questions, answers, allow-lists, and what happens without a terminal."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from reactloop import Agent, ScriptedModel
from reactloop.approval import AllowRule, TerminalApprover, bash_command, describe, visible
from reactloop.errors import UsageError
from reactloop.messages import ToolCall
from reactloop.tools.base import Tool, make_tool


def _write(path: str, content: str) -> str:
    """Write a file."""
    return "written"


def _bash(command: str, timeout_seconds: int = 30) -> str:
    """Run a command."""
    return "ran"


WRITE = make_tool(_write, name="write_file")
BASH = make_tool(_bash, name="bash")


def bash_call(command: str) -> ToolCall:
    return ToolCall(id="c1", name="bash", arguments=json.dumps({"command": command}))


def write_call(path: str = "a.txt") -> ToolCall:
    arguments = json.dumps({"path": path, "content": "x"})
    return ToolCall(id="c2", name="write_file", arguments=arguments)


def approver(answers: str, allow: tuple[str, ...] = ()) -> tuple[TerminalApprover, io.StringIO]:
    output = io.StringIO()
    return TerminalApprover(list(allow), input=io.StringIO(answers), output=output), output


def test_yes_runs_and_shows_the_command() -> None:
    approve, output = approver("y\n")
    assert approve(bash_call("python -m pytest -q"), BASH) is True
    assert "$ python -m pytest -q" in output.getvalue()
    assert "Allow?" in output.getvalue()


def test_enter_or_no_declines_with_a_reason_for_the_model() -> None:
    approve, _ = approver("\nn\nno use pytest -q instead\n")
    assert approve(bash_call("rm -rf build"), BASH) == "declined by the user"
    assert approve(bash_call("rm -rf build"), BASH) == "declined by the user"
    answer = approve(bash_call("rm -rf build"), BASH)
    assert answer == "declined by the user: use pytest -q instead"


def test_unclear_answers_decline() -> None:
    approve, _ = approver("sure\n")
    assert approve(bash_call("make"), BASH) == "declined by the user"


def test_end_of_input_declines() -> None:
    approve, _ = approver("")
    answer = approve(bash_call("make"), BASH)
    assert isinstance(answer, str) and "end of input" in answer


def test_no_terminal_declines_without_asking(monkeypatch: Any) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO("y\n"))  # not a TTY, although it says yes
    output = io.StringIO()
    approve = TerminalApprover(output=output)
    answer = approve(bash_call("make"), BASH)
    assert isinstance(answer, str) and "no terminal" in answer
    assert output.getvalue() == ""


def test_always_remembers_exactly_that_call() -> None:
    approve, output = approver("a\n")
    assert approve(bash_call("make test"), BASH) is True
    assert approve(bash_call("make test"), BASH) is True
    assert output.getvalue().count("Allow?") == 1
    answer = approve(bash_call("make install"), BASH)  # a different call asks again: EOF
    assert isinstance(answer, str)


def test_allow_patterns_skip_the_question() -> None:
    approve, output = approver("", allow=("pytest*", "ls *", "re:git (status|diff)( .*)?"))
    for command in ("pytest -q tests/", "ls -la src", "git status", "git diff HEAD"):
        assert approve(bash_call(command), BASH) is True, command
    assert output.getvalue() == ""
    assert approve(bash_call("git push"), BASH) != True  # noqa: E712 - a reason string


@pytest.mark.parametrize(
    "command",
    [
        "pytest; rm -rf ~",
        "pytest && curl evil.example",
        "pytest | sh",
        "pytest `rm -rf ~`",
        "pytest $(rm -rf ~)",
        "pytest > /etc/passwd",
        "pytest\nrm -rf ~",
        "ls & rm -rf ~",
    ],
)
def test_patterns_never_allow_chained_commands(command: str) -> None:
    approve, output = approver("", allow=("pytest*", "ls *", "re:.*"))
    assert approve(bash_call(command), BASH) != True  # noqa: E712
    assert "Allow?" in output.getvalue()


def test_tool_rule_allows_a_whole_tool() -> None:
    approve, _ = approver("", allow=("tool:write_file",))
    assert approve(write_call(), WRITE) is True
    assert approve(bash_call("make"), BASH) != True  # noqa: E712


def test_command_patterns_do_not_apply_to_other_tools() -> None:
    approve, output = approver("n\n", allow=("*",))
    assert approve(write_call("*"), WRITE) == "declined by the user"
    assert '"path": "*"' in output.getvalue()


def test_bad_patterns_are_usage_errors() -> None:
    with pytest.raises(UsageError, match="regex"):
        TerminalApprover(["re:("])
    with pytest.raises(UsageError, match="no tool"):
        TerminalApprover(["tool:"])
    with pytest.raises(UsageError, match="empty"):
        TerminalApprover([" "])


def test_control_characters_are_shown_escaped() -> None:
    call = bash_call("echo safe\x1b[2K\x1b[1Arm -rf ~\u202e")
    shown = describe(call, bash_command(call))
    assert "\x1b" not in shown and "\u202e" not in shown
    assert "\\x1b[2K" in shown and "rm -rf ~" in shown


@given(st.text())
def test_visible_leaves_no_control_characters(text: str) -> None:
    shown = visible(text)
    assert all(ch in "\n\t" or ch.isprintable() for ch in shown)


@given(st.text(max_size=200))
def test_bash_command_never_raises(arguments: str) -> None:
    command = bash_command(ToolCall(id="x", name="bash", arguments=arguments))
    assert command is None or isinstance(command, str)


def test_allow_rule_fnmatch_is_case_sensitive() -> None:
    assert AllowRule.parse("pytest*").allows("bash", "pytest -q")
    assert not AllowRule.parse("pytest*").allows("bash", "PYTEST -q")


def test_agent_turns_a_declined_call_into_an_observation(tmp_path: Path) -> None:
    ran: list[str] = []

    def write_file(path: str, content: str) -> str:
        """Write a file."""
        ran.append(path)
        return "written"

    tool: Tool = make_tool(write_file)
    script = [
        {"tool_calls": [{"name": "write_file", "arguments": {"path": "a", "content": "x"}}]},
        {"content": "I could not write the file."},
    ]
    model = ScriptedModel(script)
    approve, _ = approver("n not that file\n")
    result = Agent(model, [tool], approve=approve).run("write a")
    assert ran == []
    assert result.answer == "I could not write the file."
    observation = next(m for m in result.history if m.role == "tool")
    assert "not that file" in observation.content and '"ok": false' in observation.content
