"""``reactloop run``'s parsed options, and what they build: the limits and the model."""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from reactloop.cli.unloaded import UnloadedModel
from reactloop.errors import UsageError
from reactloop.limits import Limits
from reactloop.models import PROVIDERS, Model, ModelSettings, resolve_model, split_spec
from reactloop.models.default import choose_default_model

if TYPE_CHECKING:
    from reactloop.sandbox.command import Mode

MAX_SECONDS = 365 * 24 * 3600.0  # a year; far longer deadlines overflow the platform's time_t


@dataclass(frozen=True, kw_only=True)
class RunOptions:
    task: str
    model: str | None
    base_url: str | None
    protocol: str
    tool_choice: str
    tools: str | None
    notes: Path | None
    workspace: Path | None
    read_only: bool
    approve: bool
    allow: tuple[str, ...]
    stream: bool
    seed: int | None
    temperature: float | None
    max_output_tokens: int | None
    sandbox: Mode
    system: str | None
    max_steps: int
    max_tool_calls: int
    max_seconds: float | None
    max_tokens: int | None
    max_cost: float | None
    prices: Path | None
    trace: Path | None
    no_trace: bool
    fsync: bool
    as_json: bool
    mcp: tuple[str, ...] = ()
    mcp_url: tuple[str, ...] = ()
    mcp_config: Path | None = None
    output_schema: Path | None = None
    otel: bool = False
    max_observation_chars: int | None = None
    context_tokens: int | None = None
    context_policy: str | None = None
    remind: bool = False
    checklist: Path | None = None
    verify: str | None = None
    thinking: int | None = None
    cache: bool = False
    no_budget_notices: bool = False
    exit_zero_on_forced: bool = False
    defer_approval: bool = False
    api: str | None = None
    server_state: bool = False
    model_idle_timeout: float | None = None
    local_context: int | None = None
    defer_tools: tuple[str, ...] = ()
    tool_search: str = "auto"
    skills: tuple[Path, ...] = ()
    trust_skills: bool = False


def build_limits(options: RunOptions) -> Limits:
    return Limits(
        max_model_calls=options.max_steps,
        max_tool_calls=options.max_tool_calls,
        max_seconds=options.max_seconds,
        max_tokens=options.max_tokens,
        max_cost=options.max_cost,
        max_observation_chars=options.max_observation_chars,
        context_tokens=options.context_tokens,
        context_policy=options.context_policy,
        remind=options.remind,
        budget_notices=not options.no_budget_notices,
    )


def model_settings(options: RunOptions, spec: str) -> ModelSettings:
    return ModelSettings(
        base_url=options.base_url,
        stream=options.stream,
        seed=options.seed,
        temperature=options.temperature,
        max_output_tokens=options.max_output_tokens,
        idle_timeout=options.model_idle_timeout,
        extra={
            **_anthropic_extra(options, spec),
            **_responses_extra(options, spec),
            **_local_extra(options, spec),
        },
    )


def _responses_extra(options: RunOptions, spec: str) -> dict[str, Any]:
    """``--server-state``, which only the Responses API takes."""
    if not options.server_state:
        return {}
    if options.api != "responses" and split_spec(spec)[0] != "responses":
        raise UsageError(f"--server-state is for the Responses API (--api responses), not {spec!r}")
    return {"server_state": True}


def _local_extra(options: RunOptions, spec: str) -> dict[str, Any]:
    """``--local-context``: the embedded model's context size (llama.cpp's n_ctx)."""
    if options.local_context is None:
        return {}
    if split_spec(spec)[0] != "local":
        raise UsageError(
            f"--local-context is for the embedded model (local:…), not {spec!r}: a server's "
            "context is set where the server runs"
        )
    return {"n_ctx": options.local_context}


def _resolve(options: RunOptions, spec: str) -> Model:
    return resolve_with_api(spec, model_settings(options, spec), options.api)


def resolve_with_api(spec: str, settings: ModelSettings, api: str | None) -> Model:
    """``spec``'s model; with ``--api responses``, its provider's Responses endpoint."""
    provider, name = split_spec(spec)
    if api != "responses" or provider == "responses":
        if api == "chat" and provider == "responses":
            raise UsageError(f"--api chat and {spec!r} disagree: use openai:{name}")
        return resolve_model(spec, settings)
    module, _, function = PROVIDERS["responses"].partition(":")  # loaded only when asked for
    model: Model = getattr(importlib.import_module(module), function)(provider, name, settings)
    return model


def _anthropic_extra(options: RunOptions, spec: str) -> dict[str, Any]:
    """``--thinking`` and ``--cache``, which only Anthropic's Messages API takes."""
    extra: dict[str, Any] = {}
    if options.thinking is not None:
        extra["thinking"] = options.thinking
    if options.cache:
        extra["cache"] = True
    if extra and split_spec(spec)[0] != "anthropic":
        raise UsageError(f"--thinking and --cache are for anthropic: models, not {spec!r}")
    return extra


def pick_model(options: RunOptions) -> tuple[Model, str]:
    """The model ``--model`` names, else the default one, and why it was chosen; an
    ``UnloadedModel`` when it could not be built (a usage error still raises)."""
    if options.model is not None:
        spec, reason = options.model, "chosen with --model"
    else:
        spec, reason = choose_default_model()
    try:
        return _resolve(options, spec), reason
    except UsageError:
        raise
    except Exception as exc:  # a failed load or an adapter's bug: a run that stops, not a crash
        return UnloadedModel(spec, exc), reason
