"""``reactloop tools``: the tools a run would get, and the JSON Schema each sends."""

from __future__ import annotations

import json
from pathlib import Path

import click

from reactloop.cli.file_checks import check_input_file
from reactloop.cli.mcp_options import mcp_options
from reactloop.cli.usage_errors import CliError
from reactloop.errors import UsageError
from reactloop.tools.base import ToolContext
from reactloop.tools.mcp import open_mcp_tools
from reactloop.tools.registry import FAMILIES, build_tools, parse_families
from reactloop.tools.search import defer_matching, search_summary
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
@click.option("--skills", multiple=True, type=click.Path(path_type=Path), metavar="DIR")
@click.option("--trust-skills", is_flag=True, help="Trust the skills of --skills.")
@mcp_options
def list_tools(
    tools: str | None,
    notes: Path | None,
    workspace: Path | None,
    defer_tools: tuple[str, ...],
    context_tokens: int | None,
    skills: tuple[Path, ...],
    trust_skills: bool,
    mcp: tuple[str, ...],
    mcp_url: tuple[str, ...],
    mcp_config: Path | None,
) -> None:
    """Print the tools as one JSON array: the schema each sends to the model.

    With tool search on (deferred tools), a line on stderr says which tools wait for
    search_tools. Exit 0, or 2 on a usage error (an unknown tool family, a missing notes
    file)."""
    default = "calculator,lookup" if notes is not None else "calculator"
    try:
        families = parse_families(default if tools is None else tools)
        if notes is not None:
            check_input_file(notes, "notes file")
        if mcp_config is not None:
            check_input_file(mcp_config, "MCP config")
        context = ToolContext(notes=notes, workspace=workspace or Path.cwd())
        built = build_tools(families, context)
        reserved = [item.name for item in built]
        with open_mcp_tools(mcp, mcp_url, mcp_config, reserved=reserved) as external:
            every = defer_matching([*built, *external], defer_tools)
            loaded = trusted_skills(skills, trust_skills)
            box = Toolbox(every, context_tokens=context_tokens, skills=loaded)
            specs = [spec.to_dict() for spec in box.specs]
    except (UsageError, ValueError) as exc:
        raise CliError(str(exc)) from None
    click.echo(json.dumps(specs, ensure_ascii=False, indent=2))
    if box.search is not None:
        click.echo(search_summary(box.search, every), err=True)
    if box.skills is not None:  # what the instructions gain
        click.echo(prompt(list(box.skills.by_name.values())), err=True)
