"""The report's charts drawn in a child process, started when the eval starts.

Importing matplotlib and drawing the two charts is most of what writing a report costs (about
1 s of CPU to import, 0.5 s to draw, more on a loaded machine). A ``ChartProcess`` started
with the eval imports matplotlib on another core while the episodes run; at the end it gets
the summary and the per-step table on its stdin, draws with ``charts.write_charts`` while
this process writes the rest of the report, and answers the names of the charts it wrote.
When it cannot (no matplotlib, the child failed), ``names`` draws them here as before.

    python -m reactloop.eval.chart_process     # the child: reads {"out", "data"} on stdin
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from reactloop.eval.charts import write_charts


class ChartProcess:
    """A child that has imported matplotlib by the time the report is written."""

    def __init__(self, *, child: bool = True) -> None:
        self._process: subprocess.Popen[str] | None = None
        self._job: tuple[Path, dict[str, Any]] | None = None
        if not child or importlib.util.find_spec("matplotlib") is None:
            return  # write_charts draws them (or says why not) in this process
        env = os.environ | {"PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
        try:
            self._process = subprocess.Popen(
                [sys.executable, "-m", "reactloop.eval.chart_process"],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                text=True,
                env=env,
            )
        except OSError:
            self._process = None

    @classmethod
    def here(cls) -> ChartProcess:
        """No child: the charts drawn in this process when ``names`` is called."""
        return cls(child=False)

    def draw(self, out: Path, data: dict[str, Any]) -> None:
        """Start drawing the charts of ``data`` into ``out``; ``names`` waits for them."""
        self._job = (out, data)
        if self._process is None or self._process.stdin is None:
            return
        job = {"out": str(out), "data": {k: data[k] for k in ("summary", "per_step")}}
        try:
            self._process.stdin.write(json.dumps(job, default=str))
            self._process.stdin.close()
        except OSError:
            self.close()

    def names(self) -> list[str]:
        """The charts written (drawn here when the child could not)."""
        assert self._job is not None, "draw() first"
        out, data = self._job
        if self._process is not None:
            process, self._process = self._process, None
            answer = process.stdout.read() if process.stdout is not None else ""
            process.wait()
            try:
                found = json.loads(answer)
            except ValueError:
                found = None
            if isinstance(found, list) and all(isinstance(name, str) for name in found):
                return found
        return write_charts(out, data)

    def close(self) -> None:
        """Stop the child if it is still waiting (an eval that writes no report)."""
        if self._process is not None:
            self._process.kill()
            self._process.wait()
            self._process = None


def _child() -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot

    job = json.loads(sys.stdin.read() or "null")
    if not isinstance(job, dict):
        return  # the eval wrote no report
    print(json.dumps(write_charts(Path(job["out"]), job["data"])))


if __name__ == "__main__":
    _child()
