"""The HTML of one step: the model's turns, the tool calls with their results, the warnings.

Everything here comes from the journal and is escaped: model text and tool output are hostile.
"""

from __future__ import annotations

import json
from html import escape
from typing import Any

from reactloop.tools.output_text import cut_head_tail
from reactloop.viewer.compaction_view import compaction_html
from reactloop.viewer.page_views import CheckView, CommandStatus, StepView, ToolView, TurnView

MAX_BLOCK_CHARS = 20_000
MAX_RAW_CHARS = 8_000


def step_html(step: StepView, *, anchor: str = "step", forced: bool = False) -> str:
    """The step's ``article`` (``id`` ``{anchor}-{number}``), then one for each compaction
    made after it; ``forced``: the step gave the run's forced answer."""
    after = "".join(compaction_html(c) for c in step.compactions)
    if step.number == 0 and not (step.turns or step.tools or step.warnings or step.notices):
        return after  # a compaction before the first model call (a long continued history)
    return _step_article(step, anchor, forced) + after


def _step_article(step: StepView, anchor: str, forced: bool) -> str:
    badges = []
    if step.wind_down:
        badges.append('<span class="badge warn">wind-down</span>')
    if forced:
        badges.append('<span class="badge warn forced">forced answer</span>')
    if any(c.kind == "verify" and not c.passed for c in step.checks):
        badges.append('<span class="badge bad refused">check refused</span>')
    if step.n_messages:
        badges.append(f'<span class="badge">{step.n_messages} messages</span>')
    body = "".join(_turn(turn) for turn in step.turns)
    body += "".join(_tool(tool) for tool in step.tools)
    body += "".join(warning_html(w.kind, w.message) for w in step.warnings)
    body += "".join(_check(check) for check in step.checks)
    body += "".join(f'<div class="notice muted">{escape(line)}</div>' for line in step.notices)
    return (
        f'<article class="step" id="{anchor}-{step.number}" data-step="{step.number}">'
        f"<h3>Step {step.number} {''.join(badges)}</h3>{body}</article>"
    )


def _turn(turn: TurnView) -> str:
    parts = [f'<div class="muted">{escape(_usage_line(turn))}</div>']
    if turn.reasoning:
        parts.append(_details("Reasoning", turn.reasoning))
    if turn.redacted is not None:  # nothing to read, but never left out: it was there
        parts.append(
            '<div class="redacted-reasoning"><span class="label">Reasoning</span> '
            f"{escape(turn.redacted.describe())}</div>"
        )
    if turn.text:
        parts.append(block_html("Thought / text", turn.text, "thought"))
    if turn.final_answer is not None:
        parts.append(block_html("Final answer", turn.final_answer, "final"))
    if turn.format_error:
        parts.append(f'<div class="error">Format error: {escape(turn.format_error)}</div>')
    if turn.raw is not None:
        parts.append(
            _details(
                "Raw response",
                json.dumps(turn.raw, ensure_ascii=False, indent=1, default=str),
                MAX_RAW_CHARS,
            )
        )
    return "".join(parts)


def _usage_line(turn: TurnView) -> str:
    """Tokens of the turn (cache writes beside the reads, when there were any), time, finish."""
    usage = turn.usage
    if turn.usage_estimated:
        line = f"in ~{usage.input_tokens:,} · out ~{usage.output_tokens:,} (estimated)"
    else:
        line = f"in {usage.input_tokens:,} · cached {usage.cached_tokens:,}"
        if usage.cache_write_tokens:
            line += f" · cache write {usage.cache_write_tokens:,}"
        line += f" · out {usage.output_tokens:,}"
    if turn.seconds is not None:
        line += f" · {turn.seconds:.2f}s"
    if turn.finish_reason:
        line += f" · finish {turn.finish_reason}"
    return line


