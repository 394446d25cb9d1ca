"""``--tool-search auto``, the default of ``reactloop run``, ``chat`` and ``tools``: the
provider's own search where the model supports it, the harness's pair elsewhere."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from helpers import invoke, script
from reactloop import read_journal


@pytest.mark.parametrize(
    ("model", "shown"),
    [
        ("anthropic:claude-sonnet-4-5", ["calculator", "lookup", "tool_search_tool_bm25"]),
        ("anthropic:claude-sonnet-4-20250514", ["calculator", "search_tools", "call_tool"]),
        ("responses:gpt-5.4", ["calculator", "lookup", None]),
        ("responses:gpt-5", ["calculator", "search_tools", "call_tool"]),
        ("openai:gpt-5.4", ["calculator", "search_tools", "call_tool"]),
        (None, ["calculator", "search_tools", "call_tool"]),
    ],
)
def test_tools_shows_what_the_default_sends(
    tmp_path: Path, model: str | None, shown: list[str | None]
) -> None:
    notes = tmp_path / "notes.json"
    notes.write_text(json.dumps({"price": "7"}))
    flags = ("tools", "--notes", str(notes), "--defer-tools", "lookup")
    code, out, err = invoke(*flags, *(("--model", model) if model else ()))
    assert code == 0, err
    assert [t.get("name") for t in json.loads(out)] == shown
    assert "--tool-search native" not in err  # auto picks without a word


def test_run_records_the_search_asked_and_the_one_used(tmp_path: Path) -> None:
    trace = tmp_path / "t.jsonl"
    model = script(tmp_path, ["Finish[7]"])
    code, _, err = invoke(
        "run", "q", "--model", model, "--defer-tools", "calc*", "--trace", str(trace)
    )
    assert code == 0, err
    config = next(e for e in read_journal(trace) if e["type"] == "run_start")["config"]
    assert config["tool_search"] == "auto"
    assert config["tool_search_used"] == {"mode": "own", "deferred": ["calculator"]}
