"""An episode's tools: a task without a workspace has its tools built once per process, however
many threads start their first episodes at once (a worker starts hundreds); a task with one
gets tools of its own folder."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from reactloop.eval.tasks import toolset
from reactloop.eval.tasks.tasks import Task


def test_threads_starting_at_once_share_one_build(monkeypatch: pytest.MonkeyPatch) -> None:
    builds: list[object] = []
    build = toolset._build

    def counted(task: Task, workspace: Path | None) -> list[object]:
        builds.append(task.id)
        return build(task, workspace)  # type: ignore[return-value]

    monkeypatch.setattr(toolset, "_BUILT", {})
    monkeypatch.setattr(toolset, "_build", counted)
    task = Task(id="t", task="What is 2 + 3?", expected=5, tools=("calculator", "bet"))
    start = threading.Barrier(16)
    got: list[list[str]] = []

    def first_episode() -> None:
        start.wait()
        got.append([tool.name for tool in toolset.episode_tools(task, None)])

    threads = [threading.Thread(target=first_episode) for _ in range(16)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert builds == ["t"]
    assert len(got) == 16 and all(names == got[0] for names in got)
    assert "calculator" in got[0] and "get_current_weather" in got[0]
    other = Task(id="u", task="What is 2 + 3?", expected=5, notes={"a": "b"}, tools=("lookup",))
    toolset.episode_tools(other, None)
    assert builds == ["t", "u"]  # another set of tools, or other notes: a build of its own


def test_a_task_with_a_workspace_gets_tools_of_its_own(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(toolset, "_BUILT", {})
    task = Task(id="w", task="Read a.txt", expected="x", files={"a.txt": "x"}, tools=("files",))
    (tmp_path / "one").mkdir(), (tmp_path / "two").mkdir()
    first = toolset.episode_tools(task, tmp_path / "one")
    second = toolset.episode_tools(task, tmp_path / "two")
    assert first and not set(map(id, first)) & set(map(id, second))
    assert toolset._BUILT == {}


def test_the_tools_kept_are_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each task's notes make a set of tools of their own: a process running many suites keeps
    at most ``_KEPT`` sets."""
    monkeypatch.setattr(toolset, "_BUILT", {})
    monkeypatch.setattr(toolset, "_KEPT", 3)
    for n in range(7):
        task = Task(id=f"n{n}", task="Look it up.", expected=n, notes={"n": n}, tools=("lookup",))
        assert toolset.episode_tools(task, None)
        assert len(toolset._BUILT) <= 3
