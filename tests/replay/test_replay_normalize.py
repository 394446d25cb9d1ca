"""The replay's normaliser (what changes by itself from run to run) and its first difference
(shown with lines around it, never cut before it); properties checked with hypothesis."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

from reactloop import Agent, Journal, ScriptedModel
from reactloop.cli.trace import replay as replay_command
from reactloop.errors import UsageError
from reactloop.replay.compare import compare
from reactloop.replay.difference import cut_window, first_difference, lines_of
from reactloop.replay.normalize import Normalizer
from reactloop.tools.context import ToolContext
from reactloop.tools.registry import build_tools

NORMAL = Normalizer()


@pytest.mark.parametrize(
    ("then", "now", "same"),
    [
        (
            "2 failed, 2 passed in 0.74s",
            "2 failed, 2 passed in 3.00s",
            "2 failed, 2 passed in <duration>",
        ),
        ("1 passed in 62.34s (0:01:02)", "1 passed in 1.02s", "1 passed in <duration>"),
        ("Ran 4 tests in 0.001s", "Ran 4 tests in 0.012s", "Ran 4 tests in <duration>"),
        ("real\t0m0.003s", "real\t1m2.103s", "real\t<duration>"),
        ("took 12.5 ms", "took 3.25 ms", "took <duration>"),
        (
            "rootdir: /tmp/pytest-of-root/pytest-3/test_x0",
            "rootdir: /tmp/pytest-of-root/pytest-9/test_x0",
            "rootdir: <tmp>",
        ),
        (
            "File '/var/folders/ab/T/x.py', line 2",
            "File '/tmp/y.py', line 2",
            "File '<tmp>', line 2",
        ),
        ("started pid 4242", "started pid 77", "started pid <pid>"),
        ("PID: 12", "PID: 99", "PID: <pid>"),
        ("/proc/123/status", "/proc/9/status", "/proc/<pid>/status"),
        (
            "bash: line 1:  4242 Killed  sleep 9",
            "bash: line 1:  17 Killed  sleep 9",
            "bash: line 1:  <pid> Killed  sleep 9",
        ),
        ("<Foo object at 0x7f3a2b1c>", "<Foo object at 0x55d0e1f8>", "<Foo object at 0x<address>>"),
    ],
)
def test_volatile_text_normalises_alike(then: str, now: str, same: str) -> None:
    assert NORMAL.text(then) == NORMAL.text(now) == same


@pytest.mark.parametrize(
    "text",
    [
        "timeout after 30s",  # a whole number of seconds is a setting, not a timing
        "/tmpfiles/x and tmp/x",
        "version 1.2.3",
        "3 passed",
        "rapid 42",
        "/home/user/project/calc.py:8",
        "pid ٣ in ٠.٥s",  # digits, but not ASCII ones: no pid or timing a tool prints
    ],
)
def test_what_is_not_volatile_is_left_as_it_is(text: str) -> None:
    assert NORMAL.text(text) == text


def test_workspaces_become_one_name_and_user_patterns_apply_last() -> None:
    normal = Normalizer([r"seed=\d+"]).with_workspaces("/tmp/replay-1/ws", "/home/me/ws")
    assert normal.text("/home/me/ws/calc.py seed=4") == "<workspace>/calc.py <normalized>"
    assert normal.text("/tmp/replay-1/ws/calc.py") == "<workspace>/calc.py"
    assert normal.text("/home/me/ws2/x and /home/me/ws.") == "/home/me/ws2/x and <workspace>."
    assert Normalizer(defaults=False).text("in 0.5s") == "in 0.5s"


def test_a_pattern_that_is_no_regex_is_a_usage_error() -> None:
    with pytest.raises(UsageError, match=r"--normalize '\(x' is not a regular expression"):
        Normalizer(["(x"])


# What varies by itself between two runs of the same tool, and text around it.
_VOLATILE = st.one_of(
    st.builds(lambda n, f: f"in {n}.{f:02d}s", st.integers(0, 999), st.integers(0, 99)),
    st.builds(lambda n: f"pid {n}", st.integers(1, 4_194_304)),
    st.builds(lambda s: f"/tmp/{s}", st.text("abcdefgh0123456789-_/", min_size=1, max_size=20)),
    st.builds(lambda n: f"at 0x{n:x}", st.integers(0x1000, 2**48)),
)
_PLAIN = st.text(st.characters(blacklist_characters="0123456789/x"), max_size=12)


@given(st.lists(st.tuples(_PLAIN, _VOLATILE, _VOLATILE), max_size=6), _PLAIN)
def test_texts_that_differ_only_in_volatile_parts_normalise_alike(
    parts: list[tuple[str, str, str]], tail: str
) -> None:
    def kind(token: str) -> str:
        return token.split(" ")[0] if " " in token else token[:4]

    pieces = [(plain + " ", a, b) for plain, a, b in parts if kind(a) == kind(b)]
    then = "".join(p + a + " " for p, a, _ in pieces) + tail
    now = "".join(p + b + " " for p, _, b in pieces) + tail
    assert NORMAL.text(then) == NORMAL.text(now)


@given(st.text())
def test_normalising_twice_changes_nothing(text: str) -> None:
    once = NORMAL.text(text)
    assert NORMAL.text(once) == once


@given(st.text(st.characters(blacklist_characters="0123456789/")))
def test_text_without_digits_or_paths_is_unchanged(text: str) -> None:
    assert NORMAL.text(text) == text


_LINES = st.lists(st.text("abc \t", max_size=6), max_size=12)


@given(_LINES, _LINES)
def test_the_first_difference_is_where_the_lines_first_differ_with_context_before(
    old: list[str], new: list[str]
) -> None:
    shown = first_difference(old, new, context=2, width=1000)
    if old == new:
        assert shown == []
        return
    common = next(
        (i for i, (a, b) in enumerate(zip(old, new, strict=False)) if a != b),
        min(len(old), len(new)),
    )
    marks = "".join(line[0] for line in shown)
    before = len(marks) - len(marks.lstrip(" "))
    removed = [line[1:] for line in shown if line[0] == "-"]
    added = [line[1:] for line in shown if line[0] == "+"]
    assert removed or added
    assert marks.strip(" ") == "-" * len(removed) + "+" * len(added)  # one change, in one place
    context = [line[1:] for line in shown[:before]]
    # Somewhere no later than the first index where they differ, both hold the context lines
    # (as many as there are, up to 2), then the recorded side goes on with the removed lines
    # and the replayed side with the added ones.
    assert any(
        before == min(2, at)
        and old[at - before : at] == new[at - before : at] == context
        and old[at : at + len(removed)] == removed
        and new[at : at + len(added)] == added
        for at in range(common + 1)
    ), shown


@given(
    st.text("abcdef", min_size=1, max_size=400),
    st.integers(0, 399),
    st.sampled_from("XYZ"),
    st.integers(10, 80),
)
def test_a_long_line_is_cut_around_its_first_difference(
    base: str, at: int, other: str, width: int
) -> None:
    at = at % len(base)
    new = base[:at] + other + base[at + 1 :]
    shown = first_difference([base], [new], width=width)
    removed = next(line for line in shown if line.startswith("-"))
    added = next(line for line in shown if line.startswith("+"))
    assert other in added  # the replayed character that differs is on screen
    start, end = cut_window(base, at, width)
    assert start <= at < end and end - start <= width
    assert base[start:end] in removed


def test_lines_of_a_tool_result_put_each_output_line_on_its_own() -> None:
    value = {"ok": True, "output": {"exit_code": 1, "output": "FF..\nE  assert 1 == 2\n"}}
    assert lines_of(value) == [
        "ok: true",
        "output:",
        "  exit_code: 1",
        "  output: |",
        "    FF..",
        "    E  assert 1 == 2",
        "    ",
    ]


def _events(*outputs: Any) -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = []
    for number, output in enumerate(outputs, start=1):
        call = {"id": f"c{number}", "name": "bash", "arguments": '{"command": "pytest"}'}
        events.append({"type": "tool_call", "step": number, "call": call})
        result = {"call_id": f"c{number}", "name": "bash"}
        content = '{"ok": true, "output": ' + __import__("json").dumps(output) + "}"
        events.append({"type": "tool_result", "step": number, "result": result, "content": content})
    events.append({"type": "stop", "step": len(outputs), "stop_reason": "final_answer"})
    return events


def test_results_that_differ_only_in_timings_paths_and_pids_compare_identical() -> None:
    then = _events("4 passed in 0.74s\nrootdir /tmp/a1\nworker pid 4242")
    now = _events("4 passed in 0.47s\nrootdir /tmp/b2\nworker pid 17")
    assert compare(then, now) == (None, 1)
    divergence, _ = compare(then, now, Normalizer(defaults=False))
    assert divergence is not None and divergence.kind == "tool_result"


def test_a_real_divergence_shows_the_first_difference_with_lines_around_it() -> None:
    lines = [f"line {n}" for n in range(60)]
    changed = [*lines[:40], "line 40 CHANGED", *lines[41:]]
    then = _events("\n".join(lines) + "\ndone in 0.1s")
    now = _events("\n".join(changed) + "\ndone in 0.2s")
    divergence, compared = compare(then, now)
    assert divergence is not None and compared == 0
    text = divergence.describe()
    assert "first difference (- recorded, + replayed" in text
    shown = [line.strip() for line in text.splitlines()]
    assert shown[-8:] == [
        "line 37",
        "line 38",
        "line 39",
        "-  line 40",
        "+  line 40 CHANGED",
        "line 41",
        "line 42",
        "line 43",
    ]
    assert divergence.expected["output"].startswith("line 0\n")  # the raw values are kept


def test_the_cli_takes_patterns_to_normalise_and_refuses_one_that_is_no_regex(
    tmp_path: Path,
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    command = "echo token=$(head -c8 /dev/urandom | od -An -tx8 | tr -d ' ')"
    turns: list[Any] = [{"tool_calls": [{"name": "bash", "arguments": {"command": command}}]}, "ok"]
    config = {"tools": ["bash"], "workspace": str(workspace), "read_only": False}
    trace = tmp_path / "run.jsonl"
    with Journal(trace) as journal:
        tools = build_tools(("bash",), ToolContext(workspace=workspace))
        Agent(ScriptedModel(turns), tools, journal=journal, config=config).run("a token")
    runner = CliRunner()
    differs = runner.invoke(replay_command, [str(trace), "--tools", "bash"])
    assert differs.exit_code == 1 and "token=" in differs.stdout  # a new random token
    same = runner.invoke(
        replay_command, [str(trace), "--tools", "bash", "--normalize", "token=[0-9a-f]+"]
    )
    assert same.exit_code == 0 and same.stdout.startswith("identical"), same.output
    bad = runner.invoke(replay_command, [str(trace), "--tools", "bash", "--normalize", "token=("])
    assert bad.exit_code == 2
    assert bad.stderr.strip() == (
        "reactloop: error: --normalize 'token=(' is not a regular expression: "
        "missing ), unterminated subpattern at position 6"
    )
