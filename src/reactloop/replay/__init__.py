"""Replay: a journal's recorded model turns re-driven against the real tools.

- ``rerun.py``: ``replay(trace)``.
- ``report.py``: its ``ReplayReport`` (identical, or the first divergence; each sub-agent's).
- ``children.py``: the sub-agents of a tree, each replayed from its own journal.
- ``compare.py``: ``compare(recorded, replayed)`` finds that divergence (``Divergence``).
- ``normalize.py``: ``Normalizer``, what changes by itself from run to run (durations,
  temporary paths, pids), made alike before comparing; ``--normalize REGEX`` adds patterns.
- ``difference.py``: the first lines that differ, with context, cut around the difference.
- ``model.py``: ``ReplayModel``, a journal used as a model (``--model replay:TRACE``).
- ``rebuild.py``: what a replay rebuilds from ``run_start``: tools, limits, notes, all checked.
- ``workspace.py``: where the tools run (restored from the journal's snapshot, a checked
  temporary copy of the recorded workspace, or one given), never in the recorded one when
  they can write.
- ``start.py``: the workspace as the recorded run started (``run_start``'s ``workspace``, made
  by ``reactloop.journal.workspace_record``): restored, or compared with a folder.
- ``plan.py``: ``ReplayPlan``, what the replay runs again and what not, said before it runs.
"""

from reactloop.models.replay import ReplayModel
from reactloop.replay.compare import Divergence, compare
from reactloop.replay.plan import ReplayPlan
from reactloop.replay.report import ReplayReport
from reactloop.replay.rerun import replay

__all__ = ["Divergence", "ReplayModel", "ReplayPlan", "ReplayReport", "compare", "replay"]
