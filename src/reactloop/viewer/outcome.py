"""How a run's answer stands, for the page to say as plainly as its stop reason.

A ``final_answer`` is not always a clean one. A *forced* answer came from a call told to
answer now, without tools (a wind-down, the last word after a loop: the ``stop`` event's
``forced``). A completion check (``loop/completion_checks.py``) may have *refused* answers along
the way (``check`` events of kind ``verify`` with ``passed`` false), and when no further call
was possible the run ended with the refused answer: the answer *failed its check*. These are
the answers ``reactloop run`` exits 3 for.
"""

from __future__ import annotations

from dataclasses import dataclass

from reactloop.journal.warning_kinds import WarningKind
from reactloop.viewer.page_views import RunView


@dataclass(frozen=True, kw_only=True)
class Outcome:
    """``forced``, ``failed_check``: as above; ``refusals`` of ``verifies``: the completion
    checks that refused an answer, of all that ran; ``why_forced``: what told the model to
    answer now; ``refusal``: the last check's refusal, when the answer failed it."""

    answered: bool
    forced: bool = False
    failed_check: bool = False
    refusals: int = 0
    verifies: int = 0
    why_forced: str = ""
    refusal: str = ""

    @property
    def flagged(self) -> bool:
        """An answer to check before trusting it (``run``'s exit code 3)."""
        return self.answered and (self.forced or self.failed_check)

    def stop_css(self, reason: str) -> str:
        """A ``final_answer`` is green only when its answer is clean."""
        if reason != "final_answer":
            return "stop-other"
        return "stop-flagged" if self.flagged else "stop-final_answer"

    def answer_card(self) -> tuple[str, str] | None:
        """What is wrong with the answer, and the card's css class; None when nothing is."""
        if not self.flagged:
            return None
        flags = (("forced", self.forced), ("failed its check", self.failed_check))
        said = [word for word, on in flags if on]
        return ", ".join(said), "flag-bad" if self.failed_check else "flag-warn"


def outcome(view: RunView) -> Outcome:
    stop = view.stop or {}
    answered = stop.get("answer") is not None
    verifies = [c for step in view.steps for c in step.checks if c.kind == "verify"]
    refused = [c for c in verifies if not c.passed]
    failed = answered and bool(verifies) and not verifies[-1].passed
    return Outcome(
        answered=answered,
        forced=answered and stop.get("forced") is True,
        failed_check=failed,
        refusals=len(refused),
        verifies=len(verifies),
        why_forced=_why_forced(view),
        refusal=refused[-1].detail if failed else "",
    )


def _why_forced(view: RunView) -> str:
    """What ended the run early (a loop found, ...), else the wind-down notice the model was
    shown; an answer's failed check is not why it was forced."""
    stop = view.stop or {}
    if stop.get("error") and stop.get("stop_reason") != "final_answer":
        return str(stop["error"])
    for step in reversed(view.steps):
        for warning in step.warnings:
            if warning.kind == WarningKind.WIND_DOWN:
                return warning.message.rstrip(".")
    return "its last allowed call"
