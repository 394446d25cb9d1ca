"""One episode: a task, a rung of the ladder, a protocol and a repeat, run through ``Agent.run``
with its own journal, then checked: its ``EpisodeRecord``.

``errored`` (the provider failed: ``model_error``, or the harness could not run the episode)
is kept apart from ``failed`` (the model's answer or trajectory did not solve the task, or its
history outgrew the model's context). An episode that outlasts ``episode_seconds`` (shorter
than its own time limit) is stopped by the run's deadline, its journal complete, and recorded
``errored`` with ``reason: stalled``. A cancelled episode returns None: it is not recorded, so
``--resume`` runs it again. With ``continue_journal`` (``--resume``), an episode that left a
journal continues from it when it can, else starts again (``continued.py``).
"""

from __future__ import annotations

import dataclasses
import threading
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import reactloop
from reactloop import (
    Agent,
    Limits,
    Model,
    RunResult,
    StopReason,
    Tool,
    read_journal,
)
from reactloop.eval.records.health import HealthTally, journal_stats
from reactloop.eval.records.record import EpisodeRecord, EpisodeRun
from reactloop.eval.run.agent_tree import sub_agent_tools, tree_stats
from reactloop.eval.run.continued import Attempt, one_run, start_attempt
from reactloop.eval.run.spec import EpisodeSpec, Rung
from reactloop.eval.run.throttle import EndpointGates, GatedModel
from reactloop.eval.tasks.tasks import check_answer
from reactloop.eval.tasks.toolset import episode_tools

ERRORED_STOPS = frozenset({StopReason.MODEL_ERROR, StopReason.JOURNAL_ERROR})


class CancelScope:
    """The agents running now, so that Ctrl-C can cancel every one of them."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._agents: set[Agent] = set()
        self.cancelled = threading.Event()

    def add(self, agent: Agent) -> None:
        with self._lock:
            self._agents.add(agent)
            if self.cancelled.is_set():
                agent.cancel()

    def discard(self, agent: Agent) -> None:
        with self._lock:
            self._agents.discard(agent)

    def cancel(self) -> None:
        with self._lock:
            self.cancelled.set()
            for agent in self._agents:
                agent.cancel()


def run_episode(
    spec: EpisodeSpec,
    trace: Path,
    scope: CancelScope | None = None,
    gates: EndpointGates | None = None,
) -> EpisodeRecord | None:
    """Run and check one episode; its journal goes to ``trace``. Its record (``to_dict()``
    is its JSON form); None when cancelled. With ``gates``, its model calls go through its
    endpoint's gate (``throttle.py``)."""
    if scope is not None and scope.cancelled.is_set():
        return None
    started = time.time()
    attempt = record = None
    try:
        attempt = start_attempt(spec, trace, lambda ws, limits: _agent(spec, ws, limits, gates))
        record = _run(spec, trace, attempt, scope, started)
        return record
    except Exception as exc:  # the harness could not run it: errored, retried by --resume
        error = f"{type(exc).__name__}: {exc}"
        return dataclasses.replace(base_record(spec, started), status="errored", error=error)
    finally:
        if attempt is not None:
            attempt.clean_up(record)


def _agent(
    spec: EpisodeSpec, workspace: Path | None, limits: Limits, gates: EndpointGates | None
) -> tuple[Agent, list[Tool]]:
    tools = episode_tools(spec.task, workspace)
    tools += sub_agent_tools(spec.task, workspace, lambda: _model(spec, gates), limits)
    agent = Agent(
        _model(spec, gates),
        tools,
        limits=limits,
        protocol="text" if spec.protocol == "text" else "native",
        config={} if workspace is None else {"workspace": str(workspace)},
    )
    return agent, tools


