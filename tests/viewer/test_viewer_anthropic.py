"""The trace page of an Anthropic run with extended thinking and prompt caching: redacted
thinking is shown as a reasoning item that says so (never dropped), cache writes beside cache
reads. Checked in the real headless Chromium of ``test_viewer.py``, on journals of real runs
through the CLI against the fake Anthropic server (``reactloop.testing``), streamed or not.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from anthropic_cached_usage import SECOND
from anthropic_runs import (
    RED_1,
    RED_2,
    RED_3,
    THOUGHT,
    anthropic_run,
    openai_cached_run,
)
from browser import DevTools, console_errors, evaluate, needs_chromium, open_page
from reactloop.journal.writer import read_journal
from reactloop.models.redacted import redacted_reasoning
from reactloop.testing import (
    message,
    thinking,
)
from reactloop.viewer import render_html

STEPS_JS = """[...document.querySelectorAll('#steps > article.step')].map(a => ({
  id: a.id,
  usage: a.querySelector(':scope > div.muted').innerText,
  reasoning: [...a.querySelectorAll('details')].filter(d => d.querySelector('summary')
    .innerText === 'Reasoning').map(d => d.querySelector('pre').textContent),
  redacted: [...a.querySelectorAll('.redacted-reasoning')].map(e => ({
    text: e.innerText, height: e.getBoundingClientRect().height,
    beforeAction: [...a.querySelectorAll('.tool')].every(t =>
      !!(e.compareDocumentPosition(t) & Node.DOCUMENT_POSITION_FOLLOWING)),
  })),
}))"""


@needs_chromium
@pytest.mark.parametrize(
    ("stream", "width", "height"), [(False, 390, 844), (True, 1440, 900)], ids=["json", "stream"]
)
def test_redacted_thinking_and_cache_writes_are_shown(
    browser: DevTools, tmp_path: Path, stream: bool, width: int, height: int
) -> None:
    trace, _, server = anthropic_run(tmp_path, *(["--stream"] if stream else []))
    echoed = server.requests[1].json["messages"][1]["content"]
    assert echoed[1] == RED_1  # the opaque data went back byte-exact, in its place
    page = tmp_path / "run.html"
    page.write_text(render_html(trace), encoding="utf-8")
    sid = open_page(browser, page.as_uri(), width, height)

    first, second = evaluate(browser, sid, STEPS_JS)
    assert (first["id"], second["id"]) == ("step-1", "step-2")
    assert first["usage"].startswith("in 2,005 · cached 0 · cache write 2,000 · out 10 · ")
    assert second["usage"].startswith("in 2,037 · cached 2,000 · cache write 30 · out 4 · ")
    assert first["reasoning"] == [THOUGHT] and second["reasoning"] == []
    sizes = len(RED_2["data"]) + len(RED_3["data"])
    assert [r["text"] for r in first["redacted"]] == [
        "REASONING redacted by the provider: 28 bytes of opaque data, echoed back unchanged"
    ]
    assert [r["text"] for r in second["redacted"]] == [
        f"REASONING 2 blocks redacted by the provider: {sizes:,} bytes of opaque data, "
        "echoed back unchanged"
    ]
    shown = first["redacted"] + second["redacted"]
    assert all(r["height"] > 0 and r["beforeAction"] for r in shown)  # visible, not folded
    cards = evaluate(
        browser,
        sid,
        "Object.fromEntries([...document.querySelectorAll('.card')].map(c =>"
        " [c.querySelector('.k').innerText, c.querySelector('.v').innerText]))",
    )
    assert (cards["CACHED"], cards["CACHE WRITES"]) == ("2,000", "2,030")
    head = evaluate(browser, sid, "[...document.querySelectorAll('th')].map(t => t.textContent)")
    assert head[:7] == ["call", "step", "input", "cached", "cache write", "output", "reasoning"]
    assert evaluate(browser, sid, "document.documentElement.scrollWidth") <= width
    assert evaluate(browser, sid, "document.title") != "pwned"
    assert console_errors(browser, sid) == []


def test_a_run_without_cache_writes_shows_no_cache_write(tmp_path: Path) -> None:
    """An OpenAI-compatible run (cached tokens, no writes) keeps its usage line and table."""
    trace = openai_cached_run(tmp_path)
    page = render_html(trace)
    assert '<div class="muted">in 40 · cached 32 · out 6 · ' in page
    assert "cache write" not in page and 'class="redacted-reasoning"' not in page
    assert "<th>cached</th><th>output</th>" in page


def test_a_turn_without_redacted_thinking_has_no_placeholder(tmp_path: Path) -> None:
    script = [message(content=[thinking(THOUGHT, "sig-1")], text="5", usage=SECOND)]
    trace, err, _ = anthropic_run(tmp_path, script=script)
    assert 'class="redacted-reasoning"' not in render_html(trace)
    assert "redacted by the provider" not in err
    (turn,) = [e["turn"] for e in read_journal(trace) if e["type"] == "turn"]
    assert redacted_reasoning(turn["raw_message"]) is None


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner),
    max_leaves=12,
)
BLOCK = st.fixed_dictionaries({"type": st.just("redacted_thinking")}, optional={"data": JSON})


@given(st.lists(BLOCK | JSON, max_size=6), JSON)
def test_any_raw_message_reads_without_error(content: list[Any], other: Any) -> None:
    """A journal is hostile input: any content counts its redacted blocks and their data."""
    for raw in ({"role": "assistant", "content": content}, other, {"content": other}):
        found = redacted_reasoning(raw)
        blocks = raw.get("content") if isinstance(raw, dict) else None
        redacted = [
            b for b in blocks or [] if isinstance(b, dict) and b.get("type") == "redacted_thinking"
        ] if isinstance(blocks, list) else []  # fmt: skip
        if not redacted:
            assert found is None
            continue
        assert found is not None and found.blocks == len(redacted)
        data = [b.get("data") for b in redacted]
        size = sum(len(d.encode("utf-8", "replace")) for d in data if isinstance(d, str))
        assert found.size == size and json.dumps(found.describe())
