"""The HTML of one run: its summary cards, its answer (forced, or failed its check, said as
plainly as the stop reason), its steps; and a run as one turn of a conversation.

Everything here comes from the journal and is escaped: model text and tool output are hostile.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

from reactloop.messages import Usage
from reactloop.support.json_decode import json_number
from reactloop.usage import RunUsage
from reactloop.viewer.outcome import Outcome, outcome
from reactloop.viewer.page_views import RunView
from reactloop.viewer.step_html import block_html, step_html, warning_html

Card = tuple[str, str, str]  # label, value, css class


def cards_html(cards: Sequence[Card]) -> str:
    return "".join(
        f'<div class="card {css}"><div class="k">{escape(k)}</div>'
        f'<div class="v">{escape(v)}</div></div>'
        for k, v, css in cards
    )


def stop_cards(view: RunView, result: Outcome) -> list[Card]:
    """The stop reason, and beside it what is wrong with the answer, if anything."""
    stop = view.stop or {}
    reason = str(stop.get("stop_reason") or "interrupted (no stop event)")
    cards = [("stop reason", reason, result.stop_css(reason))]
    flagged = result.answer_card()
    if flagged is not None:
        cards.append(("answer", *flagged))
    if result.refusals:
        css = "flag-bad" if result.failed_check else "flag-warn"
        cards.append(("checks refused", f"{result.refusals} of {result.verifies}", css))
    return cards


def count_cards(view: RunView, calls: int) -> list[Card]:
    stop = view.stop or {}
    tool_calls = stop.get("tool_calls", sum(len(s.tools) for s in view.steps))
    cards = [
        ("model calls", str(stop.get("model_calls", calls)), ""),
        ("tool calls", str(tool_calls), ""),
    ]
    return cards


def seconds_card(seconds: float | None) -> list[Card]:
    return [] if seconds is None else [("seconds", f"{seconds:.2f}", "")]


def token_cards(
    total: Usage, *, estimated: bool, cache_written: bool, compact: bool = False
) -> list[Card]:
    """The token totals; ``compact`` (a turn of a conversation) leaves out the counts that
    are zero, but for input and output."""
    if estimated:  # the provider reported nothing: no cached or reasoning counts to show
        return [
            ("input tokens (estimated)", f"~{total.input_tokens:,}", "estimated"),
            ("output tokens (estimated)", f"~{total.output_tokens:,}", "estimated"),
        ]
    cards = [
        ("input tokens", total.input_tokens),
        ("cached", total.cached_tokens),
        *([("cache writes", total.cache_write_tokens)] if cache_written else []),
        ("output tokens", total.output_tokens),
        ("reasoning", total.reasoning_tokens),
    ]
    shown = [(k, n) for k, n in cards if n or not compact or k.endswith(" tokens")]
    return [(k, f"{n:,}", "") for k, n in shown]


def answer_html(view: RunView, result: Outcome) -> str:
    """The answer, marked when forced or refused by its check; the error; an interruption."""
    stop = view.stop or {}
    parts = []
    if result.forced:
        parts.append(
            warning_html(
                "Forced answer",
                "the model answered only because it was told to answer now, without tools "
                f"({result.why_forced}); check it before you trust it",
            )
        )
    if stop.get("answer") is not None:
        css = "answer failed" if result.failed_check else "answer forced" if result.forced else ""
        label = "Answer (forced)" if result.forced else "Answer"
        if result.failed_check:
            label = "Answer (failed its check)"
        parts.append(block_html(label, str(stop["answer"]), css or "answer"))
    if stop.get("error"):
        parts.append(
            f'<div class="error"><strong>Error:</strong> {escape(str(stop["error"]))}</div>'
        )
    if view.stop is None:
        parts.append(
            '<div class="error">The journal has no stop event: the run was interrupted.</div>'
        )
    return "".join(parts)


def steps_html(view: RunView, anchor: str = "step") -> str:
    result = outcome(view)
    stop_step = json_number((view.stop or {}).get("step"))
    html = "".join(
        step_html(step, anchor=anchor, forced=result.forced and step.number == stop_step)
        for step in view.steps
    )
    return html or '<p class="muted">No steps.</p>'


def turn_html(view: RunView, run: RunUsage | None, *, estimated: bool, cache_written: bool) -> str:
    """One run as a turn of a conversation: its question, cards, answer and steps."""
    result = outcome(view)
    usage = run.usage if run is not None else Usage()
    cards = [
        *stop_cards(view, result),
        *count_cards(view, run.calls if run is not None else 0),
        *token_cards(usage, estimated=estimated, cache_written=cache_written, compact=True),
        *seconds_card(json_number((view.stop or {}).get("seconds"))),
    ]
    n = view.number
    question = block_html("Question", view.task, "task") if view.task else ""
    warnings = "".join(warning_html(w.kind, w.message) for w in view.run_warnings)
    return (
        f'<section class="turn" id="turn-{n}" data-turn="{n}"><h2>Turn {n}</h2>{question}'
        f'<div class="cards">{cards_html(cards)}</div>{answer_html(view, result)}'
        f"{warnings}{steps_html(view, f'turn-{n}-step')}</section>"
    )


def conversation_cards(views: Sequence[RunView]) -> list[Card]:
    """A conversation's own cards: its turns, and the turns whose answer is flagged."""
    results = [outcome(view) for view in views]
    cards = [("turns", str(len(views)), "")]
    forced = [v.number for v, r in zip(views, results, strict=True) if r.forced]
    failed = [v.number for v, r in zip(views, results, strict=True) if r.failed_check]
    cut = [v.number for v in views if v.stop is None]
    if forced:
        cards.append(("forced answers", _turns(forced), "flag-warn"))
    if failed:
        cards.append(("failed checks", _turns(failed), "flag-bad"))
    if cut:
        cards.append(("interrupted", _turns(cut), "flag-bad"))
    return cards


def _turns(numbers: Sequence[int]) -> str:
    return ("turn " if len(numbers) == 1 else "turns ") + ", ".join(map(str, numbers))
