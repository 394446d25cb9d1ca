"""StreamAccumulator against every OpenAI-style stream fixture and the quirks they show."""

from __future__ import annotations

import itertools
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reactloop.errors import ModelError, ProviderError
from reactloop.messages import ModelTurn, Usage
from reactloop.models.openai.stream import StreamAccumulator
from reactloop.models.sse import iter_sse_json

WIRE_FORMATS = Path(
    os.environ.get("REACTLOOP_WIRE_FORMATS") or Path(__file__).resolve().parents[2] / "wire_formats"
)


@dataclass(frozen=True)
class Expected:
    text: str
    calls: list[tuple[str, str, str]]  # (name, arguments, wire id)
    finish: str
    usage: Usage
    reasoning: str | None = None


def usage(inp: int = 0, out: int = 0, cached: int = 0, reasoning: int = 0) -> Usage:
    return Usage(
        input_tokens=inp, output_tokens=out, cached_tokens=cached, reasoning_tokens=reasoning
    )


EXPECTED: dict[str, Expected] = {
    "openai_stream_tool_call": Expected(
        "",
        [("read_file", '{"path":"README.md","max_bytes":4096}', "call_HjeqP7YeRkoNj0de9e3U4X4B")],
        "tool_calls",
        usage(60, 15),
    ),
    "openai_stream_parallel_tool_calls": Expected(
        "",
        [
            (
                "get_weather",
                '{"city": "Edinburgh", "country": "GB", "units": "c"}',
                "call_JMW1whyEaYG4k8VE1OIflxA2",
            ),
            (
                "get_stock_price",
                '{"ticker": "AAPL", "exchange": "NASDAQ"}',
                "call_DNYTawLBoN8fj3Kq6qU9N1Ou",
            ),
        ],
        "tool_calls",
        usage(149, 60),
    ),
    "openai_stream_same_index_split_entries": Expected(
        "", [("list_files", '{"path": "."}', "call_files")], "tool_calls", usage()
    ),
    "openai_compat_stream_nonzero_index": Expected(
        "Now listing your workspaces:",
        [("list_workspaces", "", "toolu_vrtx_01DbFqUgk6aAtJ4nDBqzFWDF")],
        "tool_calls",
        usage(25939, 58, cached=25429),
    ),
    "deepseek_stream_tool_call": Expected(
        "",
        [("read_file", '{"path": "README.md"}', "call_00_Vv3bQ9Lk2mXe8RtPz5Yw7NcA")],
        "tool_calls",
        usage(1243, 41, cached=1152, reasoning=22),
        reasoning="The user wants the size of README.md; read it first.",
    ),
    "dashscope_stream_tool_call": Expected(
        "",
        [("get_current_weather", '{"location": "杭州市"}', "call_bd50f1c2a9e84d7e8c3b21")],
        "tool_calls",
        usage(236, 48, reasoning=27),
        reasoning="The user wants Hangzhou weather.",
    ),
    "vllm_stream_tool_call": Expected(
        "\n\n",
        [
            (
                "get_weather",
                '{"location": "Paris, France", "unit": "celsius"}',
                "chatcmpl-tool-3c1d8e2f9a0b4c7d8e6f5a4b3c2d1e0f",
            )
        ],
        "tool_calls",
        usage(312, 26),
        reasoning="The user wants Paris weather.",
    ),
    "ollama_openai_stream_tool_call": Expected(
        "",
        [("get_weather", '{"city":"Tokyo","unit":"celsius"}', "call_k3v9x2qa")],
        "tool_calls",
        usage(169, 18),
        reasoning="The user wants the weather in Tokyo.",
    ),
    "ollama_openai_stream_tool_call_legacy": Expected(
        "", [("get_weather", '{"city":"Tokyo"}', "call_k3v9x2qa")], "tool_calls", usage()
    ),
    "llamacpp_server_stream_tool_call": Expected(
        "",
        [
            (
                "get_current_weather",
                '{"location":"Istanbul, Turkey"}',
                "Zr8kP2mXq9LwT4vB7nH1sYd3Jf6Ga0Ce",
            )
        ],
        "tool_calls",
        usage(44, 16),
    ),
    "llama_cpp_python_stream_tool_call": Expected(
        "",
        [
            (
                "get_weather",
                '{"location": "Paris, France"}',
                "call__0_get_weather_cmpl-6c1b2a9e-3f4d-4e5a-8b7c-9d0e1f2a3b4c",
            )
        ],
        "tool_calls",
        usage(),
    ),
    "deepseek_keepalive_stream": Expected("Hello!", [], "stop", usage(10, 2)),
}


