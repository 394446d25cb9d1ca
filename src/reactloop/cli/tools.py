"""``reactloop tools``: the tools a run would get, and the JSON Schema each sends."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import click

from reactloop.cli.file_checks import check_input_file
from reactloop.cli.mcp_options import mcp_options
from reactloop.cli.run_tools import run_search_mode, search_note
from reactloop.cli.usage_errors import CliError
from reactloop.errors import UsageError
from reactloop.models import ModelRequest, ModelSettings, resolve_model, split_spec
from reactloop.tools.base import Tool
from reactloop.tools.context import ToolContext
from reactloop.tools.mcp import open_mcp_tools
from reactloop.tools.registry import FAMILIES, build_tools, parse_families
from reactloop.tools.search import (
    SEARCH_MODES,
    SEARCH_TOOLS,
    ToolSearch,
    defer_matching,
    schema_tokens,
)
from reactloop.tools.skills import prompt, trusted_skills
from reactloop.tools.toolbox import Toolbox


@click.command(name="tools")
@click.option(
    "--tools",
    help=f"Tool families to show, comma-separated: {', '.join(FAMILIES)}; "
    "none (or '') for no built-in tool, e.g. MCP tools only. "
    "[default: calculator, plus lookup with --notes, as run]",
)
@click.option("--notes", type=click.Path(path_type=Path), help="JSON notes file for lookup.")
@click.option("--workspace", type=click.Path(path_type=Path), help="Folder for file tools.")
@click.option(
    "--defer-tools",
    multiple=True,
    metavar="PATTERN",
    help="Defer the tools whose names match, as run does: show what the model then sees.",
)
@click.option(
    "--context-tokens",
    type=click.IntRange(min=256),
    help="The context automatic tool search is a share of, as run's.",
)
@click.option(
    "--tool-search",
    type=click.Choice(SEARCH_MODES),
    default="auto",
    show_default=True,
    help="As run's: with --model, auto and native show the tools array as that provider is "
    "sent it when it searches itself.",
)
@click.option("--model", help="The model of --tool-search (anthropic:NAME, responses:NAME).")
@click.option("--skills", multiple=True, type=click.Path(path_type=Path), metavar="DIR")
@click.option("--trust-skills", is_flag=True, help="Trust the skills of --skills.")
@mcp_options
def list_tools(
    tools: str | None,
    notes: Path | None,
    workspace: Path | None,
    defer_tools: tuple[str, ...],
    context_tokens: int | None,
    tool_search: str,
    model: str | None,
    skills: tuple[Path, ...],
    trust_skills: bool,
    mcp: tuple[str, ...],
    mcp_url: tuple[str, ...],
    mcp_config: Path | None,
) -> None:
    """Print the tools as one JSON array: the schema each sends to the model.

    With tool search on (deferred tools), a line on stderr says which tools wait for
    search_tools; with --tool-search native and a --model that has a search of its own, the
    array is the provider's, the deferred tools marked defer_loading and its search tool
    last. Exit 0, or 2 on a usage error (an unknown tool family, a missing notes file)."""
    default = "calculator,lookup" if notes is not None else "calculator"
    try:
        families = parse_families(default if tools is None else tools)
        if notes is not None:
            check_input_file(notes, "notes file")
        if mcp_config is not None:
            check_input_file(mcp_config, "MCP config")
        searcher = shown_model(tool_search, model)
        context = ToolContext(notes=notes, workspace=workspace or Path.cwd())
        built = build_tools(families, context)
        reserved = [item.name for item in built]
        with open_mcp_tools(mcp, mcp_url, mcp_config, reserved=reserved) as external:
            every = defer_matching([*built, *external], defer_tools)
            loaded = trusted_skills(skills, trust_skills)
            mode = run_search_mode(tool_search, searcher, "auto")
            box = Toolbox(every, context_tokens=context_tokens, skills=loaded, tool_search=mode)
            specs = sent_tools(box, searcher)
    except (UsageError, ValueError) as exc:
        raise CliError(str(exc)) from None
    click.echo(json.dumps(specs, ensure_ascii=False, indent=2))
    note = search_note(tool_search, searcher, "auto", box)
    if note is not None:
        click.echo(note, err=True)
    if box.search is not None:
        native = box.search.native
        summary = native_summary(box.search) if native else search_summary(box.search, every)
        click.echo(summary, err=True)
    if box.skills is not None:  # what the instructions gain
        click.echo(prompt(list(box.skills.by_name.values())), err=True)


def shown_model(tool_search: str, spec: str | None) -> Any:
    """The model whose tools array ``--tool-search`` shows (built, never called: a key it
    would need is not asked for), or None (``own``, or ``auto`` without ``--model``)."""
    if tool_search == "own" or (tool_search == "auto" and spec is None):
        return None
    if spec is None:
        raise UsageError(
            "--tool-search native needs --model: only a provider's own search (anthropic:NAME, "
            "responses:NAME) decides what it is sent"
        )
    if split_spec(spec)[0] in ("local", "scripted"):  # a file to load, and no search of its own
        return spec
    return resolve_model(spec, ModelSettings(api_key="unused"))


def sent_tools(box: Toolbox, model: Any) -> list[dict[str, Any]]:
    """The toolbox's specs; with the provider's search, the tools array its adapter builds."""
    if not box.deferred:
        return [spec.to_dict() for spec in box.specs]
    request = ModelRequest(messages=[], tools=box.specs, deferred=box.deferred)
    return list(model.build_request(request)["tools"])


def search_summary(search: ToolSearch, tools: Iterable[Tool]) -> str:
    """One line: how many tools are deferred, and the schema tokens a request saves."""
    every = list(tools)
    deferred = [t for t in every if t.name in search.index.tools]
    sent = schema_tokens(t.spec for t in every if t.name not in search.index.tools)
    sent += schema_tokens(t.spec for t in search.pair)
    names = ", ".join(t.name for t in deferred[:8]) + (", ..." if len(deferred) > 8 else "")
    return (
        f"tool search on: {len(deferred)} deferred tools ({names}) wait for {SEARCH_TOOLS}; "
        f"about {sent} schema tokens a request instead of {schema_tokens(t.spec for t in every)}"
    )


def native_summary(search: ToolSearch) -> str:
    """One line: the deferred tools a provider's own search finds (``native``)."""
    names = list(search.index.tools)
    shown = ", ".join(names[:8]) + (", ..." if len(names) > 8 else "")
    return (
        f"tool search by the provider: {len(names)} deferred tools ({shown}) sent with "
        "defer_loading; its search tool comes last"
    )
