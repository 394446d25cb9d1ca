"""Tasks of an evaluation and the checks that decide whether an answer solves one.

A task is one line of a JSONL suite: ``{"id", "task", "expected"}`` plus optional ``tools``
(tool families), ``notes`` (an object, or a path to a JSON file), ``check`` (``number``, the
default, ``exact``, ``contains`` or ``command``), ``command`` (the shell check, run in the
workspace; ``expected`` when absent), ``workspace`` (a folder copied for each episode) and
``must_call`` / ``must_not_call`` (tool names the trajectory must or must not contain).
"""

from __future__ import annotations

import json
import math
import re
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from reactloop.errors import UsageError
from reactloop.eval.tasks.agent_specs import SubAgent, agents_from

CHECKS = ("number", "exact", "contains", "command")
COMMAND_TIMEOUT = 120.0
_NUMBER = re.compile(r"[-+]?\d[\d,]*(?:\.\d+)?(?:[eE][-+]?\d+)?|[-+]?\.\d+")


@dataclass(frozen=True, kw_only=True)
class Task:
    id: str
    task: str
    expected: Any
    tools: tuple[str, ...] = ("calculator",)
    notes: dict[str, Any] | None = None
    check: str = "number"
    command: str | None = None
    workspace: Path | None = None
    files: dict[str, str] = field(default_factory=dict)
    must_call: tuple[str, ...] = ()
    must_not_call: tuple[str, ...] = ()
    agents: tuple[SubAgent, ...] = ()  # sub-agents: tools of the episode's agent

    def to_dict(self) -> dict[str, Any]:
        agents = {"agents": [a.to_dict() for a in self.agents]} if self.agents else {}
        return agents | {
            "id": self.id,
            "task": self.task,
            "expected": self.expected,
            "tools": list(self.tools),
            "check": self.check,
            "must_call": list(self.must_call),
            "must_not_call": list(self.must_not_call),
        }


@dataclass(frozen=True)
class Verdict:
    passed: bool
    detail: str


def last_number(text: str) -> float | None:
    """The last number written in ``text`` (``1,234.5`` reads as 1234.5), or None."""
    found = _NUMBER.findall(text)
    for candidate in reversed(found):
        try:
            value = float(candidate.replace(",", ""))
        except ValueError:
            continue
        if math.isfinite(value):
            return value
    return None


def check_answer(
    task: Task,
    answer: str | None,
    *,
    called: Sequence[str] = (),
    attempted: Sequence[str] = (),
    workspace: Path | None = None,
) -> Verdict:
    """Whether ``answer`` and the run's tool calls solve ``task``: ``called`` are the tools
    that ran and succeeded, ``attempted`` every tool the model asked for."""
    for name in task.must_call:
        if name not in called:
            return Verdict(False, f"{name} was never called")
    for name in task.must_not_call:
        if name in attempted:
            return Verdict(False, f"{name} was called")
    if task.check == "command":
        return _check_command(task, workspace)
    if answer is None:
        return Verdict(False, "no answer")
    if task.check == "exact":
        ok = answer.strip() == str(task.expected).strip()
        return Verdict(ok, "exact match" if ok else "not the expected text")
    if task.check == "contains":
        return _check_contains(task.expected, answer)
    return _check_number(task.expected, answer)


def _check_number(expected: Any, answer: str) -> Verdict:
    got = last_number(answer)
    if got is None:
        return Verdict(False, "no number in the answer")
    want = float(expected)
    ok = math.isclose(got, want, rel_tol=1e-6, abs_tol=1e-6)
    return Verdict(ok, f"{got:g} {'==' if ok else '!='} {want:g}")


def _check_contains(expected: Any, answer: str) -> Verdict:
    options = expected if isinstance(expected, list) else [expected]
    lowered = answer.casefold()
    for option in options:
        if str(option).casefold() in lowered:
            return Verdict(True, f"contains {option!r}")
    return Verdict(False, f"contains none of {options!r}")


def _check_command(task: Task, workspace: Path | None) -> Verdict:
    command = task.command or str(task.expected)
    try:
        done = subprocess.run(
            command,
            shell=True,
            cwd=workspace,
            capture_output=True,
            text=True,
            timeout=COMMAND_TIMEOUT,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return Verdict(False, f"check command timed out after {COMMAND_TIMEOUT:g} s")
    tail = (done.stdout + done.stderr).strip().splitlines()[-1:] or [""]
    return Verdict(done.returncode == 0, f"exit {done.returncode}: {tail[0][:200]}")


def load_tasks(path: str | Path) -> list[Task]:
    """The tasks of a JSONL file; ``UsageError`` names the line of the first bad one."""
    path = Path(path)
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise UsageError(f"cannot read suite {path}: {exc.strerror or exc}") from None
    tasks: list[Task] = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            tasks.append(task_from_dict(json.loads(line), base=path.parent))
        except (ValueError, TypeError) as exc:
            raise UsageError(f"suite {path} line {number}: {exc}") from None
    if not tasks:
        raise UsageError(f"suite {path} has no tasks")
    ids = [task.id for task in tasks]
    duplicate = next((i for i in ids if ids.count(i) > 1), None)
    if duplicate is not None:
        raise UsageError(f"suite {path}: task id {duplicate!r} appears twice")
    return tasks


def task_from_dict(data: Any, *, base: Path) -> Task:
    if not isinstance(data, dict):
        raise ValueError("a task must be a JSON object")
    for key in ("id", "task"):
        if not isinstance(data.get(key), str | int) or not str(data[key]).strip():
            raise ValueError(f"a task needs a non-empty {key!r}")
    check = data.get("check", "number")
    if check not in CHECKS:
        raise ValueError(f"check must be one of {', '.join(CHECKS)}, not {check!r}")
    if "expected" not in data and not (check == "command" and data.get("command")):
        raise ValueError("a task needs 'expected'")
    if check == "number":
        _as_number(data["expected"])
    return Task(
        id=str(data["id"]),
        task=str(data["task"]),
        expected=data.get("expected"),
        tools=_names(data, "tools", default=("calculator",)),
        notes=_notes(data.get("notes"), base),
        check=check,
        command=data.get("command"),
        workspace=(base / str(data["workspace"])) if data.get("workspace") else None,
        must_call=_names(data, "must_call"),
        must_not_call=_names(data, "must_not_call"),
        agents=agents_from(data.get("agents")),
    )


def _as_number(value: Any) -> float:
    if isinstance(value, bool):
        raise ValueError("expected must be a number for check 'number'")
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"expected must be a number for check 'number', not {value!r}") from None
    if not math.isfinite(number):
        raise ValueError("expected must be a finite number")
    return number


def _names(data: dict[str, Any], key: str, default: tuple[str, ...] = ()) -> tuple[str, ...]:
    value = data.get(key)
    if value is None:
        return default
    if isinstance(value, str):
        value = [v for v in value.split(",") if v.strip()]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ValueError(f"{key} must be a list of names")
    return tuple(v.strip() for v in value)


def _notes(value: Any, base: Path) -> dict[str, Any] | None:
    if value is None:
        return None
    if isinstance(value, str):
        try:
            value = json.loads((base / value).read_text(encoding="utf-8"))
        except OSError as exc:
            raise ValueError(f"cannot read notes {value}: {exc.strerror}") from None
    if not isinstance(value, dict):
        raise ValueError("notes must be an object of key -> value (or a path to one)")
    return value
