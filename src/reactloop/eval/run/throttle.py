"""Adaptive concurrency per endpoint: how many model calls an endpoint gets at once.

Every model call of an eval goes through its endpoint's ``EndpointGate``. When the endpoint
answers "too busy" (HTTP 429, 503, 529, or a message that says "overloaded"), the gate halves
its cap (multiplicative decrease), holds every call to that endpoint back for the
``Retry-After`` the server asked for (without one, only the refused call backs off), and the
refused call is tried again; while calls succeed
the cap grows back by one for every ``cap`` successes (additive increase), up to the cap it
started with. Calls that were already in flight when the cap was cut do not cut it again, so
one burst of refusals is one decrease, as in TCP. Each change of the cap is kept in the gate's
``history`` (for the report). ``GatedModel`` wraps an episode's model so that its calls go
through the gate; the model itself is built without retries, so the gate sees every refusal.
"""

from __future__ import annotations

import dataclasses
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from reactloop.errors import ModelError, ProviderError
from reactloop.messages import ModelTurn
from reactloop.models.base import Model, ModelRequest
from reactloop.models.retry import RetryPolicy

OVERLOAD_STATUSES = frozenset({429, 503, 529})
MAX_HISTORY = 2000


def is_overload(exc: ModelError) -> bool:
    """Whether ``exc`` says the endpoint is too busy now (and not, say, out of quota)."""
    if not exc.retryable or exc.kind == "quota":
        return False
    if isinstance(exc, ProviderError) and exc.status in OVERLOAD_STATUSES:
        return True
    return exc.kind == "rate_limit" or "overloaded" in str(exc).lower()


class EndpointGate:
    """The cap of one endpoint; thread-safe. ``clock`` is injectable for tests."""

    def __init__(self, endpoint: str, cap: int, *, clock: Any = time.monotonic) -> None:
        self.endpoint = endpoint
        self.max_cap = max(1, cap)
        self.cap = float(self.max_cap)
        self.clock = clock
        self.started = clock()
        self.in_flight = 0
        self.overloads = 0
        self.resume_at = 0.0
        self.epoch = 0
        self.history: list[dict[str, Any]] = [self._point("start")]
        self._changed = threading.Condition()

    @contextmanager
    def slot(self, deadline: float | None) -> Iterator[int]:
        """Wait for a free slot (and for any Retry-After); yields the epoch the call began in.
        Raises ``ModelError`` (kind ``timeout``) when ``deadline`` passes first."""
        epoch = self._acquire(deadline)
        try:
            yield epoch
        finally:
            with self._changed:
                self.in_flight -= 1
                self._changed.notify_all()

    def _acquire(self, deadline: float | None) -> int:
        with self._changed:
            while True:
                now = self.clock()
                if now >= self.resume_at and self.in_flight < int(self.cap):
                    self.in_flight += 1
                    return self.epoch
                wait = self.resume_at - now if now < self.resume_at else None
                if deadline is not None:
                    if now >= deadline:
                        raise ModelError(
                            f"{self.endpoint}: no free slot before the run's time ran out",
                            kind="timeout",
                        )
                    wait = min(wait or deadline - now, deadline - now)
                self._changed.wait(wait)

    def succeeded(self) -> None:
        with self._changed:
            if self.cap >= self.max_cap:
                return
            before = int(self.cap)
            self.cap = min(float(self.max_cap), self.cap + 1.0 / int(self.cap))
            if int(self.cap) != before:
                self._record("success")
                self._changed.notify_all()

    def refused(self, epoch: int, retry_after: float | None) -> None:
        """A call begun in ``epoch`` was refused as overload: cut the cap (once per epoch)
        and, when the server said how long, hold every call back for ``retry_after`` s."""
        with self._changed:
            self.overloads += 1
            if retry_after is not None:
                self.resume_at = max(self.resume_at, self.clock() + retry_after)
            if epoch == self.epoch:
                self.epoch += 1
                self.cap = max(1.0, float(int(self.cap) // 2))
                self._record("overload")

    def _point(self, reason: str) -> dict[str, Any]:
        return {
            "seconds": round(self.clock() - self.started, 3),
            "cap": int(self.cap),
            "reason": reason,
        }

    def _record(self, reason: str) -> None:
        if len(self.history) >= MAX_HISTORY:  # keep the first point, then every other one
            self.history = self.history[:1] + self.history[2::2]
        self.history.append(self._point(reason))

    def summary(self) -> dict[str, Any]:
        with self._changed:
            caps = [point["cap"] for point in self.history]
            return {
                "endpoint": self.endpoint,
                "max_cap": self.max_cap,
                "min_cap": min(caps),
                "final_cap": int(self.cap),
                "overloads": self.overloads,
                "history": list(self.history),
            }


class EndpointGates:
    """One gate per endpoint, made on first use with ``caps.get(endpoint, default)``."""

    def __init__(self, caps: dict[str, int], default: int) -> None:
        self.caps = caps
        self.default = default
        self._gates: dict[str, EndpointGate] = {}
        self._lock = threading.Lock()

    def gate(self, endpoint: str) -> EndpointGate:
        with self._lock:
            if endpoint not in self._gates:
                cap = self.caps.get(endpoint, self.default)
                self._gates[endpoint] = EndpointGate(endpoint, cap)
            return self._gates[endpoint]

    def summaries(self) -> list[dict[str, Any]]:
        with self._lock:
            gates = list(self._gates.values())
        return [gate.summary() for gate in gates]


class GatedModel:
    """``model`` with each call through ``gate``: overloads retried (at most
    ``overload_retries`` times a call) after the wait the gate imposes, other retryable
    failures retried ``max_retries`` times with backoff; never past the run's time."""

    def __init__(
        self,
        model: Model,
        gate: EndpointGate,
        *,
        max_retries: int,
        overload_retries: int = 20,
        policy: RetryPolicy | None = None,
    ) -> None:
        self.model = model
        self.name: str = model.name
        self.native_tools: bool = model.native_tools
        self.gate = gate
        self.max_retries = max_retries
        self.overload_retries = overload_retries if max_retries > 0 else 0
        self.policy = policy or RetryPolicy(max_retries=max_retries)

    def __getattr__(self, name: str) -> Any:  # answers_json_schema, context_window, ...
        return getattr(self.model, name)

    def complete(self, request: ModelRequest) -> ModelTurn:
        clock = time.monotonic
        deadline = None if request.timeout is None else clock() + request.timeout
        overloads = unannounced = failures = 0
        while True:
            left = None if deadline is None else max(deadline - clock(), 0.0)
            with self.gate.slot(deadline) as epoch:
                try:
                    turn = self.model.complete(dataclasses.replace(request, timeout=left))
                except ModelError as exc:
                    error = exc
                else:
                    self.gate.succeeded()
                    return turn
            asked = error.retry_after if isinstance(error, ProviderError) else None
            if is_overload(error):
                self.gate.refused(epoch, asked)
                overloads += 1
                if overloads > self.overload_retries:
                    raise error
                if asked is not None:
                    continue  # the gate holds every call back for the Retry-After
                wait = self.policy.delay(min(unannounced, 4), None)
                unannounced += 1
            elif not error.retryable or failures >= self.max_retries:
                raise error
            else:
                wait = self.policy.delay(failures, asked)
                failures += 1
            if deadline is not None and clock() + wait > deadline:
                raise error
            time.sleep(wait)