def chunks_of(name: str) -> list[dict[str, Any]]:
    jsonl = WIRE_FORMATS / f"{name}.jsonl"
    if jsonl.exists():
        return [json.loads(line) for line in jsonl.read_text().splitlines() if line.strip()]
    return list(iter_sse_json((WIRE_FORMATS / f"{name}.sse").read_bytes()))


def assemble(chunks: list[dict[str, Any]]) -> tuple[str, ModelTurn]:
    accumulator = StreamAccumulator(provider="test")
    shown = "".join(accumulator.feed(chunk) for chunk in chunks)
    return shown, accumulator.result()


def summary(turn: ModelTurn) -> tuple[Any, ...]:
    calls = [(c.name, c.arguments, c.wire_id) for c in turn.tool_calls]
    return turn.text, calls, turn.finish_reason, turn.usage, turn.reasoning


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_fixture_assembles_to_the_expected_turn(name: str) -> None:
    expected = EXPECTED[name]
    shown, turn = assemble(chunks_of(name))
    assert summary(turn) == (
        expected.text,
        expected.calls,
        expected.finish,
        expected.usage,
        expected.reasoning,
    )
    assert shown == expected.text
    for call in turn.tool_calls:
        assert call.arguments == "" or isinstance(json.loads(call.arguments), dict)


def test_every_openai_style_stream_fixture_is_covered() -> None:
    names = {p.stem for p in WIRE_FORMATS.glob("*stream*.jsonl") if "anthropic" not in p.name}
    names |= {p.stem for p in WIRE_FORMATS.glob("*.sse")}
    names -= {p.stem for p in WIRE_FORMATS.glob("anthropic_*")}
    names.discard("openai_stream_error_midstream")  # an error, see its own test
    assert names == set(EXPECTED)


SSE_TWINS = sorted(
    p
    for p in WIRE_FORMATS.glob("*.sse")
    if p.with_suffix(".jsonl").exists() and not p.name.startswith("anthropic")
)


@pytest.mark.parametrize("path", SSE_TWINS, ids=lambda p: p.name)
def test_sse_and_jsonl_twins_give_the_same_turn(path: Path) -> None:
    from_sse = list(iter_sse_json(path.read_bytes()))
    assert summary(assemble(from_sse)[1]) == summary(assemble(chunks_of(path.stem))[1])


def test_raw_message_is_the_wire_assistant_message() -> None:
    _, turn = assemble(chunks_of("deepseek_stream_tool_call"))
    assert turn.raw_message == {
        "role": "assistant",
        "content": "",
        "reasoning_content": "The user wants the size of README.md; read it first.",
        "tool_calls": [
            {
                "id": "call_00_Vv3bQ9Lk2mXe8RtPz5Yw7NcA",
                "type": "function",
                "function": {"name": "read_file", "arguments": '{"path": "README.md"}'},
            }
        ],
    }
    assert turn.raw["finish_reason"] == "tool_calls"
    assert turn.raw["id"] == "873123fe-56ff-4f1e-a501-13efd06fe283"


def test_content_null_throughout_stays_null_in_raw_message() -> None:
    _, turn = assemble(chunks_of("openai_stream_tool_call"))
    assert turn.raw_message["content"] is None


def test_reasoning_is_echoed_under_the_key_the_server_used() -> None:
    _, ollama = assemble(chunks_of("ollama_openai_stream_tool_call"))
    assert ollama.raw_message["reasoning"] == "The user wants the weather in Tokyo."
    assert "reasoning_content" not in ollama.raw_message
    _, vllm = assemble(chunks_of("vllm_stream_tool_call"))  # both keys, same text: once
    assert vllm.raw_message["reasoning_content"] == "The user wants Paris weather."
    assert "reasoning" not in vllm.raw_message


def test_llama_cpp_timings_are_kept_in_raw() -> None:
    _, turn = assemble(chunks_of("llamacpp_server_stream_tool_call"))
    assert turn.raw["timings"]["predicted_n"] == 16


