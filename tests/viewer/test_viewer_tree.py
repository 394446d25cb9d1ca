"""The viewer shows a tree of agents (``Agent.as_tool``): under the call of an agent tool, the
child's steps, collapsed until the reader opens them; a grandchild nested in its parent's
steps. Checked in the real headless Chromium of ``test_viewer.py``, on a real scripted tree."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

from browser import HOSTILE, DevTools, console_errors, evaluate, needs_chromium, open_page
from reactloop import Agent, Journal, Limits, ScriptedModel, Tool, tool
from reactloop.viewer import render_html

ROOMY = Limits(max_model_calls=40, max_tool_calls=40)


@tool(read_only=True)
def population(city: str) -> str:
    """The population of a city."""
    return f"{city}: 2100000 {HOSTILE}"


def calls(*pairs: tuple[str, dict[str, Any]]) -> dict[str, Any]:
    return {"tool_calls": [{"name": n, "arguments": a} for n, a in pairs]}


def agent_tools() -> list[Tool]:
    counter = Agent(
        ScriptedModel([calls(("population", {"city": "Lyon"})), "Lyon: 513k"]),
        [population],
        limits=ROOMY,
    )
    demographer = Agent(
        ScriptedModel(
            [
                calls(("population", {"city": "Paris"})),
                calls(("counter", {"task": "Count Lyon."})),
                "2.1 million people",
            ]
        ),
        [population, counter.as_tool("counter", "Counts people.")],
        limits=ROOMY,
    )
    geographer = Agent(
        ScriptedModel([calls(("population", {"city": "Nice"})), "Nice is small"]),
        [population],
        limits=ROOMY,
    )
    return [
        demographer.as_tool("demographer", "Answers questions about populations."),
        geographer.as_tool("geographer", "Answers questions about places."),
    ]


def tree_journal(folder: Path) -> Path:
    trace = folder / "root.jsonl"
    turns: list[Any] = [
        calls(("demographer", {"task": "How many live in Paris?"})),
        calls(("geographer", {"task": "How large is Nice?"})),
        "Paris is big.",
    ]
    with Journal(trace) as journal:
        Agent(ScriptedModel(turns), agent_tools(), journal=journal, limits=ROOMY).run("Paris?")
    return trace


VISIBLE_JS = "(el => el !== null && el.checkVisibility())"


@needs_chromium
def test_a_childs_steps_are_nested_under_its_call_and_open_on_a_click(
    browser: DevTools, tmp_path: Path
) -> None:
    page = tmp_path / "root.html"
    page.write_text(render_html(tree_journal(tmp_path)), encoding="utf-8")
    sid = open_page(browser, page.as_uri(), 1200, 900)

    top = (
        "[...document.querySelectorAll('details.child')]"
        ".filter(d => !d.parentElement.closest('details.child'))"
    )
    summaries = evaluate(browser, sid, f"{top}.map(d => d.querySelector('summary').textContent)")
    assert [s.split(" · ")[0] for s in summaries] == [
        "Sub-agent /demographer#1",
        "Sub-agent /geographer#2",
    ]
    assert "final_answer" in summaries[0] and "5 model calls" in summaries[0]  # its own 3 + 2
    # each sits in the tool block of the call that ran it, in the root's steps
    holders = evaluate(
        browser, sid, f"{top}.map(d => d.closest('.tool').querySelector('h3 code').textContent)"
    )
    assert holders == ["demographer", "geographer"]
    assert evaluate(browser, sid, f"{top}.map(d => d.closest('article.step').id)") == [
        "step-1",
        "step-2",
    ]
    first_step = f"{top}[0].querySelector('article.step')"
    assert evaluate(browser, sid, f"{top}.map(d => d.open)") == [False, False]  # collapsed
    assert evaluate(browser, sid, f"{VISIBLE_JS}({first_step})") is False

    evaluate(browser, sid, f"{top}[0].querySelector('summary').click()")
    assert evaluate(browser, sid, f"{top}.map(d => d.open)") == [True, False]
    assert evaluate(browser, sid, f"{VISIBLE_JS}({first_step})") is True
    child_text = evaluate(browser, sid, f"{top}[0].innerText")
    assert "2.1 million people" in child_text and "Paris: 2100000" in child_text
    assert HOSTILE in child_text  # the child's tool output, shown as text
    steps = evaluate(
        browser,
        sid,
        f"[...{top}[0].querySelectorAll(':scope > div > article.step')].map(a => a.id)",
    )
    assert steps == ["sub-demographer-1-1", "sub-demographer-1-2", "sub-demographer-1-3"]

    # the grandchild, in the demographer's second step, is collapsed in turn
    inner = f"{top}[0].querySelector('details.child')"
    assert evaluate(browser, sid, f"{inner}.closest('article.step').id") == "sub-demographer-1-2"
    assert evaluate(browser, sid, f"{inner}.open") is False
    evaluate(browser, sid, f"{inner}.querySelector('summary').click()")
    assert "Lyon: 513k" in evaluate(browser, sid, f"{inner}.innerText")

    ids = evaluate(browser, sid, "[...document.querySelectorAll('[id]')].map(e => e.id)")
    assert len(ids) == len(set(ids))  # the children's steps have anchors of their own
    assert evaluate(browser, sid, "document.querySelectorAll('script, img').length") == 0
    assert evaluate(browser, sid, "document.documentElement.scrollWidth") <= 1200
    assert console_errors(browser, sid) == []


def test_moved_journals_still_show_the_tree_and_a_missing_one_says_so(tmp_path: Path) -> None:
    trace = tree_journal(tmp_path / "a")
    moved = tmp_path / "b"
    shutil.copytree(trace.parent, moved)
    shutil.rmtree(trace.parent)
    html = render_html(moved / "root.jsonl")
    assert html.count('<details class="child">') == 3
    assert "Lyon: 513k" in html
    (moved / "root.geographer-2.jsonl").unlink()
    html = render_html(moved / "root.jsonl")
    assert html.count('<details class="child">') == 3  # the missing child is still listed
    assert "its journal is not here" in html and "Nice: 2100000" not in html


def test_a_journal_before_call_ids_matches_children_by_tool_in_order(tmp_path: Path) -> None:
    trace = tree_journal(tmp_path)
    lines = [json.loads(line) for line in trace.read_text().splitlines()]
    for event in lines:
        event.pop("call_id", None)  # as written before child_start named its call
    trace.write_text("".join(json.dumps(e) + "\n" for e in lines), encoding="utf-8")
    html = render_html(trace)
    assert html.index("Sub-agent /demographer#1") < html.index("Sub-agent /geographer#2")
    assert "2.1 million people" in html and "Nice is small" in html


def test_each_run_of_a_journal_nests_its_own_children(tmp_path: Path) -> None:
    """Two runs in one journal (a conversation) whose calls have the same id: each call shows
    the child its own run started."""
    answers = ScriptedModel(["first answer", "second answer"])
    worker = Agent(answers, [population], limits=ROOMY, protocol="native")
    turns: list[Any] = []
    for _ in range(2):
        call = {"name": "worker", "arguments": {"task": "answer"}, "id": "same"}
        turns += [{"tool_calls": [call]}, "ok"]
    trace = tmp_path / "chat.jsonl"
    root = Agent(ScriptedModel(turns), [worker.as_tool("worker", "Answers.")], limits=ROOMY)
    with Journal(trace) as journal:
        root.run("one", journal=journal)
        root.run("two", journal=journal)
    html = render_html(trace)
    summaries = re.findall(r'<details class="child"><summary>([^<]*)</summary>', html)
    assert [s.split(" · ")[:2] for s in summaries] == [["Sub-agent /worker#1", "final_answer"]] * 2
    assert html.index("first answer</pre>") < html.index("second answer</pre>")
    parts = html.split('<details class="child">')  # each child under its own run's call
    assert "first answer</pre>" in parts[1] and "second answer</pre>" in parts[2]
