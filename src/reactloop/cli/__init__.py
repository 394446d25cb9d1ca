"""The ``reactloop`` command. ``run`` exits 0 with a clean answer, 1 without an answer, 2 on a
usage error (one line on stderr, no traceback), 3 with an answer that is forced or failed its
checks, 130 when interrupted; each command's ``--help`` states its own.

- ``app.py``: the group, one-line usage errors, finite floats, and ``COMMANDS``: each command's
  module, imported only when that command runs (start-up time, benchmarks/cli_startup.py);
- ``file_checks.py``: the checks on files commands read and write; ``record_place.py``: where
  journals go (out of the reach of the run's tools);
- ``options.py``: ``run``'s options, and the limits and model they build;
- ``run.py``: ``reactloop run``; ``run_agent.py``: what it does (the model first, then
  ``run_tools.py``: the toolbox, searched as ``--tool-search`` asks of that model;
  ``run_settings.py``: the approver, checks and price); ``console.py``: what it prints;
  ``exitcodes.py``: its exit code; ``unloaded.py``: the run of a model that failed to load;
- ``chat.py``: ``reactloop chat``, the same run as a conversation at a prompt;
- ``tools.py``: ``reactloop tools``; ``doctor.py``: ``reactloop doctor``; ``models.py``:
  ``reactloop models``; ``pull.py``: ``reactloop pull`` (the embedded models' weights, fetched
  ahead of time); ``eval.py``: ``reactloop eval`` (the model ladder, see ``reactloop.eval``);
- ``task_input.py``: where ``run`` reads its task (TASK, stdin, ``--task-file``);
- ``trace.py``: ``reactloop replay | view | cost``, the commands that read a journal;
- ``logs.py``: ``reactloop logs``, the runs folder one line a run; ``run_log.py``: that line's
  facts, read from a journal of any kind;
- ``resume.py``, ``approve.py``: ``reactloop resume | approve``; ``resume_trust.py``: what
  ``resume`` takes from the command line, never from the journal alone; ``decisions.py``: the
  decisions and the approval policy a person gives, appended to the journal;
  ``approval_policy.py``: ``resume``'s approvals and policy; ``approvers.py``: the approvers a
  command gives its runs (``--defer-approval --allow``, an MCP server's questions).
"""

from __future__ import annotations

from reactloop.cli.app import main

__all__ = ["main"]
