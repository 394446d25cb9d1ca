"""Provider errors of OpenAI-compatible servers: what they say, and whether to try again.

Error bodies come in every shape (``tests/wire_formats``): an ``error`` object with a string
``code`` (OpenAI, DeepSeek, DashScope) or an integer one (vLLM, llama.cpp), vLLM's older
top-level fields, Ollama's plain ``{"error": "text"}``, or something that is not JSON at all
(an HTML page from a proxy is reported by its title; a body too deep or too odd to decode is
reported by its start). ``provider_error`` reads any of them into one ``ProviderError`` whose
message is the provider's own, and decides ``retryable``:

    retried      408, 409, 429 (rate limit), 5xx, 529, DeepSeek insufficient_system_resource
    not retried  429 insufficient_quota, 429 "request too large", 400 (context length, schema,
                 transcript), 401, 402, 403, 404, 422

``x-should-retry: true|false`` from the server overrides the status. Failures on the way
(refused, timed out, cut off) are ``http_errors.transport_error``; a refused connection to
this machine is not retried, since nothing will start listening in the next second.
"""

from __future__ import annotations

import html
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from reactloop.errors import ProviderError
from reactloop.models.http_errors import RETRYABLE_STATUSES, field_text, one_line, retry_header
from reactloop.models.retry import retry_after_seconds
from reactloop.support import json_decode

NOT_RETRYABLE_CODES = frozenset({"insufficient_quota", "billing_hard_limit_reached"})
HTML_TITLE = re.compile(r"<title[^>]*>(.*?)</title>", re.IGNORECASE | re.DOTALL)
HTML_TAG = re.compile(r"<[^>]*>")
JSON_MESSAGE = re.compile(r'"message"\s*:\s*"((?:[^"\\]|\\.){0,2000})"')
JSON_CODE = re.compile(r'"code"\s*:\s*("[^"\\]{1,100}"|\d{1,6})')


@dataclass(frozen=True, kw_only=True, slots=True)
class ErrorBody:
    message: str
    code: str | None = None
    type: str | None = None


def read_error_body(text: str) -> ErrorBody:
    """The message, code and type of an error body of any known shape; never raises."""
    try:
        body = json_decode.safe_loads(text) if text.strip() else None
    except json_decode.JSONRefused:
        body = None
    found = error_fields(body, fallback=text) if isinstance(body, Mapping) else None
    return found or _scanned(text) or _plain(text)


def _plain(text: str) -> ErrorBody:
    return ErrorBody(message=one_line(_page_text(text)) or "(empty body)")


def _scanned(text: str) -> ErrorBody | None:
    """The ``"message"`` of a JSON error body too deep (or too odd) to decode, if it has one."""
    if not text.lstrip().startswith("{"):
        return None
    message = JSON_MESSAGE.search(text[:100_000])
    if message is None:
        return None
    try:
        found = json_decode.safe_loads(f'"{message.group(1)}"')
    except json_decode.JSONRefused:
        return None
    code = JSON_CODE.search(text[:100_000])
    return ErrorBody(message=one_line(found), code=code.group(1).strip('"') if code else None)


def error_fields(body: Mapping[str, Any], *, fallback: str = "") -> ErrorBody | None:
    """The error in a decoded body (``{"error": …}`` or top-level fields), if it has one."""
    inner = body.get("error")
    if isinstance(inner, Mapping):
        return _from_fields(inner, fallback=fallback)
    if isinstance(inner, str) and inner.strip():
        return ErrorBody(message=one_line(inner))
    if "message" in body or "detail" in body:
        return _from_fields(body, fallback=fallback)
    return None


def _page_text(text: str) -> str:
    """An HTML error page (a proxy's 502) as its title, else its text without tags."""
    if "<html" not in text[:1000].lower():
        return text
    title = HTML_TITLE.search(text)
    return html.unescape(title.group(1) if title else HTML_TAG.sub(" ", text))


def _from_fields(fields: Mapping[str, Any], *, fallback: str) -> ErrorBody:
    message = fields.get("message") or fields.get("detail") or fields.get("type") or fallback
    return ErrorBody(
        message=one_line(field_text(message)) or "(no message)",
        code=_optional_text(fields.get("code")),
        type=_optional_text(fields.get("type")),
    )


def _optional_text(value: Any) -> str | None:
    return None if value is None else field_text(value)


def is_retryable(status: int, body: ErrorBody, headers: Mapping[str, str]) -> bool:
    said = retry_header(headers)
    if said is not None:
        return said
    if status not in RETRYABLE_STATUSES:
        return False
    if status == 429:
        markers = {body.code or "", body.type or ""}
        if markers & NOT_RETRYABLE_CODES:
            return False
        if "request too large" in body.message.lower():
            return False
    return True


def provider_error(
    provider: str,
    status: int,
    headers: Mapping[str, str],
    text: str,
    *,
    base_url: str = "",
    key_env: str | None = None,
) -> ProviderError:
    """The ``ProviderError`` for an HTTP error reply, with a hint when the cause is plain;
    ``key_env`` is the variable the provider's key comes from (the roster's ``key_env``)."""
    body = read_error_body(text)
    detail = f" [{body.code}]" if body.code and body.code != str(status) else ""
    hint = f" (check {key_env})" if status == 401 and key_env else _hint(status, base_url)
    return ProviderError(
        f"{provider} HTTP {status}{detail}: {body.message}{hint}",
        status=status,
        code=body.code or body.type,
        retryable=is_retryable(status, body, headers),
        retry_after=retry_after_seconds(headers),
    )


def _hint(status: int, base_url: str) -> str:
    """``--base-url http://host:8123`` without ``/v1`` gives a 404 from most servers."""
    if status != 404 or not base_url:
        return ""
    path = urlsplit(base_url).path.rstrip("/")
    if path.endswith("/v1") or "/v1/" in path:
        return ""
    return f" (did you mean {base_url.rstrip('/')}/v1?)"


def stream_error(provider: str, payload: Any, *, where: str = "stream error") -> ProviderError:
    """An error reported inside a 200 reply (``data: {"error": {...}}`` in a stream)."""
    if isinstance(payload, Mapping):
        body = _from_fields(payload, fallback="")
    else:
        body = ErrorBody(message=one_line(field_text(payload)) or "(no message)")
    transient = _status_code_is_transient(body.code) or any(
        word in f"{body.code} {body.type} {body.message}".lower()
        for word in ("overloaded", "server_error", "rate_limit", "timeout")
    )
    return ProviderError(
        f"{provider} {where}: {body.message}",
        status=None,
        code=body.code or body.type,
        retryable=transient,
    )


def _status_code_is_transient(code: str | None) -> bool:
    """vLLM and llama.cpp put an HTTP status in ``code``: 429 and 5xx are worth a retry."""
    text = (code or "").strip()
    if not text.isdigit() or len(text) > 3:
        return False
    number = int(text)
    return number == 429 or number >= 500
