"""Confinement of the file tools: no path, symlink, link, FIFO or race leaves the workspace.

Every case runs on both resolution paths: ``openat2(RESOLVE_BENEATH)`` and the
component-by-component ``O_NOFOLLOW`` walk.
"""

from __future__ import annotations

import ctypes
import os
import stat
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from helpers import executed
from reactloop.errors import ToolError, UsageError
from reactloop.messages import ToolResult
from reactloop.sandbox.paths import Workspace
from reactloop.tools.families.files import file_tools
from reactloop.tools.toolbox import Toolbox

SECRET = "SECRET outside the workspace"


@pytest.fixture
def layout(tmp_path: Path) -> dict[str, Path]:
    """ws/ (the workspace), ws-evil/ (a sibling sharing its prefix), outside/ (anything else)."""
    ws, evil, outside = tmp_path / "ws", tmp_path / "ws-evil", tmp_path / "outside"
    for folder in (ws / "sub", evil, outside / "dir"):
        folder.mkdir(parents=True)
    (ws / "sub" / "inside.txt").write_text("inside\n")
    for folder in (evil, outside, outside / "dir"):
        (folder / "secret.txt").write_text(SECRET)
    return {"ws": ws, "evil": evil, "outside": outside, "tmp": tmp_path}


@pytest.fixture
def toolbox(layout: dict[str, Path], use_openat2: bool) -> Toolbox:
    return Toolbox(file_tools(Workspace(layout["ws"], use_openat2=use_openat2)))


def snapshot(folder: Path) -> dict[str, bytes | str]:
    """Every entry under ``folder`` (not following symlinks) with its content or link target."""
    seen: dict[str, bytes | str] = {}
    for path in sorted(folder.rglob("*")):
        if path.is_symlink():
            seen[str(path)] = "-> " + os.readlink(path)
        elif path.is_file():
            seen[str(path)] = path.read_bytes()
        else:
            seen[str(path)] = "dir"
    return seen


def outside_state(layout: dict[str, Path]) -> dict[str, bytes | str]:
    return {**snapshot(layout["evil"]), **snapshot(layout["outside"])}


def assert_refused_everywhere(box: Toolbox, layout: dict[str, Path], path: str) -> None:
    """Reading, listing, writing and editing ``path`` are all refused; nothing outside moves."""
    before = outside_state(layout)
    attempts = [
        executed(box, "read_file", path=path),
        executed(box, "write_file", path=path, content="pwned"),
        executed(box, "edit_file", path=path, old_text="SECRET", new_text="pwned"),
    ]
    for result in attempts:
        assert not result.ok, result
        assert "SECRET" not in (result.error or "")
    assert outside_state(layout) == before


ESCAPING_PATHS = [
    "../outside/secret.txt",
    "sub/../../outside/secret.txt",
    "./../ws-evil/secret.txt",
    "sub/./../../ws-evil/secret.txt",
]


@pytest.mark.parametrize("path", ESCAPING_PATHS)
def test_dotdot_escapes_are_refused(toolbox: Toolbox, layout: dict[str, Path], path: str) -> None:
    assert_refused_everywhere(toolbox, layout, path)
    assert "escapes the workspace" in (executed(toolbox, "read_file", path=path).error or "")


def test_absolute_paths_are_refused(toolbox: Toolbox, layout: dict[str, Path]) -> None:
    for target in (layout["outside"] / "secret.txt", layout["ws"] / "sub" / "inside.txt"):
        assert_refused_everywhere(toolbox, layout, str(target))
    result = executed(toolbox, "list_dir", path=str(layout["outside"]))
    assert not result.ok and "absolute" in (result.error or "")


def test_sibling_folder_sharing_the_prefix_is_outside(
    toolbox: Toolbox, layout: dict[str, Path]
) -> None:
    ws, evil = layout["ws"], layout["evil"]
    os.symlink(evil, ws / "evil_abs")  # "/tmp/…/ws-evil" starts with "/tmp/…/ws"
    os.symlink(evil / "secret.txt", ws / "evil_file_abs")
    os.symlink("../ws-evil", ws / "evil_rel")
    for path in ("evil_abs/secret.txt", "evil_file_abs", "evil_rel/secret.txt"):
        assert_refused_everywhere(toolbox, layout, path)
    assert not executed(toolbox, "list_dir", path="evil_abs").ok


