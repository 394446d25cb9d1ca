"""The worker processes' pipes cannot deadlock (issue 40): the driver never blocks sending
while a result waits to be read, no worker holds a lock across a send, and every wait on a
worker has a bound and a clear error."""

from __future__ import annotations

import os
import signal
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from reactloop import FunctionModel, Model, ModelRequest, ModelTurn
from reactloop.eval import EpisodeSpec, Rung
from reactloop.eval.records.store import ResultsStore
from reactloop.eval.run.process_backend import ProcessBackend
from reactloop.eval.tasks.tasks import Task

MIB = 2**20
BOUND = 60.0  # seconds: every wait of these tests, so that a deadlock reports, not hangs


@dataclass(frozen=True)
class Answers:
    """Answers at once with ``size`` characters: a record larger than any pipe holds."""

    size: int

    def __call__(self, episode: EpisodeSpec) -> Model:
        text = "x" * self.size

        def answer(request: ModelRequest) -> ModelTurn:
            return ModelTurn(text=text)

        return FunctionModel(answer, name="answers")


def spec(number: int, answer: int, task: int = 10) -> EpisodeSpec:
    task_text = f"case {number} " + "y" * task  # a large spec: more than a pipe holds too
    return EpisodeSpec(
        suite="pipes",
        task=Task(id=f"t{number:03d}", task=task_text, expected=0, tools=()),
        rung=Rung(label="big", spec="answers", factory=Answers(answer)),
        protocol="native",
        repeat=0,
    )


def backend(out: Path, **more: Any) -> ProcessBackend:
    store = ResultsStore(out, fsync=False)
    store.prepare({}, resume=False)
    return ProcessBackend(
        1, 16, store.traces, lambda s, r: store.save(s.file_stem, r.to_dict()), fsync=False, **more
    )


def collect(backend: ProcessBackend, handles: list[Any]) -> dict[Any, Any]:
    """Every handle's record, or a failed assertion after ``BOUND`` seconds."""
    deadline = time.monotonic() + BOUND
    records: dict[Any, Any] = {}
    while len(records) < len(handles):
        assert time.monotonic() < deadline, f"{len(records)} of {len(handles)} came back"
        for handle in backend.wait(timeout=0.5):
            records[handle] = backend.outcome(handle, None)  # type: ignore[arg-type]
    return records


def test_the_driver_goes_on_sending_while_a_large_result_waits_to_be_read(
    tmp_path: Path,
) -> None:
    """The issue's hang, forced: a result larger than the pipe is on its way back (the
    worker is sending it, and cannot finish until the driver reads), and the driver sends
    more episodes than the other pipe holds. Before: the worker's sending thread held its
    lock, its reading thread waited for that lock, and the driver's ``submit`` blocked for
    ever."""
    eval_ = backend(tmp_path)
    submitted: list[Any] = []
    try:
        first = eval_.submit(spec(0, answer=8 * MIB))
        assert eval_.connections[0].poll(BOUND), "the first record never started back"
        more = [spec(n, answer=MIB, task=MIB // 2) for n in range(1, 9)]  # 4 MiB of specs
        sender = threading.Thread(target=lambda: submitted.extend(map(eval_.submit, more)))
        sender.daemon = True
        sender.start()
        sender.join(BOUND)
        assert not sender.is_alive(), "the driver blocked sending while a result waited"
        records = collect(eval_, [first, *submitted])
        assert len(records[first].run.answer) == 8 * MIB
        assert {len(records[h].run.answer) for h in submitted} == {MIB}
        assert {r.status for r in records.values()} == {"failed"}  # expected 0: checked
    finally:
        if len(submitted) < 8:  # the old deadlock: free the driver's send, then close
            for process in eval_.processes:
                process.kill()
        eval_.close()


def test_a_worker_that_stops_reading_is_given_up_with_a_clear_error(tmp_path: Path) -> None:
    """A worker stopped (SIGSTOP) while the driver has more to send than its pipe holds:
    after ``write_seconds`` the worker is killed and its episodes are recorded errored,
    ``worker_died``, saying why; the driver never hangs."""
    eval_ = backend(tmp_path, write_seconds=1.0)
    try:
        first = eval_.submit(spec(0, answer=10))
        assert collect(eval_, [first])[first].status == "failed"
        os.kill(eval_.processes[0].pid, signal.SIGSTOP)
        handles = [eval_.submit(spec(n, answer=10, task=MIB // 2)) for n in range(1, 5)]
        records = collect(eval_, handles)
        assert {r.reason for r in records.values()} == {"worker_died"}
        assert all("read nothing" in r.error for r in records.values()), records
        assert {r.status for r in records.values()} == {"errored"}
        saved = sorted(p.name for p in (tmp_path / "episodes").glob("*.json"))
        assert len(saved) == 5  # the first, and the four given up, saved by the driver
    finally:
        eval_.close()
    assert not eval_.processes[0].is_alive()
