"""The workspace as a run found it: recorded in ``run_start`` (a snapshot of a small one,
digests of a larger one), restored or checked by the replay, a hostile record refused."""

from __future__ import annotations

import base64
import io
import json
import os
import tarfile
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from reactloop import Agent, Journal, ScriptedModel
from reactloop.cli.trace import replay as replay_command
from reactloop.errors import UsageError
from reactloop.journal import workspace_record as recording
from reactloop.replay import replay
from reactloop.replay.start import StartRecord, differences, restore
from reactloop.tools.context import ToolContext
from reactloop.tools.registry import build_tools

WRITE_AND_READ: list[Any] = [
    {"tool_calls": [{"name": "write_file", "arguments": {"path": "notes.txt", "content": "new"}}]},
    {"tool_calls": [{"name": "read_file", "arguments": {"path": "data.txt"}}]},
    "done",
]


def make_workspace(folder: Path) -> Path:
    folder.mkdir()
    (folder / "data.txt").write_text("one\ntwo\n", encoding="utf-8")
    (folder / "run.sh").write_text("echo hi\n", encoding="utf-8")
    (folder / "run.sh").chmod(0o755)
    (folder / "pkg").mkdir()
    (folder / "pkg" / "empty").mkdir()
    (folder / "link").symlink_to("data.txt")
    os.mkfifo(folder / "pipe")  # left out of the record, as the copy leaves it out
    return folder


def recorded(tmp_path: Path, turns: list[Any] | None = None) -> tuple[Path, Path]:
    workspace = make_workspace(tmp_path / "ws")
    config = {"tools": ["files"], "workspace": str(workspace), "read_only": False}
    tools = build_tools(("files",), ToolContext(workspace=workspace))
    trace = tmp_path / "run.jsonl"
    with Journal(trace) as journal:
        Agent(ScriptedModel(turns or WRITE_AND_READ), tools, journal=journal, config=config).run(
            "write, then read"
        )
    return trace, workspace


def run_start(trace: Path) -> dict[str, Any]:
    events = [json.loads(line) for line in trace.read_text(encoding="utf-8").splitlines()]
    start: dict[str, Any] = next(e for e in events if e["type"] == "run_start")
    return start


def rewrite_start(trace: Path, change: Any) -> None:
    lines = trace.read_text(encoding="utf-8").splitlines()
    events = [json.loads(line) for line in lines]
    for event in events:
        if event["type"] == "run_start":
            change(event)
    trace.write_text("".join(json.dumps(e) + "\n" for e in events), encoding="utf-8")


def test_run_start_records_a_small_workspace_as_it_was_before_any_tool_ran(
    tmp_path: Path,
) -> None:
    trace, workspace = recorded(tmp_path)
    assert (workspace / "notes.txt").read_text(encoding="utf-8") == "new"  # the run wrote it
    record = run_start(trace)["workspace"]
    assert record["kind"] == "snapshot" and record["path"] == str(workspace)
    assert sorted(record["entries"]) == ["data.txt", "link", "pkg", "pkg/empty", "run.sh"]
    assert record["entries"]["link"] == "link data.txt"
    assert record["entries"]["run.sh"].startswith("exec ")
    assert record["entries"]["data.txt"].startswith("file ")
    assert record["bytes"] == len("one\ntwo\n") + len("echo hi\n")


def test_runs_whose_tools_use_no_workspace_record_none(tmp_path: Path) -> None:
    assert recording.record_for({"tools": ["calculator"], "workspace": str(tmp_path)}) is None
    assert recording.record_for({"tools": "calculator,bash", "workspace": ""}) is None
    assert recording.record_for({"tools": "files", "workspace": str(tmp_path / "no")}) is None
    assert recording.record_for({"tools": "lookup,files", "workspace": str(tmp_path)}) is not None


