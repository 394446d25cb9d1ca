"""The report in DIR: ``report.md``, ``results.csv`` (one row per episode), ``summary.csv`` (one
row per model × protocol), ``results.json`` (both, plus the comparisons and the per-step table),
the PNG charts, ``index.html`` and one viewer page per episode under ``pages/``.
"""

from __future__ import annotations

import csv
import io
import json
import tempfile
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import IO, Any

from reactloop.eval.records.record import EpisodeRecord
from reactloop.eval.records.store import ResultsStore, StoredRecords
from reactloop.eval.report.html import write_html
from reactloop.eval.report.markdown import errored_line, markdown_lines
from reactloop.eval.report.process import ReportProcess
from reactloop.eval.report.summary import Tally

EPISODE_COLUMNS = (
    "key", "rung", "model", "server_model", "protocol", "task_id", "repeat", "seed",
    "temperature", "status", "reason", "stop_reason", "forced", "answer", "expected",
    "check_detail", "error", "model_calls", "tool_calls", "input_tokens", "cached_tokens",
    "output_tokens", "cost", "seconds", "reactloop_version", "tools", "trace",
)  # fmt: skip


def write_report(
    out: Path,
    records: Sequence[dict[str, Any]],
    *,
    k: int,
    endpoints: Sequence[dict[str, Any]] = (),
    report_process: ReportProcess | None = None,
) -> dict[str, Any]:
    """Write every report file; returns what ``results.json`` holds (its ``episodes``:
    ``records`` itself). ``endpoints``: each endpoint's cap history
    (``throttle.EndpointGate.summary``) in this run; ``report_process``: the child that
    rendered the pages and draws the charts meanwhile.

    ``records`` is walked twice, one record at a time (a ``StoredRecords`` reads them from
    disk): once for the tables, results.csv and the episodes of results.json and report.md,
    spooled to temporary files until the tables that come before them are known; once for
    index.html, after the child's pages."""
    store = ResultsStore(out, fsync=False)
    with _spool(out) as episodes, _spool(out) as errored:
        counted = _first_pass(store, out, records, episodes, errored)
        data = {
            "summary": counted.summary(k),
            "comparisons": counted.comparisons(),
            "per_step": [
                {"rung": rung, "protocol": protocol, "steps": steps}
                for (rung, protocol), steps in counted.per_step().items()
            ],
            "episodes": records,
            "endpoints": list(endpoints),
        }
        charts = report_process or ReportProcess.here()
        charts.draw(out, data)
        store.write_pieces(out / "results.json", _results_json(data, episodes))
        summary = data["summary"]
        columns = tuple(summary[0]) if summary else ("rung", "protocol")
        store.write_text(out / "summary.csv", _csv(summary, columns))
        names = charts.names()  # the child's pages done: write_html renders only what it missed
        lines = markdown_lines(data, k=k, charts=names, errored=_rewound(errored))
        store.write_pieces(out / "report.md", (line + "\n" for line in lines))
    write_html(out, data, charts=names)
    return data


def _spool(out: Path) -> IO[str]:
    return tempfile.TemporaryFile("w+", encoding="utf-8", newline="\n", dir=out)


def _rewound(spool: IO[str]) -> IO[str]:
    spool.flush()
    spool.seek(0)
    return spool


def _first_pass(
    store: ResultsStore,
    out: Path,
    records: Iterable[dict[str, Any]],
    episodes: IO[str],
    errored: IO[str],
) -> Tally:
    """The tables' counters, and results.csv written, as the records go by; each record's
    JSON (as results.json nests it) into ``episodes`` and each errored one's line of report.md
    into ``errored``."""
    counted = Tally()
    separator = "\n  "
    with store.open_text(out / "results.csv") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(EPISODE_COLUMNS), extrasaction="ignore")
        writer.writeheader()
        for record, text in _with_texts(records):
            typed = EpisodeRecord.from_dict(record)
            counted.add(typed)
            writer.writerow(_episode_row(record))  # the JSON form's keys are the columns
            episodes.write(separator + text.replace("\n", "\n  "))
            separator = ",\n  "
            if typed.errored:
                errored.write(errored_line(typed) + "\n")
    return counted


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


def _results_json(data: dict[str, Any], episodes: IO[str]) -> Iterator[str | IO[str]]:
    """The pieces of ``json.dump(data, indent=1)``, the episodes copied from their spool."""
    written = episodes.tell() != 0
    yield "{"
    for n, (name, value) in enumerate(data.items()):
        yield ("," if n else "") + "\n " + json.dumps(name, ensure_ascii=False) + ": "
        if name != "episodes":
            yield _nested_json(value, 1)
        elif not written:
            yield "[]"
        else:
            yield "["
            yield _rewound(episodes)
            yield "\n ]"
    yield "\n}\n"


def _episode_row(record: dict[str, Any]) -> dict[str, Any]:
    usage = record.get("usage") or {}
    row = {name: record.get(name) for name in EPISODE_COLUMNS}
    row.update(
        {name: usage.get(name) for name in ("input_tokens", "cached_tokens", "output_tokens")}
    )
    row["tools"] = " ".join(record.get("tools") or ())
    if not isinstance(row["expected"], str | int | float | type(None)):
        row["expected"] = json.dumps(row["expected"], ensure_ascii=False)
    return row


def _csv(rows: Sequence[dict[str, Any]], columns: Sequence[str]) -> str:
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=list(columns), extrasaction="ignore")
    writer.writeheader()
    writer.writerows(rows)
    return buffer.getvalue()
