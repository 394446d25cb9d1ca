"""``render_html(trace)``: a journal as one self-contained HTML page (``reactloop view``)."""

from __future__ import annotations

from reactloop.viewer.render import render_events, render_html

__all__ = ["render_events", "render_html"]
