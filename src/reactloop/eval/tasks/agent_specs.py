"""A task's sub-agents, as a JSONL suite line gives them (``agent_tree.py`` runs them)."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any


@dataclasses.dataclass(frozen=True, kw_only=True)
class SubAgent:
    name: str
    description: str
    tools: tuple[str, ...] = ("calculator",)
    instructions: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self) | {"tools": list(self.tools)}


def agents_from(value: Any) -> tuple[SubAgent, ...]:
    """A suite line's ``agents``; anything malformed is a ``ValueError`` naming it."""
    if value is None:
        return ()
    if not isinstance(value, list):
        raise ValueError("agents must be a list of objects")
    agents = []
    for item in value:
        if not isinstance(item, Mapping) or not isinstance(item.get("name"), str):
            raise ValueError("each of agents needs a 'name'")
        tools = item.get("tools", ["calculator"])
        if isinstance(tools, str):
            tools = [t for t in tools.split(",") if t.strip()]
        if not isinstance(tools, list) or not all(isinstance(t, str) for t in tools):
            raise ValueError(f"agent {item['name']!r}: tools must be a list of names")
        instructions = item.get("instructions")
        agents.append(
            SubAgent(
                name=item["name"],
                description=str(item.get("description") or f"Hand a task to {item['name']}."),
                tools=tuple(t.strip() for t in tools),
                instructions=instructions if isinstance(instructions, str) else None,
            )
        )
    return tuple(agents)
