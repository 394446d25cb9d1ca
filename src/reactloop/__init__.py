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

from typing import TYPE_CHECKING

from reactloop._version import __version__
from reactloop.agent import Agent
from reactloop.errors import (
    ERROR_KINDS,
    JournalError,
    MissingDependency,
    ModelError,
    ProviderError,
    ReactLoopError,
    ToolError,
    UsageError,
)
from reactloop.journal.events import Event, Observer
from reactloop.limits import Limits, StopReason
from reactloop.loop.completion_checks import read_checklist
from reactloop.messages import Message, ModelTurn, ToolCall, ToolResult, ToolSpec, Usage
from reactloop.models.base import Model, ModelRequest, ModelSettings
from reactloop.models.react import ReactTextModel
from reactloop.output.spec import InvalidOutput
from reactloop.result import PendingCall, RunResult
from reactloop.support import lazy_names
from reactloop.tools.base import Tool, tool
from reactloop.tools.prepared import Approver, Defer, PreparedCall
from reactloop.tools.toolbox import Toolbox

if TYPE_CHECKING:  # the names loaded on first use, below, as type checkers see them
    from reactloop.approval import TerminalApprover
    from reactloop.conversation import Conversation
    from reactloop.journal.otel import OTelObserver
    from reactloop.journal.writer import Journal, read_journal
    from reactloop.loop.async_runner import RunStream
    from reactloop.loop.command_check import CommandCheck
    from reactloop.models import resolve_model
    from reactloop.models.anthropic import AnthropicModel
    from reactloop.models.local import LocalLlamaModel
    from reactloop.models.openai import OpenAIChatModel
    from reactloop.models.responses import OpenAIResponsesModel
    from reactloop.models.scripted import FunctionModel, ScriptedModel
    from reactloop.output.json_schema import JSONSchema


# Adapter classes, importable from here without ``import reactloop`` importing their SDKs, and
# the names a run does not need, loaded on first use (``import reactloop`` stays fast).
_LAZY = {
    "OpenAIChatModel": "reactloop.models.openai",
    "LocalLlamaModel": "reactloop.models.local",
    "AnthropicModel": "reactloop.models.anthropic",
    "OpenAIResponsesModel": "reactloop.models.responses",
    "OTelObserver": "reactloop.journal.otel",
    "CommandCheck": "reactloop.loop.command_check",
    "Conversation": "reactloop.conversation",
    "FunctionModel": "reactloop.models.scripted",
    "JSONSchema": "reactloop.output.json_schema",
    "resolve_model": "reactloop.models",
    "RunStream": "reactloop.loop.async_runner",
    "Journal": "reactloop.journal.writer",
    "ScriptedModel": "reactloop.models.scripted",
    "TerminalApprover": "reactloop.approval",
    "read_journal": "reactloop.journal.writer",
}

__getattr__ = lazy_names.lazy_getattr(__name__, _LAZY)


__all__ = [
    "ERROR_KINDS",
    "Agent",
    "AnthropicModel",
    "Approver",
    "CommandCheck",
    "Conversation",
    "Defer",
    "Event",
    "FunctionModel",
    "InvalidOutput",
    "JSONSchema",
    "Journal",
    "JournalError",
    "Limits",
    "LocalLlamaModel",
    "Message",
    "MissingDependency",
    "Model",
    "ModelError",
    "ModelRequest",
    "ModelSettings",
    "ModelTurn",
    "OTelObserver",
    "Observer",
    "OpenAIChatModel",
    "OpenAIResponsesModel",
    "PendingCall",
    "PreparedCall",
    "ProviderError",
    "ReactLoopError",
    "ReactTextModel",
    "RunResult",
    "RunStream",
    "ScriptedModel",
    "StopReason",
    "TerminalApprover",
    "Tool",
    "ToolCall",
    "ToolError",
    "ToolResult",
    "ToolSpec",
    "Toolbox",
    "Usage",
    "UsageError",
    "__version__",
    "read_checklist",
    "read_journal",
    "resolve_model",
    "tool",
]
