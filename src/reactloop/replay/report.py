"""``ReplayReport``: what a replay found: identical, or the first divergence; with the report of
each sub-agent it replayed from its own journal (``children.py``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from reactloop.replay.compare import Divergence
from reactloop.replay.plan import ReplayPlan
from reactloop.result import RunResult


@dataclass(frozen=True, kw_only=True)
class ReplayReport:
    """``identical`` holds for the whole tree: this run and every child in ``children``
    (``agent_path`` is the child's place, ``""`` for the replayed run itself)."""

    trace: str
    identical: bool
    compared: int
    divergence: Divergence | None = None
    result: RunResult | None = None
    notes: tuple[str, ...] = field(default_factory=tuple)
    plan: ReplayPlan | None = None
    agent_path: str = ""
    children: tuple[ReplayReport, ...] = ()

    def describe(self) -> str:
        lines = [f"identical ({self.compared} tool results compared)"] if self._own_same else []
        if self.divergence is not None:
            lines.append(self.divergence.describe())
        lines.extend(f"note: {note}" for note in self.notes)
        for child in self.children:
            lines.append(f"sub-agent {child.agent_path} ({child.trace}):")
            lines.extend(f"  {line}" for line in child.describe().splitlines())
        return "\n".join(lines)

    @property
    def _own_same(self) -> bool:
        return self.divergence is None

    def to_dict(self) -> dict[str, Any]:
        return {
            "trace": self.trace,
            "identical": self.identical,
            "compared": self.compared,
            "divergence": self.divergence.to_dict() if self.divergence else None,
            "stop_reason": str(self.result.stop_reason) if self.result else None,
            "answer": self.result.answer if self.result else None,
            "notes": list(self.notes),
            "plan": self.plan.to_dict() if self.plan else None,
            "agent_path": self.agent_path,
            "children": [child.to_dict() for child in self.children],
        }
