"""The bash tool's sandbox, attacked from inside, in every mode this machine offers.

Modes: ``bwrap`` (bubblewrap), ``weak+landlock`` (supervisor + rlimits + Landlock) and plain
``weak`` (supervisor + rlimits only). Where plain weak mode cannot protect, the test asserts
the weakness that docs/sandbox.md documents, so a change in either direction is noticed.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reactloop.errors import ToolError, UsageError
from reactloop.messages import ToolCall
from reactloop.sandbox import landlock
from reactloop.sandbox.bwrap import bwrap_problem
from reactloop.sandbox.cgroup import PidsCgroup
from reactloop.sandbox.command import CommandResult, run_command
from reactloop.sandbox.command_output import OutputCapture, fit_json
from reactloop.sandbox.rlimits import MIB, ResourceLimits
from reactloop.sandbox.weak import pid_namespace_problem, weak_problem
from reactloop.tools.context import ToolContext
from reactloop.tools.families.bash import tools
from reactloop.tools.toolbox import Toolbox

MODES = [
    pytest.param(
        ("bwrap", True, "bwrap"),
        id="bwrap",
        marks=pytest.mark.skipif(bwrap_problem() is not None, reason=str(bwrap_problem())),
    ),
    pytest.param(
        ("weak", True, "weak+landlock"),
        id="weak+landlock",
        marks=pytest.mark.skipif(landlock.abi_version() < 1, reason="no Landlock here"),
    ),
    pytest.param(
        ("weak", False, "weak"),
        id="weak",
        marks=pytest.mark.skipif(
            weak_problem("weak") is not None, reason=f"refused here: {weak_problem('weak')}"
        ),
    ),
]

Run = Callable[..., CommandResult]


@pytest.fixture(params=MODES)
def sandbox(request: pytest.FixtureRequest) -> str:
    return str(request.param[2])


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    folder = tmp_path / "workspace"
    folder.mkdir()
    return folder


@pytest.fixture
def run(request: pytest.FixtureRequest, sandbox: str, workspace: Path, tmp_path: Path) -> Run:
    mode, use_landlock, _ = next(m.values[0] for m in MODES if m.values[0][2] == sandbox)

    def call(command: str, **options: Any) -> CommandResult:
        options.setdefault("timeout", 60)
        options.setdefault("output_dir", tmp_path / "outputs")
        return run_command(
            command, workspace=workspace, mode=mode, use_landlock=use_landlock, **options
        )

    return call


def processes_mentioning(marker: str) -> list[int]:
    """Living processes whose command line contains ``marker``."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        if marker.encode() in cmdline:
            found.append(int(entry.name))
    return found


