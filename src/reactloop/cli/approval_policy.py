"""Approving and going on in one command: ``reactloop resume TRACE --approve-pending`` and an
approval policy for the rest of the run (``--allow PATTERN`` with ``--defer-approval`` or
``--approve``).

What is decided is written into the journal first, as ``reactloop approve`` writes it: an
``approval`` event per pending call approved, and one ``approval`` event with the ``policy``
given (its mode and allow patterns). The journal records; the command line decides: a policy
read back from the journal is never applied by itself. A resume that does not give the
recorded patterns again runs without them (it asks, or defers, instead), and says so.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from rich.console import Console

from reactloop.approval import AllowRule
from reactloop.cli.approvers import user
from reactloop.cli.decisions import record_decisions, record_policy, recorded_policy, shown
from reactloop.errors import UsageError
from reactloop.journal.resume_point import ResumeState
from reactloop.limits import Limits
from reactloop.loop.settings import RunSettings
from reactloop.resume.checks import mismatch
from reactloop.resume.resume_run import prepare_resume, resumed_settings


def given_policy(options: Mapping[str, Any]) -> dict[str, Any] | None:
    """The policy of the command line: how calls are approved, and the patterns let through."""
    allow = list(options["allow"])
    if allow and not (options["approve"] or options["defer_approval"]):
        raise UsageError("--allow needs --approve or --defer-approval (who decides the rest)")
    for text in allow:
        AllowRule.parse(text)  # a bad pattern is refused before anything is written
    if not allow:
        return None
    return {"mode": "defer" if options["defer_approval"] else "ask", "allow": allow}


def check_resumable(
    settings: RunSettings, state: ResumeState, limits: Limits, *, force: bool, trace: Path
) -> None:
    """The agent's own check (``Agent.resume``'s), made before the decisions are written: a
    resume refused for another model or tool set leaves the journal as it was."""
    problem = (
        None if force else mismatch(resumed_settings(settings, state, limits), state.run_start)
    )
    if problem is not None:
        raise UsageError(f"cannot resume {trace}: {problem} (--force resumes anyway)")


def record_approvals(trace: Path, options: Mapping[str, Any], stderr: Console) -> None:
    """Write what the command line decided (pending calls approved, the policy), and say
    which recorded patterns are not in force because they were not given again."""
    recorded, state = prepare_resume(trace)
    policy = given_policy(options)
    _not_given_again(
        recorded_policy(recorded.events) or _run_policy(state.run_start), policy, stderr
    )
    who = options["who"] or user()
    if options["approve_pending"] and state.why == "awaiting_approval":
        for event in record_decisions(trace, (), deny=None, who=who):
            stderr.print(f"approved: {shown(event)}", markup=False)
    if policy is not None:
        record_policy(trace, policy, who=who)


def _run_policy(run_start: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The approval ``reactloop run`` recorded (``--allow`` with ``--defer-approval``)."""
    config = run_start.get("config")
    approval = config.get("approval") if isinstance(config, Mapping) else None
    return approval if isinstance(approval, Mapping) else None


def _not_given_again(
    recorded: Mapping[str, Any] | None, given: Mapping[str, Any] | None, stderr: Console
) -> None:
    patterns = recorded.get("allow") if recorded is not None else None
    now = set(given["allow"]) if given is not None else set()
    dropped = [p for p in patterns if p not in now] if isinstance(patterns, list) else []
    if dropped:
        shown = " ".join(f"--allow {str(p)!r}" for p in dropped)
        stderr.print(
            f"note: the journal records the allow list {shown}; it is not in force unless "
            "given again (the journal does not choose what runs)",
            markup=False,
        )
