"""The report's slow parts in a child process, started when the eval starts: each episode's
viewer page as the episode finishes, and the charts at the end.

Rendering a viewer page costs 3-8 ms of CPU an episode; done in the eval's own process the
pages take the interpreter from the episodes. A ``ReportProcess`` takes them to another core:
``page`` queues a finished episode (a feeder thread writes it to the child's stdin, so an
episode's thread never waits on the pipe); ``draw`` sends the summary and the per-step table;
``names`` waits for the child to finish the pages and the charts and answers the charts it
wrote. When there is no child (``here()``, or it could not start, or it died), ``names`` draws
the charts in this process and ``write_pages`` renders the pages the child did not.

The child imports what its jobs need and no more (the viewer for the pages, this module and
the charts', SVG drawn in a few milliseconds), so that its start would cost little if the eval
package's ``__init__`` did not import every module of the package. Each page is rendered as
soon as its episode is recorded, straight from its journal (no check for a stale page: there
is none yet), and put in place by a rename.

    python -m reactloop.eval.report.process     # the child: one JSON job a line on stdin
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import queue
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from reactloop.eval.report.charts import write_charts
from reactloop.viewer import render_html

if TYPE_CHECKING:
    from reactloop.eval.records.record import EpisodeRecord

_END = None
REPORT_SECONDS = 300.0
"""How long ``names`` waits for the child to finish its pages and charts (it renders each page
as its episode finishes, so at the end it has the last few and the charts): then it is killed,
with a warning, and this process does what it did not."""


class ReportProcess:
    def __init__(self, *, child: bool = True) -> None:
        self._process: subprocess.Popen[str] | None = None
        self._job: tuple[Path, dict[str, Any]] | None = None
        self._jobs: queue.SimpleQueue[str | None] = queue.SimpleQueue()
        self._feeder: threading.Thread | None = None
        if child:
            self._start()

    @classmethod
    def here(cls) -> ReportProcess:
        """No child: the charts drawn in this process when ``names`` is called."""
        return cls(child=False)

    def _start(self) -> None:
        env = os.environ | {"PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
        try:
            self._process = subprocess.Popen(
                [sys.executable, "-m", "reactloop.eval.report.process"],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                text=True,
                env=env,
            )
        except OSError:
            return
        self._feeder = threading.Thread(target=self._feed, daemon=True, name="reactloop-report")
        self._feeder.start()

    def _feed(self) -> None:
        assert self._process is not None and self._process.stdin is not None
        stdin = self._process.stdin
        try:
            while (line := self._jobs.get()) is not _END:
                stdin.write(line + "\n")
                stdin.flush()
        except OSError:  # the child died: names() does what it did not
            pass
        finally:
            with contextlib.suppress(OSError):
                stdin.close()

    def page(self, out: Path, record: EpisodeRecord) -> None:
        """Render the viewer page of ``record`` (in the child; thread-safe, never waits)."""
        if self._feeder is not None:
            job = {"page": {"out": str(out), "key": record.key, "trace": record.trace}}
            self._jobs.put(json.dumps(job))

    def draw(self, out: Path, data: dict[str, Any]) -> None:
        """Draw the charts of ``data`` into ``out``; ``names`` waits for them."""
        self._job = (out, data)
        charts = {"out": str(out), "data": {k: data[k] for k in ("summary", "per_step")}}
        self._jobs.put(json.dumps({"charts": charts}, default=str))
        self._jobs.put(_END)

    def names(self) -> list[str]:
        """The charts written, once the child has finished every page and the charts."""
        assert self._job is not None, "draw() first"
        out, data = self._job
        if self._process is not None:
            process, self._process = self._process, None
            answer = _answer(process)
            try:
                found = json.loads(answer or "null")
            except ValueError:
                found = None
            if isinstance(found, list) and all(isinstance(name, str) for name in found):
                return found
        return write_charts(out, data)

    def close(self) -> None:
        """Stop the child (an eval that ends without a report)."""
        self._jobs.put(_END)
        if self._process is not None:
            self._process.kill()
            self._process.wait()
            self._process = None


def _answer(process: subprocess.Popen[str]) -> str:
    """The child's answer, read until it exits; killed after ``REPORT_SECONDS`` (no answer)."""
    timer = threading.Timer(REPORT_SECONDS, process.kill)
    timer.daemon = True
    timer.start()
    try:
        answer = process.stdout.read() if process.stdout is not None else ""
        process.wait()
    finally:
        timer.cancel()
    if process.returncode < 0:
        logging.getLogger("reactloop.eval").warning(
            "the report's child process did not finish within %g s: stopped; its pages and "
            "charts are made here",
            REPORT_SECONDS,
        )
        return ""
    return answer


def _child() -> None:
    for line in sys.stdin:
        job = json.loads(line)
        if "page" in job:
            _write_page(Path(job["page"]["out"]), job["page"]["trace"], render_html)
        elif "charts" in job:
            print(json.dumps(write_charts(Path(job["charts"]["out"]), job["charts"]["data"])))
            return


def _write_page(out: Path, journal: str | None, render: Callable[[Path], str]) -> None:
    """``pages/<journal's stem>.html`` of the journal ``journal`` (relative to ``out``), put in
    place whole by a rename; nothing for a journal the viewer cannot read (the index's pass
    then links the journal itself, as ``html.render_page`` does)."""
    if not journal:
        return
    trace = out / journal
    try:
        page = render(trace)
    except Exception:  # missing, or a journal the viewer cannot read
        return
    final = out / "pages" / (trace.stem + ".html")
    temporary = final.with_name(f".{final.name}.{os.getpid()}.tmp")
    try:
        temporary.write_bytes(page.encode("utf-8"))
        os.replace(temporary, final)
    except OSError:  # the index's pass renders it again, or says why
        temporary.unlink(missing_ok=True)


if __name__ == "__main__":
    _child()
