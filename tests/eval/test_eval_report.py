"""The report folder: report.md, results.csv/json, summary.csv, the SVG charts, and index.html,
whose links a real headless Chromium follows to existing viewer pages and whose charts it
shows."""

from __future__ import annotations

import csv
import json
import shutil
import subprocess
import tempfile
import xml.etree.ElementTree as ET
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urljoin, urlparse

import pytest

from browser import (
    CHROMIUM,
    HEADLESS_FLAGS,
    DevTools,
    console_errors,
    evaluate,
    needs_chromium,
    open_page,
)
from reactloop.eval import EvalConfig, Rung, load_suite, run_eval
from reactloop.eval.run.oracle import OracleFactory


@pytest.fixture(scope="module")
def out(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("eval") / "out"
    rungs = (
        Rung(label="good", spec="oracle", factory=OracleFactory(), protocols=("native", "text")),
        Rung(label="shaky <b>", spec="oracle", factory=OracleFactory(frozenset({("arith-01", 0)}))),
    )
    tasks = tuple(load_suite("arithmetic")[:2])
    config = EvalConfig(
        suite="arithmetic", rungs=rungs, out=folder, repeats=2, tasks=tasks, fsync=False
    )
    run_eval(config)
    return folder


def test_results_files_have_one_row_per_episode_and_per_rung(out: Path) -> None:
    with (out / "results.csv").open(encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    assert len(rows) == 12
    assert {r["status"] for r in rows} == {"passed", "failed"}
    assert all((out / r["trace"]).is_file() for r in rows)
    with (out / "summary.csv").open(encoding="utf-8") as handle:
        summary = list(csv.DictReader(handle))
    assert [(r["rung"], r["protocol"]) for r in summary] == [
        ("good", "native"),
        ("good", "text"),
        ("shaky <b>", "native"),
    ]
    data = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert len(data["episodes"]) == 12 and len(data["summary"]) == 3
    record = data["episodes"][0]
    for field in (
        "task_id",
        "repeat",
        "model",
        "seed",
        "temperature",
        "protocol",
        "reactloop_version",
        "tools",
        "trace",
        "server_model",
    ):
        assert field in record
    report = (out / "report.md").read_text(encoding="utf-8")
    assert "## Protocol health" in report
    for chart in ("success.svg", "steps.svg"):
        root = ET.parse(out / chart).getroot()
        assert root.tag == "{http://www.w3.org/2000/svg}svg"
        assert f"![{chart}]({chart})" in report
    success = (out / "success.svg").read_text(encoding="utf-8")
    assert "shaky &lt;b&gt;" in success and "<b>" not in success


class Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.hrefs: list[str] = []
        self.images: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        if tag == "a" and found.get("href"):
            self.hrefs.append(str(found["href"]))
        if tag == "img" and found.get("src"):
            self.images.append(str(found["src"]))


def dump_dom(page: Path) -> str:
    with tempfile.TemporaryDirectory() as profile:
        done = subprocess.run(
            [CHROMIUM, *HEADLESS_FLAGS, f"--user-data-dir={profile}", "--dump-dom", page.as_uri()],
            capture_output=True,
            text=True,
            timeout=120,
            check=True,
        )
    return done.stdout


@needs_chromium
def test_index_in_chromium_links_every_episode_to_an_existing_viewer_page(out: Path) -> None:
    dom = dump_dom(out / "index.html")
    assert "shaky &lt;b&gt;" in dom and "<b>" not in dom.split("<body>", 1)[1]
    parser = Links()
    parser.feed(dom)
    base = (out / "index.html").as_uri()
    targets = [Path(unquote(urlparse(urljoin(base, href)).path)) for href in parser.hrefs]
    pages = [t for t in targets if t.parent == out / "pages"]
    assert len(pages) == 12 and all(p.is_file() for p in pages)
    assert all(t.is_file() for t in targets)
    assert sorted(parser.images) == ["steps.svg", "success.svg"]
    viewer = dump_dom(pages[0])
    assert "final_answer" in viewer


@needs_chromium
def test_index_in_chromium_shows_the_svg_charts(out: Path, browser: DevTools) -> None:
    """The charts load as images under index.html's Content-Security-Policy, at their size."""
    sid = open_page(browser, (out / "index.html").as_uri(), 1200, 900)
    shown = evaluate(
        browser, sid, "[...document.images].map(i => [i.src.split('/').pop(), i.naturalWidth])"
    )
    assert [name for name, _ in shown] == ["success.svg", "steps.svg"]
    for name, width in shown:
        assert width == int(ET.parse(out / name).getroot().get("width", "")), name
    assert console_errors(browser, sid) == []


def _results_header(report: str) -> list[str]:
    lines = report.splitlines()
    header = lines[lines.index("## Results") + 4]
    return [cell.strip() for cell in header.strip("|").split("|")]


def test_the_results_table_names_each_estimator_once(out: Path, tmp_path: Path) -> None:
    header = _results_header((out / "report.md").read_text(encoding="utf-8"))
    assert [h for h in header if h[:5] in ("pass@", "pass^")] == ["pass@1", "pass@2", "pass^2"]
    once = tmp_path / "once"
    rung = Rung(label="good", spec="oracle", factory=OracleFactory())
    tasks = tuple(load_suite("arithmetic")[:1])
    run_eval(
        EvalConfig(suite="arithmetic", rungs=(rung,), out=once, repeats=1, tasks=tasks, fsync=False)
    )
    header = _results_header((once / "report.md").read_text(encoding="utf-8"))
    assert [h for h in header if h[:5] in ("pass@", "pass^")] == ["pass@1", "pass^1"]
    assert len(header) == len(set(header))


class Tables(HTMLParser):
    """The text of each table's cells, row by row, with each cell's class."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: list[list[list[tuple[str, str]]]] = []
        self.cell: list[str] | None = None
        self.css = ""

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "table":
            self.tables.append([])
        elif tag == "tr":
            self.tables[-1].append([])
        elif tag in ("td", "th"):
            self.cell, self.css = [], str(dict(attrs).get("class") or "")

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self.cell is not None:
            self.tables[-1][-1].append(("".join(self.cell), self.css))
            self.cell = None

    def handle_data(self, data: str) -> None:
        if self.cell is not None:
            self.cell.append(data)


def _markdown_table(report: str, title: str) -> list[list[str]]:
    lines = report.splitlines()
    start = lines.index(title) + 4
    rows = []
    for line in lines[start:]:
        if not line.startswith("|"):
            break
        if not line.startswith("|---"):
            rows.append([cell.strip() for cell in line.strip("|").split(" | ")])
    return rows


def test_index_has_the_protocol_health_table_and_a_forced_column(out: Path, tmp_path: Path) -> None:
    from reactloop.eval.report.html import write_html

    data = json.loads((out / "results.json").read_text(encoding="utf-8"))
    data["episodes"][1]["forced"] = True  # as an episode whose answer came from a wind-down
    folder = tmp_path / "out"
    shutil.copytree(out, folder)
    parser = Tables()
    parser.feed(write_html(folder, data).read_text(encoding="utf-8"))
    health = next(t for t in parser.tables if ("loop-guard refusals", "") in t[0])
    report = (out / "report.md").read_text(encoding="utf-8")
    cells = [[text for text, _ in row] for row in health]
    assert cells == _markdown_table(report, "## Protocol health")
    episodes = next(t for t in parser.tables if t[0][0] == ("episode", ""))
    column = [text for text, _ in episodes[0]].index("forced")
    forced = [row[column] for row in episodes[1:]]
    assert forced[1] == ("forced", "forced")
    assert [f for n, f in enumerate(forced) if n != 1] == [("", "")] * (len(forced) - 1)
    assert len(forced) == len(data["episodes"])