def _check(check: CheckView) -> str:
    if check.kind == "checklist":
        title, css = "Checklist shown before the answer is accepted", "badge warn"
    else:
        title = "Completion check passed" if check.passed else "Completion check refused the answer"
        css = "badge ok" if check.passed else "badge bad"
    badge = f'<span class="{css}">{escape(check.kind)}</span>'
    detail = f"<pre>{escape(_cap(check.detail))}</pre>" if check.detail else ""
    return f'<div class="check"><div class="label">{escape(title)} {badge}</div>{detail}</div>'


def _tool(tool: ToolView) -> str:
    status = _tool_status(tool)
    parts = [
        f'<div class="{_tool_css(tool)}">',
        f'<div class="label">Action</div><h3><code>{escape(tool.name)}</code>{status}</h3>',
        '<div class="label">Arguments</div>',
        f"<pre>{escape(_cap(pretty_json_text(tool.arguments) or '{}'))}</pre>",
    ]
    if tool.ok is None:
        parts.append('<div class="error">No result was recorded for this call.</div>')
    elif tool.ok:
        parts.append('<div class="label">Observation</div>')
        parts.append(f"<pre>{escape(_cap(_output_text(tool.output)))}</pre>")
    else:
        parts.append('<div class="label">Error</div>')
        parts.append(f'<pre class="err">{escape(_cap(tool.error or ""))}</pre>')
    if tool.full_output_path:
        parts.append(f'<div class="muted">full output: {escape(tool.full_output_path)}</div>')
    parts.append(tool.nested_html)  # made of escaped parts by ``viewer/tree.py``
    parts.append("</div>")
    return "".join(parts)


def _tool_css(tool: ToolView) -> str:
    if tool.ok is False:
        return "tool failed"
    if tool.command is not None and tool.command.failed:
        return "tool command-failed"
    return "tool"


def _tool_status(tool: ToolView) -> str:
    badges = []
    if tool.ok is True:
        badges.append(_ok_badge(tool.command))
    elif tool.ok is False:
        badges.append('<span class="badge bad">error</span>')
    if not tool.executed:
        badges.append('<span class="badge warn">not run</span>')
    if tool.truncated:
        badges.append('<span class="badge warn">truncated</span>')
    if tool.seconds is not None:
        badges.append(f'<span class="badge">{tool.seconds:.3f}s</span>')
    return "".join(badges)


def _ok_badge(command: CommandStatus | None) -> str:
    """``ok`` says the tool ran; a command it ran may still have failed, which is shown too."""
    if command is None:
        return '<span class="badge ok">ok</span>'
    if not command.failed:
        return '<span class="badge ok">ok</span><span class="badge">exit 0</span>'
    ended = f"exit {command.exit_code}" + (f" ({command.signal})" if command.signal else "")
    if command.timed_out:
        ended += " · timed out"
    tip = f"the tool ran; the command failed: {ended}"
    return (
        f'<span class="badge" title="{escape(tip)}">ok</span>'
        f'<span class="badge warn command-status" title="{escape(tip)}">{escape(ended)}</span>'
    )


def _output_text(output: Any) -> str:
    if isinstance(output, str):
        return output
    return json.dumps(output, ensure_ascii=False, indent=2, default=str)


def warning_html(kind: str, message: str) -> str:
    return f'<div class="warning"><strong>⚠ {escape(kind)}</strong>: {escape(message)}</div>'


def block_html(label: str, text: str, css: str) -> str:
    label_html = f'<div class="label">{escape(label)}</div>'
    return f'<div class="{css}">{label_html}<pre>{escape(_cap(text))}</pre></div>'


def _details(label: str, text: str, limit: int = MAX_BLOCK_CHARS) -> str:
    summary = f"<summary>{escape(label)}</summary>"
    return f"<details>{summary}<pre>{escape(_cap(text, limit))}</pre></details>"


def _cap(text: str, limit: int = MAX_BLOCK_CHARS) -> str:
    return cut_head_tail(text, limit)


def pretty_json_text(text: str) -> str:
    """Indented JSON when ``text`` is JSON, else the text unchanged."""
    try:
        value = json.loads(text)
    except (json.JSONDecodeError, ValueError):
        return text
    return json.dumps(value, ensure_ascii=False, indent=2)
