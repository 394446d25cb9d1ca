"""The record of a run.

- ``events.py``  the events the loop emits, ``Observer``, and the ``Emitter`` that keeps the
                 journal apart from the other observers
- ``writer.py``  ``Journal``: one JSON line per event, flushed as it happens; ``read_journal``
- ``otel.py``    ``OTelObserver``: the events as OpenTelemetry spans
"""