def test_the_replay_restores_the_snapshot_with_links_modes_and_empty_folders(
    tmp_path: Path,
) -> None:
    look = [
        {"tool_calls": [{"name": "list_dir", "arguments": {"path": "pkg"}}]},
        {"tool_calls": [{"name": "read_file", "arguments": {"path": "link"}}]},
        *WRITE_AND_READ,
    ]
    trace, workspace = recorded(tmp_path, look)
    plans: list[Any] = []
    report = replay(trace, announce=plans.append)
    assert report.identical, report.describe()
    assert plans[0].site.how == "snapshot" and report.compared == 4
    record = StartRecord.of(run_start(trace)["workspace"])
    assert record is not None
    assert differences(record, workspace) == ["notes.txt was not there"]
    restored = tmp_path / "restored"
    restore(record, restored)
    assert os.readlink(restored / "link") == "data.txt"
    assert os.access(restored / "run.sh", os.X_OK) and not os.access(restored / "data.txt", os.X_OK)
    assert (restored / "pkg" / "empty").is_dir() and not (restored / "pipe").exists()


def test_a_snapshot_replay_needs_no_recorded_workspace(tmp_path: Path) -> None:
    trace, workspace = recorded(tmp_path)
    for path in sorted(workspace.rglob("*"), reverse=True):
        path.rmdir() if path.is_dir() and not path.is_symlink() else path.unlink()
    workspace.rmdir()
    assert replay(trace).identical


def test_a_given_workspace_that_differs_from_the_start_is_refused_in_one_line(
    tmp_path: Path,
) -> None:
    trace, workspace = recorded(tmp_path)
    with pytest.raises(UsageError, match=r"notes.txt was not there"):
        replay(trace, workspace=workspace)  # as the run left it, not as it found it
    (workspace / "notes.txt").unlink()
    (workspace / "data.txt").write_text("changed\n", encoding="utf-8")
    (workspace / "__pycache__").mkdir()  # caches and .git are not compared
    (workspace / "__pycache__" / "x.pyc").write_bytes(b"\0")
    given = [str(trace), "--workspace", str(workspace), "--tools", "files"]
    refused = CliRunner().invoke(replay_command, given)
    assert refused.exit_code == 2
    (line,) = refused.stderr.strip().splitlines()
    assert "differs from the workspace the recorded run started in (data.txt changed)" in line
    (workspace / "data.txt").write_text("one\ntwo\n", encoding="utf-8")
    same = CliRunner().invoke(replay_command, given)
    assert same.exit_code == 0, same.output


def test_a_larger_workspace_gets_digests_and_a_changed_one_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(recording, "SNAPSHOT_MAX_BYTES", 10)  # data.txt alone is more
    trace, workspace = recorded(tmp_path)
    record = run_start(trace)["workspace"]
    assert record["kind"] == "digests" and "snapshot" not in record
    with pytest.raises(UsageError, match=r"the recorded workspace .* \(notes.txt was not there\)"):
        replay(trace)  # the recorded workspace is as the run left it
    (workspace / "notes.txt").unlink()
    plans: list[Any] = []
    report = replay(trace, announce=plans.append)
    assert report.identical, report.describe()
    assert plans[0].site.how == "copy" and plans[0].site.checked
    assert not (workspace / "notes.txt").exists()  # written in the copy, not here


def test_a_workspace_beyond_the_caps_is_too_big_and_the_replay_says_it_cannot_check(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(recording, "SNAPSHOT_MAX_ENTRIES", 3)
    monkeypatch.setattr(recording, "DIGEST_MAX_ENTRIES", 3)
    trace, workspace = recorded(tmp_path)
    record = run_start(trace)["workspace"]
    assert record == {"path": str(workspace), "kind": "too_big", "reason": "more than 3 entries"}
    (workspace / "notes.txt").unlink()
    plans: list[Any] = []
    assert replay(trace, announce=plans.append).identical
    assert "cannot check that it starts from there" in plans[0].describe()


def _tar(members: dict[str, bytes]) -> str:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return base64.b64encode(buffer.getvalue()).decode("ascii")


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda w: w.update(kind="magic"), "malformed"),
        (lambda w: w.update(entries=["data.txt"]), "malformed"),
        (lambda w: w.update(snapshot=None), "malformed"),
        (lambda w: w.update(snapshot="not base64!"), "cannot be unpacked"),
        (lambda w: w.update(snapshot=_tar({"data.txt": b"other\n"})), "does not match"),
        (lambda w: w.update(snapshot=_tar({"../escape.txt": b"x"})), "holds '../escape.txt'"),
        (lambda w: w.update(snapshot=_tar({"/etc/x": b"x"})), "holds '/etc/x'"),
    ],
)
def test_a_hostile_or_broken_record_is_refused(tmp_path: Path, change: Any, message: str) -> None:
    trace, _ = recorded(tmp_path)
    rewrite_start(trace, lambda start: change(start["workspace"]))
    with pytest.raises(UsageError, match=message):
        replay(trace)
    assert not (tmp_path / "escape.txt").exists()
    refused = CliRunner().invoke(replay_command, [str(trace)])
    assert refused.exit_code == 2 and "reactloop: error:" in refused.stderr


