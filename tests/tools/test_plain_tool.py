"""``plain_tool``: the built-in tools without pydantic, exactly as if built by ``make_tool``."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from reactloop.tools.base import Tool, make_tool
from reactloop.tools.context import ToolContext
from reactloop.tools.plain import PlainTool, plain_tool
from reactloop.tools.registry import build_tools


def builtin_tools(tmp_path: Path) -> list[Tool]:
    notes = tmp_path / "notes.json"
    notes.write_text('{"a": 1}', encoding="utf-8")
    context = ToolContext(notes=notes, workspace=tmp_path)
    return build_tools(("calculator", "lookup", "files", "bash"), context)


def pydantic_twin(tool: Tool) -> Tool:
    return make_tool(tool.function, name=tool.name, description=tool.description)


def test_every_builtin_tool_is_plain_with_pydantics_schema_key_for_key(tmp_path: Path) -> None:
    tools = builtin_tools(tmp_path)
    assert len(tools) == 8 and all(isinstance(tool, PlainTool) for tool in tools)
    for tool in tools:
        twin = pydantic_twin(tool)
        assert json.dumps(tool.parameters) == json.dumps(twin.parameters), tool.name
        assert tool.spec == twin.spec


def test_a_scripted_run_imports_no_pydantic(tmp_path: Path) -> None:
    script = tmp_path / "s.json"
    call = {"name": "calculator", "arguments": {"expression": "2+3"}}
    script.write_text(json.dumps([{"tool_calls": [call]}, "5"]), encoding="utf-8")
    probe = (
        "import sys; from reactloop.cli import main\n"
        "try: main(['run', 'q', '--model', 'scripted:' + sys.argv[1], '--no-trace'])\n"
        "except SystemExit as e: print(e.code, sorted(m for m in sys.modules if 'pydantic' in m))"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe, str(script)], capture_output=True, text=True, check=True
    )
    assert done.stdout.splitlines()[-2:] == ["5", "0 []"], done.stderr


def sample(a: str, b: int = 3, c: float | None = None, d: bool = False) -> str:
    """A sample.

    Args:
        a: text
        b: a number
    """
    return f"{a}{b}{c}{d}"


def test_a_tool_with_other_parameter_types_is_an_ordinary_tool() -> None:
    def listed(items: list[str]) -> int:
        return len(items)

    assert not isinstance(plain_tool(listed), PlainTool)
    assert isinstance(plain_tool(sample), PlainTool)


def outcome(tool: Tool, arguments: dict[str, Any]) -> Any:
    try:
        return tool.validate(arguments)
    except ValidationError as exc:
        return ("invalid", [(e["loc"], e["msg"]) for e in exc.errors()])


values = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), st.text(max_size=5)
)
argument_dicts = st.dictionaries(st.sampled_from(["a", "b", "c", "d", "e"]), values, max_size=5)


@settings(max_examples=300, deadline=None)
@given(argument_dicts)
def test_validation_is_pydantics_for_any_arguments(arguments: dict[str, Any]) -> None:
    plain, twin = plain_tool(sample), make_tool(sample)
    assert outcome(plain, arguments) == outcome(twin, arguments)


def test_odd_arguments_get_pydantics_errors_and_coercions() -> None:
    tool = plain_tool(sample)
    assert tool.validate({"a": "x", "b": "4"})["b"] == 4  # lax like pydantic: "4" -> 4
    with pytest.raises(ValidationError, match="Extra inputs are not permitted"):
        tool.validate({"a": "x", "z": 1})
    with pytest.raises(ValidationError, match="Field required"):
        tool.validate({"b": 1})
    assert tool.validate({"a": "x"}) == {"a": "x", "b": 3, "c": None, "d": False}
