"""``/dev`` and ``/proc`` in every mode: only the device nodes a command needs, a private
``/dev/shm``, and no other host process in sight.

The weak modes give the command a mount namespace (root, or the user namespace of its PID
namespace) with a minimal read-only ``/dev`` and a fresh ``/proc``, as bwrap does; Landlock
(``weak+landlock``) also allows writes to a few device files only, which
``test_landlock_alone_allows_only_the_needed_device_files`` pins on its own (the case of a
weak+landlock command without a PID namespace: another user, no user namespaces, ABI >= 6).
Opening for writing is checked, never a write: ``exec 3>>`` opens and writes nothing.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from test_sandbox_containment import Run, run  # noqa: F401  (the fixture: every mode)

from reactloop.sandbox import landlock


def host_devices() -> list[str]:
    """Nodes no command may open for writing: kernel log, consoles, terminals, block devices."""
    names = ["kmsg", "console", "tty0", "tty1", "ttyS0", "kvm", "fuse", "mem", "port"]
    with_blocks = names + sorted(os.listdir("/sys/block"))[:3]
    terminals = [f"pts/{name}" for name in sorted(os.listdir("/dev/pts")) if name.isdigit()]
    found = with_blocks + terminals[:3]  # the host's pseudo-terminals: a user's shell, say
    return [f"/dev/{name}" for name in found if os.path.exists(f"/dev/{name}")]


def open_each_for_writing() -> str:
    """Shell text that opens each host device for appending (writing nothing) and says so."""
    devices = host_devices()
    assert devices, "this machine has none of the usual device nodes"
    probe = "; ".join(f'(exec 3>>{path}) 2>/dev/null && echo "opened {path}"' for path in devices)
    return f"{probe}; echo done"


def test_devices_beyond_the_needed_ones_cannot_be_opened_for_writing(run: Run) -> None:  # noqa: F811
    result = run(open_each_for_writing())
    assert result.output.endswith("done\n")
    assert [line for line in result.output.splitlines() if line.startswith("opened")] == []


def test_another_process_file_in_dev_shm_is_out_of_reach(run: Run) -> None:  # noqa: F811
    victim = Path("/dev/shm") / f"reactloop-victim-{uuid.uuid4().hex[:8]}"
    victim.write_text("the host's\n")
    try:
        run(f"echo pwned > {victim}; echo pwned >> {victim}; rm -f {victim}; ls /dev/shm")
        assert victim.read_text() == "the host's\n"
    finally:
        victim.unlink(missing_ok=True)


def test_the_needed_devices_and_a_private_shm_work(run: Run) -> None:  # noqa: F811
    probe = (
        "echo x > /dev/null && echo null=0; head -c 3 /dev/zero | wc -c;"
        " head -c 5 /dev/urandom | wc -c; head -c 2 /dev/random | wc -c;"
        " echo x > /dev/full 2>/dev/null; echo full=$?;"
        " echo mine > /dev/shm/own && cat /dev/shm/own; cat <(echo substituted)"
    )
    result = run(probe)
    assert result.output.split() == ["null=0", "3", "5", "2", "full=1", "mine", "substituted"]


def test_the_command_has_pseudo_terminals_of_its_own(run: Run) -> None:  # noqa: F811
    opened = "import os, pty; main, side = pty.openpty(); print(os.ttyname(side))"
    result = run(f"python3 -c '{opened}'")
    assert result.exit_code == 0 and result.output.startswith("/dev/pts/")


def fresh_proc_possible() -> bool:
    unshare = shutil.which("unshare")
    if unshare is None:
        return False
    user = [] if os.geteuid() == 0 else ["--user", "--map-current-user"]
    argv = [unshare, *user, "--pid", "--fork", "--mount-proc", "true"]
    return subprocess.run(argv, capture_output=True, check=False).returncode == 0


@pytest.mark.skipif(
    not fresh_proc_possible(),
    reason="the kernel refuses a new /proc here (a container masks parts of it): the weak "
    "modes keep the host's, and docs/sandbox.md says commands can read its command lines",
)
def test_host_command_lines_are_not_visible(run: Run, tmp_path: Path) -> None:  # noqa: F811
    """Every command line the command can see goes to a file (the output would be cut)."""
    marker = f"{uuid.uuid4().int % 10**6}.7373"
    host = subprocess.Popen(["sleep", f"1{marker}"])
    try:
        run("cat /proc/[0-9]*/cmdline | tr '\\0' ' ' > seen.txt")
        seen = (tmp_path / "workspace" / "seen.txt").read_text()
        harness = Path("/proc/self/cmdline").read_bytes().replace(b"\0", b" ").decode()
        assert "bash -c" in seen and marker not in seen and harness.strip() not in seen
    finally:
        host.kill()
        host.wait()


@pytest.mark.skipif(landlock.abi_version() < 1, reason="no Landlock here")
def test_landlock_alone_allows_only_the_needed_device_files(tmp_path: Path) -> None:
    """Landlock without the mount namespace: writes to /dev/null pass, others are refused."""
    victim = Path("/dev/shm") / f"reactloop-victim-{uuid.uuid4().hex[:8]}"
    victim.write_text("the host's\n")
    script = (
        "import sys\nfrom reactloop.sandbox import landlock\n"
        "landlock.restrict_self([sys.argv[1]])\n"
        "open('/dev/null', 'a').write('x')\n"
        "for path in sys.argv[2:]:\n"
        "    try:\n        open(path, 'a').close()\n        print('opened', path)\n"
        "    except OSError as exc:\n        print('refused', path, exc.errno)\n"
    )
    targets = [str(victim), "/dev/shm/new-file", *host_devices()]
    try:
        done = subprocess.run(
            [sys.executable, "-c", script, str(tmp_path), *targets],
            capture_output=True, text=True, check=True, env={**os.environ},
        )  # fmt: skip
        assert [line.split()[0] for line in done.stdout.splitlines()] == ["refused"] * len(targets)
        assert victim.read_text() == "the host's\n"
    finally:
        victim.unlink(missing_ok=True)


def test_without_a_mount_namespace_weak_landlock_runs_and_root_plain_weak_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where no mount namespace can be made (a container without CAP_SYS_ADMIN): Landlock
    still refuses the devices; root's plain weak mode, which could then leave its pids
    cgroup, is refused with a clear error rather than failing at every command."""
    from reactloop.errors import ToolError
    from reactloop.sandbox import command, weak

    monkeypatch.setattr(command, "private_mounts_problem", lambda: "no mounts (test)")
    monkeypatch.setattr(weak, "private_mounts_problem", lambda: "no mounts (test)")
    if landlock.abi_version() >= 1:
        result = command.run_command(open_each_for_writing(), workspace=tmp_path, mode="weak")
        assert result.sandbox == "weak+landlock" and result.output == "done\n"
    if os.geteuid() == 0:
        with pytest.raises(ToolError, match=r"pids cgroup here \(no mount namespace: no mounts"):
            command.run_command("true", workspace=tmp_path, mode="weak", use_landlock=False)
