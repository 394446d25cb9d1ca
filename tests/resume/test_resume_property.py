"""Properties of the journal → resumed run decoder (``resume.resume_run.rebuild``): for any
scripted run cut anywhere (a torn piece of the next line included) the resume reaches the
uninterrupted history, apart from the marked interruptions; a journal with any one event
damaged either resumes to a stop or is refused in one ``UsageError``, unchanged — never
another exception."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_resume import LIMITS, UNCERTAIN, Tools

from reactloop import Agent, Journal, ScriptedModel
from reactloop.errors import UsageError
from reactloop.journal.writer import read_journal

NAMES = st.sampled_from(["bump", "put", "peek"])


def turns_for(names: list[str]) -> list[dict[str, Any]]:
    turns: list[dict[str, Any]] = []
    for i, name in enumerate(names):
        args: dict[str, Any] = {"n": i} if name == "bump" else {"key": f"{name[0]}{i}"}
        turns.append({"content": f"step {i}", "tool_calls": [{"name": name, "arguments": args}]})
    return [*turns, {"content": "done"}]


def recorded(folder: Path, turns: list[dict[str, Any]]) -> tuple[Path, list[dict[str, Any]]]:
    path = folder / "full.jsonl"
    with Journal(path) as journal:
        result = Agent(ScriptedModel(turns), Tools().tools, journal=journal, limits=LIMITS).run(
            "go"
        )
    return path, [m.to_dict() for m in result.history]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(names=st.lists(NAMES, min_size=1, max_size=6), where=st.floats(0, 1), torn=st.floats(0, 1))
def test_any_cut_resumes_to_the_uninterrupted_history(
    names: list[str], where: float, torn: float
) -> None:
    turns = turns_for(names)
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        path, reference = recorded(folder, turns)
        lines = path.read_bytes().split(b"\n")[:-1]
        keep = 2 + int(where * (len(lines) - 3))  # header and run_start, never the stop
        piece = lines[keep][: int(torn * (len(lines[keep]) - 1))]
        trace = folder / "cut.jsonl"
        trace.write_bytes(b"\n".join(lines[:keep]) + b"\n" + piece)
        result = Agent(ScriptedModel(turns), Tools().tools).resume(trace)
        assert result.answer == "done"
        assert [e["type"] for e in read_journal(trace)].count("stop") == 1
        history = [m.to_dict() for m in result.history]
        told = {m["tool_call_id"] for m in history if UNCERTAIN in m["content"]}
        assert [m for m in history if m.get("tool_call_id") not in told] == [
            m for m in reference if m.get("tool_call_id") not in told
        ]


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner),
    max_leaves=6,
)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(index=st.integers(0, 10_000), field=st.integers(0, 10), value=JSON)
def test_a_damaged_event_resumes_or_is_refused_unchanged(
    index: int, field: int, value: Any
) -> None:
    turns = turns_for(["bump", "peek", "put"])
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        path, _ = recorded(folder, turns)
        lines = path.read_bytes().split(b"\n")[:-2]  # killed: the stop cut off
        number = 1 + index % (len(lines) - 1)
        event = json.loads(lines[number])
        keys = sorted(event)
        event[keys[field % len(keys)]] = value
        lines[number] = json.dumps(event).encode()
        path.write_bytes(b"\n".join(lines) + b"\n")
        before = path.read_bytes()
        try:
            result = Agent(ScriptedModel(turns), Tools().tools).resume(path, force=True)
        except UsageError as exc:
            assert "\n" not in str(exc)
            assert path.read_bytes() == before
            return
        assert result.stop_reason is not None
        assert read_journal(path)[-1]["type"] == "stop"