@pytest.mark.parametrize("absolute", [True, False], ids=["absolute", "relative"])
def test_symlinks_to_outside_files_and_folders(
    toolbox: Toolbox, layout: dict[str, Path], absolute: bool
) -> None:
    ws, outside = layout["ws"], layout["outside"]
    to_file = outside / "secret.txt" if absolute else Path("../outside/secret.txt")
    to_dir = outside / "dir" if absolute else Path("../../outside/dir")
    os.symlink(to_file, ws / "file_link")
    os.symlink(to_dir, ws / "sub" / "dir_link")
    os.symlink(outside / "new.txt" if absolute else "../outside/new.txt", ws / "dangling")
    for path in ("file_link", "sub/dir_link/secret.txt", "dangling", "sub/dir_link/new.txt"):
        assert_refused_everywhere(toolbox, layout, path)
    listing = executed(toolbox, "list_dir", path="sub/dir_link")
    assert not listing.ok and "escapes the workspace" in (listing.error or "")
    assert not (outside / "new.txt").exists()
    found = executed(toolbox, "search", pattern="SECRET")
    assert found.ok and "SECRET" not in str(found.output)


def test_symlinks_that_stay_inside_keep_working(toolbox: Toolbox, layout: dict[str, Path]) -> None:
    ws = layout["ws"]
    os.symlink("sub/inside.txt", ws / "rel_link")
    os.symlink(ws / "sub" / "inside.txt", ws / "abs_link")
    os.symlink("sub", ws / "dir_link")
    os.symlink("rel_link", ws / "chain")
    os.symlink("../sub/inside.txt", ws / "sub" / "up_and_back")
    for path in ("rel_link", "abs_link", "dir_link/inside.txt", "chain", "sub/up_and_back"):
        result = executed(toolbox, "read_file", path=path)
        assert result.ok and "inside" in str(result.output), (path, result)
    assert "inside.txt" in str(executed(toolbox, "list_dir", path="dir_link").output)
    assert executed(toolbox, "write_file", path="abs_link", content="rewritten\n").ok
    assert (ws / "sub" / "inside.txt").read_text() == "rewritten\n"
    assert (ws / "abs_link").is_symlink()
    assert executed(toolbox, "edit_file", path="chain", old_text="rewritten", new_text="edited").ok
    assert (ws / "sub" / "inside.txt").read_text() == "edited\n"


def test_hard_link_to_an_outside_file_is_refused_before_truncation(
    toolbox: Toolbox, layout: dict[str, Path]
) -> None:
    os.link(layout["outside"] / "secret.txt", layout["ws"] / "hard.txt")
    assert_refused_everywhere(toolbox, layout, "hard.txt")
    error = executed(toolbox, "write_file", path="hard.txt", content="").error or ""
    assert "2 hard links" in error
    assert (layout["outside"] / "secret.txt").read_text() == SECRET


@pytest.mark.timeout(20)
def test_fifo_is_refused_without_blocking(toolbox: Toolbox, layout: dict[str, Path]) -> None:
    os.mkfifo(layout["ws"] / "pipe")
    for result in (
        executed(toolbox, "read_file", path="pipe"),
        executed(toolbox, "write_file", path="pipe", content="x"),
        executed(toolbox, "edit_file", path="pipe", old_text="a", new_text="b"),
    ):
        assert not result.ok and (
            "FIFO" in (result.error or "") or "not a regular" in (result.error or "")
        )
    assert executed(toolbox, "search", pattern="x").ok
    assert "pipe  (FIFO)" in str(executed(toolbox, "list_dir").output)


@pytest.mark.timeout(20)
def test_devices_are_refused_without_blocking(toolbox: Toolbox, layout: dict[str, Path]) -> None:
    ws = layout["ws"]
    os.symlink("/dev/zero", ws / "zero")
    os.symlink("/dev/null", ws / "null")
    for path in ("zero", "null"):
        assert_refused_everywhere(toolbox, layout, path)
    try:
        os.mknod(ws / "zero_node", 0o666 | stat.S_IFCHR, os.makedev(1, 5))
    except PermissionError:
        pytest.skip("cannot create a device node here (no CAP_MKNOD)")
    result = executed(toolbox, "read_file", path="zero_node")
    assert not result.ok and "character device" in (result.error or "")
    assert not executed(toolbox, "write_file", path="zero_node", content="x").ok