def test_error_inside_a_200_stream_raises_provider_error_after_the_text() -> None:
    accumulator = StreamAccumulator(provider="openai")
    shown = ""
    with pytest.raises(ProviderError) as caught:
        for chunk in iter_sse_json(
            (WIRE_FORMATS / "openai_stream_error_midstream.sse").read_bytes()
        ):
            shown += accumulator.feed(chunk)
    assert shown == "The answer depends"
    assert "The server had an error while processing your request" in str(caught.value)
    assert caught.value.retryable
    assert accumulator.snapshot()["message"]["content"] == "The answer depends"


@pytest.mark.parametrize(
    "error",
    [
        "model crashed",
        {"message": "boom", "type": "invalid_request_error", "code": "bad"},
        {"message": "busy", "code": 503},
    ],
)
def test_error_shapes_all_raise_provider_error(error: Any) -> None:
    with pytest.raises(ProviderError):
        StreamAccumulator().feed({"error": error})


def test_old_vllm_top_level_error_object_raises() -> None:
    with pytest.raises(ProviderError, match="too long"):
        StreamAccumulator().feed({"object": "error", "message": "too long", "code": 400})


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_a_stream_cut_before_its_finish_reason_is_an_error(name: str) -> None:
    chunks = chunks_of(name)
    finish_at = next(
        n
        for n, chunk in enumerate(chunks)
        if any(c.get("finish_reason") for c in chunk.get("choices") or [])
    )
    accumulator = StreamAccumulator()
    for chunk in chunks[:finish_at]:
        accumulator.feed(chunk)
    assert not accumulator.finished
    with pytest.raises(ModelError, match="without a finish reason") as caught:
        accumulator.result()
    assert caught.value.retryable
    assert accumulator.snapshot()["chunks"] == finish_at


def test_empty_stream_is_an_error() -> None:
    with pytest.raises(ModelError):
        StreamAccumulator().result()


@pytest.mark.parametrize("reason", ["insufficient_system_resource", "error", "abort"])
def test_a_generation_the_server_gave_up_on_is_a_retryable_error(reason: str) -> None:
    accumulator = StreamAccumulator()
    accumulator.feed(delta_chunk({"role": "assistant", "content": "Half an ans"}))
    accumulator.feed(delta_chunk({}, finish=reason))
    with pytest.raises(ModelError, match=reason) as caught:
        accumulator.result()
    assert caught.value.retryable


def delta_chunk(
    delta: dict[str, Any], *, finish: str | None = None, **extra: Any
) -> dict[str, Any]:
    return {"choices": [{"index": 0, "delta": delta, "finish_reason": finish}], **extra}


def call_delta(index: Any, **fields: Any) -> dict[str, Any]:
    entry: dict[str, Any] = {"index": index}
    function = {k: fields.pop(k) for k in ("name", "arguments") if k in fields}
    if function:
        entry["function"] = function
    entry.update(fields)
    return entry


def run(*chunks: dict[str, Any]) -> ModelTurn:
    return assemble(list(chunks))[1]


@pytest.mark.parametrize(
    ("wire", "mapped"),
    [
        ("stop", "stop"),
        ("length", "length"),
        ("content_filter", "content_filter"),
        ("tool_calls", "tool_calls"),
        ("something_new", "other"),
    ],
)
def test_finish_reasons_are_mapped(wire: str, mapped: str) -> None:
    assert run(delta_chunk({"content": "x"}, finish=wire)).finish_reason == mapped


def test_stop_with_tool_calls_means_tool_calls_but_length_stays_length() -> None:
    call = call_delta(0, id="c1", name="f", arguments='{"a": 1}')
    assert run(delta_chunk({"tool_calls": [call]}, finish="stop")).finish_reason == "tool_calls"
    cut = call_delta(0, id="c1", name="f", arguments='{"a": "trunc')
    turn = run(delta_chunk({"tool_calls": [cut]}, finish="length"))
    assert turn.finish_reason == "length"
    assert turn.tool_calls[0].arguments == '{"a": "trunc'


