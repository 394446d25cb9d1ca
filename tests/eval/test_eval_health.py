"""An episode's health figures are counted from its events as the run emits them
(``HealthTally``, an observer): the same figures its journal gives when read back."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from reactloop import Agent, Journal, Limits, ScriptedModel, read_journal
from reactloop.eval.records.health import HealthTally, journal_stats
from reactloop.journal.reader import read_events
from reactloop.tools.families.calculator import calculator_tool

SUM = {"name": "calculator", "arguments": {"expression": "2 + 2"}}
TURNS: list[Any] = [
    {  # a parallel turn: one good call, one unknown tool, one with bad arguments
        "model": "served-model",
        "tool_calls": [SUM, {"name": "nonesuch", "arguments": {}}, {"name": "calculator"}],
        "usage": {"input_tokens": 10, "output_tokens": 3},
    },
    {"content": ""},  # an empty reply: a format error
    {"tool_calls": [SUM]},
    {"tool_calls": [SUM]},  # the same call again and again: the loop guard refuses it
    {"tool_calls": [SUM]},
    {"content": "4"},
]


def without_seconds(stats: dict[str, Any]) -> dict[str, Any]:
    return stats | {"steps": [{**s, "seconds": None} for s in stats["steps"]]}


def test_the_tally_of_the_events_is_the_journal_read_back(tmp_path: Path) -> None:
    trace = tmp_path / "run.jsonl"
    tally = HealthTally()
    with Journal(trace) as journal:
        agent = Agent(
            ScriptedModel(TURNS),
            [calculator_tool()],
            limits=Limits(max_model_calls=10),
            journal=journal,
            observers=[tally],
        )
        result = agent.run("What is 2 + 2?")
    assert not any(w.startswith("observer_failed") for w in result.warnings)
    live, read = tally.stats(), journal_stats(read_journal(trace))
    assert without_seconds(live) == without_seconds(read)
    assert journal_stats(read_events(trace)) == read  # its typed events: the same figures
    health = live["health"]
    assert health["parallel_turns"] == health["unknown_tools"] == 1
    assert health["invalid_arguments"] == health["format_errors"] == 1
    assert health["loop_refused"] >= 1 and health["turns"] == len(live["steps"]) >= 4
    assert live["server_model"] == "served-model" and live["steps"][0]["input_tokens"] == 10
    for mine, theirs in zip(live["steps"], read["steps"], strict=True):
        assert mine["seconds"] >= 0 and abs(mine["seconds"] - theirs["seconds"]) < 0.05
