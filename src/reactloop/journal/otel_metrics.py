"""The GenAI conventions' metrics of a run, for ``OTelObserver``: histograms on the meter
provider given, else the global one (a no-op until the application sets one up).

- ``gen_ai.client.token.usage`` (``{token}``): per model call whose provider reported usage,
  once with ``gen_ai.token.type`` ``input`` and once ``output``; with ``gen_ai.operation.name``
  (``chat``), ``gen_ai.provider.name`` and ``gen_ai.request.model``;
- ``gen_ai.client.operation.duration`` (``s``): per model call, with the same attributes (no
  token type) and ``error.type`` when the call failed;
- ``gen_ai.invoke_agent.duration`` (``s``): per run, with ``gen_ai.agent.name``,
  ``gen_ai.request.model``, and ``error.type`` (the stop reason) unless it ended
  ``final_answer``;
- ``gen_ai.execute_tool.duration`` (``s``): per tool call, with ``gen_ai.tool.name``,
  ``gen_ai.tool.type``, ``gen_ai.agent.name``, and ``error.type`` when it failed.

Each duration is its span's: the observer gives the span the start and end times it measures.
The buckets are the conventions' advice.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from reactloop._version import __version__

_TOKEN_BUCKETS = [4.0**n for n in range(14)]  # 1, 4, 16, ... 67108864
_CALL_BUCKETS = [0.01 * 2.0**n for n in range(14)]  # 0.01 ... 81.92 s
_AGENT_BUCKETS = [0.1 * 2.0**n for n in range(13)]  # 0.1 ... 409.6 s


class GenAIMetrics:
    """The four histograms, and one method to record each kind of operation."""

    def __init__(self, meter_provider: Any = None) -> None:
        from opentelemetry import metrics

        meter = metrics.get_meter("reactloop", __version__, meter_provider=meter_provider)
        self._tokens = meter.create_histogram(
            "gen_ai.client.token.usage",
            unit="{token}",
            description="Number of input and output tokens used.",
            explicit_bucket_boundaries_advisory=_TOKEN_BUCKETS,
        )
        self._call = meter.create_histogram(
            "gen_ai.client.operation.duration",
            unit="s",
            description="GenAI operation duration.",
            explicit_bucket_boundaries_advisory=_CALL_BUCKETS,
        )
        self._agent = meter.create_histogram(
            "gen_ai.invoke_agent.duration",
            unit="s",
            description="The end-to-end duration of a single agent invocation.",
            explicit_bucket_boundaries_advisory=_AGENT_BUCKETS,
        )
        self._tool = meter.create_histogram(
            "gen_ai.execute_tool.duration",
            unit="s",
            description="The duration of a single tool execution.",
            explicit_bucket_boundaries_advisory=_CALL_BUCKETS,
        )

    def chat(
        self, common: Mapping[str, str], seconds: float, usage: Mapping[str, int], error: str | None
    ) -> None:
        """A model call: its duration, and its tokens when the provider reported them."""
        self._call.record(seconds, _with_error(common, error))
        if "gen_ai.usage.input_tokens" not in usage:
            return
        for kind in ("input", "output"):
            count = usage[f"gen_ai.usage.{kind}_tokens"]
            self._tokens.record(count, {**common, "gen_ai.token.type": kind})

    def agent(self, attributes: Mapping[str, str], seconds: float, error: str | None) -> None:
        self._agent.record(seconds, _with_error(attributes, error))

    def tool(self, attributes: Mapping[str, str], seconds: float, error: str | None) -> None:
        self._tool.record(seconds, _with_error(attributes, error))


def _with_error(attributes: Mapping[str, str], error: str | None) -> dict[str, str]:
    return {**attributes, "error.type": error} if error is not None else dict(attributes)


def seconds(start_ns: int, end_ns: int) -> float:
    return max(0, end_ns - start_ns) / 1e9
