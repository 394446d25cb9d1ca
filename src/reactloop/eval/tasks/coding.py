"""The ``coding`` suite: fix a failing test in a temporary workspace, checked by running it.

The first task is ``examples/failing_test`` (``average`` divides by the wrong count); the others
are variants with one bug each. Each episode gets a fresh copy of the task's ``files``.
"""

from __future__ import annotations

import shlex
import sys

from reactloop.eval.tasks.tasks import Task

_AVERAGE_TESTS = """import pytest
from calc import average, spread


def test_average_of_three_numbers() -> None:
    assert average([1, 2, 3]) == 2


def test_average_of_one_number() -> None:
    assert average([5]) == 5


def test_average_of_nothing_is_an_error() -> None:
    with pytest.raises(ValueError):
        average([])


def test_spread() -> None:
    assert spread([3, 9, 4]) == 6
"""

_CALC = '''"""A tiny statistics module with a bug for the agent to find."""


def average(numbers: list[float]) -> float:
    """The arithmetic mean of a non-empty list of numbers."""
    if not numbers:
        raise ValueError("average of an empty list")
    return sum(numbers) / (len(numbers) + 1)


def spread(numbers: list[float]) -> float:
    """The difference between the largest and the smallest number."""
    return max(numbers) - min(numbers)
'''

_VARIANTS: tuple[tuple[str, str, str, str], ...] = (
    ("calc.py", _CALC, "test_calc.py", _AVERAGE_TESTS),
    (
        "calc.py",
        _CALC.replace("/ (len(numbers) + 1)", "/ len(numbers)").replace(
            "max(numbers) - min(numbers)", "max(numbers) + min(numbers)"
        ),
        "test_calc.py",
        _AVERAGE_TESTS,
    ),
    (
        "words.py",
        'def count_words(text: str) -> int:\n    """How many words, split on whitespace."""\n'
        '    return len(text.split(" "))\n',
        "test_words.py",
        "from words import count_words\n\n\ndef test_spaces() -> None:\n"
        '    assert count_words("a  b   c") == 3\n\n\ndef test_empty() -> None:\n'
        '    assert count_words("") == 0\n',
    ),
    (
        "grade.py",
        'def grade(score: int) -> str:\n    """A for 90 and above, B for 80 and above, else C."""\n'
        '    if score > 90:\n        return "A"\n    if score > 80:\n        return "B"\n'
        '    return "C"\n',
        "test_grade.py",
        "from grade import grade\n\n\ndef test_bounds() -> None:\n"
        '    assert grade(90) == "A"\n    assert grade(80) == "B"\n    assert grade(79) == "C"\n',
    ),
    (
        "text.py",
        'def title_case(text: str) -> str:\n    """Every word capitalised."""\n'
        "    return text.capitalize()\n",
        "test_text.py",
        "from text import title_case\n\n\ndef test_title() -> None:\n"
        '    assert title_case("hello big world") == "Hello Big World"\n',
    ),
)


def check_command() -> str:
    return f"{shlex.quote(sys.executable)} -m pytest -q -p no:cacheprovider"


def coding_tasks() -> list[Task]:
    tasks = []
    for index, (module, code, test_name, tests) in enumerate(_VARIANTS):
        tasks.append(
            Task(
                id=f"coding-{index + 1:02d}",
                task=(
                    f"The tests in {test_name} fail. Find the bug in {module}, fix it, "
                    "and run `python -m pytest -q` to check that all tests pass."
                ),
                expected=None,
                tools=("files", "bash"),
                check="command",
                command=check_command(),
                files={module: code, test_name: tests},
            )
        )
    return tasks
