"""``reactloop cost`` of a journal with several runs (``reactloop chat``: one run per turn), and
of an interrupted journal.

A follow-up's first request lists its whole prompt: the earlier turns, the answer, the new
question. That extends the previous prompt; only a follow-up whose prompt differs from the one
before is a prefix change. Each turn has its own tokens and stop, the conversation their sum.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

from chat_journals import INPUTS, QUESTIONS, chat_journal
from helpers import add
from reactloop import Agent, Journal, ScriptedModel
from reactloop.cli.trace import cost as cost_command
from reactloop.journal.writer import read_journal
from reactloop.usage import check_prefix, usage_report
from reactloop.usage.steps import CHARS_PER_TOKEN


@pytest.fixture(scope="module")
def chat(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return chat_journal(tmp_path_factory.mktemp("chat"))


def test_a_chat_journal_is_one_conversation_of_turns_with_their_own_tokens(chat: Path) -> None:
    events = read_journal(chat)
    stops = [e for e in events if e["type"] == "stop"]
    report = usage_report(events)
    assert report.prefix_issues == () and report.complete
    assert [run.task for run in report.runs] == list(QUESTIONS)
    assert [run.usage.input_tokens for run in report.runs] == [sum(i) for i in INPUTS]
    assert [run.usage.to_dict() for run in report.runs] == [s["usage"] for s in stops]
    assert [run.calls for run in report.runs] == [len(i) for i in INPUTS]
    assert [run.forced for run in report.runs] == [False, True, False]
    assert [(s.run, s.step) for s in report.steps] == [(0, 1), (1, 1), (1, 2), (2, 1)]
    assert report.total.input_tokens == sum(sum(i) for i in INPUTS)


def test_cost_prints_each_turn_and_no_prefix_change_at_a_follow_up(chat: Path) -> None:
    runner = CliRunner()
    shown = runner.invoke(cost_command, [str(chat)], env={"COLUMNS": "200"})
    assert shown.exit_code == 0, shown.output
    assert "prefix changed" not in shown.output
    assert "turn 1 ('What is 2 + 3?'): final_answer · 1 model calls · input 400" in shown.output
    assert "turn 2 ('And that times 4?'): final_answer, forced · 2 model calls" in shown.output
    assert "┃ turn ┃" in shown.output and "incomplete" not in shown.output
    data = json.loads(runner.invoke(cost_command, [str(chat), "--json"]).output)
    assert data["prefix_issues"] == [] and data["complete"] is True
    assert [run["task"] for run in data["runs"]] == list(QUESTIONS)


def test_a_follow_up_that_rewrote_the_earlier_prompt_is_a_prefix_change(
    chat: Path, tmp_path: Path
) -> None:
    events = read_journal(chat)
    starts = [i for i, e in enumerate(events) if e["type"] == "run_start"]
    follow_up = next(e for e in events[starts[2] :] if e["type"] == "request")
    assert follow_up["n_messages"] == len(follow_up["messages_new"])  # the whole prompt
    follow_up["messages_new"][1]["content"] = "What is 2 + 2?"  # the first question, rewritten
    [issue] = check_prefix(events)
    assert (issue.step, issue.index) == (1, 1)
    assert "differs from the previous one at message 1" in issue.message
    assert usage_report(events).prefix_issues == (issue,)
    del follow_up["messages_new"][2:6]  # and a follow-up shorter than the prompt before it
    follow_up["n_messages"] = len(follow_up["messages_new"])
    [issue] = check_prefix(events)
    assert "the follow-up's prompt has" in issue.message


def test_a_run_that_starts_afresh_in_the_same_journal_is_not_a_shrunk_prompt(
    tmp_path: Path,
) -> None:
    turns: list[Any] = [{"tool_calls": [{"name": "add", "arguments": {"a": 1, "b": 2}}]}, "3", "4"]
    agent = Agent(ScriptedModel(turns), [add])
    with Journal(tmp_path / "two.jsonl") as journal:
        agent.run("What is 1 + 2?", journal=journal)
        agent.run("What is 2 + 2?", journal=journal)  # no history: a prompt of its own
    events = read_journal(tmp_path / "two.jsonl")
    assert [e["n_messages"] for e in events if e["type"] == "request"] == [2, 4, 2]
    assert check_prefix(events) == []
    assert [run.task for run in usage_report(events).runs] == ["What is 1 + 2?", "What is 2 + 2?"]


def test_estimated_tokens_of_a_chat_journal_count_the_earlier_turns_once(tmp_path: Path) -> None:
    events = read_journal(chat_journal(tmp_path, usage=False))
    report = usage_report(events)
    assert report.estimated
    inputs = [s.usage.input_tokens for s in report.steps]
    assert inputs == sorted(inputs)
    # A follow-up adds the answer before it and its question, not its whole prompt again.
    first, follow_up = [e for e in events if e["type"] == "request"][:2]
    added = follow_up["messages_new"][first["n_messages"] :]
    chars = sum(len(json.dumps(m, ensure_ascii=False)) for m in added)
    assert abs(inputs[1] - inputs[0] - chars / CHARS_PER_TOKEN) <= 1


def test_cost_says_an_interrupted_journal_is_incomplete(chat: Path, tmp_path: Path) -> None:
    lines = chat.read_text(encoding="utf-8").splitlines(keepends=True)
    cut = tmp_path / "cut.jsonl"
    cut.write_text("".join(lines[:-1]), encoding="utf-8")  # the last turn's stop is lost
    runner = CliRunner()
    shown = runner.invoke(cost_command, [str(cut)], env={"COLUMNS": "200"})
    assert shown.exit_code == 0, shown.output
    assert shown.output.startswith("incomplete: the journal has no stop event (turn 3)")
    assert "turn 3 ('Say done.'): interrupted (no stop event)" in shown.output
    assert json.loads(runner.invoke(cost_command, [str(cut), "--json"]).output)["complete"] is False
    first_stop = next(i for i, line in enumerate(lines) if '"type":"stop"' in line)
    single = tmp_path / "one.jsonl"
    single.write_text("".join(lines[:first_stop]), encoding="utf-8")
    shown = runner.invoke(cost_command, [str(single)], env={"COLUMNS": "200"})
    assert "incomplete: the journal has no stop event: the run was interrupted" in shown.output
    assert "turn 1" not in shown.output
    single.write_text(lines[0], encoding="utf-8")  # cut before the run started
    shown = runner.invoke(cost_command, [str(single)], env={"COLUMNS": "200"})
    assert shown.output.startswith("incomplete: the journal has no stop event: the run was")
    whole = runner.invoke(cost_command, [str(chat)], env={"COLUMNS": "200"})
    assert "incomplete" not in whole.output


def conversation_events(turns: list[list[int]]) -> list[dict[str, Any]]:
    """A journal's runs as ``reactloop chat`` writes them: ``turns[r]`` lists how many
    messages each request of run ``r`` adds; a follow-up's first request lists them all."""
    sent: list[dict[str, Any]] = []
    events: list[dict[str, Any]] = []
    for number, requests in enumerate(turns):
        start: dict[str, Any] = {"type": "run_start", "task": f"q{number}"}
        if number:
            start["continues"] = {"trace": None, "messages": len(sent)}
        events.append(start)
        for step, added in enumerate(requests, 1):
            new = [{"role": "user", "content": f"m{len(sent) + k}"} for k in range(added)]
            listed = (sent + new) if number and step == 1 else new
            sent += new
            events.append(
                {"type": "request", "step": step, "n_messages": len(sent), "messages_new": listed}
            )
    return events


conversations = st.lists(
    st.lists(st.integers(1, 4), min_size=1, max_size=4), min_size=2, max_size=4
)


@given(turns=conversations, data=st.data())
def test_follow_ups_that_extend_the_prompt_are_no_change_and_a_rewrite_is_found(
    turns: list[list[int]], data: st.DataObject
) -> None:
    events = conversation_events(turns)
    assert check_prefix(events) == []
    last = max(i for i, e in enumerate(events) if e["type"] == "run_start") + 1
    before = events[last - 2]["n_messages"]  # the previous run's last prompt
    index = data.draw(st.integers(0, before - 1))
    events[last]["messages_new"][index] = {"role": "user", "content": "rewritten"}
    [issue] = check_prefix(events)
    assert (issue.step, issue.index) == (1, index)
