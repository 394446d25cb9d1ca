"""A context compaction on the trace page: read from its ``compaction`` event, shown as an item
of its own between the step it followed and the next one (docs/long_runs.md).

The event says what was replaced (``start``, ``replaced``, ``call_ids``), by what (``by``: the
summary or the stubs), and the estimated tokens before and after; a summary's own model call
is in ``summary_usage``, its raw reply in the ``response`` event just before. Everything shown
comes from the journal and is escaped.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from html import escape
from typing import Any

from reactloop.journal.schema import CompactionEvent
from reactloop.messages import Usage
from reactloop.tools.toolbox import cut_head_tail
from reactloop.usage import usage_from

MAX_SHOWN_CHARS = 20_000
MAX_CALL_IDS = 12


@dataclass(kw_only=True)
class CompactionView:
    after_step: int
    number: int = 0  # which compaction of the run, from 1
    policy: str = "?"
    start: int | None = None
    replaced: int | None = None
    call_ids: list[str] = field(default_factory=list)
    by: list[str] = field(default_factory=list)  # the summary, or each stub's text
    tokens_before: int | None = None
    tokens_after: int | None = None
    limit: int | None = None
    summary_usage: Usage | None = None
    raw: Any = None  # the summarising call's raw reply, when the journal has it
    cache_line: str | None = None  # what the next call paid for it (``CompactionCost``)
    summary_money: float | None = None


def compaction_view(event: CompactionEvent, raw: Any, number: int) -> CompactionView:
    """The view of the ``number``-th ``compaction`` event; ``raw``: the reply of the
    ``response`` event before it. A count its line does not hold (an older journal's) is
    unknown, not its default."""
    policy = event.policy or "?"
    usage = event.summary_usage
    return CompactionView(
        after_step=_count(event.step) or 0,
        number=number,
        policy=policy,
        start=_count(event.given("start")),
        replaced=_count(event.given("replaced")),
        call_ids=[str(c) for c in event.call_ids],
        by=[_shown_text(m) for m in event.by],
        tokens_before=_count(event.given("tokens_before")),
        tokens_after=_count(event.given("tokens_after")),
        limit=_count(event.limit),
        summary_usage=usage_from(usage) if usage is not None else None,
        raw=raw if policy == "summarize" else None,
    )


def compaction_html(view: CompactionView) -> str:
    """One compaction as a step-like ``article`` (class ``compaction``)."""
    number = view.number
    badges = (
        f'<span class="badge warn">{escape(view.policy)}</span>'
        f'<span class="badge">after step {view.after_step}</span>'
    )
    parts = [f'<div class="muted">{escape(_what_line(view))}</div>']
    if view.tokens_before is not None or view.tokens_after is not None:
        parts.append(f'<div class="tokens-line">{escape(_tokens_line(view))}</div>')
    if view.summary_usage is not None:
        line = _summary_call_line(view.summary_usage, view.summary_money)
        parts.append(f'<div class="muted">{escape(line)}</div>')
    if view.cache_line:
        parts.append(f'<div class="muted cache-line">{escape(view.cache_line)}</div>')
    if view.call_ids:
        parts.append(f'<div class="muted">{escape(_calls_line(view.call_ids))}</div>')
    parts.append(_replacement(view))
    if view.raw is not None:
        text = json.dumps(view.raw, ensure_ascii=False, indent=1, default=str)
        parts.append(
            "<details><summary>Raw summary response</summary>"
            f"<pre>{escape(cut_head_tail(text, 8_000))}</pre></details>"
        )
    return (
        f'<article class="step compaction" id="compaction-{number}" '
        f'data-after-step="{view.after_step}">'
        f"<h3>Compaction {number} {badges}</h3>{''.join(parts)}</article>"
    )


def _what_line(view: CompactionView) -> str:
    replaced = "?" if view.replaced is None else f"{view.replaced:,}"
    where = "" if view.start is None else f" from message {view.start}"
    if view.policy == "summarize":
        return f"{replaced} messages{where} replaced by one summary"
    if view.policy == "trim":
        return f"{len(view.by)} tool results{where} trimmed to a stub ({replaced} messages)"
    return f"{replaced} messages{where} replaced"


def _tokens_line(view: CompactionView) -> str:
    before = "?" if view.tokens_before is None else f"~{view.tokens_before:,}"
    after = "?" if view.tokens_after is None else f"~{view.tokens_after:,}"
    line = f"prompt {before} → {after} tokens"
    if view.tokens_before and view.tokens_after is not None:
        line += f" ({view.tokens_after / view.tokens_before - 1:+.0%})"
    if view.limit:
        line += f" · limit {view.limit:,}"
    return line


def _summary_call_line(usage: Usage, money: float | None) -> str:
    line = (
        f"summary call: in {usage.input_tokens:,} · cached {usage.cached_tokens:,} "
        f"· out {usage.output_tokens:,}"
    )
    return line if money is None else f"{line} · ${money:.4f}"


def _calls_line(call_ids: list[str]) -> str:
    shown = ", ".join(call_ids[:MAX_CALL_IDS])
    more = len(call_ids) - MAX_CALL_IDS
    return f"calls replaced: {shown}" + (f" and {more} more" if more > 0 else "")


def _replacement(view: CompactionView) -> str:
    if not view.by:
        return ""
    if view.policy == "summarize":
        text, label = "\n\n".join(view.by), "Summary"
    else:
        text, label = "\n".join(view.by), f"Stubs ({len(view.by)})"
    return (
        f'<div class="summary"><div class="label">{escape(label)}</div>'
        f"<pre>{escape(cut_head_tail(text, MAX_SHOWN_CHARS))}</pre></div>"
    )


def _shown_text(message: Any) -> str:
    """A replacement message's text: a stub's ``output`` or ``error``, a summary's content."""
    content = message.get("content") if isinstance(message, Mapping) else message
    text = "" if content is None else str(content)
    try:
        value = json.loads(text)
    except (json.JSONDecodeError, ValueError):
        return text
    if isinstance(value, Mapping):
        shown = value.get("output", value.get("error"))
        if isinstance(shown, str):
            return shown
    return text


def _count(value: Any) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int):
        return None
    return value if value >= 0 else None
