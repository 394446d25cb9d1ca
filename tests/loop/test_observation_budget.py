"""The observation budget: long output is cut to head and tail with a handle, and the built-in
``read_output`` tool, offered from the first cut on, reads every part of it back."""

from __future__ import annotations

import json
import re
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from helpers import call
from reactloop import Agent, FunctionModel, Limits, ModelTurn, StopReason, ToolCall, tool
from reactloop.loop.runtime.executor import run_now
from reactloop.models.base import ModelRequest
from reactloop.tools.output_text import cut_head_tail
from reactloop.tools.read_output import READ_OUTPUT, OutputStore
from reactloop.tools.toolbox import Toolbox

PAGE = "".join(f"line {i:05d}: {'abcdefghij' * 4}\n" for i in range(1200))  # 57,600 chars
MARK = re.compile(r'\[(\d+) characters cut; read_output handle="([^"]+)" start=(\d+)\]')
NEXT = re.compile(r"^\[characters (\d+)-(\d+) of (\d+); (?:next: start=\d+|this is the end)\]\n")


@tool(read_only=True)
def fetch_page(url: str) -> str:
    """Fetch a web page."""
    return PAGE


@tool(read_only=True)
def failing(x: int) -> str:
    """Fail with a long message."""
    raise ValueError("E" * 30_000)


class Reader:
    """A model that fetches the page, then reads what was cut with ``read_output`` until the
    end, then answers with the text it reassembled."""

    def __init__(self) -> None:
        self.head = self.tail = ""
        self.middle: list[str] = []
        self.tools_seen: list[tuple[str, ...]] = []
        self.handle = ""

    def __call__(self, request: ModelRequest) -> ModelTurn:
        self.tools_seen.append(tuple(spec.name for spec in request.tools))
        last = request.messages[-1]
        if last.role != "tool":
            return ModelTurn(tool_calls=(call("fetch_page", "c1", url="https://example.org"),))
        output = json.loads(last.content)["output"]
        if last.name == "fetch_page":
            match = MARK.search(output)
            assert match is not None
            self.handle = match.group(2)
            self.head, self.tail = output[: match.start() - 1], output[match.end() + 1 :]
            return self.read(int(match.group(3)))
        header = NEXT.match(output)
        assert header is not None
        self.middle.append(output[header.end() :])
        end, total = int(header.group(2)), int(header.group(3))
        if end < total - len(self.tail):
            return self.read(end)
        return ModelTurn(text="read it all")

    def read(self, start: int) -> ModelTurn:
        arguments = {"handle": self.handle, "start": start}
        return ModelTurn(tool_calls=(call(READ_OUTPUT, f"r{len(self.middle)}", **arguments),))

    def reassembled(self) -> str:
        middle = "".join(self.middle)
        return self.head + middle[: len(PAGE) - len(self.head) - len(self.tail)] + self.tail


def _run(reader: Reader, toolbox: Toolbox, budget: int) -> Agent:
    limits = Limits(max_observation_chars=budget, max_model_calls=40, max_tool_calls=40)
    return Agent(FunctionModel(reader), toolbox, limits=limits)


def test_a_spilled_page_is_read_back_whole_through_read_output(tmp_path: Path) -> None:
    reader = Reader()
    agent = _run(reader, Toolbox([fetch_page], spill_dir=tmp_path), 4000)
    result = agent.run("read the page")
    assert result.stop_reason is StopReason.FINAL_ANSWER
    assert reader.reassembled() == PAGE
    assert (tmp_path / "c1-fetch_page.txt").read_text(encoding="utf-8") == PAGE
    tool_messages = [m for m in result.history if m.role == "tool"]
    assert len(tool_messages) > 10
    assert all(len(json.loads(m.content)["output"]) <= 4000 for m in tool_messages)


def test_without_a_spill_folder_the_page_is_read_back_from_memory() -> None:
    reader = Reader()
    result = _run(reader, Toolbox([fetch_page]), 10_000).run("read the page")
    assert result.stop_reason is StopReason.FINAL_ANSWER
    assert reader.reassembled() == PAGE


