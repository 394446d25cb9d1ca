"""What ``reactloop run`` records of its answer checks and its cost budget (``config.checks``,
``config.price``, ``config.sandbox``, ``config.exit_zero_on_forced``), and what ``reactloop
resume`` rebuilds from them, so that a resumed run accepts, refuses and counts as the
uninterrupted one would: the same ``--verify`` command (in the recorded workspace, in the
sandbox mode ``resume`` is given), the same ``--checklist`` items, the same
``--output-schema`` (the schema itself is in ``run_start.output_schema``), the same price for
``--max-cost`` (counted from the recorded usage), the same exit code for a forced answer.

A file's content is recorded, not only its path (the checklist's items, the schema, the price
the table gave the model): the run read each file once, at its start, so the resumed run goes
on with what the run had, whatever became of the file since. The paths are kept beside, for
the reader. No key is ever recorded.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from reactloop.errors import UsageError

if TYPE_CHECKING:
    from reactloop.usage.prices import Price


def checks_record(options: Any, checklist: list[str] | None) -> dict[str, Any] | None:
    """``config.checks``: the verify command and the checklist's items (None without)."""
    if options.verify is None and checklist is None:
        return None
    return {
        "verify": options.verify,
        "checklist": checklist,
        "checklist_file": str(options.checklist.resolve()) if options.checklist else None,
    }


def price_record(prices: Path | None, price: Price | None) -> dict[str, Any] | None:
    """``config.price``: the price ``--prices`` gave the model, and the table's path."""
    if prices is None:
        return None
    rates = dataclasses.asdict(price) if price is not None else None
    return {"file": str(prices.resolve()), "rates": rates}


def recorded_checks(config: Mapping[str, Any], workspace: Path | None, mode: str) -> dict[str, Any]:
    """``Agent``'s ``verify`` and ``checklist`` as the run had them; the verify command runs
    in the sandbox ``mode`` given now (a journal picks no sandbox mode)."""
    record = config.get("checks")
    if record is None:
        return {}
    if not isinstance(record, Mapping):
        raise UsageError(f"the journal's checks are not an object: {record!r:.80}")
    checks: dict[str, Any] = {}
    items = record.get("checklist")
    if items is not None:
        if not isinstance(items, list) or not all(isinstance(i, str) for i in items):
            raise UsageError(f"the journal's checklist is not a list of strings: {items!r:.80}")
        checks["checklist"] = items
    command = record.get("verify")
    if command is not None:
        if not isinstance(command, str):
            raise UsageError(f"the journal's verify command is not a string: {command!r:.80}")
        from reactloop.loop.command_check import CommandCheck  # with the sandbox: only for it

        checks["verify"] = CommandCheck(
            command,
            workspace=workspace or Path.cwd(),
            mode=mode,  # type: ignore[arg-type]
        )
    return checks


def recorded_price(config: Mapping[str, Any]) -> Price | None:
    """The price the run counted its cost with (None: it had none)."""
    record = config.get("price")
    rates = record.get("rates") if isinstance(record, Mapping) else None
    if rates is None:
        return None
    if not isinstance(rates, Mapping):
        raise UsageError(f"the journal's price is not an object: {rates!r:.80}")
    from reactloop.usage.prices import Price  # only for a run that counted a cost

    try:
        values: dict[str, Any] = {str(k): _rate(v) for k, v in rates.items()}
        return Price(**values)
    except TypeError as exc:
        raise UsageError(f"the journal's price is invalid: {exc}") from None


def _rate(value: Any) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TypeError(f"{value!r} is not a number")
    return float(value)


def recorded_output_type(start: Mapping[str, Any]) -> Any:
    """The output type of ``--output-schema``: the schema ``run_start`` recorded."""
    schema = start.get("output_schema")
    if schema is None:
        return None
    from reactloop.output.json_schema import JSONSchema  # jsonschema: only for a schema

    try:
        return JSONSchema(schema)
    except UsageError as exc:
        raise UsageError(f"the journal's output schema: {exc}") from None
