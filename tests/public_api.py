"""The declared public API: the module paths users may import, and what each exports.

Everything else under ``reactloop`` is private and may change without notice. Docs import only
these paths (tests/test_docs_snippets.py); each module's ``__all__`` is pinned
(tests/test_public_api.py). A change here is a change of the public API: say so in the commit.
"""

from __future__ import annotations

PUBLIC_API: dict[str, list[str]] = {
    "reactloop": [
        "ERROR_KINDS", "Agent", "AnthropicModel", "Approver", "CommandCheck", "Conversation",
        "Defer", "Event", "FunctionModel", "InvalidOutput", "JSONSchema", "Journal", "JournalError",
        "Limits", "LocalLlamaModel", "Message", "MissingDependency", "Model", "ModelError",
        "ModelRequest", "ModelSettings", "ModelTurn", "OTelObserver", "Observer",
        "OpenAIChatModel", "OpenAIResponsesModel", "PendingCall", "PreparedCall", "ProviderError",
        "ReactLoopError", "ReactTextModel",
        "RunResult", "RunStream", "ScriptedModel", "StopReason", "TerminalApprover", "Tool",
        "ToolCall", "ToolError", "ToolResult", "ToolSpec", "Toolbox", "Usage", "UsageError",
        "__version__", "read_checklist", "read_journal", "resolve_model", "tool",
    ],
    "reactloop.models": [
        "PROVIDERS", "Model", "ModelRequest", "ModelSettings", "ReactFormat",
        "choose_default_model", "resolve_model", "split_spec",
    ],
    "reactloop.models.openai": ["OpenAIChatModel", "from_spec"],
    "reactloop.models.local": ["LocalLlamaModel", "from_spec"],
    "reactloop.models.react": ["ReactTextModel"],
    "reactloop.tools": [
        "FAMILIES", "ToolContext", "build_tools", "calculator_tool", "lookup_tool",
        "parse_families",
    ],
    "reactloop.tools.mcp": [
        "ElicitationAnswer", "ElicitationRequest", "MCPServers", "MCPStartError", "MCPTool",
        "ServerConfig", "ask_on_terminal", "await_answer", "load_config", "mcp_tools",
        "open_mcp_tools", "stdio_server", "url_server",
    ],
    "reactloop.eval": [
        "EpisodeRecord", "EpisodeRun", "EpisodeSpec", "EvalConfig", "EvalOutcome", "Resumed",
        "Rung", "SUITES", "Task", "check_answer",
        "load_models_file", "load_suite", "load_tasks", "mcnemar_exact", "pass_at_k",
        "pass_hat_k", "run_episode", "run_eval", "rungs_from_specs", "wilson_interval",
    ],
    "reactloop.sandbox": [
        "CommandResult", "ResourceLimits", "Workspace", "run_command", "sandbox_mode",
    ],
    "reactloop.usage": [
        "CompactionCost", "CostModel", "PrefixIssue", "Price", "PriceTable", "RunUsage",
        "StepQuality", "StepUsage", "UsageReport", "check_prefix", "compaction_costs",
        "estimated_step_usages", "fit_cost_model", "predicted_input_tokens",
        "step_quality", "step_usages", "usage_from", "usage_report",
    ],
    "reactloop.replay": [
        "Divergence", "ReplayModel", "ReplayPlan", "ReplayReport", "compare", "replay",
    ],
    "reactloop.viewer": ["render_events", "render_html"],
    "reactloop.testing": [
        "FakeAnthropicServer", "FakeOpenAIServer", "FakeResponsesServer", "RecordedRequest",
        "Reply", "anthropic_error", "anthropic_fixture_replies", "completion", "cut_off_call",
        "disconnect", "error_reply", "event_stream", "failed_response", "fixture_replies",
        "free_port", "function_call", "json_reply", "message", "reasoning_item", "refusal",
        "request_problem", "response", "response_events", "response_stream", "responses_error",
        "responses_fixture_replies", "sse_reply", "sse_text_reply", "stream_events", "thinking",
        "tool_call", "tool_use",
    ],
    "reactloop.models.anthropic": ["AnthropicModel", "from_spec"],
    "reactloop.models.responses": ["OpenAIResponsesModel", "from_spec"],
}  # fmt: skip

# Importable from ``reactloop`` on first use, so that ``import reactloop`` loads no SDK (and
# nothing a run does not need: the scripted models, the journal, conversations, approval).
LAZY_FROM_REACTLOOP: dict[str, str] = {
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
# Adapter SDKs and other heavy optional packages ``import reactloop`` must not load.
NOT_LOADED_BY_IMPORT = (
    "openai", "anthropic", "xllamacpp", "mcp", "httpx", "ray", "matplotlib", "opentelemetry",
    "jsonschema",
)  # fmt: skip
