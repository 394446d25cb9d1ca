"""``search`` never outlives its limit or the run's: the pattern runs in a killable process."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reactloop.errors import ToolError
from reactloop.messages import ToolCall
from reactloop.sandbox.paths import Workspace
from reactloop.tools.context import run_deadline_scope
from reactloop.tools.families import file_search
from reactloop.tools.families.files import file_tools
from reactloop.tools.families.regex_process import RegexProcess
from reactloop.tools.families.regex_worker import compile_pattern, matching_lines
from reactloop.tools.toolbox import Toolbox

EVIL = r"(a|aa)+$"
EVIL_TEXT = "a" * 40 + "b"  # 41 characters: 31-40 s with an in-process regex timeout


@pytest.fixture
def workspace(tmp_path: Path) -> Workspace:
    (tmp_path / "evil.txt").write_text(EVIL_TEXT)
    (tmp_path / "fine.txt").write_text("aaa\n")
    return Workspace(tmp_path)


def test_a_pathological_pattern_stops_at_the_search_limit(
    workspace: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(file_search, "SEARCH_SECONDS", 1.0)
    started = time.monotonic()
    text = file_search.search_workspace(workspace, EVIL)
    assert time.monotonic() - started < 1.5
    assert "[stopped in evil.txt: the search took over 1 s]" in text


def test_search_stops_at_the_runs_deadline(workspace: Workspace) -> None:
    started = time.monotonic()
    box = Toolbox(file_tools(workspace, read_only=True))
    call = ToolCall(id="s", name="search", arguments=json.dumps({"pattern": EVIL}))
    with run_deadline_scope(started + 0.5):
        result = box.execute(call)
    assert time.monotonic() - started < 1.5  # SEARCH_SECONDS is 10
    assert result.ok and "the run's time limit came" in result.output


def test_the_worker_is_gone_after_a_timeout() -> None:
    matcher = RegexProcess(EVIL, time.monotonic() + 0.3)
    with pytest.raises(TimeoutError):
        matcher.matching_lines(EVIL_TEXT, 10)
    assert matcher._process.poll() is not None


def test_search_results_are_unchanged(workspace: Workspace) -> None:
    text = file_search.search_workspace(workspace, "a+$")
    assert "fine.txt:1: aaa" in text and "evil.txt" not in text


hostile_patterns = st.one_of(
    st.text(max_size=60),
    st.integers(min_value=1, max_value=3000).map(lambda n: "(" * n + "a" + ")" * n),
    st.integers(min_value=10**6, max_value=10**30).map(lambda n: f"a{{{n}}}"),
    st.integers(min_value=1, max_value=3000).map(lambda n: "[" * n),
    st.sampled_from(["\ud800", "(?P<x>a)(?P=y)", "\\", "(?<=a+)b", "\x00"]),
)


@settings(max_examples=40, deadline=None)
@given(pattern=hostile_patterns, text=st.text(max_size=200))
def test_any_pattern_is_an_answer_or_a_clear_error(pattern: str, text: str) -> None:
    started = time.monotonic()
    try:
        matcher = RegexProcess(pattern, started + 2)
    except ToolError as exc:
        assert re.search("invalid regular expression|too long to compile", str(exc))
        assert time.monotonic() - started < 4
        return
    try:
        answer = matcher.matching_lines(text, 50)
    except TimeoutError:  # a pattern that backtracks on this text: stopped at the deadline
        assert time.monotonic() - started < 4
        return
    finally:
        matcher.close()
    reference = matching_lines(compile_pattern(pattern), text, 50)
    assert answer == [(number, line) for number, line in reference]


@settings(max_examples=60, deadline=None)
@given(
    lines=st.lists(st.text(alphabet="ab \t", max_size=30), max_size=30), limit=st.integers(1, 60)
)
def test_matching_lines_numbers_each_matching_line_once(lines: list[str], limit: int) -> None:
    text = "\n".join(lines)
    found = matching_lines(compile_pattern("b"), text, limit)
    expected = [[n, line.strip()] for n, line in enumerate(text.split("\n"), 1) if "b" in line]
    assert found == expected[:limit]
    assert all(re.search("b", line) for _, line in found)


def test_the_worker_dies_with_the_harness() -> None:
    script = (
        "import os, signal, time\n"
        "from reactloop.tools.families.regex_process import RegexProcess\n"
        f"m = RegexProcess({EVIL!r}, time.monotonic() + 600)\n"
        "print(m._process.pid, flush=True)\n"
        f"m._send(len(b'50\\n{EVIL_TEXT}').to_bytes(4, 'big') + b'50\\n{EVIL_TEXT}')\n"
        "os.kill(os.getpid(), signal.SIGKILL)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=False
    )
    worker = Path(f"/proc/{int(done.stdout)}/stat")

    def gone() -> bool:
        try:
            return worker.read_text().rsplit(")", 1)[1].split()[0] in ("Z", "X")
        except OSError:
            return True

    deadline = time.monotonic() + 20
    while not gone() and time.monotonic() < deadline:
        time.sleep(0.02)  # polling another process's state, bounded
    assert gone()
