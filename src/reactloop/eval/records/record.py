"""``EpisodeRecord``: one episode's record, typed, and its JSON form (``episodes/KEY.json``).

The eval gives its callers records (``run_episode``, ``on_record``, ``EvalOutcome.records``)
and passes them between its parts (its worker processes' pipes, its Ray actors) as
``EpisodeRecord``s; the JSON form is what it writes and keeps on disk (``episodes/KEY.json``,
``results.json``) and what the report streams from there. ``to_dict`` writes the keys a
record holds in the order the eval always wrote them, so the files are the same as before
there was a type; ``from_dict`` reads any record an earlier version wrote (a key it lacks
reads as None, a run's count or list as empty; a key this version does not know is kept in
``extra`` and written back last).

Which keys a record holds: the episode's (``key`` … ``trace``) always; ``run``'s when the run
went far enough to have a result; ``children`` for an agent with sub-agents; ``tools`` with a
result; ``resumed_from_step`` and ``resumed_after`` (continued by ``--resume``) or
``restarted`` (started again); ``status``; ``reason`` and ``journal`` when stalled or lost;
``error`` beside ``status`` when there was no run to hold it; ``check_detail`` when checked;
``ray_node`` on Ray.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

EPISODE_KEYS = (
    "key", "suite", "task_id", "repeat", "rung", "model", "base_url", "protocol", "seed",
    "temperature", "reactloop_version", "expected", "started", "trace",
)  # fmt: skip
RUN_KEYS = (
    "answer", "stop_reason", "forced", "error", "error_kind", "model_calls", "tool_calls",
    "usage", "cost", "seconds", "server_model", "health", "steps", "called",
)  # fmt: skip
_T = TypeVar("_T")
_OWN = frozenset(
    {*EPISODE_KEYS, *RUN_KEYS, "children", "tools", "resumed_from_step", "resumed_after"}
    | {"restarted", "status", "reason", "journal", "check_detail", "ray_node"}
)


@dataclass(frozen=True, kw_only=True)
class EpisodeRun:
    """What the agent's run gave: its result (``RunResult``'s figures) and what its events
    said (``health``, ``steps``, the tools ``called``; ``records/health.py``). ``error`` is
    the record's own (``EpisodeRecord.error``)."""

    answer: str | None = None
    stop_reason: str | None = None
    forced: bool | None = None
    error_kind: str | None = None
    model_calls: int = 0
    tool_calls: int = 0
    usage: Mapping[str, int] = field(default_factory=dict)
    cost: float | None = None
    seconds: float | None = None
    server_model: str | None = None
    health: Mapping[str, int] = field(default_factory=dict)
    steps: list[dict[str, Any]] = field(default_factory=list)
    called: list[str] = field(default_factory=list)


NO_RUN = EpisodeRun()
"""What a record without a run reads as: no steps, calls, usage or health."""


@dataclass(frozen=True, kw_only=True)
class Resumed:
    """A run continued by ``--resume``: from which step, after what (``ResumeState.why``)."""

    step: int
    after: str | None


@dataclass(frozen=True, kw_only=True)
class EpisodeRecord:
    key: str
    suite: str | None = None
    task_id: str | None = None
    repeat: int | None = None
    rung: str | None = None
    model: str | None = None
    base_url: str | None = None
    protocol: str | None = None
    seed: int | None = None
    temperature: float | None = None
    reactloop_version: str | None = None
    expected: Any = None
    started: str | None = None
    trace: str | None = None
    status: str | None = None  # passed, failed, errored
    run: EpisodeRun | None = None
    error: str | None = None
    children: list[dict[str, Any]] | None = None
    tools: list[str] | None = None
    resumed: Resumed | None = None
    restarted: dict[str, str] | None = None
    reason: str | None = None  # stalled, actor_died, ray_error
    journal: str | None = None
    check_detail: str | None = None
    ray_node: str | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)

    @property
    def passed(self) -> bool:
        return self.status == "passed"

    @property
    def errored(self) -> bool:
        return self.status == "errored"

    def to_dict(self) -> dict[str, Any]:
        data = {name: getattr(self, name) for name in EPISODE_KEYS}
        if self.run is not None:
            data |= _run_dict(self.run, self.error)
        _put(data, children=self.children, tools=self.tools)
        if self.resumed is not None:
            data |= {"resumed_from_step": self.resumed.step, "resumed_after": self.resumed.after}
        _put(data, restarted=self.restarted, status=self.status, reason=self.reason)
        _put(data, error=self.error if self.run is None else None, journal=self.journal)
        _put(data, check_detail=self.check_detail, ray_node=self.ray_node)
        return data | dict(self.extra)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> EpisodeRecord:
        values = {name: data.get(name) for name in _PLAIN}
        values["run"] = _run_of(data) if "stop_reason" in data else None
        step = data.get("resumed_from_step")
        values["resumed"] = (
            None if step is None else Resumed(step=step, after=data.get("resumed_after"))
        )
        values["extra"] = _unknown(data)
        return _made(cls, values)


_PLAIN = (
    *EPISODE_KEYS,
    *("status", "error", "children", "tools", "restarted", "reason", "journal", "check_detail"),
    "ray_node",
)


def _made(cls: type[_T], values: dict[str, Any]) -> _T:
    """A frozen dataclass given every field, without its ``__init__`` (one
    ``object.__setattr__`` a field): the report reads each record once, and the 40 calls were
    a third of its tables' pass (``benchmarks/eval_report.py``)."""
    made = object.__new__(cls)
    made.__dict__.update(values)
    return made


def _unknown(data: Mapping[str, Any]) -> dict[str, Any]:
    """The keys of ``data`` this version does not know, in their order."""
    if data.keys() <= _OWN:
        return {}
    return {name: value for name, value in data.items() if name not in _OWN}


def _put(data: dict[str, Any], **values: Any) -> None:
    """Each of ``values`` that is not None: a key the record holds only when it has it."""
    data.update((name, value) for name, value in values.items() if value is not None)


def _run_dict(run: EpisodeRun, error: str | None) -> dict[str, Any]:
    return {
        "answer": run.answer,
        "stop_reason": run.stop_reason,
        "forced": run.forced,
        "error": error,
        "error_kind": run.error_kind,
        "model_calls": run.model_calls,
        "tool_calls": run.tool_calls,
        "usage": run.usage,
        "cost": run.cost,
        "seconds": run.seconds,
        "server_model": run.server_model,
        "health": run.health,
        "steps": run.steps,
        "called": run.called,
    }


def _run_of(data: Mapping[str, Any]) -> EpisodeRun:
    values = {name: data.get(name) for name in RUN_KEYS if name != "error"}
    for name, empty in _RUN_EMPTY.items():
        if name not in data:
            values[name] = empty()
    return _made(EpisodeRun, values)


_RUN_EMPTY: dict[str, Callable[[], Any]] = {"model_calls": int, "tool_calls": int}
_RUN_EMPTY |= {"usage": dict, "health": dict, "steps": list, "called": list}
