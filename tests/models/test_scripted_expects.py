"""A scripted turn with ``expects`` is played only after an observation that contains it: a
scripted "all tests pass" after ``No module named pytest`` stops the run instead (issue 37)."""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers import add, call_turn, invoke, script
from reactloop import Agent, ScriptedModel
from reactloop.errors import UsageError


def test_a_turn_whose_expected_text_was_observed_is_played() -> None:
    turns = [call_turn("add", a=2, b=3), {"expects": "5", "content": "It is 5."}]
    result = Agent(ScriptedModel(turns), [add]).run("2 + 3?")
    assert (result.answer, str(result.stop_reason)) == ("It is 5.", "final_answer")


def test_a_turn_whose_expected_text_was_not_observed_stops_the_run_and_quotes_it() -> None:
    turns = [call_turn("add", a=2, b=2), {"expects": "5", "content": "It is 5."}]
    result = Agent(ScriptedModel(turns), [add]).run("2 + 3?")
    assert result.answer is None and str(result.stop_reason) == "model_error"
    assert result.error == (
        "script turn 1 expects the last observation to contain '5'; "
        'it was: {"ok": true, "output": 4}'
    )
    first = Agent(ScriptedModel([{"expects": "5", "content": "5"}]), [add]).run("2 + 3?")
    assert (
        first.error == "script turn 0 expects the last observation to contain '5'; there was none"
    )


def test_on_the_command_line_it_exits_1_with_the_reason(tmp_path: Path) -> None:
    spec = script(tmp_path, [{"expects": "4 passed", "content": "All tests pass."}])
    code, out, err = invoke("run", "q", "--model", spec, "--protocol", "native", "--no-trace")
    assert (code, out) == (1, "")
    assert "No answer (script turn 0 expects the last observation to contain '4 passed'" in err


def test_expects_must_be_text(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    path.write_text('[{"expects": 4, "content": "x"}]', encoding="utf-8")
    with pytest.raises(UsageError, match="turn 0: expects must be a string"):
        ScriptedModel.from_file(path)
