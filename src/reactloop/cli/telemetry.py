"""``reactloop run --otel``: spans exported over OTLP/HTTP, configured by ``OTEL_*`` variables.

The library's ``OTelObserver`` needs only ``opentelemetry-api`` and uses whatever tracer
provider the application set up; a command has no application around it, so this builds one
from the SDK and the OTLP exporter, and flushes it when the run ends.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from reactloop.errors import MissingDependency
from reactloop.journal.otel import OTelObserver

_HINT = "pip install opentelemetry-sdk opentelemetry-exporter-otlp-proto-http"


@contextlib.contextmanager
def otel_observer(enabled: bool) -> Iterator[Any]:
    """An ``OTelObserver`` exporting to ``$OTEL_EXPORTER_OTLP_ENDPOINT`` (None when off)."""
    if not enabled:
        yield None
        return
    try:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor
    except ImportError:
        raise MissingDependency(f"--otel needs the OpenTelemetry SDK: {_HINT}") from None
    provider = TracerProvider()
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    try:
        yield OTelObserver(tracer_provider=provider)
    finally:
        provider.shutdown()
