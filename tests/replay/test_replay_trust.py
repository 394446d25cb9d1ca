"""A replay widens no approval: a call the recorded run left waiting for one (and never ran)
is not run by the replay either, whatever the journal's last turn holds."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from reactloop import Agent, Defer, Journal, ScriptedModel, tool
from reactloop.replay import replay

SENT: list[str] = []


@tool
def send(to: str) -> str:
    """Send the report (a side effect).

    Args:
        to: the recipient
    """
    SENT.append(to)
    return f"sent to {to}"


def test_a_call_left_awaiting_approval_is_not_run_by_the_replay(tmp_path: Path) -> None:
    turns: list[Any] = [{"tool_calls": [{"name": "send", "arguments": {"to": "ana"}}]}, "Sent."]
    trace = tmp_path / "waiting.jsonl"
    with Journal(trace) as journal:
        agent = Agent(ScriptedModel(turns), [send], journal=journal, approve=lambda c, t: Defer())
        first = agent.run("Send the report to Ana")
    assert first.stop_reason == "awaiting_approval" and SENT == []
    report = replay(trace, tools=[send])
    assert SENT == []  # the replay did not approve what nobody approved
    assert not report.identical
