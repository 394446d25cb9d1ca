"""Small things a newcomer trips on: ``--tools none``, a misspelt provider, an empty
``--verify``, a step whose reasoning is its answer."""

from __future__ import annotations

import json
from pathlib import Path

from helpers import invoke, script


def test_tools_none_and_empty_mean_no_built_in_tool(tmp_path: Path) -> None:
    assert invoke("tools", "--tools", "none") == (0, "[]\n", "")
    assert invoke("tools", "--tools", "") == (0, "[]\n", "")
    code, _, err = invoke("tools", "--tools", "none,calculator")
    assert code == 2
    assert err == (
        "reactloop: error: tool family 'none' goes alone, not with others: none,calculator\n"
    )
    trace = tmp_path / "t.jsonl"
    spec = script(tmp_path, ["done"])
    code, out, err = invoke(
        "run",
        "q",
        "--model",
        spec,
        "--protocol",
        "native",
        "--tools",
        "none",
        "--trace",
        str(trace),
    )
    assert (code, out) == (0, "done\n"), err
    assert "tools: none" in err
    start = json.loads(trace.read_text(encoding="utf-8").splitlines()[1])
    assert start["type"] == "run_start" and start["tools"] == []


def test_a_misspelt_provider_gets_a_did_you_mean() -> None:
    for spec, meant in (
        ("opnai:gpt-4o", "openai:gpt-4o"),
        ("antropic:claude-haiku-4-5", "anthropic:claude-haiku-4-5"),
        ("qwen3:8b", "ollama:qwen3:8b"),  # an Ollama NAME:TAG without its provider
    ):
        code, _, err = invoke("run", "q", "--model", spec)
        assert code == 2
        said = f"reactloop: error: unknown model spec {spec!r}; did you mean {meant!r}?"
        assert err.startswith(said)
    code, _, err = invoke("run", "q", "--model", "nope:x")
    assert code == 2 and "did you mean" not in err


def test_an_empty_verify_is_refused_in_one_line(tmp_path: Path) -> None:
    trace = tmp_path / "t.jsonl"
    code, out, err = invoke(
        "run", "q", "--model", script(tmp_path, ["x"]), "--verify", " ", "--trace", str(trace)
    )
    assert (code, out) == (2, "")
    assert err == "reactloop: error: --verify is empty: give the command that must pass\n"
    assert not trace.exists()


def test_reasoning_that_is_the_answer_is_shown_once(tmp_path: Path) -> None:
    """The embedded models' {"thought": "43", "answer": "43"}: the step is not empty."""
    turns = [{"content": "420", "reasoning": "420"}]
    code, out, err = invoke("run", "q", "--model", script(tmp_path, turns), "--protocol", "native")
    assert (code, out) == (0, "420\n")
    step = err.split("Step 1\n")[1].split("stop:")[0]
    assert step == "  Reason  420\n"


def test_an_empty_string_verify_is_refused_too(tmp_path: Path) -> None:
    code, out, err = invoke("run", "q", "--model", script(tmp_path, ["x"]), "--verify", "")
    assert (code, out) == (2, "")
    assert err == "reactloop: error: --verify is empty: give the command that must pass\n"


def test_streamed_text_is_the_reply_not_a_reason(tmp_path: Path) -> None:
    """Streamed text may be a thought or the answer: it is labelled ``Reply`` as it comes."""
    turns = [{"content": "I add them.", "tool_calls": [{"name": "calculator",
              "arguments": {"expression": "2+3"}}]}, "5"]  # fmt: skip
    code, out, err = invoke(
        "run", "q", "--model", script(tmp_path, turns), "--protocol", "native", "--stream"
    )
    assert (code, out) == (0, "5\n")
    lines = err.splitlines()
    assert lines[lines.index("Step 1") + 1] == "  Reply   I add them."
    assert lines[lines.index("Step 2") + 1] == "  Reply   5"
    assert "Reason" not in err
