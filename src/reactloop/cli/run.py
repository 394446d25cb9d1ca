"""``reactloop run TASK``: the options, then ``runner.run_from_cli`` does the work."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from reactloop.cli.mcp_options import mcp_options
from reactloop.cli.options import MAX_SECONDS, RunOptions
from reactloop.cli.run_agent import run_from_cli
from reactloop.cli.task_input import read_task
from reactloop.cli.usage_errors import CliError, FiniteFloat
from reactloop.errors import ModelError, UsageError
from reactloop.support.text import text_problem
from reactloop.tools.registry import FAMILIES
from reactloop.tools.search import SEARCH_MODES

_PROTOCOL_HELP = (
    "How tools reach the model: native (the provider's tool calling), text (Thought / Action "
    "/ Observation in plain text, with a stop sequence), auto (native where the model has it)."
)


@click.command()
@click.argument("task", required=False)
@click.option(
    "--task-file",
    type=click.Path(path_type=Path, dir_okay=False, allow_dash=True),
    help="Read the task from FILE (UTF-8; - for stdin) instead of TASK: no command-line "
    "length limit. TASK '-', or no TASK with a pipe on stdin, reads stdin too.",
)
@click.option(
    "--model",
    help="PROVIDER[:NAME], e.g. openai:gpt-4o-mini, scripted:FILE, local. [default: "
    "$REACTLOOP_MODEL, else the provider whose key or URL is set ($OPENAI_BASE_URL, "
    "$OPENAI_API_KEY, $ANTHROPIC_API_KEY, $DEEPSEEK_API_KEY), else a local Ollama if it "
    "answers, else the embedded model; the first line says which and why]",
)
@click.option("--base-url", help="Base URL of an OpenAI-compatible server (…/v1).")
@click.option(
    "--api",
    type=click.Choice(["chat", "responses"]),
    help="The wire protocol of an OpenAI-compatible provider: chat (/chat/completions) or "
    "responses (/responses, the Responses API). [default: chat; responses: for responses:NAME]",
)
@click.option(
    "--server-state",
    is_flag=True,
    help="Responses API: the server stores the conversation (previous_response_id) and each "
    "call sends only what is new; no compaction. [default: stateless, the whole history]",
)
@click.option(
    "--protocol",
    type=click.Choice(["auto", "native", "text"]),
    default="auto",
    show_default=True,
    help=_PROTOCOL_HELP,
)
@click.option(
    "--tool-choice",
    default="auto",
    show_default=True,
    help="auto, none, required or a tool name.",
)
@click.option(
    "--tools",
    help=f"Tool families, comma-separated: {', '.join(FAMILIES)}; "
    "none (or '') for no built-in tool, e.g. MCP tools only. "
    "[default: calculator, plus lookup with --notes]",
)
@click.option(
    "--defer-tools",
    multiple=True,
    metavar="PATTERN",
    help="Defer the tools whose names match (e.g. 'github_*'): the model finds them with "
    "search_tools and calls them with call_tool, or with the provider's own search "
    "(--tool-search; docs/tools.md).",
)
@click.option(
    "--tool-search",
    type=click.Choice(SEARCH_MODES),
    default="auto",
    show_default=True,
    help="Who searches the deferred tools: auto (the provider's own search where the model "
    "supports it, e.g. anthropic:claude-sonnet-4-5 or later, responses:gpt-5.4 or later; the "
    "harness's elsewhere), own (the harness's search_tools and call_tool, on every model) or "
    "native (the provider's search on any anthropic: or responses: model; elsewhere own, and "
    "a line says so).",
)
@click.option(
    "--skills",
    multiple=True,
    type=click.Path(path_type=Path),
    metavar="DIR",
    help="Load the Agent Skills in DIR (*/SKILL.md); needs --trust-skills (docs/tools.md).",
)
@click.option("--trust-skills", is_flag=True, help="Trust the skills of --skills.")
@click.option("--notes", type=click.Path(path_type=Path), help="JSON notes file for lookup.")
@click.option("--workspace", type=click.Path(path_type=Path), help="Folder for file tools.")
@click.option("--read-only", is_flag=True, help="No tools that write.")
@click.option("--approve", is_flag=True, help="Ask before every call with side effects.")
@click.option(
    "--allow",
    multiple=True,
    help="A call pattern that runs without asking, with --approve or --defer-approval "
    "(docs/approval.md).",
)
@click.option(
    "--defer-approval",
    is_flag=True,
    help="Ask nobody now: calls with side effects wait, the run stops awaiting_approval "
    "(then reactloop approve, reactloop resume).",
)
@click.option("--stream", is_flag=True, help="Stream the model's text as it arrives.")
@click.option("--seed", type=int, help="Sampling seed, where the model supports one.")
@click.option("--temperature", type=FiniteFloat(min=0), help="Sampling temperature.")
@click.option("--max-output-tokens", type=click.IntRange(min=1), help="Cap on each reply.")
@click.option(
    "--sandbox",
    type=click.Choice(["auto", "bwrap", "weak"]),
    default="auto",
    show_default=True,
    help="How the bash tool isolates commands (auto: bubblewrap when it works).",
)
@click.option("--system", help="Instructions for the system message.")
@click.option(
    "--max-steps",
    type=click.IntRange(min=1),
    default=8,
    show_default=True,
    help="Most model calls (steps) in the run; the last one is asked for the answer, without "
    "tools (so 1 allows no tool call: a tool needs 2 or more).",
)
@click.option(
    "--max-tool-calls",
    type=click.IntRange(min=1),
    default=16,
    show_default=True,
    help="Most tool calls in the run.",
)
@click.option(
    "--max-seconds",
    type=FiniteFloat(min=0, min_open=True, max=MAX_SECONDS),
    default=600.0,
    show_default=True,
    help="Wall-clock limit of the run; no model call or tool outlives it.",
)
@click.option(
    "--model-idle-timeout",
    type=FiniteFloat(min=0, min_open=True, max=MAX_SECONDS),
    help="Most seconds a model call may go without a byte from the server (connecting "
    "included); then the run stops model_error. [default: none: only --max-seconds]",
)
@click.option("--max-tokens", type=click.IntRange(min=1), help="Token budget of the run.")
@click.option("--max-cost", type=FiniteFloat(min=0, min_open=True), help="Dollar budget.")
@click.option("--prices", type=click.Path(path_type=Path), help="Price table (JSON) for cost.")
@click.option(
    "--trace",
    type=click.Path(path_type=Path),
    help="Journal file (JSONL), out of the tools' reach. [default: a new file in "
    "~/.local/state/reactloop/runs, or $REACTLOOP_RUNS_DIR]",
)
@click.option("--no-trace", is_flag=True, help="Do not write a journal.")
@click.option("--fsync", is_flag=True, help="fsync the journal after every line.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@click.option(
    "--max-observation-chars",
    type=click.IntRange(min=100),
    help="Most characters one tool result sends to the model [default: 8000]; the rest stays "
    "readable with the read_output tool.",
)
@click.option(
    "--context-tokens",
    type=click.IntRange(min=256),
    help="The prompt size the history must stay within (tokens).",
)
@click.option(
    "--context-policy",
    type=click.Choice(["none", "trim", "summarize"]),
    help="Near --context-tokens: stop (none), cut the oldest results (trim), or have the "
    "model summarise the oldest steps (summarize). [default: none]",
)
@click.option(
    "--local-context",
    type=click.IntRange(min=512),
    help="The embedded model's context size in tokens (local: models). [default: 4096]",
)
@click.option("--remind", is_flag=True, help="Repeat the task after each compaction.")
@click.option(
    "--no-budget-notices",
    is_flag=True,
    help="Do not tell the model when less than a quarter of a budget is left.",
)
@click.option(
    "--checklist",
    type=click.Path(path_type=Path),
    help="A file of items (one a line) the answer must cover; shown to the model once.",
)
@click.option(
    "--verify",
    help="A shell command that must pass (exit 0, in the workspace, sandboxed) before an "
    "answer is accepted; its output goes back to the model otherwise.",
)
@click.option(
    "--thinking",
    type=click.IntRange(min=1024),
    help="Anthropic's extended thinking, with this token budget (kept and sent back exactly).",
)
@click.option(
    "--cache",
    is_flag=True,
    help="Anthropic's prompt caching: breakpoints on the unchanging prefix of each request.",
)
@click.option(
    "--output-schema",
    type=click.Path(path_type=Path),
    help="Make the answer a JSON value valid against the JSON Schema in FILE.json: an "
    "invalid answer is shown to the model and retried; --json then has `output`.",
)
@click.option(
    "--otel",
    is_flag=True,
    help="Send OpenTelemetry spans (the otel extra; OTEL_EXPORTER_OTLP_ENDPOINT and the "
    "other OTEL_* variables configure the exporter).",
)
@click.option(
    "--exit-zero-on-forced",
    is_flag=True,
    help="Exit 0, not 3, with an answer that is forced or failed its checks (for scripts "
    "that take any answer; the console and --json still mark it).",
)
@mcp_options
def run(**kwargs: Any) -> None:
    """Run an agent on TASK and print its answer.

    TASK '-' (or a pipe, without TASK) reads the task from stdin; --task-file FILE from a
    file. `reactloop "TASK"` is short for `reactloop run "TASK"`.

    Exit 0 with a clean answer, 1 without an answer, 2 on a usage error, 3 with an answer
    that is forced or failed its checks (--exit-zero-on-forced makes that 0), 130 when
    interrupted (Ctrl-C).
    """
    kwargs["task"] = read_task(kwargs["task"], kwargs.pop("task_file"))
    options = RunOptions(**kwargs)
    if not options.task.strip():
        raise CliError("TASK is empty: say what the agent should do")
    if (problem := text_problem(options.task, "TASK")) is not None:
        raise CliError(f"{problem}; give it as UTF-8")
    try:
        code = run_from_cli(options)
    except UsageError as exc:
        raise CliError(str(exc)) from None
    except ModelError as exc:  # the model could not even start (a local model's load)
        click.echo(f"reactloop: error: {exc}", err=True)
        sys.exit(1)
    sys.exit(code)
