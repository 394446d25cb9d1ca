"""A call's approval asked of the run's approver, under the run's deadline (``custody.py``).

``asked``: the approver's answer (``True``, a ``Defer``, or why it declined), or what made it
fail as a reason to decline. A Ctrl-C at its question propagates: the run ends ``cancelled``.
"""

from __future__ import annotations

from reactloop.errors import describe_exception
from reactloop.loop.runtime.custody import RunTaken, waiting
from reactloop.support.interrupts import interruptibly
from reactloop.tools.base import Tool
from reactloop.tools.prepared import Approver, PreparedCall


def asked(approve: Approver, prepared: PreparedCall, tool: Tool, deadline: float | None) -> object:
    """What ``approve`` answered for ``prepared``; a failing approver declines (``SystemExit``
    included). A run taken from this thread while it waited (the time limit, or Ctrl-C in the
    thread that took it) ends here: nothing of it is reported again."""
    try:
        what = f"the approval of {prepared.name}"
        return waiting(what, deadline, interruptibly, approve, prepared, tool)
    except (KeyboardInterrupt, RunTaken):
        raise
    except BaseException as exc:
        return f"the approval check failed ({describe_exception(exc)})"
