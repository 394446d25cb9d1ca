"""A model's usage counts are checked once, where the loop reads them, by the rule replay
applies (``messages.exact_count``): a run never journals a count that replay refuses."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reactloop import (
    Agent,
    FunctionModel,
    Journal,
    ModelRequest,
    ModelTurn,
    StopReason,
    read_journal,
)
from reactloop.messages import MAX_TOKEN_COUNT, Usage, exact_count

COUNTS = st.one_of(
    st.integers(min_value=-(2**64), max_value=2**64),
    st.sampled_from([2**53, 2**53 + 1, MAX_TOKEN_COUNT, MAX_TOKEN_COUNT + 1, -1, 0]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.booleans(),
    st.none(),
    st.text(max_size=5),
)


def run_reporting(path: Path, **counts: Any) -> tuple[Any, list[dict[str, Any]]]:
    def reply(request: ModelRequest) -> ModelTurn:
        return ModelTurn(text="done", usage=Usage(**counts))

    with Journal(path) as journal:
        result = Agent(FunctionModel(reply), [], journal=journal).run("q")
    return result, read_journal(path)


def test_a_count_of_2_to_the_53_is_counted_as_0_with_a_warning(tmp_path: Path) -> None:
    result, events = run_reporting(tmp_path / "run.jsonl", input_tokens=2**53, output_tokens=7)
    assert (result.stop_reason, events[-1]["type"]) == (StopReason.FINAL_ANSWER, "stop")
    assert result.usage == Usage(output_tokens=7)
    warning = next(e for e in events if e["type"] == "warning")
    assert warning["kind"] == "bad_usage"
    assert "input_tokens=9007199254740992" in warning["message"]
    turn = next(e for e in events if e["type"] == "turn")
    assert ModelTurn.from_dict(turn["turn"]).usage == Usage(output_tokens=7)  # replay reads it
    assert Usage.from_dict(events[-1]["usage"]) == Usage(output_tokens=7)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(value=COUNTS, key=st.sampled_from(sorted(Usage.__dataclass_fields__)))
def test_whatever_a_model_reports_the_journal_reads_back(
    tmp_path: Path, value: Any, key: str
) -> None:
    result, events = run_reporting(tmp_path / "run.jsonl", **{key: value})
    assert events[-1]["type"] == "stop"
    turn = ModelTurn.from_dict(next(e for e in events if e["type"] == "turn")["turn"])
    kept = exact_count(value)
    assert getattr(turn.usage, key) == getattr(result.usage, key) == (kept or 0)
    warned = any(e["type"] == "warning" and e["kind"] == "bad_usage" for e in events)
    assert warned == (kept is None)


def test_a_provider_whose_counts_add_up_past_the_limit_journals_what_replay_reads(
    tmp_path: Path,
) -> None:
    """Anthropic's prompt is three counts added up (``input_tokens`` leaves the cache out):
    each within the limit, their sum past it, as the adapter reads them."""
    from reactloop.models.anthropic import AnthropicModel
    from reactloop.testing import FakeAnthropicServer, message

    each = MAX_TOKEN_COUNT // 2 + 1
    usage = {
        "input_tokens": each,
        "cache_creation_input_tokens": each,
        "cache_read_input_tokens": 0,
        "output_tokens": 5,
    }
    path = tmp_path / "run.jsonl"
    with FakeAnthropicServer([message("done", usage=usage)]) as server, Journal(path) as journal:
        model = AnthropicModel(model="claude-test", base_url=server.base_url)
        result = Agent(model, [], journal=journal).run("q")
    events = read_journal(path)
    turn = ModelTurn.from_dict(next(e for e in events if e["type"] == "turn")["turn"])
    assert (result.answer, turn.usage.input_tokens, turn.usage.output_tokens) == ("done", 0, 5)
    assert any(e["type"] == "warning" and e["kind"] == "bad_usage" for e in events)


def test_the_rule_is_the_journal_readers_rule() -> None:
    for value in (0, 5, 5.0, MAX_TOKEN_COUNT, float(MAX_TOKEN_COUNT)):
        assert Usage.from_dict({"input_tokens": value}).input_tokens == exact_count(value)
    for value in (-1, 2**53, 5.5, math.nan, math.inf, True, "5"):
        assert exact_count(value) is None
