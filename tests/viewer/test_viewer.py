"""The HTML viewer, checked in a real headless Chromium (Debian's ``chromium``) over the
DevTools protocol on a pipe: no console errors, every step shown, hostile text inert, the page
fits a phone-sized and a wide screen, and the screenshots are not blank."""

from __future__ import annotations

import base64
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from browser import (
    CHROMIUM,
    HEADLESS_FLAGS,
    HOSTILE,
    DevTools,
    assert_not_blank,
    console_errors,
    evaluate,
    fetch,
    needs_chromium,
    open_page,
)
from reactloop import Agent, Journal, ScriptedModel, tool
from reactloop.errors import JournalError
from reactloop.journal.events import EVENT_TYPES
from reactloop.journal.writer import read_journal
from reactloop.tools.context import ToolContext
from reactloop.tools.registry import build_tools
from reactloop.usage import PriceTable, usage_report
from reactloop.viewer import render_events, render_html
from reactloop.viewer.page_views import command_status

# Headless, and quiet: without the background-networking flags Chromium tries hosts this
# machine cannot reach.


@tool
def fail(reason: str) -> str:
    """Always fails.

    Args:
        reason: why
    """
    raise ValueError(reason)


def run_journal(path: Path, steps: int = 6) -> Path:
    turns: list[Any] = []
    for n in range(steps - 1):
        name, args = ("fail", {"reason": "<b>boom</b>"}) if n == 2 else ("fetch", {"key": f"k{n}"})
        if n == 1:
            args = {"key": "k0"}  # a repeated call: the loop guard warns and refuses it
        turns.append(
            {
                "content": f"Thought {n}: {HOSTILE}",
                "reasoning": f"hidden reasoning {n}",
                "tool_calls": [{"name": name, "arguments": args}],
                "usage": {
                    "input_tokens": 800 + 200 * n,
                    "cached_tokens": 600 + 200 * n if n else 0,
                    "output_tokens": 40,
                },
            }
        )
    turns.append(
        {
            "content": f"The answer {HOSTILE}",
            "usage": {"input_tokens": 800 + 200 * (steps - 1), "output_tokens": 10},
        }
    )
    with Journal(path) as journal:
        Agent(ScriptedModel(turns, name="gpt-test"), [fetch, fail], journal=journal).run(
            f"Task with {HOSTILE}"
        )
    return path


@needs_chromium
@pytest.mark.parametrize(("width", "height"), [(390, 844), (1440, 900)])
def test_page_renders_in_chromium(
    browser: DevTools, tmp_path: Path, width: int, height: int
) -> None:
    trace = run_journal(tmp_path / "run.jsonl")
    page = tmp_path / "run.html"
    page.write_text(render_html(trace), encoding="utf-8")
    sid = open_page(browser, page.as_uri(), width, height)

    assert evaluate(browser, sid, "document.title") != "pwned"
    steps = evaluate(browser, sid, "[...document.querySelectorAll('article.step')].map(e => e.id)")
    assert steps == [f"step-{n}" for n in range(1, 7)]
    text = evaluate(browser, sid, "document.body.innerText")
    assert "final_answer" in text and "Thought 4" in text and "<b>boom</b>" in text
    assert HOSTILE in text  # shown as text, not interpreted
    assert evaluate(browser, sid, "document.querySelectorAll('script, img').length") == 0
    assert evaluate(browser, sid, "document.querySelectorAll('svg.chart').length") == 2
    assert evaluate(browser, sid, "document.querySelectorAll('.tool.failed').length") == 2
    warnings = evaluate(browser, sid, "[...document.querySelectorAll('.warning')].map(e => e.id)")
    assert len(warnings) == 1 and "repeat" in text
    assert evaluate(browser, sid, "document.documentElement.scrollWidth") <= width
    assert console_errors(browser, sid) == []

    shot = browser.send("Page.captureScreenshot", {"format": "png"}, session=sid)
    assert_not_blank(base64.b64decode(shot["data"]), width, height)


