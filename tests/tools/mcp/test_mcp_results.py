"""An MCP result reaches the model once: structured content that says nothing the text does not
is not sent beside it again (``tools/mcp/results.py``)."""

from __future__ import annotations

import json
from types import SimpleNamespace
from typing import Any

from reactloop.tools.mcp.results import convert_result

FILE = "line one\n" * 700  # about 6 KB, as a file read through server-filesystem


def _result(text: str | None, structured: Any) -> SimpleNamespace:
    blocks = [] if text is None else [SimpleNamespace(type="text", text=text)]
    return SimpleNamespace(content=blocks, structured_content=structured, is_error=False)


def test_the_filesystem_server_s_file_is_sent_once() -> None:
    output = convert_result(_result(FILE, {"content": FILE}), "files")
    assert output == FILE
    assert len(json.dumps(output)) < len(FILE) * 1.2


def test_a_python_sdk_server_s_wrapped_value_is_unwrapped() -> None:
    assert convert_result(_result("42", {"result": 42}), "py") == 42
    assert convert_result(_result("hi", {"result": "hi"}), "py") == "hi"


def test_structured_content_that_says_more_is_kept_beside_the_text() -> None:
    structured = {"content": FILE, "size": len(FILE)}
    output = convert_result(_result(FILE, structured), "files")
    assert output == {"structured_content": structured, "text": FILE}
    named = {"temperature": "20"}  # the field's name says what the number is
    assert convert_result(_result("20", named), "w") == {"structured_content": named, "text": "20"}
    other = {"content": "something else"}
    assert convert_result(_result(FILE, other), "f") == {"structured_content": other, "text": FILE}


def test_structured_content_that_is_the_text_s_json_is_sent_alone() -> None:
    structured = {"a": 1, "b": [True, None]}
    assert convert_result(_result(json.dumps(structured), structured), "s") == structured
    assert convert_result(_result(None, structured), "s") == structured
