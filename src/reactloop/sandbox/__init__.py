"""Confinement for tools: file access beneath a workspace, and sandboxed commands.

- ``run_command`` (``command.py``): one shell command in bubblewrap when it works here, else in
  the weak mode (see docs/sandbox.md), with a timeout, resource caps and a disk budget;
- ``ResourceLimits`` (``rlimits.py``): those caps; ``sandbox_mode`` says which mode a call gets;
- ``Workspace`` (``paths.py``): open files and folders beneath a root, whatever the path says;
  ``path_checks.py``: what it refuses, by a path's text or an open descriptor;
- the rest, by job: ``bwrap.py`` (the strong mode), ``launch.py`` and ``supervisor.py`` (the weak
  mode's process), ``pidns.py``, ``weak.py``, ``mounts.py``, ``cgroup.py``, ``caps.py``,
  ``landlock.py`` (what confines it), ``disk_budget.py`` (the disk budget) and ``reclaim.py``
  (what a command stopped by it gives back), ``command_output.py`` (bounded capture of output),
  ``openat2.py`` (resolving beneath a folder).

Nothing here is loaded by ``import reactloop``.
"""

from __future__ import annotations

from reactloop.sandbox.command import CommandResult, run_command, sandbox_mode
from reactloop.sandbox.paths import Workspace
from reactloop.sandbox.rlimits import ResourceLimits

__all__ = ["CommandResult", "ResourceLimits", "Workspace", "run_command", "sandbox_mode"]