@needs_chromium
def test_dump_dom_shows_every_step(tmp_path: Path) -> None:
    trace = run_journal(tmp_path / "run.jsonl", steps=4)
    page = tmp_path / "run.html"
    page.write_text(render_html(trace), encoding="utf-8")
    dom = subprocess.run(
        [
            CHROMIUM,
            *HEADLESS_FLAGS,
            f"--user-data-dir={tmp_path / 'profile'}",
            "--dump-dom",
            page.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    ).stdout
    for n in range(1, 5):
        assert f'id="step-{n}"' in dom
    assert "<script" not in dom.lower()


def test_html_is_self_contained_and_escaped(tmp_path: Path) -> None:
    html = render_html(run_journal(tmp_path / "run.jsonl"))
    assert "<script" not in html.lower()
    assert "</textarea>" not in html
    assert "&lt;/textarea&gt;&lt;script&gt;" in html
    for marker in ("http://", "https://", "//cdn", "@import", "url("):
        assert marker not in html.replace('xmlns="http://www.w3.org/2000/svg"', "")
    assert "Content-Security-Policy" in html


def test_interrupted_run_and_prices_are_shown(tmp_path: Path) -> None:
    trace = run_journal(tmp_path / "run.jsonl")
    lines = trace.read_text(encoding="utf-8").splitlines(keepends=True)
    cut = tmp_path / "cut.jsonl"
    cut.write_text("".join(lines[:-3]) + lines[-3][:20], encoding="utf-8")  # torn last line
    prices = PriceTable.from_dict({"gpt-*": {"input": 2.0, "cached_input": 0.5, "output": 8.0}})
    html = render_html(cut, prices=prices)
    assert "the run was interrupted" in html
    assert "price gpt-*: $" in html


def test_not_a_journal_is_a_clear_error(tmp_path: Path) -> None:
    bad = tmp_path / "notes.json"
    bad.write_text('{"a": 1}\n', encoding="utf-8")
    with pytest.raises(JournalError, match="not a journal"):
        render_html(bad)


json_scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text()
json_values = st.recursive(
    json_scalars,
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(), children, max_size=3)
    ),
    max_leaves=12,
)
field_names = st.sampled_from(
    [
        "step",
        "t",
        "turn",
        "usage",
        "tool_calls",
        "call",
        "result",
        "content",
        "kind",
        "message",
        "n_messages",
        "messages_new",
        "raw",
        "stop_reason",
        "answer",
        "error",
        "seconds",
        "tools",
        "task",
        "model",
        "text",
        "input_tokens",
        "id",
        "name",
        "arguments",
        "ok",
        "output",
    ]
)
odd_events = st.lists(
    st.fixed_dictionaries(
        {"type": st.sampled_from(list(EVENT_TYPES))},
        optional={"step": json_values, "turn": st.dictionaries(field_names, json_values)},
    ).flatmap(
        lambda e: st.dictionaries(field_names, json_values).map(lambda extra: {**extra, **e})
    ),
    max_size=8,
)


@settings(max_examples=50, deadline=None)
@given(events=odd_events)
def test_any_journal_content_renders_without_crashing(events: list[dict[str, Any]]) -> None:
    html = render_events(events)
    assert html.startswith("<!DOCTYPE html>") and "<script" not in html.lower()
    usage_report(events)


def bash_run_journal(
    path: Path, workspace: Path, *, model_name: str = "scripted", first: str = "nope-x"
) -> Path:
    """A real bash tool: a command that is not found (exit 127), one that works, then a loop
    until the guard stops the run (``loop_detected``). The script reports no usage."""
    command = {"name": "bash", "arguments": {"command": "echo hello"}}
    turns: list[Any] = [
        {
            "content": "Try it.",
            "tool_calls": [{"name": "bash", "arguments": {"command": first}}],
        },
        *({"content": "Again.", "tool_calls": [command]} for _ in range(4)),
        {"content": "hello"},
    ]
    tools = build_tools(("bash",), ToolContext(workspace=workspace, output_dir=path.parent))
    with Journal(path) as journal:
        Agent(ScriptedModel(turns, name=model_name), tools, journal=journal).run("Say hello")
    return path


def test_a_failed_command_shows_that_the_tool_ran_and_the_command_failed(tmp_path: Path) -> None:
    html = render_html(bash_run_journal(tmp_path / "run.jsonl", tmp_path))
    failed, worked = re.findall(r'<div class="(tool[^"]*)">.*?</h3>', html, re.DOTALL)[:2]
    assert failed == "tool command-failed" and worked == "tool"
    first, second = re.findall(r"<code>bash</code>(.*?)</h3>", html)[:2]
    assert '<span class="badge warn command-status"' in first and ">exit 127</span>" in first
    assert '"badge ok"' not in first  # not a green "ok": the command failed
    assert '<span class="badge ok">ok</span><span class="badge">exit 0</span>' in second


def test_a_command_killed_by_a_signal_names_it(tmp_path: Path) -> None:
    html = render_html(bash_run_journal(tmp_path / "run.jsonl", tmp_path, first="kill -KILL $$"))
    first = re.findall(r"<code>bash</code>(.*?)</h3>", html)[0]
    assert ">exit 137 (SIGKILL)</span>" in first and '"badge ok"' not in first


status_values = json_values | st.integers(min_value=-(10**400), max_value=10**400)


@settings(max_examples=200, deadline=None)
@given(
    output=json_values
    | st.dictionaries(st.sampled_from(["exit_code", "signal", "timed_out"]), status_values)
)
def test_command_status_reads_only_an_integer_exit_code(output: Any) -> None:
    status = command_status(output)
    code = output.get("exit_code") if isinstance(output, dict) else None
    is_code = isinstance(code, int) and not isinstance(code, bool)
    assert (status is not None) == is_code
    if status is not None:
        assert status.exit_code == code and isinstance(status.timed_out, bool)
        assert status.signal is None or isinstance(status.signal, str)


