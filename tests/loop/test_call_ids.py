"""Call ids: unique for our bookkeeping, the provider's own id kept for echoing."""

from __future__ import annotations

from reactloop import Agent, FunctionModel, ModelTurn, ToolCall


def test_missing_empty_and_duplicate_ids_are_made_unique(seed_tools):
    turns = iter(
        [
            ModelTurn(
                tool_calls=(
                    ToolCall(id="", name="calculator", arguments='{"expression": "1"}', wire_id=""),
                    ToolCall(id="dup", name="calculator", arguments='{"expression": "2"}'),
                    ToolCall(id="dup", name="calculator", arguments='{"expression": "3"}'),
                )
            ),
            ModelTurn(
                tool_calls=(ToolCall(id="dup", name="calculator", arguments='{"expression": "4"}'),)
            ),
            ModelTurn(text="done"),
        ]
    )
    result = Agent(FunctionModel(lambda request: next(turns)), seed_tools).run("q")
    assert result.answer == "done"
    calls = [c for m in result.history if m.role == "assistant" for c in m.tool_calls]
    ids = [c.id for c in calls]
    assert len(set(ids)) == 4 and all(ids)
    # The provider's ids are kept for echoing; a call it gave no id echoes the loop's.
    assert [c.echo_id for c in calls] == [ids[0], "dup", "dup", "dup"]
    tool_ids = [m.tool_call_id for m in result.history if m.role == "tool"]
    assert tool_ids == ids
