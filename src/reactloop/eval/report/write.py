"""The report in DIR: ``report.md``, ``results.csv`` (one row per episode), ``summary.csv`` (one
row per model × protocol), ``results.json`` (both, plus the comparisons and the per-step table),
the SVG charts, ``index.html`` and one viewer page per episode under ``pages/``.
"""

from __future__ import annotations

import csv
import io
import json
import tempfile
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import IO, Any

from reactloop.eval.records.record import EpisodeRecord
from reactloop.eval.records.store import ResultsStore, StoredRecords
from reactloop.eval.report.html import index_cells, write_index
from reactloop.eval.report.markdown import errored_line, markdown_lines
from reactloop.eval.report.process import ReportProcess
from reactloop.eval.report.spool import EpisodePart, Spool
from reactloop.eval.report.summary import Tally

EPISODE_COLUMNS = (
    "key", "rung", "model", "server_model", "protocol", "task_id", "repeat", "seed",
    "temperature", "status", "reason", "stop_reason", "forced", "answer", "expected",
    "check_detail", "error", "model_calls", "tool_calls", "input_tokens", "cached_tokens",
    "output_tokens", "cost", "seconds", "reactloop_version", "tools", "trace",
)  # fmt: skip


class StreamedReport:
    """The report of records taken as they arrive, in any order, each with its position in
    the report (``add``): the tables' counters (``Tally``) and each episode's part of the files
    (``Spool``), so that ``write`` reads no record back from ``episodes/`` and encodes none
    again. Holds counters (O(tasks)) and 8 bytes an episode, never a record."""

    def __init__(self, out: Path) -> None:
        self.out = out
        self.tally = Tally()
        self.spool = Spool(out)
        self._buffer = io.StringIO()
        self._csv = csv.writer(self._buffer)

    def __enter__(self) -> StreamedReport:
        return self

    def __exit__(self, *exc: object) -> None:
        self.spool.close()

    def __contains__(self, position: int) -> bool:
        return position in self.spool

    def add(
        self, position: int, record: EpisodeRecord | dict[str, Any], text: str | None = None
    ) -> None:
        """Take ``record`` (typed, or its JSON form: typed here), the ``position``-th of the
        report: ``text`` is its file's (``json.dumps(record.to_dict(), indent=1)``, else
        encoded here)."""
        typed = record if isinstance(record, EpisodeRecord) else EpisodeRecord.from_dict(record)
        self.tally.add(typed, position)
        self._csv.writerow(_episode_row(typed))
        entry = _nested_json(typed.to_dict(), 0) if text is None else text
        part = EpisodePart(
            row=self._taken(),
            entry=entry.replace("\n", "\n  "),
            key=typed.key,
            trace=str(typed.trace) if typed.trace else "",
            cells=index_cells(typed),
            errored=errored_line(typed) + "\n" if typed.errored else "",
        )
        self.spool.put(position, part)

    def write(
        self,
        *,
        k: int,
        endpoints: Sequence[dict[str, Any]] = (),
        report_process: ReportProcess | None = None,
        episodes: Sequence[dict[str, Any]] = (),
    ) -> dict[str, Any]:
        """Write every report file; returns what ``results.json`` holds (its ``episodes``:
        ``episodes``, which is not read). ``endpoints``: each endpoint's cap history
        (``throttle.EndpointGate.summary``); ``report_process``: the child that rendered the
        pages and draws the charts meanwhile. The parts are read back twice, in report
        order: for results.csv, results.json and report.md; then, once the child's pages are
        done, for index.html."""
        out, counted = self.out, self.tally
        data = {
            "summary": counted.summary(k),
            "comparisons": counted.comparisons(),
            "per_step": [
                {"rung": rung, "protocol": protocol, "steps": steps}
                for (rung, protocol), steps in counted.per_step().items()
            ],
            "episodes": episodes,
            "endpoints": list(endpoints),
        }
        charts = report_process or ReportProcess.here()
        charts.draw(out, data)
        store = ResultsStore(out, fsync=False)
        with _spool(out) as errored:
            self._write_results(store, data, errored)
            summary = data["summary"]
            columns = tuple(summary[0]) if summary else ("rung", "protocol")
            store.write_text(out / "summary.csv", _csv(summary, columns))
            names = charts.names()  # the child's pages done: write_index renders what it missed
            lines = markdown_lines(data, k=k, charts=names, errored=_rewound(errored))
            store.write_pieces(out / "report.md", (line + "\n" for line in lines))
        rows = ((part.key, part.trace, part.cells) for part in self.spool.parts())
        write_index(out, data, rows, charts=names)
        return data

    def _header(self) -> str:
        self._csv.writerow(EPISODE_COLUMNS)
        return self._taken()

    def _taken(self) -> str:
        """What the csv writer wrote into the buffer since the last time."""
        text = self._buffer.getvalue()
        self._buffer.seek(0)
        self._buffer.truncate()
        return text

    def _write_results(self, store: ResultsStore, data: dict[str, Any], errored: IO[str]) -> None:
        """results.csv and results.json, their episodes in one pass over the parts; each
        errored one's line of report.md into ``errored``."""
        head, tail = _results_json(data)
        path = self.out / "results.csv"
        with store.open_text(path) as rows, store.open_text(self.out / "results.json") as whole:
            rows.write(self._header())
            whole.write(head)
            separator = "["
            for part in self.spool.parts():
                rows.write(part.row)
                whole.write(separator + "\n  " + part.entry)
                separator = ","
                errored.write(part.errored)
            whole.write("[]" if separator == "[" else "\n ]")
            whole.write(tail)


