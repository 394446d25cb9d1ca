"""Tasks, checks and JSONL suites: what counts as solved, what a bad line says."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from reactloop.errors import UsageError
from reactloop.eval import Task, check_answer, load_suite, load_tasks
from reactloop.eval.run.oracle import plan, total
from reactloop.eval.tasks.bet_tools import convert_currency, get_current_weather
from reactloop.eval.tasks.tasks import last_number, task_from_dict


def test_last_number_reads_thousands_separators_and_decimals() -> None:
    assert last_number("17 * 23 = 391, plus 460 gives 1,234.5 in total") == 1234.5
    assert last_number("the total is -42.") == -42
    assert last_number("no digits here") is None
    assert last_number("about 1e3 units") == 1000


@given(st.floats(allow_nan=False, allow_infinity=False, width=64), st.text(max_size=40))
def test_last_number_finds_a_number_written_last(value: float, prefix: str) -> None:
    text = f"{prefix} answer: {value!r}"
    assert last_number(text) == pytest.approx(value, rel=1e-12, abs=1e-300)


def test_number_check_and_trajectory_checks() -> None:
    task = Task(id="t", task="q", expected=420, must_call=("lookup",), must_not_call=("bash",))
    ok = check_answer(task, "It costs 420.", called=["lookup"], attempted=["lookup"])
    assert ok.passed
    assert not check_answer(task, "It costs 421.", called=["lookup"], attempted=["lookup"]).passed
    missing = check_answer(task, "420", called=[], attempted=["lookup"])
    assert (missing.passed, missing.detail) == (False, "lookup was never called")
    forbidden = check_answer(task, "420", called=["lookup"], attempted=["lookup", "bash"])
    assert (forbidden.passed, forbidden.detail) == (False, "bash was called")
    assert not check_answer(task, None, called=["lookup"]).passed


def test_exact_contains_and_command_checks(tmp_path: Path) -> None:
    exact = Task(id="e", task="q", expected="Paris", check="exact")
    assert check_answer(exact, " Paris\n").passed and not check_answer(exact, "paris").passed
    contains = Task(id="c", task="q", expected=["lost", "did not win"], check="contains")
    assert check_answer(contains, "Sorry, you DID NOT WIN.").passed
    assert not check_answer(contains, "You won 108.5 USD").passed
    (tmp_path / "flag").write_text("x")
    command = Task(id="k", task="q", expected=None, check="command", command="test -f flag")
    assert check_answer(command, None, workspace=tmp_path).passed
    (tmp_path / "flag").unlink()
    assert not check_answer(command, "done", workspace=tmp_path).passed


def test_load_tasks_reads_a_user_suite(tmp_path: Path) -> None:
    (tmp_path / "notes.json").write_text('{"a": "2"}')
    lines = [
        {"id": "one", "task": "What is 2+2?", "expected": 4},
        {
            "id": 2,
            "task": "Look up a",
            "expected": "2",
            "notes": "notes.json",
            "tools": "lookup,calculator",
            "must_call": ["lookup"],
        },
        {
            "id": "three",
            "task": "Say hi",
            "expected": ["hi", "hello"],
            "check": "contains",
            "tools": [],
        },
    ]
    suite = tmp_path / "suite.jsonl"
    suite.write_text("\n".join(json.dumps(line) for line in lines) + "\n\n")
    tasks = load_tasks(suite)
    assert [t.id for t in tasks] == ["one", "2", "three"]
    assert tasks[0].tools == ("calculator",) and tasks[0].check == "number"
    assert tasks[1].notes == {"a": "2"} and tasks[1].tools == ("lookup", "calculator")
    assert tasks[2].tools == () and tasks[2].expected == ["hi", "hello"]
    assert load_suite(str(suite)) == tasks


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("not json", "line 1:"),
        ('{"task": "q", "expected": 1}', "non-empty 'id'"),
        ('{"id": "a", "task": "q"}', "needs 'expected'"),
        ('{"id": "a", "task": "q", "expected": "many"}', "must be a number"),
        ('{"id": "a", "task": "q", "expected": 1, "check": "regex"}', "check must be one of"),
        ('{"id": "a", "task": "q", "expected": 1, "tools": [1]}', "list of names"),
        ('{"id": "a", "task": "q", "expected": 1, "notes": [1]}', "notes must be an object"),
        ("[1, 2]", "must be a JSON object"),
    ],
)
def test_a_bad_task_line_is_a_usage_error_naming_it(
    tmp_path: Path, line: str, message: str
) -> None:
    suite = tmp_path / "bad.jsonl"
    suite.write_text(line + "\n")
    with pytest.raises(UsageError, match=message):
        load_tasks(suite)


def test_duplicate_ids_and_empty_suites_are_refused(tmp_path: Path) -> None:
    suite = tmp_path / "dup.jsonl"
    suite.write_text('{"id": "a", "task": "q", "expected": 1}\n' * 2)
    with pytest.raises(UsageError, match="appears twice"):
        load_tasks(suite)
    suite.write_text("\n")
    with pytest.raises(UsageError, match="no tasks"):
        load_tasks(suite)
    with pytest.raises(UsageError, match="unknown suite"):
        load_suite("nonesuch")


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(10**30), 10**30) | st.floats() | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=60,
)


@given(
    st.dictionaries(
        st.sampled_from(
            [
                "id",
                "task",
                "expected",
                "check",
                "tools",
                "notes",
                "must_call",
                "workspace",
                "command",
            ]
        ),
        json_values,
    )
)
def test_any_json_object_is_a_task_or_a_value_error(data: dict[str, Any]) -> None:
    try:
        task = task_from_dict(data, base=Path("."))
    except (ValueError, TypeError):
        return
    assert task.id and task.task


def test_builtin_suites_have_exact_answers() -> None:
    arithmetic = load_suite("arithmetic")
    assert len(arithmetic) == 30 and arithmetic == load_suite("arithmetic")
    assert {len(plan(t.task)) for t in arithmetic} == {3, 4}  # 2 or 3 items, then the sum
    assert all(total(t.task) == t.expected for t in arithmetic)
    notes = load_suite("notes")
    assert notes[0].task.startswith("Сколько стоит чай") and notes[0].expected == 420
    bets = load_suite("bet")
    rained = [t for t in bets if "convert_currency" in t.must_call]
    dry = [t for t in bets if "convert_currency" in t.must_not_call]
    assert rained and dry and len(rained) + len(dry) == len(bets)
    assert bets[0].expected == 108.5  # the bet: 100 EUR at 1.085
    assert all(t.check == "command" and t.files for t in load_suite("coding"))


def test_bet_tools_answer_like_the_seed() -> None:
    assert get_current_weather.function(city="Athens") == {
        "city": "Athens",
        "temperature": 17.4,
        "precipitation_mm": 3.2,
        "unit": "celsius",
    }
    converted = convert_currency.function(amount=100, from_currency="EUR", to_currency="USD")
    assert converted["converted_amount"] == 108.5 and converted["rate"] == 1.085
