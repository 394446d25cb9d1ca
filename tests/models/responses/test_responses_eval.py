"""The eval's ladder puts a Responses rung beside a chat rung of the same model: both run every
episode on their own endpoint, and their rows are side by side in one report."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from reactloop.cli.eval import eval_command
from reactloop.testing import FakeOpenAIServer, FakeResponsesServer, completion, json_reply


def test_a_responses_rung_beside_a_chat_rung_of_the_same_model(tmp_path: Path) -> None:
    chat = FakeOpenAIServer(responder=lambda request: json_reply(completion("4")))
    responses = FakeResponsesServer(responder=lambda request: "4")
    with chat, responses:
        ladder = tmp_path / "ladder.json"
        ladder.write_text(json.dumps([
            {"label": "chat", "spec": "openai:gpt-5-mini", "base_url": chat.base_url},
            {"label": "responses", "spec": "responses:gpt-5-mini", "base_url": responses.base_url},
        ]))  # fmt: skip
        out = tmp_path / "out"
        args = ["--suite", "arithmetic", "--models", str(ladder), "--limit", "2",
                "--out", str(out), "--no-progress"]  # fmt: skip
        result = CliRunner().invoke(eval_command, args)
    assert result.exit_code == 0, result.stderr
    lines = result.stdout.splitlines()
    assert [line.split(" · ")[0] for line in lines] == ["chat", "responses"]
    assert all("0 errored" in line for line in lines)
    assert len(chat.requests) == len(responses.requests) >= 2
    assert {r.path for r in chat.requests} == {"/v1/chat/completions"}
    assert {r.path for r in responses.requests} == {"/v1/responses"}
