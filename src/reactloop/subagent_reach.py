"""What a sub-agent may reach: never more than the run that calls it (``subagents.run_child``).

Two modes hold down a tree, from each run to its children, and from them to theirs:

- **Read-only.** A run is read-only when its workspace tools were built read-only
  (``ToolContext(read_only=True)``, ``reactloop run --read-only``: the file tools without
  ``write_file`` and ``edit_file``, a ``bash`` whose workspace is mounted read-only) and none
  of its own tools has side effects. A child of a read-only run (or of any run below one)
  that could write — a tool with side effects, a ``bash`` with a writable workspace, an agent
  tool whose agent could write — is refused: a ``ValueError`` when the read-only agent is
  built (``refuse_wider``), and when the child is called, under its tree's ceiling, an error
  observation that names the tools, before any model of the child is asked.
- **The sandbox.** A child's ``bash`` never runs in a weaker sandbox than its parent's
  (``bwrap`` is stronger than ``auto``, which is stronger than ``weak``; a run without
  ``bash`` passes on the sandbox of the run above it): a child's ``bash`` configured weaker is
  narrowed to its parent's mode for that run, and says so in its description and in each
  command's ``sandbox``.

A run that sets neither mode (a coordinator whose only tools are agents, or plain tools
without side effects) puts no ceiling on its children: what they may do is what they were
built with, and each call with side effects a child makes is put to the root's approver.
The ceiling a child runs under is recorded in its ``run_start`` config (``reach``).
"""

from __future__ import annotations

import copy
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from reactloop.errors import ToolError
from reactloop.tools.base import Tool
from reactloop.tools.families.bash import Shell
from reactloop.tools.families.files import FileTools
from reactloop.tools.plain import plain_tool
from reactloop.tools.toolbox import Toolbox

if TYPE_CHECKING:
    from reactloop.agent import Agent

AGENT_KEY = "reactloop_agent"  # an agent tool's function holds its agent under this name
SANDBOXES = ("bwrap", "auto", "weak")  # the strongest first
WRITERS = ("write_file", "edit_file")  # the file tools' writing ones


@dataclass(frozen=True)
class Reach:
    """The most a run may do: ``read_only`` (nothing it runs may write), ``sandbox`` (the
    weakest sandbox its commands may run in; None: no ceiling)."""

    read_only: bool = False
    sandbox: str | None = None

    def within(self, other: Reach) -> Reach:
        """The narrower of the two, mode by mode."""
        sandboxes = [s for s in (self.sandbox, other.sandbox) if s in SANDBOXES]
        return Reach(
            self.read_only or other.read_only,
            min(sandboxes, key=SANDBOXES.index, default=None),
        )

    def to_dict(self) -> dict[str, Any]:
        return {"read_only": self.read_only, "sandbox": self.sandbox}

    @classmethod
    def recorded(cls, config: Mapping[str, Any]) -> Reach:
        """The ceiling a run was given (its config's ``reach``; none for a root)."""
        value = config.get("reach")
        if not isinstance(value, Mapping):
            return cls()
        sandbox = value.get("sandbox")
        return cls(value.get("read_only") is True, sandbox if sandbox in SANDBOXES else None)


def ceiling_of(toolbox: Toolbox, config: Mapping[str, Any]) -> Reach:
    """The ceiling for the children of a run with ``toolbox``, given its own (``config``)."""
    tools = list(_tools(toolbox))
    shells = [s for t in tools if (s := _shell(t)) is not None]
    files = [t for t in tools if isinstance(getattr(t.function, "__self__", None), FileTools)]
    marked = any(s.read_only for s in shells) or (
        bool(files) and not any(t.name in WRITERS for t in files)
    )
    own_writers = [t.name for t in tools if _writes(t) and agent_of(t) is None]
    modes = [s.mode for s in shells if s.mode in SANDBOXES]
    own = Reach(marked and not own_writers, max(modes, key=SANDBOXES.index) if modes else None)
    return own.within(Reach.recorded(config))


def fitted(name: str, toolbox: Toolbox, ceiling: Reach) -> Toolbox:
    """``toolbox`` for a child run under ``ceiling``: its ``bash`` narrowed to the ceiling's
    sandbox; a ``ToolError`` when the child could write under a read-only ceiling."""
    if ceiling.read_only:
        writers = sorted(_writers(toolbox, set()))
        if writers:
            raise ToolError(
                f"not run: {name} could write ({', '.join(writers)}), and the run that "
                "calls it is read-only: a sub-agent never gets more than its parent"
            )
    if ceiling.sandbox is None:
        return toolbox
    narrowed = {}
    for made in _tools(toolbox):
        shell = _shell(made)
        if shell is not None and _weaker(shell.mode, ceiling.sandbox):
            narrowed[made.name] = _narrowed(made, shell, ceiling.sandbox)
    return toolbox.with_tools(narrowed) if narrowed else toolbox


def refuse_wider(toolbox: Toolbox, config: Mapping[str, Any]) -> None:
    """A ``ValueError`` when a read-only agent has an agent tool whose agent could write (so
    that it fails when it is built; each child is checked again, under the ceiling of its
    whole tree, when it is called)."""
    if not ceiling_of(toolbox, config).read_only:
        return
    for made in _tools(toolbox):
        agent = agent_of(made)
        if agent is not None:
            try:
                fitted(made.name, agent.toolbox, Reach(read_only=True))
            except ToolError as exc:
                raise ValueError(str(exc).removeprefix("not run: ")) from None


def _narrowed(made: Tool, shell: Shell, mode: Any) -> Tool:
    own = copy.copy(shell)
    own.mode = mode
    return plain_tool(own.bash, name=made.name, description=own.description(), bounded=True)


def _weaker(mode: str, than: str) -> bool:
    return mode not in SANDBOXES or SANDBOXES.index(mode) > SANDBOXES.index(than)


def _writers(toolbox: Toolbox, seen: set[int]) -> Iterator[str]:
    """The tools of ``toolbox`` that could write, an agent tool's agent's followed down."""
    for made in _tools(toolbox):
        agent = agent_of(made)
        if agent is not None:
            if id(agent) not in seen:
                seen.add(id(agent))
                yield from (f"{made.name}: {n}" for n in _writers(agent.toolbox, seen))
        elif _writes(made):
            yield made.name


def _writes(made: Tool) -> bool:
    shell = _shell(made)
    return not shell.read_only if shell is not None else not made.read_only


def _tools(toolbox: Toolbox) -> Iterator[Tool]:
    """The tools an agent was given (not the harness's own: tool search's, skills')."""
    own: set[int] = set()
    if toolbox.search is not None:
        own.update(id(t) for t in toolbox.search.pair)
    if toolbox.skills is not None:
        own.add(id(toolbox.skills.tool))
    for name in toolbox.names:
        made = toolbox.get(name)
        if made is not None and id(made) not in own:
            yield made


def _shell(made: Tool) -> Shell | None:
    owner = getattr(made.function, "__self__", None)
    return owner if isinstance(owner, Shell) else None


def agent_of(made: Tool) -> Agent | None:
    """The agent an agent tool (``Agent.as_tool``) runs, or None for any other tool."""
    found = getattr(made.function, AGENT_KEY, None)
    return found if found is not None and hasattr(found, "toolbox") else None