@pytest.mark.parametrize("path", ["a\x00b", "sub/inside.txt\x00", "\x00", "sub\x00/../x"])
def test_nul_bytes_are_refused(toolbox: Toolbox, layout: dict[str, Path], path: str) -> None:
    before = snapshot(layout["ws"])
    for name, extra in (("read_file", {}), ("list_dir", {}), ("write_file", {"content": "x"})):
        result = executed(toolbox, name, path=path, **extra)
        assert not result.ok and "NUL" in (result.error or "")
    assert snapshot(layout["ws"]) == before


def test_symlink_loops_end_with_an_error(toolbox: Toolbox, layout: dict[str, Path]) -> None:
    os.symlink("loop_b", layout["ws"] / "loop_a")
    os.symlink("loop_a", layout["ws"] / "loop_b")
    result = executed(toolbox, "read_file", path="loop_a")
    assert not result.ok and "symbolic links" in (result.error or "")


def test_workspace_root_must_be_a_directory(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    with pytest.raises(UsageError, match="not a directory"):
        Workspace(tmp_path / "file")
    with pytest.raises(UsageError, match="not a directory"):
        Workspace(tmp_path / "missing")


# --- races: a folder or a file is swapped for a symlink to outside while the tools run ------

SWAPS = 2000
AT_FDCWD, RENAME_EXCHANGE = -100, 2


def exchange(first: Path, second: Path) -> None:
    """``renameat2(RENAME_EXCHANGE)``: swap two names atomically, no moment without either."""
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.renameat2(AT_FDCWD, bytes(first), AT_FDCWD, bytes(second), RENAME_EXCHANGE) != 0:
        code = ctypes.get_errno()
        raise OSError(code, os.strerror(code))


@pytest.fixture
def fast_switching() -> Iterator[None]:
    previous = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    yield
    sys.setswitchinterval(previous)


def race(swap: Callable[[], None], attempt: Callable[[], ToolResult]) -> list[ToolResult]:
    """Run ``attempt`` over and over while another thread calls ``swap`` ``SWAPS`` times."""
    failures: list[BaseException] = []

    def swapper() -> None:
        try:
            for _ in range(SWAPS):
                swap()
        except BaseException as exc:  # surfaces in the main thread
            failures.append(exc)

    thread = threading.Thread(target=swapper)
    results: list[ToolResult] = []
    thread.start()
    while thread.is_alive():
        results.append(attempt())
    thread.join()
    assert not failures, failures
    return results


@pytest.mark.timeout(120)
@pytest.mark.usefixtures("fast_switching")
@pytest.mark.parametrize("action", ["read_file", "write_file", "edit_file", "list_dir", "search"])
def test_folder_swapped_for_a_symlink_never_escapes(
    toolbox: Toolbox, layout: dict[str, Path], action: str
) -> None:
    ws, outside = layout["ws"], layout["outside"]
    (ws / "d").mkdir()
    (ws / "d" / "secret.txt").write_text("inside: SAFE\n")
    os.symlink(outside, ws / "d_swap")
    before = outside_state(layout)
    arguments: dict[str, dict[str, object]] = {
        "read_file": {"path": "d/secret.txt"},
        "write_file": {"path": "d/secret.txt", "content": "inside: SAFE\n"},
        "edit_file": {"path": "d/secret.txt", "old_text": "SECRET", "new_text": "pwned"},
        "list_dir": {"path": "d"},
        "search": {"pattern": "SECRET|SAFE"},
    }
    results = race(
        lambda: exchange(ws / "d", ws / "d_swap"),
        lambda: executed(toolbox, action, **arguments[action]),
    )
    escapes = [r for r in results if "SECRET" in str(r.output) + str(r.error)]
    assert escapes == []
    assert outside_state(layout) == before
    if action == "list_dir":
        assert all("secret.txt" in str(r.output) or not r.ok for r in results)
        assert not any("dir/" in str(r.output) for r in results)  # outside/ has a "dir" folder


@pytest.mark.timeout(120)
@pytest.mark.usefixtures("fast_switching")
@pytest.mark.parametrize("action", ["read_file", "write_file"])
def test_file_swapped_for_a_symlink_never_escapes(
    toolbox: Toolbox, layout: dict[str, Path], action: str
) -> None:
    ws = layout["ws"]
    (ws / "f.txt").write_text("inside: SAFE\n")
    os.symlink(layout["outside"] / "secret.txt", ws / "f_swap")
    before = outside_state(layout)
    arguments = {"path": "f.txt"} if action == "read_file" else {"path": "f.txt", "content": "x"}
    results = race(
        lambda: exchange(ws / "f.txt", ws / "f_swap"),
        lambda: executed(toolbox, action, **arguments),
    )
    assert [r for r in results if "SECRET" in str(r.output)] == []
    assert outside_state(layout) == before


# --- property: arbitrary path text never escapes and raises nothing but ToolError ----------

PIECES = [
    "..", ".", "", "sub", "inside.txt", "in_link", "out_link", "abs_out", "abs_in", "evil",
    "ws", "ws-evil", "secret.txt", "loop", "fifo", "hard", "\x00", "/", "\ud800", "\udcff",
    "é", "~", "a" * 300,
]  # fmt: skip
path_texts = st.one_of(
    st.lists(st.one_of(st.sampled_from(PIECES), st.text(max_size=4)), max_size=8).map("/".join),
    st.text(max_size=30),
)


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("hostile")
    ws, outside = base / "ws", base / "ws-evil"
    (ws / "sub").mkdir(parents=True)
    outside.mkdir()
    (ws / "sub" / "inside.txt").write_text("inside")
    (outside / "secret.txt").write_text(SECRET)
    os.symlink("sub", ws / "in_link")
    os.symlink("../ws-evil", ws / "out_link")
    os.symlink(outside, ws / "abs_out")
    os.symlink(ws / "sub", ws / "abs_in")
    os.symlink(outside, ws / "evil")
    os.symlink("loop", ws / "loop")
    os.mkfifo(ws / "fifo")
    os.link(outside / "secret.txt", ws / "hard")
    return {"ws": ws, "outside": outside}


def assert_inside(fd: int, root: Path) -> None:
    try:
        where = os.readlink(f"/proc/self/fd/{fd}")
        assert where == str(root) or where.startswith(str(root) + "/"), where
    finally:
        os.close(fd)


@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(text=path_texts)
@example(text="out_link/secret.txt")
@example(text="abs_out/secret.txt")
@example(text="in_link/../evil/secret.txt")
@example(text="hard")
def test_arbitrary_paths_never_escape(
    hostile: dict[str, Path], use_openat2: bool, text: str
) -> None:
    workspace = Workspace(hostile["ws"], use_openat2=use_openat2)
    before = snapshot(hostile["outside"])
    openers: list[Callable[[], int]] = [
        lambda: workspace.open_file(text),
        lambda: workspace.open_dir(text),
        lambda: workspace.open_file(text, os.O_WRONLY | os.O_CREAT | os.O_TRUNC),
    ]
    for opener in openers:
        try:
            fd = opener()
        except ToolError:
            continue
        assert_inside(fd, hostile["ws"])
    assert snapshot(hostile["outside"]) == before


def test_no_descriptor_leaks_on_success_or_refusal(
    toolbox: Toolbox, layout: dict[str, Path]
) -> None:
    ws = layout["ws"]
    os.symlink(layout["outside"], ws / "out")
    os.symlink("sub", ws / "in")
    os.mkfifo(ws / "pipe")
    before = len(os.listdir("/proc/self/fd"))
    for path in ("in/inside.txt", "out/secret.txt", "pipe", "missing/x", "in", "../x", "a\x00"):
        executed(toolbox, "read_file", path=path)
        executed(toolbox, "list_dir", path=path)
        executed(toolbox, "write_file", path=path + ".new", content="x")
        executed(toolbox, "edit_file", path=path, old_text="inside", new_text="inside")
    executed(toolbox, "search", pattern="x")
    assert len(os.listdir("/proc/self/fd")) == before
