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
from reactloop.events import Event, Observer
from reactloop.finishcheck import read_checklist
from reactloop.lazy import lazy_getattr
from reactloop.limits import Limits, StopReason
from reactloop.messages import Message, ModelTurn, ToolCall, ToolResult, ToolSpec, Usage
from reactloop.models.base import Model, ModelRequest
from reactloop.models.react import ReactTextModel
from reactloop.output import InvalidOutput
from reactloop.prepared import Approver, PreparedCall
from reactloop.result import RunResult
from reactloop.tools.base import Tool, tool
from reactloop.tools.toolbox import Toolbox

if TYPE_CHECKING:  # the names loaded on first use, below, as type checkers see them
    from reactloop.approval import TerminalApprover
    from reactloop.asyncrun import RunStream
    from reactloop.conversation import Conversation
    from reactloop.journal import Journal, read_journal
    from reactloop.models import ModelSettings, resolve_model
    from reactloop.models.scripted import FunctionModel, ScriptedModel
    from reactloop.output_schema import JSONSchema

__version__ = "0.1.0"

# Adapter classes, importable from here without ``import reactloop`` importing their SDKs, and
# the names a run does not need, loaded on first use (``import reactloop`` stays fast).
_LAZY = {
    "OpenAIChatModel": "reactloop.models.openai",
    "LocalLlamaModel": "reactloop.models.local",
    "AnthropicModel": "reactloop.models.anthropic",
    "OpenAIResponsesModel": "reactloop.models.responses",
    "OTelObserver": "reactloop.otel",
    "CommandCheck": "reactloop.commandcheck",
    "Conversation": "reactloop.conversation",
    "FunctionModel": "reactloop.models.scripted",
    "JSONSchema": "reactloop.output_schema",
    "ModelSettings": "reactloop.models",
    "resolve_model": "reactloop.models",
    "RunStream": "reactloop.asyncrun",
    "Journal": "reactloop.journal",
    "ScriptedModel": "reactloop.models.scripted",
    "TerminalApprover": "reactloop.approval",
    "read_journal": "reactloop.journal",
}

__getattr__ = lazy_getattr(__name__, _LAZY)


__all__ = [
    "ERROR_KINDS",
    "Agent",
    "Approver",
    "Conversation",
    "Event",
    "FunctionModel",
    "InvalidOutput",
    "JSONSchema",
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
    "OTelObserver",
    "Observer",
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
