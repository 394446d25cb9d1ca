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


@click.command(name="tools")
@click.option(
    "--tools",
    help=f"Tool families to show, comma-separated: {', '.join(FAMILIES)}; "
    "none (or '') for no built-in tool, e.g. MCP tools only. "
    "[default: calculator, plus lookup with --notes, as run]",
)
@click.option("--notes", type=click.Path(path_type=Path), help="JSON notes file for lookup.")
@click.option("--workspace", type=click.Path(path_type=Path), help="Folder for file tools.")
@mcp_options
def list_tools(
    tools: str | None,
    notes: Path | None,
    workspace: Path | None,
    mcp: tuple[str, ...],
    mcp_url: tuple[str, ...],
    mcp_config: Path | None,
) -> None:
    """Print the tools as one JSON array: the schema each sends to the model."""
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
            specs = [item.spec.to_dict() for item in [*built, *external]]
    except UsageError as exc:
        raise CliError(str(exc)) from None
    click.echo(json.dumps(specs, ensure_ascii=False, indent=2))
