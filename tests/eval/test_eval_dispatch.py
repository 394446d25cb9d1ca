"""The scheduler (``eval/run/backends.dispatch``): C episodes in flight, each given up past its
bound, and each wake costing what finished, not what is in flight (issue 40: at C = 512 it
scanned every episode in flight each time one ended)."""

from __future__ import annotations

import types
from collections import deque
from pathlib import Path
from typing import Any

import pytest

from reactloop.eval import EpisodeSpec, Rung, load_suite
from reactloop.eval.records.record import EpisodeRecord
from reactloop.eval.run import backends
from reactloop.eval.run.backends import LocalBackend, dispatch
from reactloop.eval.run.episode import base_record

TASK = load_suite("arithmetic")[0]


def specs(count: int, episode_seconds: float | None = 10.0) -> list[EpisodeSpec]:
    rung = Rung(label="o", spec="oracle")
    return [
        EpisodeSpec(
            suite="arithmetic",
            task=TASK,
            rung=rung,
            protocol="native",
            repeat=n,
            episode_seconds=episode_seconds,
        )
        for n in range(count)
    ]


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def monotonic(self) -> float:
        return self.now


class OneAtATime:
    """Each ``wait`` finishes the oldest episode in flight and moves the clock on a second,
    except for ``hangs``, which never finish until given up (then it comes back late once)."""

    def __init__(self, clock: Clock, hangs: frozenset[int] = frozenset()) -> None:
        self.clock, self.hangs = clock, hangs
        self.flight: deque[int] = deque()
        self.in_flight_most = 0
        self.abandoned: list[int] = []
        self.late: list[int] = []

    def submit(self, spec: EpisodeSpec) -> int:
        self.flight.append(spec.repeat)
        self.in_flight_most = max(self.in_flight_most, len(self.flight))
        return spec.repeat

    def wait(self, timeout: float) -> list[Any]:
        self.clock.now += 1.0
        assert self.clock.now < 10_000, "the scheduler waits for ever"
        done = [self.late.pop()] if self.late else []
        for handle in list(self.flight):
            if handle not in self.hangs:
                self.flight.remove(handle)
                return [*done, handle]
        return done

    def outcome(self, handle: Any, spec: EpisodeSpec) -> EpisodeRecord | None:
        return base_record(spec, 0.0)

    def abandon(self, handle: Any, spec: EpisodeSpec) -> EpisodeRecord | None:
        self.flight.remove(handle)
        self.abandoned.append(handle)
        self.late.append(handle)  # it finishes after all, after it was given up
        return base_record(spec, 0.0)

    def cancel(self) -> None: ...

    def close(self) -> None: ...


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
    made = Clock()
    monkeypatch.setattr(backends, "time", types.SimpleNamespace(monotonic=made.monotonic))
    return made


def test_each_wake_costs_what_finished_not_what_is_in_flight(
    clock: Clock, monkeypatch: pytest.MonkeyPatch
) -> None:
    looked: list[int] = []
    real_bound = backends.bound

    def bound(spec: EpisodeSpec) -> float | None:
        looked.append(spec.repeat)
        return real_bound(spec)

    monkeypatch.setattr(backends, "bound", bound)
    backend = OneAtATime(clock)
    done: list[int] = []
    assert dispatch(
        backend, specs(300), concurrency=64, caps={}, on_done=lambda s, r: done.append(s.repeat)
    )
    assert sorted(done) == list(range(300))
    assert backend.in_flight_most == 64
    assert sorted(looked) == list(range(300))  # once an episode (before: 64 a wake)


def test_an_episode_past_its_bound_is_given_up_once_and_its_late_end_ignored(
    clock: Clock,
) -> None:
    backend = OneAtATime(clock, hangs=frozenset({3}))
    done: list[int] = []
    dispatch(backend, specs(40), concurrency=8, caps={}, on_done=lambda s, r: done.append(s.repeat))
    assert backend.abandoned == [3]
    assert sorted(done) == list(range(40))  # 3 once: given up; its late end not counted again
    bound = backends.bound(specs(1)[0])
    assert bound is not None and clock.now > bound


class AllAtOnce(OneAtATime):
    """Each ``wait`` finishes every episode in flight, and answers every finished one whose
    outcome is not yet taken."""

    def __init__(self, clock: Clock) -> None:
        super().__init__(clock)
        self.finished: dict[int, None] = {}

    def wait(self, timeout: float) -> list[Any]:
        self.clock.now += 1.0
        self.finished.update(dict.fromkeys(self.flight))
        self.flight.clear()
        return list(self.finished)

    def outcome(self, handle: Any, spec: EpisodeSpec) -> EpisodeRecord | None:
        del self.finished[handle]
        return super().outcome(handle, spec)


def test_ctrl_c_in_the_middle_of_a_batch_still_takes_the_rest_of_it(clock: Clock) -> None:
    # CI, b649301: Ctrl-C raised by ``on_done`` at the 5th of a batch lost the batch's rest
    # (the local backend answered each once); the drain waited for them for ever.
    done: list[int] = []

    def interrupt_at_the_fifth(spec: EpisodeSpec, record: EpisodeRecord | None) -> None:
        done.append(spec.repeat)
        if len(done) == 5:
            raise KeyboardInterrupt

    backend = AllAtOnce(clock)
    assert not dispatch(backend, specs(40), concurrency=8, caps={}, on_done=interrupt_at_the_fifth)
    assert sorted(done) == list(range(8))  # the first batch, all of it; nothing more started
    assert backend.abandoned == []


def test_ctrl_c_while_one_of_several_late_episodes_is_given_up_still_gives_up_the_others(
    clock: Clock,
) -> None:
    done: list[int] = []

    def interrupt_at_the_first_given_up(spec: EpisodeSpec, record: EpisodeRecord | None) -> None:
        done.append(spec.repeat)
        if spec.repeat in (1, 2) and len(backend.abandoned) == 1:
            raise KeyboardInterrupt

    backend = OneAtATime(clock, hangs=frozenset({1, 2}))  # both late at the same wake
    assert not dispatch(
        backend, specs(4), concurrency=4, caps={}, on_done=interrupt_at_the_first_given_up
    )
    assert sorted(backend.abandoned) == [1, 2]
    assert sorted(done) == [0, 1, 2, 3]


def test_the_local_backend_answers_a_finished_episode_until_its_record_is_taken(
    tmp_path: Path,
) -> None:
    # A real Ctrl-C on ``reactloop eval`` (CI, under load) landed in ``wait`` just after its
    # queue had given up a finished episode: never answered again, the drain waited for ever.
    # Now ``wait`` takes nothing away; ``outcome`` does.
    spec = specs(1)[0]
    backend = LocalBackend(2, tmp_path)
    try:
        handle = backend.submit(spec)
        answered: list[Any] = []
        for _ in range(120):  # the oracle's episode ends at once; 60 s at most
            if answered := backend.wait(timeout=0.5):
                break
        assert answered == [handle]
        assert backend.wait(timeout=0.0) == [handle]  # a Ctrl-C between the two lost nothing
        record = backend.outcome(handle, spec)
        assert record is not None and record.key == spec.key, record
        assert backend.wait(timeout=0.0) == []
    finally:
        backend.close()
