"""Speed of the stream decoders and of tool-call recovery from text.

    python benchmarks/streaming_parsers.py [--repeat 7] [--wire-formats tests/wire_formats]

Prints the median of each measurement:

- ``SSEDecoder``: a 1 MiB OpenAI stream (the parallel-tool-call fixture repeated) fed in 4 KiB
  reads, and one fixture fed byte by byte;
- ``StreamAccumulator``: the cost per chunk of the parallel-tool-call stream;
- ``extract_tool_calls``: a typical reply, and degenerate replies (a tag repeated until 50 KB
  and 200 KB) whose times must grow in proportion to their length, not its square.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from pathlib import Path

from reactloop.models.openai.hermes import extract_tool_calls
from reactloop.models.openai.stream import StreamAccumulator
from reactloop.models.sse import SSEDecoder, iter_sse_json

DEFAULT_WIRE_FORMATS = Path(__file__).resolve().parents[1] / "tests" / "wire_formats"


def median_seconds(action: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        action()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def decode_all(reads: list[bytes]) -> int:
    decoder = SSEDecoder()
    count = sum(len(decoder.feed(read)) for read in reads)
    return count + len(decoder.close())


def accumulate(chunks: list[dict[str, object]]) -> None:
    accumulator = StreamAccumulator()
    for chunk in chunks:
        accumulator.feed(chunk)
    accumulator.result()


TYPICAL_REPLY = (
    'Let me check.\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n'
    "</tool_call>"
)


def cases(wire_formats: Path) -> list[tuple[str, Callable[[], object], int]]:
    """(name, action, how many times more than ``--repeat`` to run it)."""
    fixture = (wire_formats / "openai_stream_parallel_tool_calls.sse").read_bytes()
    blob = fixture.replace(b"data: [DONE]\n\n", b"") * (2**20 // len(fixture) + 1)
    reads = [blob[i : i + 4096] for i in range(0, len(blob), 4096)]
    single_bytes = [bytes([b]) for b in fixture]
    chunks = list(iter_sse_json(fixture))
    small, large = "<tool_call>{" * (50_000 // 12), "<tool_call>{" * (200_000 // 12)
    return [
        (f"SSE decode, {len(blob) >> 20} MiB in 4 KiB reads", lambda: decode_all(reads), 1),
        (f"SSE decode, {len(fixture)} B byte by byte", lambda: decode_all(single_bytes), 1),
        (f"StreamAccumulator, {len(chunks)} chunks", lambda: accumulate(chunks), 20),
        ("extract_tool_calls, typical reply", lambda: extract_tool_calls(TYPICAL_REPLY), 20),
        ("extract_tool_calls, 50 KB of '<tool_call>{'", lambda: extract_tool_calls(small), 1),
        ("extract_tool_calls, 200 KB of '<tool_call>{'", lambda: extract_tool_calls(large), 1),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--wire-formats", type=Path, default=DEFAULT_WIRE_FORMATS)
    args = parser.parse_args()
    rows = [
        (name, median_seconds(action, args.repeat * factor))
        for name, action, factor in cases(args.wire_formats)
    ]
    width = max(len(name) for name, _ in rows)
    for name, seconds in rows:
        print(f"{name:<{width}}  {seconds * 1000:9.3f} ms")


if __name__ == "__main__":
    main()
