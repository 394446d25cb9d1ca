"""What ``reactloop resume`` (and ``replay``) take from the command line, never from the
journal alone.

A journal is the model's record, and a model that could reach it could rewrite it. So the
journal may narrow what a resumed run does (its limits, its checks, the calls it declined),
but what starts a process, widens a permission or picks where the conversation goes comes from
the command line and the user's environment: the MCP servers are given again and must be the
recorded ones, the approval is given again, the sandbox is ``--sandbox`` (``auto``: the
strongest here), a recorded base URL is sent to only when ``--base-url`` names it again, and
the tools (``trusted_config``: the families that write, run commands or reach the network,
``--read-only``, the workspace they write in, the notes file, the ``--verify`` command) are
the options given, which must be the recorded ones; so is the search ``--tool-search``
resolves to (not a permission, but the tools array the run's history was made with). A
journal that disagrees is refused in one line, before anything starts.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from reactloop.approval import TerminalApprover, defer_approval
from reactloop.cli.approvers import AllowOrDefer
from reactloop.cli.record_place import check_out_of_reach, check_sandbox_keeps_record
from reactloop.errors import UsageError
from reactloop.journal.reader import events_of
from reactloop.journal.writer import read_journal
from reactloop.models import split_spec
from reactloop.models.registry import PROVIDERS
from reactloop.replay.rebuild import (
    families_of,
    first_run,
    object_or_empty,
    recorded_mcp,
    recorded_workspace,
    run_start_of,
)
from reactloop.tools.registry import parse_families
from reactloop.tools.search import SEARCH_MODES

# The tool families a journal never chooses on its own word: they write, run commands or
# reach the network. ``calculator`` and ``lookup`` (which reads the notes file) it may.
REACHING_FAMILIES = ("files", "bash", "web")
_IN_WORKSPACE = ("files", "bash")  # the families that work in the workspace


def check_reach(
    trace: Path, config: Mapping[str, Any], *, force: bool, verb: str = "resume"
) -> None:
    """A journal that lies where its own run's tools could write (an older reactloop's
    ``./runs``) may have been rewritten by the model: refused unless ``--force`` (``verb``:
    the command that would go on, ``resume`` or ``approve``)."""
    workspace = recorded_workspace(config)
    if force or workspace is None:
        return
    families = families_of(config)
    try:
        check_out_of_reach(trace, workspace, families, read_only=bool(config.get("read_only")))
    except UsageError:
        raise UsageError(
            f"the journal lies inside the run's workspace {workspace}, where its tools could "
            f"have rewritten it: read it, then {verb} with --force"
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


def trusted_config(options: Mapping[str, Any], config: Mapping[str, Any]) -> dict[str, Any]:
    """The run's config with what the command line decides put in: the tool families
    (``--tools``), ``--read-only``, the workspace (``--workspace``, else the current folder),
    ``--notes``, ``--verify`` and ``--sandbox``; each must be what the run recorded, or the
    journal is refused. ``output_dir`` (a folder the harness would write in) is never taken."""
    families = confirmed_families(options["tools"], config)
    verify = confirmed_verify(options["verify"], config)
    trusted = {key: value for key, value in config.items() if key != "output_dir"}
    trusted["tools"] = list(families)
    trusted["read_only"] = confirmed_read_only(options["read_only"], config, families)
    trusted["notes"] = confirmed_notes(options["notes"], config, families)
    trusted["sandbox"] = options["sandbox"]
    if verify is not None or any(family in _IN_WORKSPACE for family in families):
        trusted["workspace"] = str(confirmed_workspace(options["workspace"], config))
    checks = config.get("checks")
    if isinstance(checks, Mapping):
        trusted["checks"] = {**checks, "verify": verify}
    return trusted


def confirmed_tool_search(given: str | None, config: Mapping[str, Any]) -> str:
    """The ``--tool-search`` a resumed run asks for: the one given, else ``auto`` (``own`` for
    a run that recorded none, an older reactloop's, whose default it was); a run that asked for
    ``native`` must ask again. That it resolves, for this model, to the search the run had (its
    ``tool_search_used``) is checked with the agent (``resume/checks.py``:
    ``search_differs``): the tools array goes on as the run's history was made with it."""
    recorded = config.get("tool_search")
    if recorded is not None and recorded not in SEARCH_MODES:
        raise UsageError(f"the journal's tool search is not one of {', '.join(SEARCH_MODES)}")
    if given is not None:
        return given
    if recorded == "native":
        raise UsageError(
            "the run chose its tool search with --tool-search native: give it again (the "
            "tools array goes on as the run's history was made with it)"
        )
    return "own" if recorded is None else "auto"


def check_replay_tools(trace: Path, tools: str | None, read_only: bool, sandbox: str) -> None:
    """``reactloop replay`` runs the recorded calls again: only with the tool families and
    ``--read-only`` the command line gives (the run's), never on the journal's word alone."""
    recorded, _ = first_run(read_journal(trace))
    config = object_or_empty(run_start_of(events_of(recorded, str(trace)), trace).config, "config")
    try:
        families = confirmed_families(tools, config)
        confirmed_read_only(read_only, config, families)
        check_sandbox_keeps_record(families, sandbox)
    except UsageError as exc:
        raise UsageError(f"cannot replay {trace}: {exc}") from None


def confirmed_families(given: str | None, config: Mapping[str, Any]) -> tuple[str, ...]:
    """The recorded tool families, when ``--tools`` names them again; without ``--tools``
    only a journal naming no family that writes, runs commands or reaches the network."""
    recorded = families_of(config)
    flag = f"--tools {','.join(recorded) or 'none'}"
    if given is None:
        reaching = [family for family in recorded if family in REACHING_FAMILIES]
        if reaching:
            raise UsageError(
                f"the run used the {' and '.join(reaching)} tools; a journal does not choose "
                f"tools that write, run commands or reach the network: give {flag} again"
            )
        return recorded
    if set(parse_families(given)) != set(recorded):
        raise UsageError(f"the tools given differ from the run's ({flag})")
    return recorded


def confirmed_read_only(given: bool, config: Mapping[str, Any], families: tuple[str, ...]) -> bool:
    """``--read-only``, which must be the run's when its tools work in the workspace."""
    recorded = bool(config.get("read_only"))
    if given == recorded or not any(family in _IN_WORKSPACE for family in families):
        return given
    if recorded:
        raise UsageError("the run's tools were read-only: give --read-only again")
    raise UsageError("the run's tools wrote in its workspace: go on without --read-only")


def confirmed_workspace(given: Path | None, config: Mapping[str, Any]) -> Path:
    """``--workspace``, else the current folder (as ``reactloop run``); it must be the folder
    the run worked in."""
    used = (given or Path.cwd()).resolve()
    recorded = recorded_workspace(config)
    if recorded is None or Path(os.path.realpath(recorded)) == used:
        return used
    flag = f"--workspace {shlex.quote(str(recorded))}"
    if given is None:
        raise UsageError(
            f"the run worked in {recorded}; a journal does not choose where tools work: "
            f"go on from there or give {flag}"
        )
    raise UsageError(f"the workspace given differs from the run's ({flag})")


def confirmed_notes(
    given: Path | None, config: Mapping[str, Any], families: tuple[str, ...]
) -> str | None:
    """``--notes`` (resolved), which must be the run's when it had ``lookup``."""
    used = str(given.resolve()) if given is not None else None
    recorded = config.get("notes") or None
    if "lookup" not in families or used == recorded:
        return used
    if recorded is None:
        raise UsageError("the run had no notes file: go on without --notes")
    flag = f"--notes {shlex.quote(str(recorded))}"
    if used is None:
        raise UsageError(f"the run looked up notes in {recorded}: give {flag} again")
    raise UsageError(f"the notes given differ from the run's ({flag})")


def confirmed_verify(given: str | None, config: Mapping[str, Any]) -> str | None:
    """``--verify``, which must be the run's: a journal's command is never run on its own
    word, since the model could have written it."""
    checks = config.get("checks")
    recorded = checks.get("verify") if isinstance(checks, Mapping) else None
    if given == recorded:
        return given
    if recorded is None:
        raise UsageError("the run had no --verify command: go on without --verify")
    if not isinstance(recorded, str):
        raise UsageError(f"the journal's verify command is not a string: {recorded!r:.80}")
    flag = f"--verify {shlex.quote(recorded)}"
    if given is None:
        raise UsageError(
            f"the run checked its answers with {flag}; reactloop runs no command from a "
            "journal: give it again"
        )
    raise UsageError(f"the --verify given differs from the run's ({flag})")
