"""Agent Skills: ``*/SKILL.md`` found and checked (one line for a bad frontmatter), names and
descriptions in the instructions, a body only through ``activate_skill`` (an enum of the
loaded names), each activation journaled, a second one not sent again, also after a resume."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from reactloop import Agent, Journal, Limits, ScriptedModel, tool
from reactloop.errors import UsageError
from reactloop.journal.writer import read_journal
from reactloop.tools.prepared import Defer
from reactloop.tools.skills import ACTIVATE_SKILL, Skills, load_skills

LIMITS = Limits(max_model_calls=10, max_tool_calls=10, max_seconds=None)
PDF = """---
name: pdf-forms
description: Fill in PDF forms. Use when the user gives a PDF form to complete.
license: MIT
metadata:
  author: acme
  version: "1.0"
---
# Filling PDF forms

Run scripts/fill.py with the form and a JSON of the fields.
"""


def skill(root: Path, name: str, text: str) -> Path:
    folder = root / name
    (folder / "scripts").mkdir(parents=True)
    (folder / "SKILL.md").write_text(text, encoding="utf-8")
    (folder / "scripts" / "fill.py").write_text("print('filled')\n")
    return folder


def test_a_skill_is_read_with_its_fields_and_body(tmp_path: Path) -> None:
    skill(tmp_path, "pdf-forms", PDF)
    [loaded] = load_skills([tmp_path])
    assert loaded.name == "pdf-forms" and loaded.description.startswith("Fill in PDF forms")
    assert loaded.fields["metadata"] == {"author": "acme", "version": "1.0"}
    assert loaded.body.startswith("# Filling PDF forms")


@pytest.mark.parametrize(
    ("front", "message"),
    [
        ("name: PDF\ndescription: x", "name 'PDF' must be 1-64 lowercase letters"),
        ("name: pdf--forms\ndescription: x", "single hyphens"),
        ("name: other\ndescription: x", "must be the folder's name, 'pdf-forms'"),
        ("name: pdf-forms", "needs a description"),
        ("description: x", "needs a name"),
        ("name: pdf-forms\ndescription: x\nversion: 2", "unknown field 'version'"),
        ("name: pdf-forms\ndescription: x\nno colon here", "line 4 is not 'key: value'"),
    ],
)
def test_a_bad_frontmatter_is_one_line_naming_the_file(
    tmp_path: Path, front: str, message: str
) -> None:
    skill(tmp_path, "pdf-forms", f"---\n{front}\n---\nbody\n")
    with pytest.raises(UsageError, match=message) as caught:
        load_skills([tmp_path])
    assert "\n" not in str(caught.value) and "SKILL.md" in str(caught.value)


def test_no_frontmatter_and_a_missing_folder_are_refused(tmp_path: Path) -> None:
    skill(tmp_path, "pdf-forms", "# just a body\n")
    with pytest.raises(UsageError, match="must start with a --- frontmatter"):
        load_skills([tmp_path])
    with pytest.raises(UsageError, match="not found"):
        load_skills([tmp_path / "nope"])


def activations() -> list[dict[str, Any]]:
    call = {"name": ACTIVATE_SKILL, "arguments": {"name": "pdf-forms"}}
    other = {"name": "ping", "arguments": {}}
    return [{"tool_calls": [call]}, {"tool_calls": [other]}, {"tool_calls": [call]}, "done"]


@tool(read_only=True)
def ping() -> str:
    """Answer pong."""
    return "pong"


def test_the_model_sees_names_first_and_a_body_once(tmp_path: Path) -> None:
    skill(tmp_path, "pdf-forms", PDF)
    model = ScriptedModel(activations())
    trace = tmp_path / "run.jsonl"
    with Journal(trace) as journal:
        agent = Agent(model, [ping], skills=[tmp_path], journal=journal, limits=LIMITS)
        result = agent.run("fill")
    assert result.answer == "done"
    system = model.requests[0].messages[0].content
    assert "- pdf-forms: Fill in PDF forms" in str(system) and "scripts/fill.py" not in str(system)
    spec = model.requests[0].tools[-1]
    assert spec.name == ACTIVATE_SKILL and spec.parameters["properties"]["name"]["enum"] == [
        "pdf-forms"
    ]
    events = read_journal(trace)
    results = [e["result"] for e in events if e["type"] == "tool_result"]
    assert "scripts/fill.py" in results[0]["output"]["instructions"]
    assert results[0]["output"]["files"] == ["scripts/fill.py"]
    assert not results[2]["ok"] and not results[2]["executed"]  # the loop guard: a repeat
    kinds = [(e["name"], e["again"]) for e in events if e["type"] == "skill_activation"]
    assert kinds == [("pdf-forms", False)]


def test_a_second_activation_does_not_send_the_body_again(tmp_path: Path) -> None:
    skill(tmp_path, "pdf-forms", PDF)
    skills = Skills(load_skills([tmp_path]))
    events: list[tuple[str, dict[str, Any]]] = []
    skills.emit = lambda event: events.append((event.type, event.data()))
    assert "Run scripts/fill.py" in skills.activate("pdf-forms")["instructions"]
    assert skills.activate("pdf-forms") == {
        "skill": "pdf-forms",
        "note": "already active: its instructions are above",
    }
    assert [data["again"] for _, data in events] == [False, True]


def test_an_unknown_skill_is_refused_by_the_enum(tmp_path: Path) -> None:
    skill(tmp_path, "pdf-forms", PDF)
    call = {"name": ACTIVATE_SKILL, "arguments": {"name": "rm-rf"}}
    model = ScriptedModel([{"tool_calls": [call]}, {"content": "done"}])
    result = Agent(model, [], skills=[tmp_path], limits=LIMITS).run("x")
    observation = next(m.content for m in result.history if m.role == "tool")
    assert '"ok": false' in str(observation) and "rm-rf" in str(observation)


def test_resume_knows_what_was_activated(tmp_path: Path) -> None:
    skill(tmp_path, "pdf-forms", PDF)
    runs: list[str] = []

    @tool
    def fill(form: str) -> str:
        """Fill a form (a side effect)."""
        runs.append(form)
        return "filled"

    call = {"name": ACTIVATE_SKILL, "arguments": {"name": "pdf-forms"}}
    turns = [
        {"tool_calls": [call]},
        {"tool_calls": [{"name": "fill", "arguments": {"form": "a.pdf"}}]},
        {"tool_calls": [call]},
        {"content": "done"},
    ]
    trace = tmp_path / "run.jsonl"
    with Journal(trace) as journal:
        first = Agent(
            ScriptedModel(turns),
            [fill],
            skills=[tmp_path],
            journal=journal,
            limits=LIMITS,
            approve=lambda c, t: Defer(),
        ).run("fill")
    assert first.stop_reason == "awaiting_approval"
    second = Agent(ScriptedModel(turns), [fill], skills=[tmp_path]).resume(
        trace, decisions={first.pending[0].id: True}
    )
    assert second.answer == "done" and runs == ["a.pdf"]
    again = [e for e in read_journal(trace) if e["type"] == "skill_activation"]
    assert [e["again"] for e in again] == [False, True]
