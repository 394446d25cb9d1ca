"""``Toolbox``: finds, validates, runs and reports tool calls. It never raises for a bad call.

Every way a call can go wrong (unknown tool, arguments that are not JSON, arguments that fail
validation, an exception inside the tool, output that is too long) becomes a ``ToolResult``
with ``ok=False`` or ``truncated=True`` — an observation for the model, never a crash.
"""

from __future__ import annotations

import functools
import json
import time
from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any

from reactloop.errors import ToolError
from reactloop.jsonfast import loads
from reactloop.messages import ToolCall, ToolResult, ToolSpec
from reactloop.tools.base import Tool

if TYPE_CHECKING:
    from pydantic import ValidationError

DEFAULT_MAX_OUTPUT_CHARS = 8000
_strict_dumps = json.JSONEncoder(ensure_ascii=False).encode


class Toolbox:
    """The tools of one agent, by name.

    ``max_output_chars`` caps what one result sends to the model: longer output keeps its head
    and tail, is marked ``truncated``, and is saved whole under ``spill_dir`` when one is set.
    """

    def __init__(
        self,
        tools: Iterable[Tool] = (),
        *,
        max_output_chars: int = DEFAULT_MAX_OUTPUT_CHARS,
        spill_dir: str | Path | None = None,
    ) -> None:
        self._tools: dict[str, Tool] = {}
        for item in tools:
            if item.name in self._tools:
                raise ValueError(f"two tools are named {item.name!r}")
            self._tools[item.name] = item
        self.max_output_chars = max_output_chars
        self.spill_dir = Path(spill_dir) if spill_dir is not None else None
        self._specs = tuple(t.spec for t in self._tools.values())

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def __len__(self) -> int:
        return len(self._tools)

    def get(self, name: str) -> Tool | None:
        return self._tools.get(name)

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(self._tools)

    @property
    def specs(self) -> tuple[ToolSpec, ...]:
        return self._specs

    def parse_arguments(self, call: ToolCall) -> dict[str, Any]:
        """The call's arguments as a dict; raises ToolError with a message for the model."""
        text = call.arguments.strip()
        if not text:
            return {}
        try:
            value = loads(text)
        except json.JSONDecodeError as exc:
            raise ToolError(
                f"arguments are not valid JSON ({exc.msg} at position {exc.pos}); "
                "send a JSON object"
            ) from None
        if not isinstance(value, dict):
            raise ToolError(f"arguments must be a JSON object, got {type(value).__name__}")
        return value

    def execute(self, call: ToolCall, arguments: dict[str, Any] | None = None) -> ToolResult:
        """Run one call; every failure becomes an error result.

        ``arguments`` are the call's arguments already parsed (by ``parse_arguments``), if so.
        """
        started = time.perf_counter()
        tool = self._tools.get(call.name)
        if tool is None:
            return self._error(call, self._unknown_tool_message(call.name), started, False)
        if arguments is None:
            try:
                arguments = self.parse_arguments(call)
            except ToolError as exc:
                return self._error(call, str(exc), started, False)
        try:
            output = tool.run(arguments)
        except _validation_error() as exc:
            return self._error(
                call, f"invalid arguments: {describe_validation(exc)}", started, False
            )
        except ToolError as exc:
            return self._error(call, str(exc), started, True)
        except KeyboardInterrupt:  # Ctrl-C stops the run
            raise
        except BaseException as exc:  # a tool bug, sys.exit included, is an observation
            return self._error(call, f"{type(exc).__name__}: {exc}", started, True)
        return self._success(call, output, started)

    def execute_many(
        self,
        calls: Sequence[ToolCall],
        arguments: Sequence[dict[str, Any] | None] | None = None,
    ) -> list[ToolResult]:
        """Run calls concurrently when all are read-only, else in order; results keep call order."""
        parsed = list(arguments) if arguments is not None else [None] * len(calls)
        if len(calls) == 1:
            return [self.execute(calls[0], parsed[0])]
        if len(calls) > 1 and all(self._parallel_safe(c) for c in calls):
            with ThreadPoolExecutor(max_workers=min(8, len(calls))) as pool:
                return list(pool.map(self.execute, calls, parsed))
        return [self.execute(c, a) for c, a in zip(calls, parsed, strict=True)]

    def _parallel_safe(self, call: ToolCall) -> bool:
        found = self._tools.get(call.name)
        return found is not None and found.read_only

    def is_read_only(self, name: str) -> bool:
        found = self._tools.get(name)
        return found is not None and found.read_only

    def _unknown_tool_message(self, name: str) -> str:
        available = ", ".join(self._tools) or "none"
        return f"unknown tool {name!r}; available tools: {available}"

    def _error(self, call: ToolCall, message: str, started: float, executed: bool) -> ToolResult:
        return ToolResult(
            call_id=call.id,
            name=call.name,
            ok=False,
            error=message,
            executed=executed,
            seconds=time.perf_counter() - started,
        )

    def _success(self, call: ToolCall, output: Any, started: float) -> ToolResult:
        try:
            output, text = _as_text(output)
        except Exception as exc:  # no text form: a huge int, a failing __str__, deep nesting
            message = f"the output cannot be shown ({type(exc).__name__}: {exc})"
            return self._error(call, message, started, True)
        truncated = len(text) > self.max_output_chars
        spill_path = None
        if truncated:
            spill_path = self._spill(call, text)
            output = cut_head_tail(text, self.max_output_chars)
        return ToolResult(
            call_id=call.id,
            name=call.name,
            ok=True,
            output=output,
            truncated=truncated,
            full_output_path=spill_path,
            seconds=time.perf_counter() - started,
        )

    def _spill(self, call: ToolCall, text: str) -> str | None:
        """Save the whole output; None when there is nowhere to, or saving fails (a full disk):
        the model still gets the head and the tail."""
        if self.spill_dir is None:
            return None
        safe_id = "".join(ch if ch.isalnum() or ch in "-_" else "_" for ch in call.id)
        path = self.spill_dir / f"{safe_id}-{call.name}.txt"
        try:
            self.spill_dir.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8", errors="backslashreplace")
        except OSError:
            return None
        return str(path)


def _as_text(output: Any) -> tuple[Any, str]:
    """The output as sent (JSON-able, else its ``str``) and its text, to measure its length."""
    if isinstance(output, str):
        return output, output
    if output is None or isinstance(output, bool | int | float):
        return output, str(output)  # short: only its length matters here
    try:
        return output, _strict_dumps(output)
    except (TypeError, ValueError):
        text = str(output)
        return text, text


@functools.cache
def _validation_error() -> type[ValidationError]:
    from pydantic import ValidationError  # pydantic loads on first use, not on import

    return ValidationError


def cut_head_tail(text: str, limit: int) -> str:
    """Keep the head and the tail of ``text`` within ``limit`` characters, marking the cut."""
    if len(text) <= limit:
        return text
    marker = f"\n[... {len(text) - limit} characters cut ...]\n"
    keep = max(limit - len(marker), 0)
    head = keep // 2
    tail = keep - head
    return text[:head] + marker + (text[-tail:] if tail else "")


def describe_validation(exc: ValidationError) -> str:
    parts = []
    for error in exc.errors():
        where = ".".join(str(p) for p in error.get("loc", ())) or "arguments"
        parts.append(f"{where}: {error.get('msg', 'invalid')}")
    return "; ".join(parts)