def test_estimated_tokens_are_marked_in_the_summary_and_on_every_step(tmp_path: Path) -> None:
    events = read_journal(bash_run_journal(tmp_path / "run.jsonl", tmp_path))
    report = usage_report(events)
    assert report.estimated
    html = render_events(events)
    assert "input tokens (estimated)</div>" in html and "output tokens (estimated)</div>" in html
    assert f"~{report.total.input_tokens:,}</div>" in html
    metas = re.findall(r'<div class="muted">(in [^<]*)</div>', html)
    expected = [
        f"in ~{s.usage.input_tokens:,} · out ~{s.usage.output_tokens:,} (estimated)"
        for s in report.steps
    ]
    assert len(metas) == len(expected) == 5  # the loop guard stops the run at step 5
    assert all(meta.startswith(e) for meta, e in zip(metas, expected, strict=True))
    assert all(s.usage.input_tokens > 0 for s in report.steps)
    assert "<th>input (estimated)</th>" in html


def test_measured_tokens_are_not_marked_estimated(tmp_path: Path) -> None:
    body = render_html(run_journal(tmp_path / "run.jsonl")).split("</style>")[1]
    assert "estimated" not in body
    assert "in 800 · cached 0 · out 40" in body


# A word (a run of non-space characters) in a card's label or value, or in a badge, must sit on
# one line (the issue's ``loop_detecte d``). A token longer than SHORT_WORD characters (a long
# model name) may wrap, but only where it is wider than its box.
SHORT_WORD = 20
BROKEN_WORDS_JS = """(() => {
  const broken = [];
  for (const el of document.querySelectorAll('.card .k, .card .v, .badge')) {
    const node = el.firstChild;
    if (!node || node.nodeType !== Node.TEXT_NODE) continue;
    const range = document.createRange();
    const boxes = Array.from({ length: node.length }, (_, i) => {  // by UTF-16 offset
      range.setStart(node, i); range.setEnd(node, i + 1);
      return range.getClientRects()[0] || null;
    });
    for (const m of node.textContent.matchAll(/\\S+/g)) {
      const chars = boxes.slice(m.index, m.index + m[0].length).filter(b => b !== null);
      const lines = new Set(chars.map(b => Math.round(b.top)));
      const width = chars.reduce((sum, b) => sum + b.width, 0);
      const short = m[0].length <= SHORT_WORD;
      if (lines.size > 1 && (short || width <= el.clientWidth)) broken.push(m[0]);
    }
  }
  return broken;
})()""".replace("SHORT_WORD", str(SHORT_WORD))


@needs_chromium
@pytest.mark.parametrize(
    ("width", "height"), [(390, 844), (520, 900), (800, 900), (1000, 900), (1440, 900)]
)
def test_card_words_do_not_break_and_failed_commands_are_marked(
    browser: DevTools, tmp_path: Path, width: int, height: int
) -> None:
    model = "qwen:Qwen/Qwen3-30B-A3B-Instruct"
    trace = bash_run_journal(tmp_path / "run.jsonl", tmp_path, model_name=model)
    page = tmp_path / "run.html"
    page.write_text(render_html(trace), encoding="utf-8")
    sid = open_page(browser, page.as_uri(), width, height)

    text = evaluate(browser, sid, "document.body.innerText")
    assert "loop_detected" in text and "exit 127" in text
    assert evaluate(browser, sid, BROKEN_WORDS_JS) == []
    colors = evaluate(
        browser,
        sid,
        "['.badge.command-status', '.badge.ok', '.tool.command-failed']"
        ".map(s => getComputedStyle(document.querySelector(s)))"
        ".map(c => [c.color, c.borderLeftColor])",
    )
    (status_color, _), (ok_color, _), (_, failed_border) = colors
    assert status_color != ok_color and failed_border == status_color
    assert evaluate(browser, sid, "document.documentElement.scrollWidth") <= width
    assert console_errors(browser, sid) == []


@needs_chromium
def test_a_long_unbroken_model_name_stays_inside_its_card(
    browser: DevTools, tmp_path: Path
) -> None:
    name = "openai:" + "x" * 90
    trace = bash_run_journal(tmp_path / "run.jsonl", tmp_path, model_name=name)
    page = tmp_path / "run.html"
    page.write_text(render_html(trace), encoding="utf-8")
    sid = open_page(browser, page.as_uri(), 390, 844)
    assert evaluate(browser, sid, "document.documentElement.scrollWidth") <= 390
    overflowing = evaluate(
        browser,
        sid,
        "[...document.querySelectorAll('.card .v')].filter(e => e.scrollWidth > e.clientWidth)"
        ".map(e => e.textContent)",
    )
    assert overflowing == []
