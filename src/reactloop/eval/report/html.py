"""``index.html``: the summary, the charts, and every episode linked to its own viewer page.

Each episode's journal is rendered once by ``reactloop.viewer.render_html`` into
``pages/<episode>.html`` (again only when the journal is newer than its page). No script, no
network: everything from a record is escaped.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence
from html import escape
from pathlib import Path
from typing import Any

from reactloop.eval.records.record import EpisodeRecord
from reactloop.eval.records.store import ResultsStore
from reactloop.eval.report.health_table import HEALTH_NOTE, health_rows
from reactloop.viewer import render_html

_STYLE = """body{font:14px/1.4 system-ui,sans-serif;margin:1.5rem;color:#222}
table{border-collapse:collapse;margin:1rem 0}td,th{border:1px solid #ccc;padding:.2rem .5rem}
th{background:#f3f3f3}.passed{color:#17632a}.failed{color:#a11}.errored{color:#a60}
.forced{color:#a60;font-weight:600}.health td{white-space:nowrap}
img{max-width:100%;margin:1rem 0}"""
_SUMMARY = ("rung", "protocol", "episodes", "passed", "failed", "errored", "success",
            "ci_low", "ci_high", "pass_at_k", "pass_hat_k")  # fmt: skip


def write_pages(out: Path, episodes: Sequence[dict[str, Any]]) -> dict[str, str | None]:
    """Each episode's viewer page (rendered when missing or stale), by key."""
    store = ResultsStore(out, fsync=False)
    (out / "pages").mkdir(exist_ok=True)
    return {r["key"]: render_page(out, r.get("trace"), store) for r in episodes}


def write_html(
    out: Path,
    data: dict[str, Any],
    *,
    charts: Sequence[str] = (),
    links: dict[str, str | None] | None = None,
) -> Path:
    """``index.html``, written as the episodes go by; ``links``: the pages ``write_pages``
    wrote (else each episode's page is rendered, when missing or stale, as its row is)."""
    typed = map(EpisodeRecord.from_dict, data["episodes"])
    rows = ((r.key, r.trace, index_cells(r)) for r in typed)
    return write_index(out, data, rows, charts=charts, links=links)


def write_index(
    out: Path,
    data: dict[str, Any],
    rows: Iterable[tuple[str, str | None, str]],
    *,
    charts: Sequence[str] = (),
    links: dict[str, str | None] | None = None,
) -> Path:
    """``write_html`` of the episodes' rows given as (key, journal, ``index_cells``)."""
    store = ResultsStore(out, fsync=False)
    if links is None:
        (out / "pages").mkdir(exist_ok=True)
    head = [
        "<h1>Evaluation</h1>",
        '<p><a href="report.md">report.md</a> · <a href="results.csv">results.csv</a> · '
        '<a href="results.json">results.json</a></p>',
        _summary_table(data["summary"]),
        _health_table(data["summary"]),
        *(f'<img src="{escape(name)}" alt="{escape(name)}">' for name in charts),
    ]
    start = (
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width,initial-scale=1">'
        '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; '
        "img-src 'self'; style-src 'unsafe-inline'\">"
        f"<title>reactloop eval</title><style>{_STYLE}</style></head><body>"
    )

    def row(key: str, journal: str | None, cells: str) -> str:
        link = links.get(key) if links is not None else render_page(out, journal, store)
        name = escape(key)
        label = f'<a href="{escape(link)}">{name}</a>' if link else name
        return f"<tr><td>{label}</td>{cells}"

    path = out / "index.html"
    lines = itertools.starmap(row, rows)
    opening = [start, *(part + "\n" for part in head), "<h2>Episodes</h2><table>", _EPISODE_HEAD]
    store.write_pieces(path, itertools.chain(opening, lines, ["</table></body></html>\n"]))
    return path


def render_page(out: Path, journal: str | None, store: ResultsStore) -> str | None:
    """The page of the episode whose journal is ``journal`` (a record's ``trace``): its path
    relative to ``out`` (rendered if missing or stale), or None."""
    trace = out / str(journal or "")
    if not journal or not trace.is_file():
        return None
    page = out / "pages" / (trace.stem + ".html")
    if not page.exists() or page.stat().st_mtime < trace.stat().st_mtime:
        try:
            store.write_text(page, render_html(trace))
        except Exception:  # a journal the viewer cannot read: the index links the journal
            return str(trace.relative_to(out))
    return f"pages/{page.name}"


def _cell(value: Any) -> str:
    if isinstance(value, float):
        return f"{100 * value:.1f}%"
    return "–" if value is None else escape(str(value))


def _summary_table(summary: Sequence[dict[str, Any]]) -> str:
    k = summary[0]["k"] if summary else "k"
    names = {"ci_low": "95% CI low", "ci_high": "high", "pass_at_k": f"pass@{k}",
             "pass_hat_k": f"pass^{k}"}  # fmt: skip
    head = "".join(f"<th>{escape(names.get(name, name))}</th>" for name in _SUMMARY)
    rows = "".join(
        "<tr>" + "".join(f"<td>{_cell(row.get(name))}</td>" for name in _SUMMARY) + "</tr>"
        for row in summary
    )
    return f"<table><tr>{head}</tr>{rows}</table>"


def _health_table(summary: Sequence[dict[str, Any]]) -> str:
    """report.md's protocol-health table: the rates of what went wrong, per rung."""
    header, rows = health_rows(summary)
    head = "".join(f"<th>{escape(name)}</th>" for name in header)
    body = "".join(
        "<tr>" + "".join(f"<td>{escape(cell)}</td>" for cell in row) + "</tr>" for row in rows
    )
    return (
        f"<h2>Protocol health</h2><p>{escape(HEALTH_NOTE)}</p>"
        f'<table class="health"><tr>{head}</tr>{body}</table>'
    )


_EPISODE_HEAD = (
    "<tr><th>episode</th><th>status</th><th>stop</th><th>forced</th><th>answer</th>"
    "<th>steps</th></tr>"
)


def index_cells(record: EpisodeRecord) -> str:
    """The episode's row of index.html after its first cell (which links to its page)."""
    status = escape(str(record.status))
    run = record.run
    answer = escape(str((run and run.answer) or record.error or "")[:120])
    forced = '<td class="forced">forced</td>' if run and run.forced is True else "<td></td>"
    stop = escape(str((run and run.stop_reason) or "–"))
    return (
        f'<td class="{status}">{status}</td>'
        f"<td>{stop}</td>{forced}<td>{answer}</td>"
        f"<td>{run.model_calls if run else '–'}</td></tr>"
    )
