"""The built-in suites, with exact expected answers, and ``load_suite(name or FILE.jsonl)``.

- ``arithmetic``: 30 shopping sums generated deterministically, two or three calculator calls each;
- ``notes``: lookups in the user's notes, then arithmetic (the tea question and its variants);
- ``bet``: the weather bet's conditional chain on offline weather and currency tools; where it
  did not rain the conversion must not happen;
- ``coding``: fix a failing test in a temporary workspace, checked by running the tests.
"""

from __future__ import annotations

import random
from dataclasses import replace
from pathlib import Path

from reactloop.errors import UsageError
from reactloop.eval.tasks.bet_tools import WEATHER, converted, rained
from reactloop.eval.tasks.coding import coding_tasks
from reactloop.eval.tasks.tasks import Task, load_tasks

ITEMS = (
    ("notebooks", "notebook"),
    ("pens", "pen"),
    ("folders", "folder"),
    ("erasers", "eraser"),
    ("rulers", "ruler"),
    ("markers", "marker"),
    ("staplers", "stapler"),
    ("envelopes", "envelope"),
)
LOST = ["lost", "lose", "did not win", "didn't win", "no win", "no conversion", "not rain"]


def arithmetic(count: int = 30) -> list[Task]:
    """``count`` tasks like "17 notebooks at 23 each and 4 pens at 115 each": 2 or 3 items."""
    rng = random.Random(14)  # the suite is fixed; --seed changes the model's sampling only
    tasks = []
    for index in range(count):
        picked = rng.sample(ITEMS, 2 + index % 2)
        lines = [(rng.randint(2, 40), rng.randint(3, 250), plural) for plural, _ in picked]
        text = " and ".join(f"{n} {plural} at {price} each" for n, price, plural in lines)
        tasks.append(
            Task(
                id=f"arith-{index + 1:02d}",
                task=f"What do {text} cost in total? Use the calculator.",
                expected=sum(n * price for n, price, _ in lines),
                tools=("calculator",),
            )
        )
    return tasks


_NOTES = (
    ("Сколько стоит чай на всех гостей?", {"цена_чая": "35", "число_гостей": "12"}, 420),
    ("How much does tea cost for all the guests?", {"tea_price": "35", "guests": "12"}, 420),
    ("How much does coffee cost for everyone?", {"coffee_price": "48", "people": "9"}, 432),
    ("What does the cake cost for the whole class?", {"cake_slice": "7", "pupils": "28"}, 196),
    ("How much do the tickets cost for the team?", {"ticket": "15", "team_size": "11"}, 165),
    (
        "What do tea and biscuits cost for all the guests?",
        {"tea_price": "35", "biscuit_price": "20", "guests": "12"},
        660,
    ),
    (
        "How much is the hotel for the whole trip?",
        {"room_per_night": "95", "nights": "4", "rooms": "2"},
        760,
    ),
    ("What is the monthly rent per flatmate?", {"rent": "2400", "flatmates": "3"}, 800),
    ("How many pages are left to read?", {"book_pages": "412", "pages_read": "157"}, 255),
    (
        "What is the petrol cost of the drive?",
        {"distance_km": "350", "litres_per_100km": "6", "price_per_litre": "2"},
        42,
    ),
)


def notes() -> list[Task]:
    return [
        Task(
            id=f"notes-{index + 1:02d}",
            task=f"{question} Look the values up in the notes and use the calculator.",
            expected=expected,
            tools=("lookup", "calculator"),
            notes=dict(values),
            must_call=("lookup",),
        )
        for index, (question, values, expected) in enumerate(_NOTES)
    ]


_BETS = (
    ("Athens", 100, "EUR", "USD"),
    ("Berlin", 100, "EUR", "USD"),
    ("London", 50, "GBP", "USD"),
    ("Madrid", 200, "EUR", "GBP"),
    ("Paris", 80, "EUR", "JPY"),
    ("Rome", 100, "EUR", "USD"),
    ("Oslo", 250, "USD", "EUR"),
    ("Cairo", 60, "GBP", "EUR"),
    ("Lisbon", 120, "EUR", "GBP"),
    ("Vienna", 40, "USD", "JPY"),
)


def bet() -> list[Task]:
    tasks = []
    for index, (city, amount, source, target) in enumerate(_BETS):
        assert city.lower() in WEATHER
        question = (
            f"I bet my friend {amount} {source} that it would rain in {city} today. "
            f"If I win, how much is that in {target}?"
        )
        base = Task(id=f"bet-{index + 1:02d}", task=question, expected=None, tools=("bet",))
        if rained(city):
            task = replace(
                base,
                expected=converted(amount, source, target),
                must_call=("get_current_weather", "convert_currency"),
            )
        else:
            task = replace(
                base,
                expected=LOST,
                check="contains",
                must_call=("get_current_weather",),
                must_not_call=("convert_currency",),
            )
        tasks.append(task)
    return tasks


SUITES = {"arithmetic": arithmetic, "notes": notes, "bet": bet, "coding": coding_tasks}


def load_suite(name: str) -> list[Task]:
    """A built-in suite by name, or the tasks of a JSONL file."""
    if name in SUITES:
        return SUITES[name]()
    if name.endswith(".jsonl") or Path(name).is_file():
        return load_tasks(name)
    raise UsageError(f"unknown suite {name!r}; built in: {', '.join(SUITES)}, or FILE.jsonl")
