"""The tools of an episode: the task's families from the registry (``calculator``, ``lookup``,
``files``, ``bash``, …) plus the eval's own ``bet`` family (``bet_tools``).

Families that touch a workspace get the episode's own temporary folder; a task without them
needs no folder, and its tools (pure functions of the task) are built once per process (a
worker starts hundreds of episodes at once: once per thread, each of them built its own).
"""

from __future__ import annotations

import json
import shutil
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from reactloop import Tool
from reactloop.eval.tasks.bet_tools import bet_tools
from reactloop.eval.tasks.tasks import Task
from reactloop.tools.context import ToolContext
from reactloop.tools.registry import build_tools, parse_families

EVAL_FAMILIES: dict[str, Callable[[], list[Tool]]] = {"bet": bet_tools}
PURE_FAMILIES = frozenset({"calculator", "lookup", *EVAL_FAMILIES})
_BUILT: dict[Any, list[Tool]] = {}
_BUILDING = threading.Lock()
_KEPT = 256  # sets of tools kept (a task's notes make a set of its own)


def needs_workspace(task: Task) -> bool:
    return bool(
        task.files
        or task.workspace is not None
        or task.check == "command"
        or not set(task.tools) <= PURE_FAMILIES
    )


def make_workspace(task: Task) -> Path | None:
    """A fresh folder holding the task's files, or None when the task needs none."""
    if not needs_workspace(task):
        return None
    workspace = Path(tempfile.mkdtemp(prefix="reactloop-eval-"))
    for name, text in task.files.items():
        (workspace / name).write_text(text, encoding="utf-8")
    if task.workspace is not None:
        shutil.copytree(task.workspace, workspace, dirs_exist_ok=True)
    return workspace


def episode_tools(task: Task, workspace: Path | None) -> list[Tool]:
    if workspace is not None:
        return _build(task, workspace)
    key = (task.tools, json.dumps(task.notes, sort_keys=True, ensure_ascii=False))
    tools = _BUILT.get(key)
    if tools is None:
        with _BUILDING:  # one build, while the threads starting their first episodes wait
            tools = _BUILT.get(key)
            if tools is None:
                if len(_BUILT) >= _KEPT:  # a long-lived process running many suites
                    _BUILT.clear()
                tools = _BUILT[key] = _build(task, None)
    return list(tools)


def _build(task: Task, workspace: Path | None) -> list[Tool]:
    ours = [name for name in task.tools if name in EVAL_FAMILIES]
    families = parse_families(",".join(n for n in task.tools if n not in EVAL_FAMILIES))
    with tempfile.TemporaryDirectory(prefix="reactloop-notes-") as folder:
        notes = None
        if task.notes is not None:
            notes = Path(folder) / "notes.json"
            notes.write_text(json.dumps(task.notes, ensure_ascii=False), encoding="utf-8")
        spill = workspace / ".spill" if workspace is not None else Path(folder) / "spill"
        context = ToolContext(notes=notes, workspace=workspace, output_dir=spill)
        tools = build_tools(families, context)
    for name in ours:
        tools.extend(EVAL_FAMILIES[name]())
    return tools
