"""Anthropic's errors: what the server said, and whether to try again.

An error body is ``{"type": "error", "error": {"type": …, "message": …}, "request_id": …}``
(``tests/wire_formats/error_anthropic_*``); a gateway may send anything else (an HTML page, a
plain text, a body too deep or too odd to decode), which is reported by its start.
``provider_error`` reads any of them into one ``ProviderError`` with Anthropic's own message:

    retried      408, 409, 429 (rate_limit_error), 500 (api_error), 502, 503, 504,
                 529 (overloaded_error), honouring ``retry-after``
    not retried  400 (prompt too long, tool schema, missing tool_result), 401, 403, 404,
                 413 (request_too_large), 422

``x-should-retry: true|false`` from the server overrides the status. An ``error`` event in the
middle of a stream is ``stream_error``; failures on the way (refused, timed out, cut off) are
``http_errors.transport_error``; a refused connection to this machine is not retried.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from reactloop.errors import ProviderError
from reactloop.models.http_errors import RETRYABLE_STATUSES, field_text, one_line, retry_header
from reactloop.models.retry import retry_after_seconds
from reactloop.support import json_decode

TRANSIENT_TYPES = frozenset({"overloaded_error", "api_error", "rate_limit_error", "timeout_error"})
HINTS = {
    401: " (check ANTHROPIC_API_KEY)",
    403: " (the key may not be allowed to use this model)",
    404: " (check the model name and --base-url: the SDK adds /v1/messages itself)",
}


@dataclass(frozen=True, kw_only=True, slots=True)
class ErrorBody:
    message: str
    type: str | None = None


def read_error_body(text: str) -> ErrorBody:
    """The message and type of an error body of any shape; never raises."""
    try:
        body = json_decode.safe_loads(text) if text.strip() else None
    except json_decode.JSONRefused:
        body = None
    if isinstance(body, Mapping):
        inner = body.get("error")
        fields = inner if isinstance(inner, Mapping) else body
        if isinstance(inner, str):
            return ErrorBody(message=one_line(inner) or "(no message)")
        if "message" in fields or "type" in fields:
            return error_fields(fields)
    return ErrorBody(message=one_line(text) or "(empty body)")


def error_fields(fields: Mapping[str, Any]) -> ErrorBody:
    kind = fields.get("type")
    message = fields.get("message") or kind
    kind_text = one_line(field_text(kind))[:100] if kind is not None else ""
    return ErrorBody(
        message=one_line(field_text(message)) or "(no message)", type=kind_text or None
    )


def is_retryable(status: int, headers: Mapping[str, str]) -> bool:
    said = retry_header(headers)
    return status in RETRYABLE_STATUSES if said is None else said


def provider_error(
    provider: str, status: int, headers: Mapping[str, str], text: str
) -> ProviderError:
    """The ``ProviderError`` for an HTTP error reply."""
    body = read_error_body(text)
    kind = f" [{body.type}]" if body.type else ""
    return ProviderError(
        f"{provider} HTTP {status}{kind}: {body.message}{HINTS.get(status, '')}",
        status=status,
        code=body.type,
        retryable=is_retryable(status, headers),
        retry_after=retry_after_seconds(headers),
    )


def stream_error(provider: str, payload: Any, *, where: str = "stream error") -> ProviderError:
    """An error reported inside a 200 reply (``event: error`` in a stream)."""
    if isinstance(payload, Mapping):
        body = error_fields(payload)
    else:
        body = ErrorBody(message=one_line(field_text(payload)) or "(no message)")
    return ProviderError(
        f"{provider} {where}: {body.message}" + (f" [{body.type}]" if body.type else ""),
        code=body.type,
        retryable=body.type in TRANSIENT_TYPES,
    )
