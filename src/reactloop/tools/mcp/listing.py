"""A server's tool listing: what it may hold, and its schemas made ready within its time.

A listed tool's input schema may have at most ``MAX_SCHEMA_CHARS`` characters of JSON and
``MAX_SCHEMA_DEPTH`` levels of nesting, and a listing's names, descriptions and schemas
``MAX_LISTING_CHARS`` together (a description goes to the model with every request); a
listing past a bound is refused with the tool's name and the bound. Checking and normalising
a schema (``inline_schema``: its check against the meta-schema costs about a
millisecond a property) counts against the listing's time limit, as listing does: the
deadline is checked before each tool, so the listing ends within the limit plus one schema's
work (a bounded one: 256 KiB of properties take about 2 s).

A listing nested too deep for the MCP SDK to decode (past about 200 levels) is read by
``deep_listing`` before the SDK sees it (``stdio.py``), so that it too names its tool.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from reactloop.models.schemas.dialects import dialect_schema, inline_schema
from reactloop.support.json_decode import nesting_exceeds

MAX_SCHEMA_CHARS = 256 * 1024
MAX_LISTING_CHARS = 4 * 1024 * 1024
MAX_SCHEMA_DEPTH = 100
LISTING_DEPTH = MAX_SCHEMA_DEPTH + 5  # the answer's own levels: {result: {tools: [{inputSchema


class ListingRefused(Exception):
    """A listing past a bound; the message says which tool, and the bound."""


@dataclass(frozen=True)
class Listed:
    """A listed tool (the SDK's ``Tool``) with its schema's exact and portable forms."""

    item: Any
    schema: dict[str, Any]
    wrapped: bool
    portable: dict[str, Any]


class ListingBounds:
    """The running total of a listing's schemas, checked page by page."""

    def __init__(self) -> None:
        self.chars = 0

    def check(self, items: Iterable[Any]) -> None:
        for item in items:
            self.chars += schema_chars(item.name, item.input_schema) + _text_chars(item)
            if self.chars > MAX_LISTING_CHARS:
                raise ListingRefused(
                    f"lists tools whose names, descriptions and input schemas come to more "
                    f"than {MAX_LISTING_CHARS:,} characters (the limit of a listing; passed at "
                    f"the tool {item.name!r})"
                )


def _text_chars(item: Any) -> int:
    return sum(len(text) for text in (item.name, item.title, item.description) if text)


def schema_chars(name: str, schema: Any) -> int:
    """The length of ``schema``'s JSON text; ``ListingRefused`` past a bound."""
    text = json.dumps(schema, ensure_ascii=False, separators=(",", ":"))
    if len(text) > MAX_SCHEMA_CHARS:
        raise ListingRefused(
            f"lists the tool {name!r} with an input schema of {len(text):,} characters of "
            f"JSON, more than the limit of {MAX_SCHEMA_CHARS:,}"
        )
    if nesting_exceeds(text, MAX_SCHEMA_DEPTH):
        raise too_deep(name)
    return len(text)


def too_deep(name: str) -> ListingRefused:
    return ListingRefused(
        f"lists the tool {name!r} with an input schema nested deeper than "
        f"{MAX_SCHEMA_DEPTH} levels (the limit of a tool's schema)"
    )


def prepared(items: list[Any], dialect: str, deadline: float, limit: str) -> list[Listed]:
    """Each tool's schema in its exact and ``dialect`` forms, made before ``deadline``
    (``time.monotonic()``); ``limit`` says what the deadline is, for the error."""
    done: list[Listed] = []
    for item in items:
        if time.monotonic() > deadline:
            raise ListingRefused(
                f"listed {len(items)} tools, but checking their schemas took longer than "
                f"the listing limit of {limit} (at the tool {item.name!r})"
            )
        schema, wrapped = inline_schema(item.input_schema)
        done.append(Listed(item, schema, wrapped, dialect_schema(schema, dialect)))
    return done


_TOKEN = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}]', re.S)
_KEY = re.compile(r"\s*:")
_ID = re.compile(r'\s*:\s*(-?[0-9]+|"[^"\\]*(?:\\.[^"\\]*)*")', re.S)
_TOOL_PATH = [None, "result", "tools", None]  # the keys of the containers around a tool


@dataclass
class _Scan:
    ident: Any = None
    keys: list[Any] | None = None  # the key each open container sits under
    key: Any = None  # the key just read, for the container or value after it
    name: str | None = None  # of the tool being read
    deepest: int = 0  # of its input schema
    too_deep: str | None = None


def deep_listing(line: str) -> tuple[Any, str] | None:
    """``(id, tool name)`` when ``line`` answers a tool listing with a tool whose input
    schema nests deeper than ``MAX_SCHEMA_DEPTH`` levels, read without decoding it (it may
    be nested too deep for any decoder); None for any other line."""
    scan = _Scan(keys=[])
    for match in _TOKEN.finditer(line):
        token = match.group()
        if token[0] == '"':
            _string(scan, line, token, match.end())
        elif token in "[{":
            _open(scan)
        else:
            _close(scan)
        if scan.too_deep is not None and scan.ident is not None:
            return scan.ident, scan.too_deep
    return None


def _string(scan: _Scan, line: str, token: str, end: int) -> None:
    assert scan.keys is not None
    if not _KEY.match(line, end):  # a value
        if scan.key == "name" and scan.keys == _TOOL_PATH:
            scan.name = _value(token)
        scan.key = None
        return
    scan.key = _value(token)
    if scan.key == "id" and len(scan.keys) == 1:
        found = _ID.match(line, end)
        scan.ident = _value(found.group(1)) if found else None


def _open(scan: _Scan) -> None:
    assert scan.keys is not None
    scan.keys.append(scan.key)
    scan.key = None
    if len(scan.keys) > 4 and scan.keys[:4] == _TOOL_PATH and scan.keys[4] == "inputSchema":
        scan.deepest = max(scan.deepest, len(scan.keys) - 4)


def _close(scan: _Scan) -> None:
    assert scan.keys is not None
    if scan.keys == _TOOL_PATH:  # the end of a tool
        if scan.deepest > MAX_SCHEMA_DEPTH and scan.too_deep is None:
            scan.too_deep = scan.name if scan.name is not None else "(without a name)"
        scan.name, scan.deepest = None, 0
    if scan.keys:
        scan.keys.pop()
    scan.key = None


def _value(token: str) -> Any:
    """A string or number token's value; its text when it is not valid JSON (``"\\1"``)."""
    try:
        return json.loads(token)
    except ValueError:
        return token
