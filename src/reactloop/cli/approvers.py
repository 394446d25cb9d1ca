"""The approvers a command gives its runs, and who decided: ``AllowOrDefer`` (``--allow
PATTERN`` with ``--defer-approval``), ``question_answerer`` (who answers an MCP server's
question during a call), ``user``. Apart from ``approval_policy.py`` (a resume's policy, which
loads the resume machinery), so that ``reactloop run`` does not load that.
"""

from __future__ import annotations

import getpass
from collections.abc import Sequence
from typing import Any

from reactloop.approval import AllowRule, bash_command
from reactloop.tools.base import Tool
from reactloop.tools.prepared import Defer, PreparedCall


class AllowOrDefer:
    """The approver of ``--defer-approval --allow PATTERN``: a call the patterns allow runs,
    any other call with side effects waits (the run stops ``awaiting_approval``). A call that
    a resumed run must look at afresh (``note``: it may already have run) always waits."""

    def __init__(self, allow: Sequence[str]) -> None:
        self.rules = [AllowRule.parse(text) for text in allow]

    def __call__(self, call: PreparedCall, tool: Tool, note: str | None = None) -> bool | Defer:
        command = bash_command(call)
        if note is None and any(rule.allows(call.name, command) for rule in self.rules):
            return True
        return Defer()


def user() -> str:
    try:
        return getpass.getuser()
    except (OSError, KeyError):
        return "unknown"


def question_answerer(approve: bool, defer: bool) -> Any:
    """Who answers an MCP server's question during a call (``Elicit``): the terminal with
    ``--approve``; nobody now with ``--defer-approval`` (the call waits, as a deferred call
    does, for ``reactloop approve --answer``); without either, the client says it cannot be
    asked. Called once MCP servers are given (it loads their client's package)."""
    from reactloop.tools.mcp import ask_on_terminal, await_answer

    if defer:
        return await_answer
    return ask_on_terminal if approve else None
