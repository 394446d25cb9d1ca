"""What ``reactloop run``'s options build besides the model and the tools: the approver, the
answer checks (``--checklist``, ``--verify``), the typed answer (``--output-schema``), the price
(``--prices``), and the check of ``--tool-choice`` against the tools.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from reactloop.approval import TerminalApprover, defer_approval
from reactloop.cli.approvers import AllowOrDefer
from reactloop.cli.file_checks import check_input_file
from reactloop.cli.options import RunOptions
from reactloop.errors import UsageError
from reactloop.loop.completion_checks import read_checklist
from reactloop.output.json_schema import load_output_schema
from reactloop.tools.toolbox import Toolbox

TOOL_CHOICES = ("auto", "none", "required")


def answer_checks(options: RunOptions) -> dict[str, Any]:
    checks: dict[str, Any] = {}
    if options.checklist is not None:
        check_input_file(options.checklist, "checklist")
        checks["checklist"] = read_checklist(options.checklist)
    if options.verify is not None:
        if not options.verify.strip():
            raise UsageError("--verify is empty: give the command that must pass")
        from reactloop.loop.command_check import CommandCheck  # with the sandbox: only for --verify

        workspace = (options.workspace or Path.cwd()).resolve()
        checks["verify"] = CommandCheck(
            options.verify,
            workspace=workspace,
            mode=options.sandbox,
        )
    return checks


def typed_answer(options: RunOptions) -> Any:
    if options.output_schema is None:
        return None
    check_input_file(options.output_schema, "output schema")
    return load_output_schema(options.output_schema)


def check_tool_choice(choice: str, tools: Toolbox) -> None:
    names = [spec.name for spec in tools.specs]
    if choice not in TOOL_CHOICES and choice not in names:
        raise UsageError(
            f"--tool-choice {choice!r} is not {', '.join(TOOL_CHOICES)} or a tool name "
            f"({', '.join(names) or 'no tools'})"
        )


def price_of(options: RunOptions, model_name: str) -> Any:
    if options.prices is None:
        if options.max_cost is not None:
            raise UsageError("--max-cost needs a price table: --prices FILE.json")
        return None
    from reactloop.usage import PriceTable  # only for --prices

    found = PriceTable.from_file(options.prices).lookup(model_name)
    if found is None:
        if options.max_cost is not None:
            raise UsageError(f"no price for model {model_name!r} in {options.prices}")
        return None
    return found[1]


def approver(options: RunOptions) -> Any:
    if options.defer_approval:  # --allow: what it allows runs, the rest waits
        return AllowOrDefer(options.allow) if options.allow else defer_approval
    if not options.approve:
        return None
    return TerminalApprover(allow=list(options.allow))
