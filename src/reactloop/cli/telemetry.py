"""``reactloop run --otel``: spans and metrics exported over OTLP/HTTP, configured by the
``OTEL_*`` variables.

The library's ``OTelObserver`` uses whatever tracer and meter providers the application set
up; a command has no application around it, so this builds them from the SDK and the OTLP
exporters (the ``otel`` extra), and flushes them when the run ends.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterator
from typing import Any

from reactloop.errors import MissingDependency
from reactloop.journal.otel import OTelObserver

_HINT = "pip install 'reactloop[otel]'"


@contextlib.contextmanager
def otel_observer(enabled: bool) -> Iterator[Any]:
    """An ``OTelObserver`` exporting to ``$OTEL_EXPORTER_OTLP_ENDPOINT`` (None when off): the
    spans as they end, the metrics once, when the run is over."""
    if not enabled:
        yield None
        return
    try:
        from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.metrics import MeterProvider
        from opentelemetry.sdk.metrics.export import PeriodicExportingMetricReader
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor
    except ImportError:
        raise MissingDependency(f"--otel needs the OpenTelemetry SDK: {_HINT}") from None
    provider = TracerProvider()
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    reader = PeriodicExportingMetricReader(OTLPMetricExporter(), export_interval_millis=math.inf)
    meters = MeterProvider(metric_readers=[reader])
    try:
        yield OTelObserver(tracer_provider=provider, meter_provider=meters)
    finally:
        provider.shutdown()
        meters.force_flush()  # the run's metrics, exported once (no periodic export)
        meters.shutdown()