def test_journals_in_the_workspace_and_their_outputs_are_left_out(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(recording, "SNAPSHOT_MAX_BYTES", 10)  # digests: the folder is compared
    workspace = make_workspace(tmp_path / "ws")
    runs = workspace / "runs"
    with Journal(runs / "older.jsonl"):
        pass
    (runs / "older-outputs").mkdir()
    (runs / "older-outputs" / "call-1.txt").write_text("long output", encoding="utf-8")
    config = {"tools": ["files"], "workspace": str(workspace), "read_only": False}
    tools = build_tools(("files",), ToolContext(workspace=workspace))
    trace = runs / "run.jsonl"  # as reactloop run's default ./runs/ beneath the workspace
    with Journal(trace) as journal:
        Agent(ScriptedModel(WRITE_AND_READ), tools, journal=journal, config=config).run("w")
    assert trace.read_bytes().startswith(recording.JOURNAL_START)
    entries = run_start(trace)["workspace"]["entries"]
    assert [name for name in entries if name.startswith("runs")] == ["runs"]
    (workspace / "notes.txt").unlink()
    with Journal(runs / "newer.jsonl"):  # the journal grew, and others came: the same start
        pass
    assert replay(trace).identical


def test_version_control_and_caches_are_in_a_snapshot_but_never_compared(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    workspace = tmp_path / "ws"
    (workspace / ".git").mkdir(parents=True)
    (workspace / ".git" / "HEAD").write_text("ref: refs/heads/main\n", encoding="utf-8")
    (workspace / "__pycache__").mkdir()
    (workspace / "__pycache__" / "calc.pyc").write_bytes(b"\x00pyc")
    (workspace / "calc.py").write_text("a = 1\n", encoding="utf-8")
    snapshot = StartRecord.of(recording.record_workspace(workspace))
    assert snapshot is not None and snapshot.kind == "snapshot"
    assert ".git/HEAD" in snapshot.entries  # restored with the rest: git commands replay
    restored = tmp_path / "restored"
    restore(snapshot, restored)
    assert (restored / ".git" / "HEAD").read_text(encoding="utf-8") == "ref: refs/heads/main\n"
    clone = tmp_path / "clone"  # a fresh clone: other git metadata, no caches
    (clone / ".git").mkdir(parents=True)
    (clone / ".git" / "HEAD").write_text("ref: refs/heads/other\n", encoding="utf-8")
    (clone / "calc.py").write_text("a = 1\n", encoding="utf-8")
    assert differences(snapshot, clone) == []
    monkeypatch.setattr(recording, "SNAPSHOT_MAX_BYTES", 1)
    digests = StartRecord.of(recording.record_workspace(workspace))
    assert digests is not None and digests.kind == "digests"
    assert list(digests.entries) == ["calc.py"]  # neither read nor counted
    assert differences(digests, clone) == []
    (clone / "calc.py").write_text("a = 2\n", encoding="utf-8")
    assert differences(digests, clone) == ["calc.py changed"]


def test_a_workspace_that_cannot_be_read_does_not_stop_the_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def fail(*args: Any, **kwargs: Any) -> Any:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(recording, "listing", fail)
    trace, workspace = recorded(tmp_path)
    assert (workspace / "notes.txt").exists()  # the run went on
    record = run_start(trace)["workspace"]
    assert record["kind"] == "unrecorded" and "Permission denied" in record["reason"]
    monkeypatch.undo()
    (workspace / "notes.txt").unlink()
    plans: list[Any] = []
    assert replay(trace, announce=plans.append).identical
    assert "cannot check that it starts from there" in plans[0].describe()