def _run(
    spec: EpisodeSpec,
    trace: Path,
    attempt: Attempt,
    scope: CancelScope | None,
    started: float,
) -> EpisodeRecord | None:
    agent = attempt.agent
    tally = HealthTally()  # the record's figures, counted as the events go to the journal
    if scope is not None:
        scope.add(agent)
    try:
        result = attempt.execute(trace, spec.task.task, tally)
    finally:
        if scope is not None:
            scope.discard(agent)
    if result.stop_reason == StopReason.CANCELLED:
        return None
    # a continued run is counted from its whole journal, as one run (a call re-run counts once)
    stats = tally.stats() if attempt.state is None else journal_stats(one_run(read_journal(trace)))
    tree: dict[str, Any] = {}  # a tree of agents is scored as one; without sub-agents in its
    if spec.task.agents:  # task an episode has no child, and its journal is not read back
        stats, tree = tree_stats(stats, trace, spec.rung.cost)
    record = dataclasses.replace(
        base_record(spec, started),
        run=outcome(result, stats, spec.rung),
        error=result.error,
        children=tree.get("children"),
        tools=sorted(t.name for t in attempt.tools),
        resumed=attempt.resumed(),
        restarted=attempt.restarted,
    )
    if result.stop_reason in ERRORED_STOPS and result.error_kind != "context_length":
        return dataclasses.replace(record, status="errored")
    if result.stop_reason == StopReason.TIMEOUT and attempt.stall_cut:
        return dataclasses.replace(record, **stalled(spec))
    verdict = check_answer(
        spec.task,
        result.answer,
        called=stats["called"],
        attempted=stats["attempted"],
        workspace=attempt.workspace,
    )
    status = "passed" if verdict.passed else "failed"
    return dataclasses.replace(record, status=status, check_detail=verdict.detail)


def _model(spec: EpisodeSpec, gates: EndpointGates | None) -> Model:
    if gates is None:
        return spec.rung.build(spec)
    gate = gates.gate(spec.rung.endpoint)
    inner = spec.rung.build(spec, retries=0)  # the gate retries, so that it sees each refusal
    return GatedModel(inner, gate, max_retries=spec.rung.max_retries)


def stalled(spec: EpisodeSpec, journal: str = "complete") -> dict[str, Any]:
    """What marks an episode stopped by ``--episode-seconds`` (``EpisodeRecord``'s fields):
    errored, continued by --resume."""
    if spec.episode_seconds is not None:
        within = f"--episode-seconds {spec.episode_seconds:g}"
    else:  # given up by the scheduler at its run's own limit (the run ignored it)
        within = f"its --max-seconds {spec.limits.max_seconds or 0:g}"
    return {
        "status": "errored",
        "reason": "stalled",
        "error": f"stalled: no end within {within}",
        "journal": journal,
    }


def base_record(spec: EpisodeSpec, started: float) -> EpisodeRecord:
    """The episode's part of its record (no status yet)."""
    return EpisodeRecord(
        key=spec.key,
        suite=spec.suite,
        task_id=spec.task.id,
        repeat=spec.repeat,
        rung=spec.rung.label,
        model=spec.rung.spec,
        base_url=spec.rung.base_url,
        protocol=spec.protocol,
        seed=spec.seed,
        temperature=spec.temperature,
        reactloop_version=reactloop.__version__,
        expected=spec.task.expected,
        started=datetime.fromtimestamp(started, UTC).isoformat(timespec="seconds"),
        trace=f"traces/{spec.file_stem}.jsonl",
    )


def outcome(result: RunResult, stats: dict[str, Any], rung: Rung) -> EpisodeRun:
    usage = result.usage.to_dict()
    return EpisodeRun(
        answer=result.answer,
        stop_reason=str(result.stop_reason),
        forced=result.forced,
        error_kind=result.error_kind,
        model_calls=result.model_calls,
        tool_calls=result.tool_calls,
        usage=usage,
        cost=rung.cost(usage),
        seconds=round(result.seconds, 3),
        server_model=stats["server_model"],
        health=stats["health"],
        steps=stats["steps"],
        called=stats["attempted"],
    )
