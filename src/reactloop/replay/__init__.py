"""Replay: a journal's recorded model turns re-driven against the real tools.

- ``rerun.py``: ``replay(trace)`` and its ``ReplayReport`` (identical, or the first divergence).
- ``compare.py``: ``compare(recorded, replayed)`` finds that divergence (``Divergence``).
- ``model.py``: ``ReplayModel``, a journal used as a model (``--model replay:TRACE``).
- ``rebuild.py``: what a replay rebuilds from ``run_start``: tools, limits, notes, all checked.
- ``workspace.py``: where the tools run (a temporary copy of the recorded workspace, or one
  given), never in the recorded one when they can write.
- ``plan.py``: ``ReplayPlan``, what the replay runs again and what not, said before it runs.
"""

from reactloop.models.replay import ReplayModel
from reactloop.replay.compare import Divergence, compare
from reactloop.replay.plan import ReplayPlan
from reactloop.replay.rerun import ReplayReport, replay

__all__ = ["Divergence", "ReplayModel", "ReplayPlan", "ReplayReport", "compare", "replay"]
