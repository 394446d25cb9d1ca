"""A journal of several runs (``reactloop chat``: one run per turn) is shown as a conversation:
the conversation's totals at the top, then one section per turn with its own question, steps,
stop and tokens, in the order they happened. Checked in the real headless Chromium of
``test_viewer.py``, on a journal written by a real ``reactloop chat``."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest

from browser import (
    DevTools,
    assert_not_blank,
    console_errors,
    evaluate,
    needs_chromium,
    open_page,
)
from chat_journals import ANSWERS, INPUTS, QUESTIONS, chat_journal
from reactloop.viewer import render_html

TURNS_JS = """[...document.querySelectorAll('section.turn')].map(s => ({
  id: s.id,
  question: s.querySelector('.task pre').textContent,
  answer: s.querySelector('.answer pre').textContent,
  cards: Object.fromEntries([...s.querySelectorAll('.card')].map(
    c => [c.querySelector('.k').textContent, c.querySelector('.v').textContent])),
  steps: [...s.querySelectorAll('article.step')].map(a => a.id),
  text: s.innerText,
}))"""
HEADER_CARDS_JS = (
    "Object.fromEntries([...document.querySelectorAll('header .card')]"
    ".map(c => [c.querySelector('.k').textContent, c.querySelector('.v').textContent]))"
)


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("chat")
    html = folder / "chat.html"
    html.write_text(render_html(chat_journal(folder)), encoding="utf-8")
    return html


@needs_chromium
@pytest.mark.parametrize(("width", "height"), [(390, 844), (1440, 900)])
def test_each_turn_has_its_own_section_question_steps_stop_and_tokens(
    browser: DevTools, page: Path, width: int, height: int
) -> None:
    sid = open_page(browser, page.as_uri(), width, height)
    turns = evaluate(browser, sid, TURNS_JS)
    assert [t["id"] for t in turns] == ["turn-1", "turn-2", "turn-3"]
    for n, turn in enumerate(turns):
        assert (turn["question"], turn["answer"]) == (QUESTIONS[n], ANSWERS[n])
        assert turn["cards"]["input tokens"] == f"{sum(INPUTS[n]):,}"
        assert turn["cards"]["model calls"] == str(len(INPUTS[n]))
        assert turn["cards"]["stop reason"] == "final_answer"
        steps = [f"turn-{n + 1}-step-{k}" for k in range(1, len(INPUTS[n]) + 1)]
        assert turn["steps"] == steps
        others = [q for q in QUESTIONS if q != QUESTIONS[n]]
        assert not [q for q in others if q in turn["text"]]  # no turn holds another's steps
        assert f"in {INPUTS[n][0]} · cached 0" in turn["text"]
    assert turns[1]["cards"]["answer"] == "forced" and "answer" not in turns[0]["cards"]
    assert "forced answer" in turns[1]["text"]
    header = evaluate(browser, sid, HEADER_CARDS_JS)
    assert header["turns"] == "3" and header["forced answers"] == "turn 2"
    assert header["input tokens"] == f"{sum(map(sum, INPUTS)):,}"
    assert header["model calls"] == str(sum(map(len, INPUTS)))
    assert "stop reason" not in header  # each turn has its own
    title = evaluate(browser, sid, "document.querySelector('h1').textContent")
    assert title == "reactloop conversation — 3 turns"
    cost_line = evaluate(browser, sid, "document.querySelector('.costmodel').textContent")
    assert "prefix changed" not in cost_line and "n=4" in cost_line
    ids = evaluate(browser, sid, "[...document.querySelectorAll('[id]')].map(e => e.id)")
    assert len(ids) == len(set(ids))
    assert evaluate(browser, sid, "document.documentElement.scrollWidth") <= width
    assert console_errors(browser, sid) == []
    shot = browser.send("Page.captureScreenshot", {"format": "png"}, session=sid)
    assert_not_blank(base64.b64decode(shot["data"]), width, height)


def test_the_per_call_table_names_each_call_s_turn(page: Path) -> None:
    html = page.read_text(encoding="utf-8")
    assert "<th>call</th><th>turn</th><th>step</th>" in html
    rows = [(1, 1, 1), (2, 2, 1), (3, 2, 2), (4, 3, 1)]
    for call, turn, step in rows:
        assert f"<tr><td>{call}</td><td>{turn}</td><td>{step}</td>" in html