def test_calls_are_ordered_by_index_not_arrival() -> None:
    turn = run(
        delta_chunk({"tool_calls": [call_delta(1, id="b", name="second", arguments="{}")]}),
        delta_chunk({"tool_calls": [call_delta(0, id="a", name="first", arguments="{}")]}),
        delta_chunk({}, finish="tool_calls"),
    )
    assert [c.name for c in turn.tool_calls] == ["first", "second"]
    assert [c["id"] for c in turn.raw_message["tool_calls"]] == ["a", "b"]


def test_interleaved_fragments_of_two_calls() -> None:
    turn = run(
        delta_chunk({"tool_calls": [call_delta(0, id="a", name="f", arguments="")]}),
        delta_chunk({"tool_calls": [call_delta(1, id="b", name="g", arguments='{"y"')]}),
        delta_chunk({"tool_calls": [call_delta(0, arguments='{"x": 1}')]}),
        delta_chunk({"tool_calls": [call_delta(1, arguments=": 2}")]}, finish="tool_calls"),
    )
    assert [(c.name, c.arguments) for c in turn.tool_calls] == [
        ("f", '{"x": 1}'),
        ("g", '{"y": 2}'),
    ]


def test_empty_id_and_null_fields_never_overwrite() -> None:
    turn = run(
        delta_chunk({"tool_calls": [call_delta(0, id="call_1", type="function", name="f")]}),
        delta_chunk({"tool_calls": [call_delta(0, id="", type=None, name="", arguments="{}")]}),
        delta_chunk({"tool_calls": [call_delta(0, id=None, function=None)]}, finish="tool_calls"),
    )
    assert [(c.id, c.wire_id, c.name, c.arguments) for c in turn.tool_calls] == [
        ("call_1", "call_1", "f", "{}")
    ]


def test_ids_are_the_servers_or_the_position_and_never_deduplicated_here() -> None:
    turn = run(
        delta_chunk(
            {
                "tool_calls": [
                    call_delta(0, id="functions.f:0", name="f", arguments="{}"),
                    call_delta(1, id="functions.f:0", name="f", arguments="{}"),
                    call_delta(2, name="g", arguments="{}"),
                ]
            },
            finish="tool_calls",
        )
    )
    # the loop makes ids unique in the run (one scheme, in one place): the adapter does not
    assert [c.id for c in turn.tool_calls] == ["functions.f:0", "functions.f:0", "call_2"]
    assert [c.wire_id for c in turn.tool_calls] == ["functions.f:0", "functions.f:0", ""]
    assert turn.raw_message["tool_calls"][2]["id"] == "call_2"  # echo an id the reply can match


def test_deltas_without_index_follow_ids() -> None:
    turn = run(
        delta_chunk({"tool_calls": [{"id": "a", "function": {"name": "f", "arguments": "{"}}]}),
        delta_chunk({"tool_calls": [{"function": {"arguments": "}"}}]}),
        delta_chunk({"tool_calls": [{"id": "b", "function": {"name": "g", "arguments": "{}"}}]}),
        delta_chunk({"tool_calls": [{"id": "a", "function": {"arguments": ""}}]}, finish="stop"),
    )
    assert [(c.name, c.arguments) for c in turn.tool_calls] == [("f", "{}"), ("g", "{}")]


def test_arguments_sent_as_an_object_are_serialised() -> None:
    call = call_delta(0, id="a", name="f", arguments={"city": "Paris"})
    turn = run(delta_chunk({"tool_calls": [call]}, finish="tool_calls"))
    assert json.loads(turn.tool_calls[0].arguments) == {"city": "Paris"}


def test_legacy_function_call_is_used_only_without_tool_calls() -> None:
    turn = run(
        delta_chunk({"function_call": {"name": "f", "arguments": '{"a"'}}),
        delta_chunk({"function_call": {"arguments": ": 1}"}}, finish="function_call"),
    )
    assert [(c.name, c.arguments, c.wire_id) for c in turn.tool_calls] == [("f", '{"a": 1}', "")]
    assert turn.finish_reason == "tool_calls"


def test_usage_on_every_chunk_keeps_the_last_and_null_does_not_erase_it() -> None:
    turn = run(
        delta_chunk({"content": "a"}, usage={"prompt_tokens": 5, "completion_tokens": 1}),
        delta_chunk({"content": "b"}, usage={"prompt_tokens": 5, "completion_tokens": 2}),
        delta_chunk({}, finish="stop", usage=None),
    )
    assert turn.usage == usage(5, 2)


