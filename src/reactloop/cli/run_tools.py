"""The tools of a ``reactloop run`` (and ``chat``): the built-in families, the MCP servers'
tools, the deferred ones (``--defer-tools``) and who searches them (``--tool-search``).

The model is built first: the provider searches the deferred tools only where the model's
adapter has a search of its own and calls tools natively, with ``--tool-search auto`` (the
default) only if the model supports it too (``tools/search.py``: ``search_mode``, which
``Agent(tool_search=...)`` uses too); elsewhere the harness's ``search_tools`` and
``call_tool`` do, and for ``--tool-search native`` ``search_note`` says so.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from reactloop.agent_setup import pick_protocol
from reactloop.cli.approvers import question_answerer
from reactloop.cli.options import RunOptions
from reactloop.cli.unloaded import UnloadedModel
from reactloop.tools.base import Tool
from reactloop.tools.search import defer_matching, search_mode
from reactloop.tools.skills import Skill
from reactloop.tools.toolbox import Toolbox


def mcp_tools(
    options: RunOptions, reserved: list[str]
) -> contextlib.AbstractContextManager[list[Tool]]:
    """The tools of ``--mcp``, ``--mcp-url`` and ``--mcp-config`` (servers open until exit)."""
    if not (options.mcp or options.mcp_url or options.mcp_config):
        return contextlib.nullcontext([])
    configs = (options.mcp, options.mcp_url, options.mcp_config)
    return started_mcp(configs, reserved, options.approve, options.defer_approval)


def started_mcp(
    configs: tuple[Any, Any, Any], reserved: list[str], approve: bool, defer: bool
) -> contextlib.AbstractContextManager[list[Tool]]:
    """The MCP servers of ``configs`` (stdio commands, URLs, a config file) started, the
    built-in tools' names ``reserved``; a server's question answered as the approval options
    say (``run`` and ``resume`` alike)."""
    from reactloop.tools.mcp import open_mcp_tools  # asyncio: only for a run with MCP

    elicit = question_answerer(approve, defer)
    return open_mcp_tools(*configs, reserved=reserved, elicit=elicit)


def run_toolbox(
    tools: Sequence[Tool],
    options: RunOptions,
    model: Any,
    skills: Sequence[Skill],
    spill_dir: Path,
) -> Toolbox:
    """The run's toolbox: ``tools`` deferred as ``--defer-tools`` says, searched as
    ``--tool-search`` asks of ``model``."""
    return Toolbox(
        defer_matching(tools, options.defer_tools),
        spill_dir=spill_dir,
        context_tokens=options.context_tokens,
        skills=skills,
        tool_search=run_search_mode(options.tool_search, model, options.protocol),
    )


def run_search_mode(asked: str, model: Any, protocol: str) -> str:
    """``search_mode`` for the command line's ``--protocol`` (``auto`` resolved as the agent
    resolves it); a model that failed to load searches nothing of its own."""
    if isinstance(model, UnloadedModel):
        return "own"
    return search_mode(asked, model, pick_protocol(model, protocol))  # type: ignore[arg-type]


def search_note(asked: str, model: Any, protocol: str, tools: Toolbox) -> str | None:
    """One line when ``--tool-search native`` cannot be what serves the run: no tool is
    deferred, or the model has no search of its own (or calls tools in text)."""
    if asked != "native" or isinstance(model, UnloadedModel):
        return None
    if tools.search is None:
        return "--tool-search native: no tool is deferred (--defer-tools PATTERN): none is searched"
    if tools.search.native:
        return None
    if getattr(model, "native_tool_search", False) is not True:
        name = getattr(model, "name", model)  # ``reactloop tools``: a spec it did not build
        why = f"{name} has no tool search of its own (anthropic: and responses: models do)"
    else:
        why = "tools are called in text (--protocol text)"
    return f"--tool-search native: {why}; the harness's search_tools and call_tool serve"
