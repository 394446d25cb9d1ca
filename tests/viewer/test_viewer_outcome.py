"""The page says when a ``final_answer`` is not a clean one, as plainly as its stop reason: a
forced answer (the model was told to answer now, without tools) and an answer that failed its
completion check are marked in the summary cards, over the answer and on their step; checks that
refused answers along the way are counted. Checked in the real headless Chromium of
``test_viewer.py``, on journals of real scripted runs."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from browser import DevTools, console_errors, evaluate, fetch, needs_chromium, open_page
from reactloop import Agent, Journal, Limits, ScriptedModel
from reactloop.viewer import render_html

CARDS_JS = (
    "[...document.querySelectorAll('.cards .card')]"
    ".map(c => [c.querySelector('.k').textContent, c.querySelector('.v').textContent])"
)
COLOR_JS = "getComputedStyle(document.querySelector('{}')).color"


def fetch_turn(key: str) -> dict[str, Any]:
    return {"tool_calls": [{"name": "fetch", "arguments": {"key": key}}]}


def journal(
    path: Path,
    turns: list[Any],
    *,
    calls: int = 8,
    verify: Callable[[str], bool | str | None] | None = None,
) -> Path:
    with Journal(path) as written:
        Agent(
            ScriptedModel(turns, name="gpt-test"),
            [fetch],
            journal=written,
            limits=Limits(max_model_calls=calls),
            verify=verify,
        ).run("Find the answer")
    return path


def cards(html: str) -> dict[str, tuple[str, str]]:
    """label -> (css class, value) of the page's summary cards."""
    found = re.findall(
        r'<div class="card ([^"]*)"><div class="k">([^<]*)</div><div class="v">([^<]*)</div>', html
    )
    return {label: (css.strip(), value) for css, label, value in found}


def refusing(times: int) -> Callable[[str], bool | str | None]:
    """A completion check that refuses the first ``times`` answers."""
    seen: list[str] = []

    def verify(answer: str) -> bool | str | None:
        seen.append(answer)
        return "the test says 8" if len(seen) <= times else True

    return verify


def test_a_forced_answer_is_marked_beside_the_stop_reason_and_on_its_step(tmp_path: Path) -> None:
    trace = journal(tmp_path / "run.jsonl", [fetch_turn("a"), fetch_turn("b"), "7"], calls=3)
    html = render_html(trace)
    shown = cards(html)
    assert shown["stop reason"] == ("stop-flagged", "final_answer")  # not the clean green
    assert shown["answer"] == ("flag-warn", "forced")
    assert "Forced answer</strong>: the model answered only because it was told" in html
    assert "This is your last step" in html  # what told it to answer now
    assert '<div class="answer forced"><div class="label">Answer (forced)</div>' in html
    [badged] = re.findall(r'id="(step-\d+)"[^>]*><h3>[^\n]*?forced answer</span>', html)
    assert badged == "step-3"


def test_an_answer_that_failed_its_check_is_marked_and_each_refusal_counted(
    tmp_path: Path,
) -> None:
    trace = journal(
        tmp_path / "run.jsonl", [fetch_turn("a"), "7", "still 7"], calls=3, verify=refusing(9)
    )
    html = render_html(trace)
    shown = cards(html)
    assert shown["answer"] == ("flag-bad", "forced, failed its check")
    assert shown["checks refused"] == ("flag-bad", "2 of 2")
    assert shown["stop reason"][0] == "stop-flagged"
    assert "Answer (failed its check)" in html and "the answer failed its check" in html
    refused = re.findall(r'id="(step-\d+)"[^>]*><h3>[^\n]*?check refused</span>', html)
    assert refused == ["step-2", "step-3"]


def test_a_refusal_before_an_accepted_answer_is_counted_and_the_answer_is_clean(
    tmp_path: Path,
) -> None:
    trace = journal(tmp_path / "run.jsonl", [fetch_turn("a"), "7", "8"], verify=refusing(1))
    shown = cards(render_html(trace))
    assert shown["stop reason"] == ("stop-final_answer", "final_answer")
    assert "answer" not in shown
    assert shown["checks refused"] == ("flag-warn", "1 of 2")


def test_a_clean_answer_has_no_flag(tmp_path: Path) -> None:
    html = render_html(journal(tmp_path / "run.jsonl", [fetch_turn("a"), "7"]))
    shown = cards(html)
    assert shown["stop reason"] == ("stop-final_answer", "final_answer")
    assert not {"answer", "checks refused"} & set(shown)
    assert "Forced answer" not in html and "forced answer</span>" not in html


@needs_chromium
@pytest.mark.parametrize(("width", "height"), [(390, 844), (1440, 900)])
def test_in_chromium_a_forced_stop_is_not_green_and_its_flag_stands_out(
    browser: DevTools, tmp_path: Path, width: int, height: int
) -> None:
    pages = {}
    for name, turns, calls in (
        ("clean", [fetch_turn("a"), "7"], 8),
        ("forced", [fetch_turn("a"), "7"], 2),
    ):
        page = tmp_path / f"{name}.html"
        page.write_text(render_html(journal(tmp_path / f"{name}.jsonl", turns, calls=calls)))
        pages[name] = page
    clean = open_page(browser, pages["clean"].as_uri(), width, height)
    green = evaluate(browser, clean, COLOR_JS.format(".stop-final_answer .v"))
    sid = open_page(browser, pages["forced"].as_uri(), width, height)
    assert ["answer", "forced"] in evaluate(browser, sid, CARDS_JS)
    stop = evaluate(browser, sid, COLOR_JS.format(".stop-flagged .v"))
    flag = evaluate(browser, sid, COLOR_JS.format(".card.flag-warn .v"))
    plain = evaluate(
        browser, sid, COLOR_JS.format(".card:not([class*=flag]):not([class*=stop]) .v")
    )
    assert stop != green and flag == stop and flag != plain
    top = evaluate(
        browser, sid, "document.querySelector('.card.flag-warn').getBoundingClientRect().top"
    )
    assert top < height / 2  # in the first screen, among the stop reason's cards
    assert evaluate(browser, sid, "document.documentElement.scrollWidth") <= width
    assert console_errors(browser, sid) == []
