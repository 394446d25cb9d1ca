"""``CancelEvent`` wakes the thread that waits on a run, so that it need not look every 50 ms:
a run with a time limit off the main thread is waited on without a single idle wake-up, and a
cancel still ends it at once."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest

import reactloop.loop.runtime.custody as custody
from reactloop import Agent, FunctionModel, Limits, ModelRequest, ModelTurn, StopReason
from reactloop.support.cancel_event import CancelEvent


def test_a_set_sets_the_events_waking_on_it_and_no_other() -> None:
    cancel, waker, left = CancelEvent(), threading.Event(), threading.Event()
    with cancel.waking(left):
        pass
    with cancel.waking(waker):
        cancel.set()
    assert cancel.is_set() and waker.is_set()
    assert not left.is_set()  # it stopped waking on it before the set


def test_waking_on_a_cancel_already_set_sets_the_waker_at_once() -> None:
    cancel, waker = CancelEvent(), threading.Event()
    cancel.set()
    with cancel.waking(waker):
        assert waker.is_set()


@pytest.fixture
def sleeps() -> Iterator[list[bool]]:
    """Each time the waiting thread of a run went to sleep: whether it only looked (a slice)."""
    seen: list[bool] = []
    real = custody._slept

    def counted(outcome: custody._Outcome, deadline: float | None, looking: bool) -> bool:
        seen.append(looking)
        return real(outcome, deadline, looking)

    custody._slept = counted
    yield seen
    custody._slept = real


def _run_off_the_main_thread(agent: Agent) -> list[StopReason]:
    stops: list[StopReason] = []
    runner = threading.Thread(target=lambda: stops.append(agent.run("q").stop_reason))
    runner.start()
    runner.join(30)
    return stops


def test_a_run_off_the_main_thread_is_waited_on_in_one_sleep(sleeps: list[bool]) -> None:
    slow = threading.Event()

    def model(request: ModelRequest) -> ModelTurn:
        slow.wait(0.3)  # a model call of 0.3 s: six looks, were the waiting thread to look
        return ModelTurn(text="done")

    agent = Agent(FunctionModel(model), limits=Limits(max_seconds=60))
    assert _run_off_the_main_thread(agent) == [StopReason.FINAL_ANSWER]
    assert sleeps == [False]


def test_a_cancel_wakes_the_waiting_thread_at_once(sleeps: list[bool]) -> None:
    in_model, released = threading.Event(), threading.Event()

    def model(request: ModelRequest) -> ModelTurn:
        in_model.set()
        released.wait(30)  # outlasts the run: the cancel ends it, not this call
        return ModelTurn(text="late")

    agent = Agent(FunctionModel(model), limits=Limits(max_seconds=60))

    def cancel_in_the_model_call() -> None:
        assert in_model.wait(30)
        agent.cancel()

    threading.Thread(target=cancel_in_the_model_call).start()
    try:
        assert _run_off_the_main_thread(agent) == [StopReason.CANCELLED]
    finally:
        released.set()
    assert sleeps == [False]  # woken by the cancel, which took the run from its model call