def test_read_output_is_offered_from_the_first_cut_on_and_per_run() -> None:
    reader = Reader()
    toolbox = Toolbox([fetch_page])
    agent = _run(reader, toolbox, 20_000)
    agent.run("read the page")
    assert reader.tools_seen[0] == ("fetch_page",)
    assert all(seen == ("fetch_page", READ_OUTPUT) for seen in reader.tools_seen[1:])
    assert toolbox.specs == (fetch_page.spec,)  # the agent's own toolbox is unchanged
    second = Reader()
    agent.model = FunctionModel(second)
    agent.run("again")
    assert second.tools_seen[0] == ("fetch_page",)  # a new run starts without it


def test_the_default_budget_is_the_toolboxs_own() -> None:
    seen: list[str] = []

    def model(request: ModelRequest) -> ModelTurn:
        if request.messages[-1].role == "tool":
            seen.append(request.messages[-1].content)
            return ModelTurn(text="done")
        return ModelTurn(tool_calls=(call("fetch_page", "c1", url="u"),))

    Agent(FunctionModel(model), Toolbox([fetch_page], max_output_chars=1000)).run("go")
    body = json.loads(seen[0])
    assert body["truncated"] is True and len(body["output"]) <= 1000
    assert MARK.search(body["output"]) is not None


def test_a_long_error_is_cut_and_readable_too() -> None:
    box = Toolbox([failing], max_output_chars=500)
    result = box.execute(ToolCall(id="e1", name="failing", arguments='{"x": 1}'))
    assert not result.ok and result.truncated and result.error is not None
    assert len(result.error) <= 500
    match = MARK.search(result.error)
    assert match is not None
    read = box.execute(
        ToolCall(id="e2", name=READ_OUTPUT, arguments=json.dumps({"handle": "e1", "start": 0}))
    )
    assert read.ok and "ValueError: EEEE" in read.output
    assert len(read.output) <= 500


def test_a_read_never_exceeds_the_budget_and_an_unknown_handle_is_an_observation() -> None:
    box = Toolbox([fetch_page], max_output_chars=300)
    box.execute(ToolCall(id="p", name="fetch_page", arguments='{"url": "u"}'))
    arguments = json.dumps({"handle": "p", "start": 100, "length": 10**9})
    read = box.execute(ToolCall(id="r", name=READ_OUTPUT, arguments=arguments))
    assert read.ok and not read.truncated and len(read.output) <= 300
    missing = json.dumps({"handle": "nope"})
    wrong = box.execute(ToolCall(id="w", name=READ_OUTPUT, arguments=missing))
    assert not wrong.ok and "no output has the handle 'nope'" in (wrong.error or "")


def test_a_concurrent_batch_of_cut_outputs_gets_one_handle_each() -> None:
    box = Toolbox([fetch_page], max_output_chars=1000)
    calls = [ToolCall(id="same", name="fetch_page", arguments='{"url": "u"}') for _ in range(6)]
    results = run_now(box, calls)
    handles = {MARK.search(r.output).group(2) for r in results}  # type: ignore[union-attr]
    assert len(handles) == 6
    for handle in handles:
        assert box.outputs.read(handle, 0, len(PAGE)) == PAGE


def test_memory_is_bounded_the_oldest_unsaved_output_goes_first() -> None:
    store = OutputStore(memory_cap=100)
    first = store.keep("a", "t", "x" * 80, None)
    second = store.keep("b", "t", "y" * 80, None)
    assert store.read(second, 0, 5) == "yyyyy"
    try:
        store.read(first, 0, 5)
    except Exception as exc:
        assert "no longer held" in str(exc)
    else:
        raise AssertionError("the oldest output should have been dropped")


@settings(max_examples=200, deadline=None)
@given(
    text=st.one_of(
        st.text(min_size=0, max_size=3000),
        st.text(alphabet='ab\n"\\', min_size=0, max_size=200_000),
    ),
    limit=st.integers(min_value=120, max_value=5000),
)
def test_a_cut_fits_the_budget_and_its_mark_locates_exactly_what_is_missing(
    text: str, limit: int
) -> None:
    cut = cut_head_tail(text, limit, handle="h_1")
    if len(text) <= limit:
        assert cut == text
        return
    assert len(cut) <= limit
    match = MARK.search(cut)
    assert match is not None
    missing, start = int(match.group(1)), int(match.group(3))
    head, tail = cut[: match.start() - 1], cut[match.end() + 1 :]
    assert start == len(head) and len(head) + missing + len(tail) == len(text)
    assert head + text[start : start + missing] + tail == text
