"""The SSE decoder against the WHATWG rules, the shared framing cases and every .sse fixture."""

from __future__ import annotations

import itertools
import json
import os
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reactloop.errors import ModelError
from reactloop.models.sse import SSEDecoder, SSEEvent, iter_sse_events, iter_sse_json

WIRE_FORMATS = Path(
    os.environ.get("REACTLOOP_WIRE_FORMATS") or Path(__file__).resolve().parents[1] / "wire_formats"
)
FRAMING_CASES = json.loads((WIRE_FORMATS / "sse_framing_edge_cases.json").read_text())
SSE_FIXTURES = sorted(WIRE_FORMATS.glob("*.sse"))


def decode(reads: list[bytes]) -> list[SSEEvent]:
    return list(iter_sse_events(reads))


def case_reads(case: dict[str, object]) -> list[bytes]:
    if "raw" in case:
        return [str(case["raw"]).encode()]
    return [bytes.fromhex(chunk) for chunk in case["raw_bytes_hex_chunks"]]  # type: ignore[attr-defined]


def data_up_to_done(events: list[SSEEvent]) -> list[str]:
    data: list[str] = []
    for event in events:
        data.append(event.data)
        if event.data == "[DONE]":
            break
    return data


def split_at(blob: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({min(max(cut, 0), len(blob)) for cut in cuts})
    bounds = [0, *points, len(blob)]
    return [blob[a:b] for a, b in itertools.pairwise(bounds)]


@pytest.mark.parametrize("case", FRAMING_CASES, ids=[c["name"] for c in FRAMING_CASES])
def test_framing_case(case: dict[str, object]) -> None:
    reads = case_reads(case)
    for feed in (reads, [bytes([b]) for b in b"".join(reads)]):  # as given, then byte by byte
        events = decode(feed)
        if "expected_data" in case:
            assert data_up_to_done(events) == case["expected_data"]
        else:
            got = [{"event": e.event, "data": e.data} for e in events]
            assert got == case["expected_events"]


def test_the_fixture_directory_is_there() -> None:
    assert len(SSE_FIXTURES) >= 10, f"no .sse fixtures under {WIRE_FORMATS}"


@pytest.mark.parametrize("path", SSE_FIXTURES, ids=[p.name for p in SSE_FIXTURES])
def test_sse_fixture_matches_its_jsonl_payloads(path: Path) -> None:
    blob = path.read_bytes()
    events = decode([blob])
    assert events, "every fixture holds at least one event"
    for event in events:
        if event.data != "[DONE]":
            payload = json.loads(event.data)
            if event.event != "message":  # Anthropic names each event after its payload type
                assert payload["type"] == event.event
    twin = path.with_suffix(".jsonl")
    if twin.exists():
        expected = [json.loads(line) for line in twin.read_text().splitlines() if line.strip()]
        assert list(iter_sse_json(blob)) == expected


def test_openai_streams_end_with_done_and_iter_stops_there() -> None:
    blob = (WIRE_FORMATS / "openai_stream_tool_call.sse").read_bytes()
    assert decode([blob])[-1].data == "[DONE]"
    payloads = list(iter_sse_json(blob + b'data: {"after": "done"}\n\n'))
    assert payloads[-1]["choices"] == []
    assert all("after" not in p for p in payloads)


def test_keepalive_comments_before_the_first_event_are_skipped() -> None:
    payloads = list(iter_sse_json((WIRE_FORMATS / "deepseek_keepalive_stream.sse").read_bytes()))
    assert [p["choices"][0]["delta"].get("content") for p in payloads] == ["", "Hello", "!", ""]


def test_crlf_split_between_two_reads_is_one_line_end() -> None:
    decoder = SSEDecoder()
    assert decoder.feed(b"data: a\r") == []
    assert decoder.feed(b"\ndata: b\r") == []
    events = decoder.feed(b"\n\r\n")
    assert events == [SSEEvent(data="a\nb")]


def test_a_lone_cr_ends_a_line() -> None:
    assert decode([b"data: a\rdata: b\r\r"]) == [SSEEvent(data="a\nb")]


def test_blank_line_at_the_end_of_a_read_dispatches_at_once() -> None:
    decoder = SSEDecoder()
    assert decoder.feed(b'data: {"a":1}\r\n\r\n') == [SSEEvent(data='{"a":1}')]


def test_byte_order_mark_is_dropped_even_when_split() -> None:
    bom = "\ufeff".encode()
    assert decode([bom[:1], bom[1:] + b"data: x\n\n"]) == [SSEEvent(data="x")]


def test_a_field_without_colon_and_unknown_fields() -> None:
    events = decode([b"data\nfoo: bar\ndata: x\n\n"])
    assert events == [SSEEvent(data="\nx")]


def test_id_and_retry_are_kept() -> None:
    events = decode([b"id: 7\nretry: 1500\nevent: delta\ndata: x\n\ndata: y\n\n"])
    assert events[0] == SSEEvent(event="delta", data="x", id="7", retry=1500)
    assert events[1] == SSEEvent(data="y", id="7", retry=1500)  # the last id persists


def test_unterminated_event_is_discarded_but_kept_for_diagnostics() -> None:
    decoder = SSEDecoder()
    assert decoder.feed(b'data: {"a":1}\n\ndata: {"usage"') == [SSEEvent(data='{"a":1}')]
    assert decoder.close() == []
    assert decoder.discarded == '{"usage"'


def test_invalid_utf8_is_replaced_not_fatal() -> None:
    assert decode([b"data: \xff\xfe\n\n"]) == [SSEEvent(data="\ufffd\ufffd")]


def test_long_line_in_many_small_reads() -> None:
    payload = "x" * 20_000
    blob = f"data: {payload}\n\n".encode()
    assert decode([blob[i : i + 7] for i in range(0, len(blob), 7)]) == [SSEEvent(data=payload)]


def test_text_input_is_accepted() -> None:
    assert [p["a"] for p in iter_sse_json('data: {"a": 1}\n\ndata: [DONE]\n\n')] == [1]


def test_invalid_json_payload_is_a_model_error_that_shows_it() -> None:
    with pytest.raises(ModelError, match=r"not valid JSON.*oops"):
        list(iter_sse_json(b"data: oops{\n\n"))


def test_payload_that_is_not_an_object_is_a_model_error() -> None:
    with pytest.raises(ModelError, match="not a JSON object"):
        list(iter_sse_json(b"data: [1, 2]\n\n"))


@settings(max_examples=60, deadline=None)
@given(
    name=st.sampled_from([p.name for p in SSE_FIXTURES]),
    cuts=st.lists(st.integers(min_value=0, max_value=20_000), max_size=40),
)
def test_any_split_of_a_fixture_decodes_the_same(name: str, cuts: list[int]) -> None:
    blob = (WIRE_FORMATS / name).read_bytes()
    assert decode(split_at(blob, cuts)) == decode([blob])


line_ends = st.sampled_from(["\n", "\r\n", "\r"])
event_names = st.text(
    st.characters(blacklist_characters="\r\n\x00", blacklist_categories=("Cs",)),
    min_size=1,
    max_size=8,
)
data_text = st.text(st.characters(blacklist_characters="\r", blacklist_categories=("Cs",)))


@settings(max_examples=150, deadline=None)
@given(
    events=st.lists(st.tuples(st.none() | event_names, data_text), max_size=6),
    end=line_ends,
    cuts=st.lists(st.integers(min_value=0, max_value=400), max_size=12),
)
def test_encoded_events_decode_back(
    events: list[tuple[str | None, str]], end: str, cuts: list[int]
) -> None:
    wire = ""
    for name, data in events:
        if name is not None:
            wire += f"event: {name}{end}"
        wire += "".join(f"data: {line}{end}" for line in data.split("\n")) + end
    decoded = decode(split_at(wire.encode(), cuts))
    assert [e.data for e in decoded] == [data for _, data in events]
    assert [e.event for e in decoded] == [name or "message" for name, _ in events]


@settings(max_examples=200, deadline=None)
@given(reads=st.lists(st.binary(max_size=64), max_size=8))
def test_arbitrary_bytes_never_raise(reads: list[bytes]) -> None:
    decoder = SSEDecoder()
    events = [event for read in reads for event in decoder.feed(read)] + decoder.close()
    assert all(isinstance(e.data, str) and isinstance(e.event, str) for e in events)
