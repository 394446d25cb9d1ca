"""The plain weak mode confines nothing on disk: where ``--sandbox auto`` would mean it (no
bubblewrap on the PATH, no Landlock in the kernel), a journaled run with ``bash`` is refused
before its journal exists, unless the user asks for that mode with ``--sandbox weak``.

Landlock cannot be taken away from a running kernel, so its absence is the one thing faked
here (``landlock.abi_version``); bubblewrap's is real: a ``PATH`` without it.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from helpers import invoke
from reactloop.cli.record_place import check_sandbox_keeps_record
from reactloop.errors import UsageError
from reactloop.sandbox import landlock
from reactloop.sandbox.bwrap import bwrap_problem


@pytest.fixture
def plain_weak_here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """No bwrap on the PATH (a folder holding only ``sh``), no Landlock; the cached bwrap
    check forgotten before and after."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name in ("sh", "bash"):
        found = shutil.which(name)
        if found is not None:
            (bin_dir / name).symlink_to(found)
    monkeypatch.setenv("PATH", str(bin_dir))
    monkeypatch.setattr(landlock, "abi_version", lambda: 0)
    bwrap_problem.cache_clear()
    yield
    bwrap_problem.cache_clear()


def test_auto_meaning_plain_weak_is_refused_for_bash(plain_weak_here: None) -> None:
    with pytest.raises(UsageError, match="no sandbox here keeps bash from rewriting its journal"):
        check_sandbox_keeps_record(("calculator", "bash"), "auto")
    check_sandbox_keeps_record(("calculator", "bash"), "weak")  # asked for: the user's choice
    check_sandbox_keeps_record(("files",), "auto")  # file tools stay in the workspace


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap")
def test_auto_with_bwrap_is_not_refused() -> None:
    check_sandbox_keeps_record(("bash",), "auto")


def test_a_run_refused_so_writes_no_journal(plain_weak_here: None, tmp_path: Path) -> None:
    script = tmp_path / "script.json"
    script.write_text(json.dumps(["done"]), encoding="utf-8")
    trace = tmp_path / "runs" / "run.jsonl"
    ws = tmp_path / "ws"
    ws.mkdir()
    given = ["--model", f"scripted:{script}", "--tools", "bash", "--workspace", str(ws)]
    code, _, err = invoke("run", "q", *given, "--trace", str(trace))
    assert code == 2 and "install bubblewrap, or give --sandbox weak" in err
    assert not trace.exists()