def test_usage_with_infinity_does_not_crash() -> None:
    chunk = json.loads('{"choices": [], "usage": {"prompt_tokens": Infinity}}')
    turn = run(delta_chunk({"content": "x"}, finish="stop"), chunk)
    assert turn.usage.input_tokens == 0


def test_refusal_is_shown_and_kept() -> None:
    accumulator = StreamAccumulator()
    shown = accumulator.feed(
        delta_chunk({"role": "assistant", "content": None, "refusal": "I can"})
    )
    shown += accumulator.feed(delta_chunk({"refusal": "not help."}, finish="stop"))
    turn = accumulator.result()
    assert shown == turn.text == "I cannot help."
    assert turn.raw_message["refusal"] == "I cannot help."


def test_content_filter_keeps_partial_text() -> None:
    turn = run(delta_chunk({"content": "Some"}), delta_chunk({}, finish="content_filter"))
    assert (turn.text, turn.finish_reason) == ("Some", "content_filter")


def test_other_choices_are_ignored() -> None:
    chunk = {
        "choices": [
            {"index": 1, "delta": {"content": "other"}, "finish_reason": None},
            {"index": 0, "delta": {"content": "mine"}, "finish_reason": "stop"},
        ]
    }
    assert run(chunk).text == "mine"


def test_feeding_something_that_is_not_an_object_is_a_model_error() -> None:
    with pytest.raises(ModelError, match="not an object"):
        StreamAccumulator().feed(["not", "a", "chunk"])  # type: ignore[arg-type]


# --- properties ---------------------------------------------------------------------------


def resplit_arguments(chunks: list[dict[str, Any]], cuts: list[int]) -> list[dict[str, Any]]:
    """The same stream with every call's argument text re-cut at the given points."""
    _, turn = assemble(chunks)
    plain = [_without_calls(chunk) for chunk in chunks]
    finish_at = next(
        n for n, c in enumerate(plain) if any(x.get("finish_reason") for x in c["choices"])
    )
    rebuilt = plain[:finish_at]
    for index, call in enumerate(turn.tool_calls):
        opener = call_delta(index, id=call.wire_id, type="function", name=call.name)
        rebuilt.append(delta_chunk({"tool_calls": [opener]}))
        text = call.arguments
        points = sorted({cut % (len(text) + 1) for cut in cuts})
        bounds = [0, *points, len(text)]
        for start, stop in itertools.pairwise(bounds):
            fragment = call_delta(index, arguments=text[start:stop])
            rebuilt.append(delta_chunk({"tool_calls": [fragment]}))
    return rebuilt + plain[finish_at:]


def _without_calls(chunk: dict[str, Any]) -> dict[str, Any]:
    choices = []
    for choice in chunk.get("choices") or []:
        delta = {
            k: v
            for k, v in (choice.get("delta") or {}).items()
            if k not in ("tool_calls", "function_call")
        }
        choices.append({**choice, "delta": delta})
    return {**chunk, "choices": choices}


def _has_tool_calls(chunk: dict[str, Any]) -> bool:
    return any((c.get("delta") or {}).get("tool_calls") for c in chunk.get("choices") or [])


TOOL_FIXTURES = sorted(name for name, e in EXPECTED.items() if e.calls)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    name=st.sampled_from(TOOL_FIXTURES),
    cuts=st.lists(st.integers(min_value=0, max_value=500), max_size=20),
)
def test_resplitting_argument_fragments_changes_nothing(name: str, cuts: list[int]) -> None:
    chunks = chunks_of(name)
    original = summary(assemble(chunks)[1])
    assert summary(assemble(resplit_arguments(chunks, cuts))[1]) == original


@settings(max_examples=60, deadline=None)
@given(order=st.permutations(range(24)))
def test_interleaving_two_calls_changes_nothing(order: list[int]) -> None:
    """Chunks of call 0 and call 1 arrive interleaved; each call's own order is kept."""
    chunks = chunks_of("openai_stream_parallel_tool_calls")
    by_call: dict[int, list[dict[str, Any]]] = {0: [], 1: []}
    for chunk in chunks:
        if _has_tool_calls(chunk):
            by_call[chunk["choices"][0]["delta"]["tool_calls"][0]["index"]].append(chunk)
    picks = [0 if n % 2 == 0 else 1 for n in order]  # a random shuffle of which call goes next
    queues = {k: list(v) for k, v in by_call.items()}
    mixed = [queues[k].pop(0) for k in picks if queues[k]]
    mixed += queues[0] + queues[1]
    rebuilt = [chunks[0], *mixed, *chunks[-2:]]
    assert summary(assemble(rebuilt)[1]) == summary(assemble(chunks)[1])


