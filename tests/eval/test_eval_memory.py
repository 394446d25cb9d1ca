"""Flat memory: the driver keeps no episode record while it runs or after, gives the freed heap
back to the system as it goes, the report walks the records one at a time, and ``--resume``
reads each stored record once. Structural checks (which objects are alive, how often a file
is read, how often the heap is trimmed), not timings."""

from __future__ import annotations

import gc
import json
import platform
import statistics
import weakref
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, overload

import pytest
from hypothesis import given
from hypothesis import strategies as st

from reactloop.eval import EvalConfig, Rung, load_suite, run_eval
from reactloop.eval.records.record import EpisodeRecord
from reactloop.eval.records.store import ResultsStore, StoredRecords
from reactloop.eval.report.process import ReportProcess
from reactloop.eval.report.summary import Mean
from reactloop.eval.report.write import write_report
from reactloop.eval.run import runner
from reactloop.eval.run.memory import release_freed_memory
from reactloop.eval.run.oracle import OracleFactory

TASKS = tuple(load_suite("arithmetic")[:4])


def config(out: Path, **options: Any) -> EvalConfig:
    rungs = (
        Rung(label="a", spec="oracle", factory=OracleFactory()),
        Rung(label="b", spec="oracle", factory=OracleFactory(frozenset({("arith-02", 0)}))),
    )
    defaults: dict[str, Any] = {
        "suite": "arithmetic",
        "rungs": rungs,
        "out": out,
        "repeats": 2,
        "tasks": TASKS,
        "concurrency": 2,
        "fsync": False,
    }
    return EvalConfig(**(defaults | options))


def records_alive() -> int:
    """Episode records reachable in this process, by key: dicts with a key, a status and a
    trace, or typed (one record in both forms counts once); not the type's table of fields."""
    gc.collect()
    fields = EpisodeRecord.__dataclass_fields__
    keys = set()
    for o in gc.get_objects():
        if isinstance(o, EpisodeRecord):
            keys.add(o.key)
        elif isinstance(o, dict) and o is not fields and {"key", "status", "trace"} <= o.keys():
            keys.add(o["key"])
    return len(keys)


def test_the_driver_keeps_no_record_while_it_runs_nor_after(tmp_path: Path) -> None:
    alive: list[int] = []
    outcome = run_eval(config(tmp_path / "out"), on_record=lambda _: alive.append(records_alive()))
    assert len(alive) == 16
    assert max(alive) <= 2 + 2  # the episodes in flight (concurrency 2) and the one just done
    assert records_alive() == 0  # the outcome reads them from disk when asked
    assert len(outcome.records) == 16 and outcome.errored == 0
    saved = sorted((tmp_path / "out" / "episodes").glob("*.json"))
    on_disk = {json.loads(p.read_text())["key"] for p in saved}
    assert {r.key for r in outcome.records} == on_disk


