"""Reading journals written before a field existed: the one place that reads prose.

COMPATIBILITY PATH. A ``tool_result`` written before ``ToolResult.not_run`` existed says why
its call did not run only in its error text; ``not_run_of`` reads that text, here and
nowhere else, so that such a journal resumes as it did. A result that has the field is read
by the field alone. Rewording an error the loop writes today changes nothing here: these
are the spellings of the versions that wrote no field, frozen.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, cast

from reactloop.messages import NotRun

# The spellings of the versions without the field, by the ``not_run`` they stand for; the
# first prefix that matches wins.
_OLD_ERRORS: tuple[tuple[str, NotRun], ...] = (
    ("not executed: the reply was cut off", "reply_cut_off"),
    ("not executed: the reply could not be read", "reply_unreadable"),
    ("not executed: ", "stopped"),
    ("not run: the tool call limit", "tool_call_limit"),
    ("not run: the time limit", "time_limit"),
    ("not run: loop detected (", "loop_detected"),
    ("not run: the run stopped (", "run_stopped"),
    ("not run: the run was cancelled at its approval", "cancelled"),
    ("cancelled: the run was cancelled before it ran", "cancelled"),
    ("not run again: ", "uncertain"),
)


def not_run_of(result: Mapping[str, Any], content: str = "") -> NotRun | None:
    """Why the call of a ``tool_result`` (its ``result``, and the ``content`` the model saw)
    did not run; None: it ran (or it is not a refusal the loop reads back, a decline say)."""
    if "not_run" in result:
        value = result["not_run"]
        return cast(NotRun, value) if isinstance(value, str) else None
    error = result.get("error")
    if error is None:  # as the model saw it
        error = _error_in(content)
    if not isinstance(error, str):
        return None
    for prefix, not_run in _OLD_ERRORS:
        if error.startswith(prefix):
            return not_run
    return None


def _error_in(content: str) -> Any:
    try:
        body = json.loads(content)
    except ValueError:
        return None
    return body.get("error") if isinstance(body, dict) else None
