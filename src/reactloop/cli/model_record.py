"""The model settings ``reactloop run`` records (``config.model_settings``) and ``reactloop
resume`` builds its model with again, so that the resumed run sends what the run sent: the
same sampling (temperature, seed), output cap, streaming, wire (``--api``), Anthropic's
thinking budget and cache markers, the embedded model's context size, the base URL and the
model idle timeout. No key is ever recorded.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from reactloop.cli.options import RunOptions, resolve_with_api
from reactloop.errors import UsageError
from reactloop.models import Model, ModelSettings

_EXTRA = ("thinking", "cache", "server_state", "n_ctx")  # what ``ModelSettings.extra`` may hold
MAX_N_CTX = 1 << 20  # a recorded local context larger than this is refused, not allocated


def model_record(options: RunOptions) -> dict[str, Any]:
    """What of ``options`` shapes the requests, as JSON for the ``run_start`` config."""
    record: dict[str, Any] = {
        "base_url": options.base_url,
        "api": options.api,
        "stream": options.stream,
        "seed": options.seed,
        "temperature": options.temperature,
        "max_output_tokens": options.max_output_tokens,
        "idle_timeout": options.model_idle_timeout,
    }
    extra = {
        "thinking": options.thinking,
        "cache": options.cache,
        "server_state": options.server_state,
        "n_ctx": options.local_context,
    }
    record["extra"] = {k: v for k, v in extra.items() if v not in (None, False)}
    return record


def recorded_model(spec: str, config: Mapping[str, Any], *, base_url: str | None) -> Model:
    """The model of ``spec`` with the recorded settings, sent to ``base_url`` (given now: a
    recorded base URL is never sent to on the journal's word, ``resume_trust.py``)."""
    record = config.get("model_settings")
    record = record if isinstance(record, Mapping) else {}
    try:
        settings = _settings(record, base_url)
    except (TypeError, ValueError) as exc:
        raise UsageError(f"the journal's model settings are invalid: {exc}") from None
    api = record.get("api")
    return resolve_with_api(spec, settings, api if isinstance(api, str) else None)


def _settings(record: Mapping[str, Any], base_url: str | None) -> ModelSettings:
    extra = record.get("extra")
    extra = {k: v for k, v in extra.items() if k in _EXTRA} if isinstance(extra, Mapping) else {}
    n_ctx = extra.get("n_ctx")
    if n_ctx is not None and (type(n_ctx) is not int or not 512 <= n_ctx <= MAX_N_CTX):
        raise ValueError(f"n_ctx {n_ctx!r} is not a context size")
    return ModelSettings(
        base_url=base_url,
        stream=bool(record.get("stream", False)),
        seed=_optional(record.get("seed"), int),
        temperature=_optional(record.get("temperature"), float),
        max_output_tokens=_optional(record.get("max_output_tokens"), int),
        idle_timeout=_optional(record.get("idle_timeout"), float),
        extra=extra,
    )


def _optional(value: Any, kind: type[int] | type[float]) -> Any:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TypeError(f"{value!r} is not a number")
    return kind(value)