json_scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8)
)
json_values = st.recursive(
    json_scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)
keys = st.sampled_from(
    ["choices", "delta", "index", "id", "type", "function", "name", "arguments", "content",
     "finish_reason", "usage", "tool_calls", "reasoning_content", "reasoning", "refusal",
     "function_call", "prompt_tokens", "completion_tokens", "prompt_tokens_details",
     "cached_tokens", "error", "object", "message", "code", "role"]
)  # fmt: skip
chunk_like = st.recursive(
    json_scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(keys, inner, max_size=5),
    max_leaves=20,
)


@settings(max_examples=150, deadline=None)
@given(
    chunks=st.lists(st.dictionaries(keys | st.text(max_size=5), chunk_like, max_size=5), max_size=6)
)
def test_arbitrary_chunks_raise_nothing_but_model_errors(chunks: list[dict[str, Any]]) -> None:
    accumulator = StreamAccumulator()
    try:
        for chunk in chunks:
            accumulator.feed(chunk)
        turn = accumulator.result()
    except ModelError:
        accumulator.snapshot()  # still readable for the journal
        return
    json.dumps(turn.raw_message)
    json.dumps(turn.raw, default=str)


fragments = st.none() | st.text(max_size=6)
tool_entries = st.fixed_dictionaries(
    {},
    optional={
        "index": st.none() | st.integers(-2, 3) | st.sampled_from(["0", "1", "x", 1.5]),
        "id": st.none() | st.sampled_from(["", "a", "b"]),
        "type": st.none() | st.sampled_from(["", "function"]),
        "function": st.none()
        | st.fixed_dictionaries(
            {},
            optional={
                "name": st.none() | st.sampled_from(["", "f", "g"]),
                "arguments": fragments | json_values,
            },
        ),
    },
)
deltas = st.fixed_dictionaries(
    {},
    optional={
        "role": st.sampled_from(["assistant", None]),
        "content": fragments,
        "reasoning_content": fragments,
        "reasoning": fragments,
        "refusal": fragments,
        "tool_calls": st.none() | st.lists(tool_entries, max_size=3),
        "function_call": st.none()
        | st.fixed_dictionaries({}, optional={"name": fragments, "arguments": fragments}),
    },
)
choices = st.fixed_dictionaries(
    {"delta": deltas},
    optional={
        "index": st.sampled_from([0, 1, None]),
        "finish_reason": st.none()
        | st.sampled_from(
            ["stop", "length", "tool_calls", "", "weird", "insufficient_system_resource"]
        ),
    },
)
usages = st.none() | st.dictionaries(
    st.sampled_from(
        ["prompt_tokens", "completion_tokens", "prompt_tokens_details", "prompt_cache_hit_tokens"]
    ),
    json_values,
    max_size=4,
)
structured_chunks = st.fixed_dictionaries(
    {"choices": st.lists(choices, max_size=2)}, optional={"usage": usages}
)


@settings(max_examples=200, deadline=None)
@given(chunks=st.lists(structured_chunks, max_size=8))
def test_structured_random_streams_assemble_or_fail_cleanly(chunks: list[dict[str, Any]]) -> None:
    accumulator = StreamAccumulator()
    shown = "".join(accumulator.feed(chunk) for chunk in chunks)
    try:
        turn = accumulator.result()
    except ModelError:
        reason = accumulator.snapshot()["finish_reason"]
        assert reason in (None, "insufficient_system_resource")
        return
    if "refusal" not in turn.raw_message:
        assert turn.text == shown
    assert all(c.id for c in turn.tool_calls)
    assert [c["id"] for c in turn.raw_message.get("tool_calls", [])] == [
        c.wire_id or c.id for c in turn.tool_calls
    ]
    json.dumps(turn.raw_message)
