"""What ``reactloop resume`` takes from the command line, never from the journal alone.

A journal is the model's record, and a model that could reach it could rewrite it. So the
journal may narrow what a resumed run does (its limits, its checks, the calls it declined),
but what starts a process, widens a permission or picks where the conversation goes comes from
the command line and the user's environment: the MCP servers are given again and must be the
recorded ones, the approval is given again, the sandbox is ``--sandbox`` (``auto``: the
strongest here), and a recorded base URL is sent to only when ``--base-url`` names it again.
A journal that disagrees is refused in one line, before anything starts.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from reactloop.approval import TerminalApprover, defer_approval
from reactloop.cli.approval_policy import AllowOrDefer
from reactloop.cli.record_place import check_out_of_reach
from reactloop.errors import UsageError
from reactloop.models import split_spec
from reactloop.models.registry import PROVIDERS
from reactloop.replay.rebuild import families_of, recorded_mcp, recorded_workspace


def check_reach(trace: Path, config: Mapping[str, Any], *, force: bool) -> None:
    """A journal that lies where its own run's tools could write (an older reactloop's
    ``./runs``) may have been rewritten by the model: refused unless ``--force``."""
    workspace = recorded_workspace(config)
    if force or workspace is None:
        return
    families = families_of(config)
    try:
        check_out_of_reach(trace, workspace, families, read_only=bool(config.get("read_only")))
    except UsageError:
        raise UsageError(
            f"the journal lies inside the run's workspace {workspace}, where its tools could "
            "have rewritten it: read it, then resume with --force"
        ) from None


def confirmed_mcp(options: Mapping[str, Any], config: Mapping[str, Any]) -> dict[str, Any] | None:
    """The MCP servers of ``--mcp``, ``--mcp-url`` and ``--mcp-config``, when they are the ones
    the run recorded; a journal that names others (or servers not given again) is refused."""
    recorded = recorded_mcp(config)
    given = _given_mcp(options)
    if recorded == given:
        return given
    if recorded is None:
        raise UsageError("the run started no MCP server; resume it without --mcp options")
    flags = " ".join(_as_flags(recorded))
    if given is None:
        raise UsageError(
            f"the run used MCP servers; reactloop starts none from a journal: give them again "
            f"({flags})"
        )
    raise UsageError(f"the MCP servers given differ from the run's ({flags})")


def _given_mcp(options: Mapping[str, Any]) -> dict[str, Any] | None:
    stdio, urls = list(options["mcp"]), list(options["mcp_url"])
    path = options["mcp_config"]
    if not (stdio or urls or path):
        return None
    return {"stdio": stdio, "urls": urls, "config": Path(path).resolve() if path else None}


def _as_flags(servers: Mapping[str, Any]) -> list[str]:
    flags = [f"--mcp {command!r}" for command in servers["stdio"]]
    flags += [f"--mcp-url {url}" for url in servers["urls"]]
    if servers["config"] is not None:
        flags.append(f"--mcp-config {servers['config']}")
    return flags


def resume_approver(options: Mapping[str, Any], config: Mapping[str, Any]) -> Any:
    """The approval the options give (``--allow`` patterns included: never the journal's; with
    ``--defer-approval`` they run what they allow and defer the rest). A
    run recorded with an approval is refused without one given again, so that resuming it never
    drops the question by accident."""
    if options["defer_approval"]:
        return AllowOrDefer(options["allow"]) if options["allow"] else defer_approval
    if options["approve"]:
        return TerminalApprover(allow=list(options["allow"]))
    recorded = config.get("approval")
    mode = recorded.get("mode") if isinstance(recorded, Mapping) else None
    if mode in ("ask", "defer"):
        flag = "--approve" if mode == "ask" else "--defer-approval"
        raise UsageError(
            f"the run approved calls with {flag}; give --approve or --defer-approval again "
            "(the journal does not choose how calls are approved)"
        )
    return None


def resume_spec(options: Mapping[str, Any], config: Mapping[str, Any], model: Any) -> str:
    """``--model``, else the recorded spec (``config.model_spec``, else ``run_start``'s model
    when it is a spec). A recorded spec that names a model file to load is not taken."""
    if options["model"]:
        return str(options["model"])
    for spec in (config.get("model_spec"), model):
        if isinstance(spec, str) and split_spec(spec)[0] in PROVIDERS and split_spec(spec)[1]:
            provider, name = split_spec(spec)
            if provider == "local" and ("/" in name or name.endswith(".gguf")):
                raise UsageError(
                    f"the run used the model file of {spec}; give --model again to load it"
                )
            return spec
    raise UsageError("the journal does not record its model spec: give --model SPEC")


def resume_base_url(options: Mapping[str, Any], config: Mapping[str, Any]) -> str | None:
    """``--base-url``; a run that recorded one is refused without it: the conversation goes
    only where the command line or the environment sends it."""
    given = options["base_url"]
    record = config.get("model_settings")
    recorded = record.get("base_url") if isinstance(record, Mapping) else None
    if given is None and isinstance(recorded, str) and recorded:
        raise UsageError(
            f"the run sent its requests to {recorded}; give --base-url {recorded} again to "
            "send the conversation there"
        )
    return given if isinstance(given, str) else None