def test_resume_reads_each_stored_record_once_and_keeps_none(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "out"
    run_eval(config(out, report=False))
    (out / "episodes" / "b__native__arith-03__1.json").unlink()  # one episode left to run
    reads: list[str] = []
    original = ResultsStore.read

    def counted(self: ResultsStore, stem: str) -> dict[str, Any] | None:
        reads.append(stem)
        record: dict[str, Any] | None = original(self, stem)
        return record

    monkeypatch.setattr(ResultsStore, "read", counted)
    alive: list[int] = []
    resumed = run_eval(
        config(out, resume=True, report=False), on_record=lambda _: alive.append(records_alive())
    )
    assert resumed.ran == 1 and resumed.skipped == 15
    assert len(reads) == len(set(reads)) == 15  # load: each of the 15 files once, no more
    assert alive == [1]  # only the record that just ran: none of the 15 loaded is kept
    assert [r.key for r in resumed.records][-1] == "b/native/arith-04/1"


def test_a_record_resumed_from_a_file_of_another_name_is_reported(tmp_path: Path) -> None:
    out = tmp_path / "out"
    run_eval(config(out, report=False))
    episodes = out / "episodes"
    (episodes / "a__native__arith-01__0.json").rename(episodes / "copied by hand.json")
    resumed = run_eval(config(out, resume=True))
    assert resumed.ran == 0 and len(resumed.records) == 16
    assert resumed.records[0].key == "a/native/arith-01/0"
    saved = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert [r["key"] for r in saved["episodes"]] == [r.key for r in resumed.records]


def test_the_driver_gives_freed_heap_back_every_so_many_episodes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    trims: list[int] = []

    def trim() -> bool:
        trims.append(1)
        return True

    monkeypatch.setattr(runner, "TRIM_EVERY", 5)
    monkeypatch.setattr(runner, "release_freed_memory", trim)
    run_eval(config(tmp_path / "out", report=False))
    assert len(trims) == 16 // 5


def test_freed_heap_is_given_back_where_the_c_library_is_glibc() -> None:
    # musl, macOS and Windows have no malloc_trim: there it answers False and does nothing
    assert release_freed_memory() is (platform.libc_ver()[0] == "glibc")


class Record(dict[str, Any]):
    """A record that can be weakly referenced, so that a test sees when it is freed."""


class Streamed(Sequence[dict[str, Any]]):
    """Fresh copies of ``records`` on every walk, counting walks and copies alive at once."""

    def __init__(self, records: list[dict[str, Any]]) -> None:
        self.records = records
        self.walks = 0
        self.alive = 0
        self.most_alive = 0

    def __len__(self) -> int:
        return len(self.records)

    @overload
    def __getitem__(self, index: int) -> dict[str, Any]: ...

    @overload
    def __getitem__(self, index: slice) -> list[dict[str, Any]]: ...

    def __getitem__(self, index: int | slice) -> dict[str, Any] | list[dict[str, Any]]:
        raise AssertionError("the report walks the records in order, it does not index them")

    def __iter__(self) -> Iterator[dict[str, Any]]:
        self.walks += 1
        for record in self.records:
            copy = Record(json.loads(json.dumps(record)))
            self.alive += 1
            self.most_alive = max(self.most_alive, self.alive)
            weakref.finalize(copy, self._freed)
            yield copy

    def _freed(self) -> None:
        self.alive -= 1


@pytest.fixture(scope="module")
def stored(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[dict[str, Any]]]:
    out = tmp_path_factory.mktemp("eval") / "out"
    outcome = run_eval(config(out, report=False))
    records = [r.to_dict() for r in outcome.records]
    records[3] |= {"status": "errored", "error": 'line one\nline "two"\r ü → \u2028 end'}
    records[5] |= {"status": "errored", "error": "x" * 300, "cost": 0.1}
    return out, records


def test_the_report_walks_the_records_twice_one_at_a_time(
    stored: tuple[Path, list[dict[str, Any]]],
) -> None:
    out, records = stored
    streamed = Streamed(records)
    write_report(out, streamed, k=2, report_process=ReportProcess.here())
    assert streamed.walks == 2  # the tables and files; then index.html
    assert streamed.most_alive <= 2
    text = (out / "report.md").read_text(encoding="utf-8")
    assert text.count("\n- `") == 2 and 'line "two"' in text


def test_results_json_streamed_is_what_json_dump_writes_of_it_whole(
    stored: tuple[Path, list[dict[str, Any]]],
) -> None:
    out, records = stored
    for given_records in (records, []):
        data = write_report(out, Streamed(given_records), k=2, report_process=ReportProcess.here())
        whole = dict(data, episodes=given_records)
        expected = json.dumps(whole, ensure_ascii=False, indent=1, default=str) + "\n"
        assert (out / "results.json").read_text(encoding="utf-8") == expected


def test_results_json_of_stored_records_copies_their_files_as_json_dump_writes_them(
    stored: tuple[Path, list[dict[str, Any]]],
) -> None:
    out, records = stored
    store = ResultsStore(out, fsync=False)
    stems = [f"copied-{n}" for n in range(len(records))]
    for stem, record in zip(stems, records, strict=True):  # the odd errors among them
        store.save(stem, record | {"path": out, "pair": (1, 2.5)})  # not JSON types: as str, list
    data = write_report(out, StoredRecords(store, stems), k=2, report_process=ReportProcess.here())
    whole = dict(data, episodes=[store.read(stem) for stem in stems])
    expected = json.dumps(whole, ensure_ascii=False, indent=1, default=str) + "\n"
    assert (out / "results.json").read_text(encoding="utf-8") == expected
    assert json.loads(expected)["episodes"][3]["error"] == records[3]["error"]


FINITE = st.floats(min_value=-1e300, max_value=1e300)  # sums that do not overflow


@given(st.lists(FINITE | st.integers(-(10**6), 10**6) | st.sampled_from([0.1, 0.2, 1 / 3])))
def test_the_streamed_mean_is_fmean_to_the_bit(values: list[float]) -> None:
    mean = Mean()
    for value in values:
        mean.add(value)
    assert mean.value() == (statistics.fmean(values) if values else None)
