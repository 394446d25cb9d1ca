"""What ``reactloop run`` records of itself in ``run_start``'s ``config``: its tools, model
spec and settings, approval, answer checks and price, for ``reactloop resume`` to rebuild the
run from (what resume may take from it alone: ``resume_trust.py``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from reactloop.cli.checks_record import checks_record, price_record
from reactloop.cli.model_record import model_record
from reactloop.cli.options import RunOptions
from reactloop.tools.skills import digests, load_skills


def run_config(
    options: RunOptions,
    families: tuple[str, ...],
    chosen: tuple[str, list[str] | None],
    price: Any,
) -> dict[str, Any]:
    """What ``reactloop resume`` rebuilds the run from: its tools, model settings, approval,
    and what it accepted as an answer and counted (``checks_record.py``)."""
    spec, checklist = chosen
    config: dict[str, Any] = {
        "tools": list(families),
        "notes": str(options.notes.resolve()) if options.notes else None,
        "workspace": str((options.workspace or Path.cwd()).resolve()),
        "read_only": options.read_only,
        "protocol": options.protocol,
        "tool_choice": options.tool_choice,
        "model_spec": model_spec(spec),
        "approval": approval_mode(options),
        "model_settings": model_record(options),
        "sandbox": options.sandbox,
        "checks": checks_record(options, checklist),
        "output_schema_file": (
            str(options.output_schema.resolve()) if options.output_schema else None
        ),
        "price": price_record(options.prices, price),
        "exit_zero_on_forced": options.exit_zero_on_forced,
    }
    if options.defer_tools:  # rebuilt by resume and replay (``tools/search.py``)
        config["defer_tools"] = list(options.defer_tools)
    config["tool_search"] = options.tool_search  # given again to resume (resume_trust.py)
    if options.skills:  # which skills the run trusted, and their text (``tools/skills.py``)
        config["skills"] = [str(folder.resolve()) for folder in options.skills]
        config["skill_digests"] = digests(load_skills(options.skills))
    if options.mcp or options.mcp_url or options.mcp_config:
        config["mcp"] = {
            "stdio": list(options.mcp),
            "urls": list(options.mcp_url),
            "config": str(options.mcp_config.resolve()) if options.mcp_config else None,
        }
    return config


def approval_mode(options: RunOptions) -> dict[str, Any] | None:
    """How calls with side effects were approved, for ``reactloop resume`` to go on alike."""
    if options.defer_approval:
        return {"mode": "defer", "allow": list(options.allow)}
    if options.approve:
        return {"mode": "ask", "allow": list(options.allow)}
    return None


def model_spec(spec: str) -> str:
    """The ``--model`` spec for ``reactloop resume``, a scripted model's file made absolute."""
    if spec.startswith("scripted:") and len(spec) > len("scripted:"):
        return "scripted:" + str(Path(spec[len("scripted:") :]).resolve())
    return spec