def write_report(
    out: Path,
    records: Iterable[dict[str, Any]],
    *,
    k: int,
    endpoints: Sequence[dict[str, Any]] = (),
    report_process: ReportProcess | None = None,
) -> dict[str, Any]:
    """The report of ``records`` in report order (a results folder's, ``StoredRecords``:
    walked once, one record at a time): ``StreamedReport.write``, its ``episodes``:
    ``records``."""
    with StreamedReport(out) as report:
        for position, (record, text) in enumerate(_with_texts(records)):
            report.add(position, record, text)
        episodes = records if isinstance(records, Sequence) else ()
        return report.write(
            k=k, endpoints=endpoints, report_process=report_process, episodes=episodes
        )


def _spool(out: Path) -> IO[str]:
    return tempfile.TemporaryFile("w+", encoding="utf-8", newline="\n", dir=out)


def _rewound(spool: IO[str]) -> IO[str]:
    spool.flush()
    spool.seek(0)
    return spool


def _with_texts(records: Iterable[dict[str, Any]]) -> Iterator[tuple[dict[str, Any], str]]:
    """Each record and its JSON as ``json.dumps(record, indent=1)`` writes it: read from their
    files, the files' text (``store.save`` wrote it so), not encoded a second time."""
    if isinstance(records, StoredRecords):
        yield from records.with_texts()
    else:
        for record in records:
            yield record, _nested_json(record, 0)


def _nested_json(value: Any, level: int) -> str:
    """``value`` as ``json.dump(..., indent=1)`` writes it ``level`` deep in a document (a
    JSON text has no raw newline but the indentation's)."""
    text = json.dumps(value, ensure_ascii=False, indent=1, default=str)
    return text.replace("\n", "\n" + " " * level)


def _results_json(data: dict[str, Any]) -> tuple[str, str]:
    """``json.dump(data, indent=1)``'s text before its episodes' list and after it."""
    pieces: list[str] = ["{"]
    for n, (name, value) in enumerate(data.items()):
        pieces.append(("," if n else "") + "\n " + json.dumps(name, ensure_ascii=False) + ": ")
        if name == "episodes":
            head, pieces = "".join(pieces), []
        else:
            pieces.append(_nested_json(value, 1))
    pieces.append("\n}\n")
    return head, "".join(pieces)


def _episode_row(record: EpisodeRecord) -> list[Any]:
    """``record``'s row of results.csv: its JSON form's values under ``EPISODE_COLUMNS``
    (the run's figures empty without a run, the tokens its usage's), read from the typed
    record, so that no JSON form is made for it."""
    run = record.run
    figures: tuple[Any, ...] = (None,) * 8
    usage: Mapping[str, int] = {}
    if run is not None:
        figures = (run.server_model, run.stop_reason, run.forced, run.answer,
                   run.model_calls, run.tool_calls, run.cost, run.seconds)  # fmt: skip
        usage = run.usage or {}
    server, stop, forced, answer, calls, tool_calls, cost, seconds = figures
    expected = record.expected
    if not isinstance(expected, str | int | float | type(None)):
        expected = json.dumps(expected, ensure_ascii=False)
    return [
        record.key, record.rung, record.model, server, record.protocol, record.task_id,
        record.repeat, record.seed, record.temperature, record.status, record.reason, stop,
        forced, answer, expected, record.check_detail, record.error, calls, tool_calls,
        usage.get("input_tokens"), usage.get("cached_tokens"), usage.get("output_tokens"),
        cost, seconds, record.reactloop_version, " ".join(record.tools or ()), record.trace,
    ]  # fmt: skip


def _csv(rows: Sequence[dict[str, Any]], columns: Sequence[str]) -> str:
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=list(columns), extrasaction="ignore")
    writer.writeheader()
    writer.writerows(rows)
    return buffer.getvalue()
