"""``render_html(trace)``: a journal as one self-contained HTML page (``reactloop view``).

- ``render.py``: the page: summary cards, token charts and table, then the steps; for a
  journal of several runs (``reactloop chat``), the conversation's totals, then each turn.
- ``run_html.py``: one run's cards, answer and steps, and a run as a turn of a conversation.
- ``outcome.py``: how a run's answer stands: clean, forced, or failed its check.
- ``step_html.py``: one step's HTML: turns, tool calls with their results, warnings.
- ``tree.py``: the sub-agents: under each call of an agent tool, the child's steps, collapsed.
- ``page_views.py``: the values the page shows (``RunView``, one a run, its ``StepView``s).
- ``page_data.py``: a journal's events read into those values.
- ``compaction_view.py``: a context compaction, as an item of its own between two steps.
- ``chart.py``: inline SVG charts of tokens per model call.
- ``template.html``: the page's frame and CSS (no script, no external resource).
"""

from __future__ import annotations

from reactloop.viewer.render import render_events, render_html

__all__ = ["render_events", "render_html"]
