"""Replay: a journal's recorded model turns re-driven against the real tools.

- ``rerun.py``: ``replay(trace)`` and its ``ReplayReport`` (identical, or the first divergence).
- ``compare.py``: ``compare(recorded, replayed)`` finds that divergence (``Divergence``).
- ``model.py``: ``ReplayModel``, a journal used as a model (``--model replay:TRACE``).
- ``rebuild.py``: what a replay rebuilds from ``run_start``: tools, limits, notes, all checked.
"""

from reactloop.replay.compare import Divergence, compare
from reactloop.replay.model import ReplayModel
from reactloop.replay.rerun import ReplayReport, replay

__all__ = ["Divergence", "ReplayModel", "ReplayReport", "compare", "replay"]
