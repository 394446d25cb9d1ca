"""Compaction keeps an activated skill's instructions: ``trim`` leaves its ``activate_skill``
result whole; a summary that replaces the activation is followed by the body again, once,
and a later compaction keeps that copy."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reactloop import Agent, FunctionModel, Journal, Limits, ModelTurn, StopReason, ToolCall, tool
from reactloop.journal.writer import read_journal
from reactloop.models.base import ModelRequest
from reactloop.tools.skills import ACTIVATE_SKILL

MARK = "Secret step: multiply by 100."
BODY = f"Always quote prices in pence. {MARK}\n" + "Check the page twice. " * 30
SKILL = f"---\nname: tea-prices\ndescription: Prices of tea.\n---\n{BODY.strip()}\n"
BODY = BODY.strip()
SUMMARY_ASKED = "The context is nearly full"


@tool(read_only=True)
def fetch(page: int) -> str:
    """Fetch one page of the catalogue."""
    return f"page {page}: " + " ".join(f"tea{page}-{i} costs {page * 7 + i}" for i in range(140))


class Model:
    """Activates the skill, then fetches pages; answers when asked for a summary; records
    every request's text after the activation's result left it."""

    def __init__(self) -> None:
        self.step = 0
        self.requests: list[list[str]] = []

    def __call__(self, request: ModelRequest) -> ModelTurn:
        self.requests.append([m.content for m in request.messages])
        if SUMMARY_ASKED in request.messages[-1].content:
            return ModelTurn(text="Fetched pages; tea prices listed.")
        self.step += 1
        if self.step == 1:
            call = ToolCall(id="s1", name=ACTIVATE_SKILL, arguments='{"name": "tea-prices"}')
            return ModelTurn(tool_calls=(call,), finish_reason="tool_calls")
        if self.step > 16:
            return ModelTurn(text="done")
        call = ToolCall(id=f"f{self.step}", name="fetch", arguments=f'{{"page": {self.step}}}')
        return ModelTurn(tool_calls=(call,), finish_reason="tool_calls")


def run(tmp_path: Path, policy: str) -> tuple[Model, list[dict[str, object]], object]:
    folder = tmp_path / "skills" / "tea-prices"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(SKILL, encoding="utf-8")
    model = Model()
    limits = Limits(context_tokens=5000, context_policy=policy, max_model_calls=60)
    trace = tmp_path / "run.jsonl"
    with Journal(trace) as journal:
        agent = Agent(
            FunctionModel(model), [fetch], skills=[tmp_path / "skills"], limits=limits,
            journal=journal,
        )  # fmt: skip
        result = agent.run("Find the cheapest tea.")
    assert result.stop_reason is StopReason.FINAL_ANSWER, result.error
    return model, read_journal(trace), result


def test_a_summary_is_followed_by_the_skill_body_once(tmp_path: Path) -> None:
    model, events, result = run(tmp_path, "summarize")
    compactions = [e for e in events if e["type"] == "compaction"]
    assert len(compactions) >= 2  # the later ones keep the first one's copy
    first = compactions[0]
    assert "s1" in first["call_ids"]  # the activation itself was replaced
    kept = [m for m in first["by"] if m["kind"] == "skill"]
    assert len(kept) == 1 and BODY in kept[0]["content"]
    for request in model.requests[1:]:  # from the activation's result on, every request
        assert sum(text.count(MARK) for text in request) == 1
    assert sum(m.content.count(MARK) for m in result.history) == 1


def test_trim_leaves_the_activation_result_whole(tmp_path: Path) -> None:
    _, events, result = run(tmp_path, "trim")
    assert any(e["type"] == "compaction" for e in events)
    activation = next(m for m in result.history if m.name == ACTIVATE_SKILL)
    assert activation.kind != "trimmed"
    assert json.loads(activation.content)["output"]["instructions"] == BODY
    assert any(m.kind == "trimmed" for m in result.history)


@pytest.mark.parametrize("ok", [True, False])
def test_a_refused_activation_keeps_nothing(tmp_path: Path, ok: bool) -> None:
    from reactloop.messages import Message
    from reactloop.tools.skills import Skills, load_skills

    folder = tmp_path / "tea-prices"
    folder.mkdir()
    (folder / "SKILL.md").write_text(SKILL, encoding="utf-8")
    skills = Skills(load_skills([tmp_path]))
    call = ToolCall(id="a", name=ACTIVATE_SKILL, arguments='{"name": "tea-prices"}')
    content = '{"ok": true, "output": {}}' if ok else '{"ok": false, "error": "no"}'
    messages = [
        Message(role="assistant", tool_calls=(call,)),
        Message(role="tool", tool_call_id="a", name=ACTIVATE_SKILL, content=content),
    ]
    assert skills.activated_in(messages) == ([("tea-prices", BODY)] if ok else [])