def wait_until(predicate: Callable[[], bool], seconds: float = 20.0) -> bool:
    """Poll for a condition another process brings about (with a deadline, never a fixed nap)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.02)
    return predicate()


def rss_kib() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError("no VmRSS")


def test_bwrap_works_where_ci_requires_it() -> None:
    if os.environ.get("REACTLOOP_REQUIRE_BWRAP") != "1":
        pytest.skip("set REACTLOOP_REQUIRE_BWRAP=1 where bubblewrap must work (CI)")
    assert bwrap_problem() is None


# ---- what every mode must do ---------------------------------------------------------------


def test_reports_mode_exit_code_and_both_streams(run: Run, sandbox: str) -> None:
    result = run("echo to-stdout; echo to-stderr >&2; exit 7")
    assert result.sandbox == sandbox
    assert result.exit_code == 7
    assert "to-stdout" in result.output and "to-stderr" in result.output
    assert result.to_dict()["sandbox"] == sandbox


def test_workspace_is_the_writable_current_directory(run: Run, workspace: Path) -> None:
    result = run("pwd; echo made > note.txt; mkdir -p sub && echo ok > sub/x")
    assert result.exit_code == 0, result.output
    assert result.output.splitlines()[0] == str(workspace.resolve())
    assert (workspace / "note.txt").read_text() == "made\n"
    assert (workspace / "sub" / "x").read_text() == "ok\n"


def test_environment_is_minimal(run: Run, workspace: Path) -> None:
    result = run("env")
    names = {line.split("=", 1)[0] for line in result.output.splitlines() if "=" in line}
    assert names <= {"PATH", "HOME", "TMPDIR", "LANG", "TERM", "PWD", "SHLVL", "_"} | {
        "PYTHONDONTWRITEBYTECODE"
    }
    assert f"HOME={workspace.resolve()}" in result.output


def test_harness_secrets_do_not_reach_the_command(sandbox: str, workspace: Path) -> None:
    """A harness started with OPENAI_API_KEY runs a command that looks for it everywhere."""
    mode, use_landlock = ("bwrap", True) if sandbox == "bwrap" else ("weak", sandbox != "weak")
    script = (
        "import ctypes, json, os, sys\n"
        "from reactloop.sandbox.command import run_command\n"
        'cmd = \'env; echo ---; tr "\\\\0" "\\\\n" < /proc/%d/environ\' % os.getpid()\n'
        f"r = run_command(cmd, workspace=sys.argv[1], mode={mode!r}, use_landlock={use_landlock})\n"
        "dumpable = ctypes.CDLL(None).prctl(3, 0, 0, 0, 0)\n"  # PR_GET_DUMPABLE
        "print(json.dumps({**r.to_dict(), 'dumpable': dumpable}))\n"
    )
    secret = f"sk-test-{uuid.uuid4().hex}"
    env = {**os.environ, "OPENAI_API_KEY": secret, "ANTHROPIC_API_KEY": secret}
    done = subprocess.run(
        [sys.executable, "-c", script, str(workspace)],
        env=env, capture_output=True, text=True, timeout=120, check=True,
    )  # fmt: skip
    reply = json.loads(done.stdout)
    own_env, _, harness_environ = reply["output"].partition("---")
    assert secret not in own_env
    # bwrap: a fresh /proc, where the harness's pid does not exist. Weak modes: the harness is
    # non-dumpable (so a same-user command may not read its environ; a root command has no
    # capabilities left to) and Landlock denies ptrace access outside its domain.
    assert secret not in harness_environ
    assert reply["dumpable"] == (1 if sandbox == "bwrap" else 0)


def test_cannot_write_outside_the_workspace(run: Run, sandbox: str, tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"  # a sibling of the workspace
    sibling = tmp_path / "workspace-evil"  # a name that starts with the workspace's
    sibling.mkdir()
    result = run(f"echo x > {outside}; echo x > {sibling}/f; echo x > ../escaped; echo done")
    assert "done" in result.output
    written = [p for p in (outside, sibling / "f", tmp_path / "escaped") if p.exists()]
    if sandbox == "weak":
        assert written, "plain weak mode has no file confinement (documented)"
    else:
        assert written == []


def test_system_files_stay_read_only(run: Run, sandbox: str) -> None:
    if sandbox == "weak" and os.geteuid() == 0:
        pytest.skip("plain weak mode as root could really write to /etc (documented)")
    result = run("touch /etc/reactloop-escape-test; echo rc=$?")
    assert "rc=0" not in result.output
    assert not Path("/etc/reactloop-escape-test").exists()


def test_remounting_and_mounting_fail(run: Run, workspace: Path) -> None:
    result = run(
        "mount -o remount,rw / 2>&1; echo remount=$?;"
        " mkdir -p m; mount -t tmpfs none m 2>&1; echo mount=$?;"
        " grep ^Cap /proc/self/status"
    )
    assert "remount=0" not in result.output
    assert "mount=0" not in result.output
    assert "CapEff:\t0000000000000000" in result.output
    assert "CapBnd:\t0000000000000000" in result.output


def test_proc_sys_is_read_only(run: Run, sandbox: str) -> None:
    result = run("echo 1 > /proc/sys/vm/drop_caches; echo rc=$?; cat /proc/self/mountinfo")
    assert "rc=0" not in result.output
    if sandbox == "bwrap":
        mounts = [line.split() for line in result.output.splitlines() if " /proc/" in line]
        options = {fields[4]: fields[5] for fields in mounts if len(fields) > 5}
        assert options["/proc/sys"].startswith("ro")
        if Path("/proc/sysrq-trigger").exists():
            assert options["/proc/sysrq-trigger"].startswith("ro")


def test_loopback_server_of_the_test(run: Run, sandbox: str) -> None:
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        server.setblocking(False)
        port = server.getsockname()[1]
        result = run(f"exec 3<>/dev/tcp/127.0.0.1/{port} && echo CONNECTED", timeout=20)
        if sandbox == "weak":  # no network isolation without bwrap or Landlock (documented)
            assert "CONNECTED" in result.output
        else:
            assert "CONNECTED" not in result.output
            with pytest.raises(BlockingIOError):
                server.accept()


def test_command_cannot_signal_the_harness(run: Run, sandbox: str) -> None:
    result = run(f"kill -0 {os.getpid()}; echo rc=$?")
    contained = sandbox == "bwrap" or pid_namespace_problem() is None
    if not contained and landlock.abi_version() < 6:
        pytest.skip("no PID namespace and no Landlock signal scoping here")
    # bwrap and the weak modes' PID namespace: the harness has no pid in the command's
    # namespace; Landlock ABI 6+: scoped signals
    assert "rc=1" in result.output


def test_timeout_kills_setsid_and_double_forked_children(run: Run) -> None:
    marker = f"{time.time_ns() % 10**6}.4242"
    command = f"setsid sleep 1{marker} & (sleep 2{marker} &) ; echo started; sleep 3{marker}"
    result = run(command, timeout=2)
    assert result.timed_out and result.signal == "SIGKILL"
    assert "started" in result.output
    assert processes_mentioning(marker) == []


def test_background_children_do_not_outlive_a_normal_exit(run: Run) -> None:
    marker = f"{time.time_ns() % 10**6}.4343"
    result = run(f"setsid sleep 1{marker} & (sleep 2{marker} &) ; echo done", timeout=120)
    assert not result.timed_out
    assert result.exit_code == 0 and "done" in result.output
    assert processes_mentioning(marker) == []


def test_output_flood_keeps_harness_memory_bounded(run: Run, tmp_path: Path) -> None:
    before = rss_kib()
    result = run("yes", timeout=3)
    assert result.timed_out
    assert result.truncated and result.output_bytes > 10 * MIB
    assert rss_kib() - before < 64 * 1024  # generous: the reader keeps ~32 KiB
    assert result.full_output_path is not None
    assert result.full_output_path.stat().st_size <= 64 * MIB + 200
    assert len(json.dumps(result.to_dict()["output"])) <= 3000


def test_large_output_is_saved_whole(run: Run) -> None:
    result = run("seq 1 300000")
    assert result.exit_code == 0 and result.truncated
    assert result.output.startswith("1\n2\n") and result.output.endswith("299999\n300000\n")
    assert result.full_output_path is not None
    saved = result.full_output_path.read_text().splitlines()
    assert saved == [str(n) for n in range(1, 300001)]
    assert result.to_dict()["full_output"] == str(result.full_output_path)


def test_output_that_escaping_makes_too_long_is_cut_and_saved(run: Run) -> None:
    result = run("""printf '"%.0s' $(seq 1 2000)""")  # 2000 bytes, 4000 once JSON-escaped
    assert result.truncated and result.output_bytes == 2000
    assert len(json.dumps(result.output)) <= 3000
    assert result.full_output_path is not None
    assert result.full_output_path.read_text() == '"' * 2000


def test_cpu_hog_is_stopped_by_rlimit(run: Run) -> None:
    result = run("while :; do :; done", timeout=120, limits=ResourceLimits(cpu_seconds=1))
    assert not result.timed_out
    assert result.signal in ("SIGKILL", "SIGXCPU")


def test_memory_hog_is_stopped_by_rlimit(run: Run) -> None:
    hog = "python3 -c 'x = bytearray(2 * 1024**3); print(\"ALLOCATED\")'"
    result = run(hog, limits=ResourceLimits(memory_bytes=256 * MIB))
    assert result.exit_code != 0
    # a line of its own: Python 3.13's traceback quotes the -c code, print("ALLOCATED") included
    shown = [line.strip() for line in result.output.splitlines()]
    assert "ALLOCATED" not in shown and "MemoryError" in result.output


def test_file_size_is_capped(run: Run, workspace: Path) -> None:
    result = run("head -c 5000000 /dev/zero > big.bin", limits=ResourceLimits(file_size_bytes=MIB))
    assert result.exit_code != 0
    assert (workspace / "big.bin").stat().st_size <= MIB


def test_open_files_are_capped(run: Run) -> None:
    result = run("ulimit -n", limits=ResourceLimits(open_files=64))
    assert result.output.strip() == "64"


def fork_bomb_containable() -> bool:
    if os.geteuid() != 0:
        return True  # RLIMIT_NPROC binds everyone but root
    cgroup = PidsCgroup.create(10)
    if cgroup is None:
        return False
    cgroup.remove()
    return True


@pytest.mark.skipif(
    not fork_bomb_containable(),
    reason="root without a writable pids cgroup: a fork bomb would hit the whole machine",
)
def test_fork_bomb_is_contained(run: Run) -> None:
    marker = f"bomb{uuid.uuid4().hex[:8]}"
    command = f"{marker}() {{ {marker} | {marker} & }}; {marker}; wait"
    result = run(command, timeout=20, limits=ResourceLimits(processes=64))
    assert isinstance(result.exit_code, int)
    assert processes_mentioning(marker) == []
    assert run("echo alive").output == "alive\n"


def test_harness_death_kills_the_command(sandbox: str, workspace: Path) -> None:
    mode, use_landlock = ("bwrap", True) if sandbox == "bwrap" else ("weak", sandbox != "weak")
    marker = f"{time.time_ns() % 10**6}.4545"
    script = (
        "import sys\nfrom reactloop.sandbox.command import run_command\n"
        f"run_command('touch started; sleep 1{marker}', workspace=sys.argv[1], timeout=600,"
        f" mode={mode!r}, use_landlock={use_landlock})\n"
    )
    harness = subprocess.Popen([sys.executable, "-c", script, str(workspace)])
    try:
        assert wait_until((workspace / "started").exists)
        assert wait_until(lambda: len(processes_mentioning(marker)) > 1)  # harness + sleep
    finally:
        harness.send_signal(signal.SIGKILL)
        harness.wait()
    assert wait_until(lambda: processes_mentioning(marker) == [])

    def swept() -> bool:
        fresh = PidsCgroup.create(10)  # sweeps the cgroups that dead harnesses left behind
        if fresh is None:
            return True
        fresh.remove()  # the kernel may still be emptying the old one: poll, bounded
        return list(fresh.path.parent.glob(f"reactloop-{harness.pid}-*")) == []

    assert wait_until(swept)


def test_bad_requests_are_clear_errors(run: Run, tmp_path: Path) -> None:
    with pytest.raises(ToolError, match="NUL"):
        run("echo a\x00b")
    with pytest.raises(ToolError, match="empty"):
        run("   ")
    with pytest.raises(ToolError, match="not a folder"):
        run_command("true", workspace=tmp_path / "missing")


def test_read_only_workspace(run: Run, sandbox: str, workspace: Path) -> None:
    if sandbox == "weak":
        with pytest.raises(ToolError, match="read-only"):
            run("true", read_only_workspace=True)
        return
    result = run("cat /dev/null > made.txt; echo rc=$?; echo tmp > $TMPDIR/t && cat $TMPDIR/t",
                 read_only_workspace=True)  # fmt: skip
    assert "rc=0" not in result.output and "tmp" in result.output
    assert not (workspace / "made.txt").exists()


# ---- the tool --------------------------------------------------------------------------------


def test_bash_tool_through_a_toolbox(workspace: Path, tmp_path: Path) -> None:
    context = ToolContext(workspace=workspace, output_dir=tmp_path / "run")
    (bash,) = tools(context)
    assert bash.name == "bash" and not bash.read_only
    assert set(bash.parameters["properties"]) == {"command", "timeout_seconds"}
    box = Toolbox([bash])
    arguments = json.dumps({"command": "seq 1 100000; exit 3", "timeout_seconds": 9999})
    result = box.execute(ToolCall(id="c1", name="bash", arguments=arguments))
    assert result.ok and not result.truncated  # the tool cut it already: valid JSON stays whole
    assert result.output["exit_code"] == 3
    assert result.output["truncated"] is True
    assert Path(result.output["full_output"]).parent == tmp_path / "run"
    assert len(result.to_content()) < box.max_output_chars + 200


def test_bash_tool_needs_a_workspace(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="workspace"):
        tools(ToolContext())
    with pytest.raises(UsageError, match="not a folder"):
        tools(ToolContext(workspace=tmp_path / "missing"))
    with pytest.raises(UsageError, match="sandbox mode"):
        tools(ToolContext(workspace=tmp_path, sandbox_mode="none"))


def test_read_only_context_keeps_the_workspace_unchanged(workspace: Path) -> None:
    if bwrap_problem() is not None and landlock.abi_version() < 1:
        pytest.skip("neither bwrap nor Landlock: read-only cannot be enforced here")
    (bash,) = tools(ToolContext(workspace=workspace, read_only=True))
    assert "read-only workspace" in bash.description
    result = Toolbox([bash]).execute(
        ToolCall(id="c", name="bash", arguments='{"command": "echo x > f; echo rc=$?"}')
    )
    assert result.ok and "rc=0" not in result.output["output"]
    assert not (workspace / "f").exists()


def test_bash_tool_errors_are_observations(workspace: Path) -> None:
    box = Toolbox(tools(ToolContext(workspace=workspace)))
    result = box.execute(ToolCall(id="c1", name="bash", arguments='{"command": "a\\u0000b"}'))
    assert not result.ok and "NUL" in (result.error or "")


def test_forcing_bwrap_where_it_cannot_run_is_a_clear_error(monkeypatch: Any) -> None:
    from reactloop.sandbox import command

    monkeypatch.setattr(command, "bwrap_problem", lambda: "bwrap is not installed")
    with pytest.raises(ToolError, match="not available"):
        command.sandbox_mode("bwrap")
    assert command.sandbox_mode("auto").startswith("weak")


# ---- output capture (property-based) ---------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(chunks=st.lists(st.binary(max_size=300), max_size=40))
def test_capture_keeps_head_tail_and_saves_everything(
    chunks: list[bytes], tmp_path_factory: Any
) -> None:
    path = tmp_path_factory.mktemp("capture") / "out.txt"
    capture = OutputCapture(head_bytes=100, tail_bytes=100, spill_path=path)
    for chunk in chunks:
        capture.feed(chunk)
    capture.close()
    data = b"".join(chunks)
    assert capture.total_bytes == len(data)
    assert capture.truncated == (len(data) > 200)
    if capture.truncated:
        assert path.read_bytes() == data
    else:
        assert not path.exists()
        assert capture.text(10_000) == (data.decode("utf-8", errors="replace"), False)


@given(
    head=st.text(max_size=2000),
    tail=st.text(max_size=2000),
    limit=st.integers(min_value=80, max_value=2000),
    cut=st.booleans(),
)
def test_fit_json_always_fits_and_marks_cuts(head: str, tail: str, limit: int, cut: bool) -> None:
    fitted = fit_json(head, tail, limit, total_bytes=12345, cut=cut)
    assert len(json.dumps(fitted, ensure_ascii=False)) <= limit
    if not cut and len(json.dumps(head + tail, ensure_ascii=False)) <= limit:
        assert fitted == head + tail
    else:
        assert "output cut; 12345 bytes in all" in fitted


def test_capture_survives_a_folder_it_cannot_write(tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("x")
    capture = OutputCapture(head_bytes=4, tail_bytes=4, spill_path=blocker / "out.txt")
    capture.feed(b"0123456789" * 10)
    capture.close()
    text, cut = capture.text(1000)
    assert cut and text.startswith("0123") and text.endswith("6789")
    assert capture.path is None and "could not be saved" in (capture.save_error or "")


def test_saved_output_is_capped() -> None:
    capture = OutputCapture(head_bytes=10, tail_bytes=10, spill_path=None)
    for _ in range(1000):
        capture.feed(b"y\n" * 5000)
    assert capture.total_bytes == 10_000_000 and capture.path is None
    assert len(capture._tail) <= 2 * 10 + 10_000
