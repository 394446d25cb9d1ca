"""The trace page shows each context compaction as an item of its own, between the step it
followed and the next one: what was replaced, by what, the tokens before and after, and the
summary call's own tokens; and, in their step, the budget notices and completion checks.
Checked in the real headless Chromium of ``test_viewer.py``, on journals of real compacted runs
(``test_compaction.py``'s fake OpenAI server over HTTP)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from browser import (
    DevTools,
    console_errors,
    evaluate,
    fetch,
    needs_chromium,
    open_page,
)
from compaction_runs import run as compacted_run
from reactloop import Agent, Journal, Limits, ScriptedModel
from reactloop.journal.writer import read_journal
from reactloop.viewer import render_events, render_html

ITEMS_JS = "[...document.querySelectorAll('#steps > article')].map(e => e.id)"


def expected_order(events: list[dict[str, Any]]) -> list[str]:
    """Each step's article, and after it the compactions made after that step."""
    order: list[str] = []
    compactions = 0
    for event in events:
        if event["type"] == "turn" and f"step-{event['step']}" not in order:
            order.append(f"step-{event['step']}")
        if event["type"] == "compaction":
            compactions += 1
            order.append(f"compaction-{compactions}")
    return order


def next_turn_usage(events: list[dict[str, Any]], event: dict[str, Any]) -> dict[str, Any]:
    after = events[events.index(event) + 1 :]
    usage: dict[str, Any] = next(e for e in after if e["type"] == "turn")["turn"]["usage"]
    return usage


@needs_chromium
@pytest.mark.parametrize(("width", "height"), [(390, 844), (1440, 900)])
def test_each_compaction_is_its_own_item_on_the_page(
    browser: DevTools, tmp_path: Path, width: int, height: int
) -> None:
    _, _, events = compacted_run("openai", "summarize", tmp_path)
    done = [e for e in events if e["type"] == "compaction"]
    page = tmp_path / "run.html"
    page.write_text(render_html(tmp_path / "openai-summarize.jsonl"), encoding="utf-8")
    sid = open_page(browser, page.as_uri(), width, height)

    assert evaluate(browser, sid, ITEMS_JS) == expected_order(events)
    shown = evaluate(
        browser,
        sid,
        "[...document.querySelectorAll('article.compaction')].map(e => [e.dataset.afterStep,"
        " e.querySelector('.tokens-line').innerText, e.innerText])",
    )
    assert len(shown) == len(done) >= 2
    for (after_step, tokens_line, text), event in zip(shown, done, strict=True):
        assert after_step == str(event["step"])
        before, after = event["tokens_before"], event["tokens_after"]
        assert f"~{before:,} → ~{after:,} tokens" in tokens_line
        assert f"limit {event['limit']:,}" in tokens_line
        assert f"{event['replaced']} messages from message {event['start']}" in text
        assert "replaced by one summary" in text and "every page lists tea prices" in text
        usage = event["summary_usage"]
        assert f"summary call: in {usage['input_tokens']:,}" in text
        assert event["call_ids"][0] in text
        following = next_turn_usage(events, event)  # what the next call re-read uncached
        uncached = following["input_tokens"] - following["cached_tokens"]
        assert f"next call: {uncached:,} of {following['input_tokens']:,} input tokens" in text
    # Set apart from the steps, and inside a phone's width.
    styles = evaluate(
        browser,
        sid,
        "[getComputedStyle(document.querySelector('article.compaction')).borderLeftStyle,"
        " getComputedStyle(document.querySelector('article.compaction')).borderTopStyle,"
        " getComputedStyle(document.querySelector('article.step:not(.compaction)'))"
        ".borderTopStyle]",
    )
    assert styles == ["solid", "dashed", "solid"]
    assert evaluate(browser, sid, "document.documentElement.scrollWidth") <= width
    assert console_errors(browser, sid) == []


def test_a_trim_shows_its_stubs(tmp_path: Path) -> None:
    _, _, events = compacted_run("openai", "trim", tmp_path)
    page = render_events(events)
    first = next(e for e in events if e["type"] == "compaction")
    stub = json.loads(first["by"][0]["content"])["output"]
    assert 'id="compaction-1"' in page and f'data-after-step="{first["step"]}"' in page
    assert f"{len(first['by'])} tool results from message {first['start']} trimmed" in page
    assert stub in page and "summary call" not in page


def test_the_summary_reply_is_not_shown_as_the_next_turn(tmp_path: Path) -> None:
    """The summarising call's raw reply belongs to its compaction, not to the turn after it."""
    _, _, events = compacted_run("openai", "summarize", tmp_path)
    page = render_events(events)
    compaction = page.split('id="compaction-1"', 1)[1].split("</article>", 1)[0]
    assert "Raw summary response" in compaction
    assert "every page lists tea prices" in compaction
    assert read_journal(tmp_path / "openai-summarize.jsonl") == events


def test_a_hostile_compaction_event_renders_inert() -> None:
    hostile = "<script>alert(1)</script>"
    events: list[dict[str, Any]] = [
        {"type": "run_start", "task": "t", "model": "m"},
        {
            "type": "compaction",
            "step": 3,
            "policy": hostile,
            "start": "x",
            "replaced": -1,
            "call_ids": [hostile],
            "by": [{"content": hostile}, 7, None],
            "tokens_before": 1e400,
            "summary_usage": {"input_tokens": "many"},
        },
    ]
    page = render_events(events)
    assert "<script>" not in page and "&lt;script&gt;" in page
    assert 'id="compaction-1"' in page


def test_budget_notices_and_completion_checks_are_shown_in_their_step(tmp_path: Path) -> None:
    verdicts = iter(["the report is missing <b>totals</b>", None])
    calls = [{"name": "fetch", "arguments": {"key": f"k{n}"}} for n in range(7)]
    model = ScriptedModel([{"tool_calls": calls}, "draft", "second", "final"], name="m")
    trace = tmp_path / "run.jsonl"
    with Journal(trace) as journal:
        result = Agent(
            model,
            [fetch],
            limits=Limits(max_tool_calls=8),
            checklist=["totals are given"],
            verify=lambda answer: next(verdicts),
            journal=journal,
        ).run("report")
    assert result.answer == "final"
    page = render_html(trace)
    step_one = page.split('id="step-1"', 1)[1].split("</article>", 1)[0]
    assert "budget: 1 tool call left" in step_one  # after the step's observations
    assert step_one.index("budget: 1 tool call left") > step_one.rindex("Observation")
    assert "Checklist shown before the answer is accepted" in page and "- totals are given" in page
    assert "Completion check refused the answer" in page
    assert "the report is missing &lt;b&gt;totals&lt;/b&gt;" in page
    assert "Completion check passed" in page
