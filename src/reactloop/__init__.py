"""reactloop: a harness for ReAct agents. The model proposes; the code decides.

from reactloop import Agent, ScriptedModel, tool

@tool(read_only=True)
def add(a: int, b: int) -> int:
    "Add two integers."
    return a + b

model = ScriptedModel([
    {"tool_calls": [{"name": "add", "arguments": {"a": 2, "b": 3}}]},
    {"content": "5"},
])
result = Agent(model, [add]).run("What is 2 + 3?")
assert result.answer == "5"
"""

from reactloop.agent import Agent
from reactloop.errors import (
    JournalError,
    MissingDependency,
    ModelError,
    ProviderError,
    ReactLoopError,
    ToolError,
    UsageError,
)
from reactloop.events import Event
from reactloop.journal import Journal, read_journal
from reactloop.limits import Limits, StopReason
from reactloop.messages import Message, ModelTurn, ToolCall, ToolResult, ToolSpec, Usage
from reactloop.models import ModelSettings, resolve_model
from reactloop.models.base import Model, ModelRequest
from reactloop.models.react_text import ReactTextModel
from reactloop.models.scripted import FunctionModel, ScriptedModel
from reactloop.result import RunResult
from reactloop.tools.base import Tool, tool
from reactloop.tools.toolbox import Toolbox

__version__ = "0.1.0"

__all__ = [
    "Agent",
    "Event",
    "FunctionModel",
    "Journal",
    "JournalError",
    "Limits",
    "Message",
    "MissingDependency",
    "Model",
    "ModelError",
    "ModelRequest",
    "ModelSettings",
    "ModelTurn",
    "ProviderError",
    "ReactLoopError",
    "ReactTextModel",
    "RunResult",
    "ScriptedModel",
    "StopReason",
    "Tool",
    "ToolCall",
    "ToolError",
    "ToolResult",
    "ToolSpec",
    "Toolbox",
    "Usage",
    "UsageError",
    "__version__",
    "read_journal",
    "resolve_model",
    "tool",
]
