"""The page's error box keeps a multi-line error's lines (a refused ``--verify``'s output,
pytest's), as the console and the journal do. Checked in the real headless Chromium of
``test_viewer.py``, on a page ``reactloop view`` wrote for a ``reactloop run``."""

from __future__ import annotations

import json
from pathlib import Path

from browser import DevTools, evaluate, needs_chromium, open_page
from helpers import invoke, script

CHECK = "printf 'F.. [100%%]\\nFAILED test_calc.py::test_average\\n1 failed, 3 passed\\n'; exit 1"
ERROR_TEXT_JS = "document.querySelector('.error').innerText"


def refused_run_page(tmp_path: Path) -> Path:
    trace, page = tmp_path / "run.jsonl", tmp_path / "run.html"
    code, out, _ = invoke(
        "run", "Fix it", "--model", script(tmp_path, ["done", "done"]), "--protocol", "native",
        "--max-steps", "2", "--verify", CHECK, "--trace", str(trace),
    )  # fmt: skip
    assert (code, out) == (3, "done\n")
    stop = [json.loads(line) for line in trace.read_text(encoding="utf-8").splitlines()][-1]
    assert "\n1 failed, 3 passed" in stop["error"]
    assert invoke("view", str(trace), "-o", str(page))[0] == 0
    return page


def test_the_error_box_is_styled_to_keep_its_lines(tmp_path: Path) -> None:
    html = refused_run_page(tmp_path).read_text(encoding="utf-8")
    assert "F.. [100%]\nFAILED test_calc.py::test_average\n1 failed, 3 passed" in html
    rule = next(line for line in html.splitlines() if line.startswith(".error {"))
    assert "white-space: pre-wrap" in rule


@needs_chromium
def test_in_chromium_the_error_box_shows_each_line(browser: DevTools, tmp_path: Path) -> None:
    sid = open_page(browser, refused_run_page(tmp_path).as_uri(), 390, 844)
    shown = evaluate(browser, sid, ERROR_TEXT_JS)
    assert "F.. [100%]\nFAILED test_calc.py::test_average\n1 failed, 3 passed" in shown
