"""The ``reactloop`` command. Exit 0 with an answer, 1 without, 2 on a usage error (one line on
stderr, no traceback), 130 when interrupted.

- ``app.py``: the group, one-line usage errors, finite floats;
- ``files.py``: the checks on files commands read and write, where journals go;
- ``options.py``: ``run``'s options, and the limits and model they build;
- ``run.py``: ``reactloop run``; ``runner.py``: what it does; ``console.py``: what it prints;
- ``tools.py``: ``reactloop tools``; ``doctor.py``: ``reactloop doctor``; ``eval.py``:
  ``reactloop eval`` (the model ladder, see ``reactloop.eval``);
- ``trace.py``: ``reactloop replay | view | cost``, the commands that read a journal.
"""

from __future__ import annotations

from reactloop.cli.app import main
from reactloop.cli.doctor import doctor
from reactloop.cli.eval import eval_command
from reactloop.cli.run import run
from reactloop.cli.tools import list_tools
from reactloop.cli.trace import cost, replay, view

for _command in (run, list_tools, doctor, eval_command, replay, view, cost):
    main.add_command(_command)

__all__ = ["main"]
