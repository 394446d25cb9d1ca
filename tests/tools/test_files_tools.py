"""Behaviour of the ``files`` tools: reading, listing, searching, writing and editing."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from helpers import executed
from reactloop.errors import UsageError
from reactloop.messages import ToolResult
from reactloop.sandbox.paths import Workspace
from reactloop.tools.context import ToolContext
from reactloop.tools.families import file_search, files
from reactloop.tools.families.files import file_tools
from reactloop.tools.registry import build_tools, parse_families
from reactloop.tools.toolbox import Toolbox


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / "src").mkdir(parents=True)
    (root / "src" / "calc.py").write_text(
        "def add(a, b):\n    return a - b\n\n\ndef sub(a, b):\n    return a - b\n"
    )
    (root / "README.md").write_text("# demo\n")
    return root


@pytest.fixture
def box(ws: Path, use_openat2: bool) -> Toolbox:
    return Toolbox(file_tools(Workspace(ws, use_openat2=use_openat2)))


def output(result: ToolResult) -> str:
    assert result.ok, result.error
    return str(result.output)


def error(result: ToolResult) -> str:
    assert not result.ok, result.output
    return result.error or ""


# --- the family ---------------------------------------------------------------------------


def test_family_builds_all_tools_and_read_only_drops_the_writers(tmp_path: Path) -> None:
    families = parse_families("files")
    names = [t.name for t in build_tools(families, ToolContext(workspace=tmp_path))]
    assert names == ["read_file", "list_dir", "search", "write_file", "edit_file"]
    context = ToolContext(workspace=tmp_path, read_only=True)
    read_only = build_tools(families, context)
    assert [t.name for t in read_only] == ["read_file", "list_dir", "search"]
    assert all(t.read_only for t in read_only)


def test_writers_are_not_read_only_so_approval_sees_them(tmp_path: Path) -> None:
    by_name = {t.name: t for t in file_tools(Workspace(tmp_path))}
    assert not by_name["write_file"].read_only and not by_name["edit_file"].read_only


def test_family_needs_a_workspace(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="--workspace"):
        files.tools(ToolContext())
    with pytest.raises(UsageError, match="not a directory"):
        files.tools(ToolContext(workspace=tmp_path / "missing"))


def test_schemas_come_from_the_signatures(tmp_path: Path) -> None:
    specs = {t.name: t.spec for t in file_tools(Workspace(tmp_path))}
    assert specs["read_file"].parameters["required"] == ["path"]
    assert set(specs["edit_file"].parameters["properties"]) == {"path", "old_text", "new_text"}
    assert all(len(spec.description) < 120 for spec in specs.values())


# --- read_file ------------------------------------------------------------------------------


def test_read_file_numbers_lines_and_selects_a_range(box: Toolbox) -> None:
    text = output(executed(box, "read_file", path="src/calc.py"))
    assert text.splitlines()[0] == "src/calc.py (lines 1-6 of 6)"
    assert "2\t    return a - b" in text
    part = output(executed(box, "read_file", path="src/calc.py", start_line=5, end_line=6))
    assert part.splitlines()[1:] == ["5\tdef sub(a, b):", "6\t    return a - b"]


def test_read_file_pages_long_files(box: Toolbox, ws: Path) -> None:
    (ws / "long.txt").write_text("".join(f"line {n}\n" for n in range(1, 1001)))
    first = output(executed(box, "read_file", path="long.txt"))
    assert f"(lines 1-{files.MAX_READ_LINES} of 1000)" in first
    assert f"start_line={files.MAX_READ_LINES + 1}" in first
    last = output(executed(box, "read_file", path="long.txt", start_line=990))
    assert last.splitlines()[-1].endswith("line 1000") and "more:" not in last


@pytest.mark.parametrize(
    ("start", "end", "message"),
    [(0, None, "out of range"), (7, None, "out of range"), (4, 2, "before start_line")],
)
def test_read_file_rejects_bad_ranges(
    box: Toolbox, start: int, end: int | None, message: str
) -> None:
    assert message in error(
        executed(box, "read_file", path="src/calc.py", start_line=start, end_line=end)
    )


def test_read_file_refuses_binary_and_huge_files(
    box: Toolbox, ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (ws / "blob.bin").write_bytes(b"\x7fELF\x00\x01\x02" * 10)
    assert "binary" in error(executed(box, "read_file", path="blob.bin"))
    monkeypatch.setattr(files, "MAX_FILE_BYTES", 100)
    (ws / "big.txt").write_text("x" * 101)
    assert "over the 100-byte limit" in error(executed(box, "read_file", path="big.txt"))


def test_read_file_errors_are_clear(box: Toolbox) -> None:
    assert "no such file" in error(executed(box, "read_file", path="nope.py"))
    assert "is a directory" in error(executed(box, "read_file", path="src"))
    assert "not a directory" in error(executed(box, "read_file", path="README.md/x"))
    output(executed(box, "write_file", path="empty.txt", content=""))
    assert output(executed(box, "read_file", path="empty.txt")) == "empty.txt: empty file"


def test_read_file_survives_invalid_utf8_and_cuts_long_lines(box: Toolbox, ws: Path) -> None:
    (ws / "latin.txt").write_bytes(b"caf\xe9\n" + b"y" * 5000 + b"\n")
    text = output(executed(box, "read_file", path="latin.txt"))
    assert "caf\ufffd" in text and "chars cut]" in text


# --- list_dir -------------------------------------------------------------------------------


def test_list_dir_marks_folders_sizes_and_links(box: Toolbox, ws: Path) -> None:
    os.symlink("src/calc.py", ws / "link")
    text = output(executed(box, "list_dir"))
    assert text.splitlines() == [
        ".: 3 entries",
        "README.md  (7 bytes)",
        "link -> src/calc.py",
        "src/",
    ]
    assert output(executed(box, "list_dir", path="src")).endswith("calc.py  (66 bytes)")
    (ws / "empty").mkdir()
    assert output(executed(box, "list_dir", path="empty")) == "empty: empty folder"
    assert "not a directory" in error(executed(box, "list_dir", path="README.md"))


def test_list_dir_caps_entries(box: Toolbox, ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(files, "MAX_LIST_ENTRIES", 5)
    for n in range(12):
        (ws / "src" / f"m{n:02}.py").write_text("")
    text = output(executed(box, "list_dir", path="src"))
    assert text.splitlines()[0] == "src: 13 entries" and "[8 more entries not shown]" in text


# --- search ---------------------------------------------------------------------------------


def test_search_lists_path_line_and_text(box: Toolbox) -> None:
    text = output(executed(box, "search", pattern=r"return a \- b"))
    assert text.splitlines()[:2] == ["src/calc.py:2: return a - b", "src/calc.py:6: return a - b"]
    assert "2 matching lines in 2 files searched" in text


def test_search_glob_filters_by_name_or_path(box: Toolbox, ws: Path) -> None:
    (ws / "notes.txt").write_text("def add in prose\n")
    assert "notes.txt" not in output(executed(box, "search", pattern="def add", glob="*.py"))
    assert "src/calc.py" in output(executed(box, "search", pattern="def add", glob="src/*.py"))
    assert "no matches" in output(executed(box, "search", pattern="def add", glob="docs/*"))


def test_search_reports_an_invalid_regex(box: Toolbox) -> None:
    assert "invalid regular expression" in error(executed(box, "search", pattern="(unclosed"))


def test_search_skips_binary_huge_and_vcs_files(
    box: Toolbox, ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(file_search, "SEARCH_MAX_FILE_BYTES", 1000)
    (ws / "blob.bin").write_bytes(b"needle\x00")
    (ws / "huge.txt").write_text("needle\n" * 500)
    (ws / ".git").mkdir()
    (ws / ".git" / "config").write_text("needle\n")
    (ws / "real.txt").write_text("a needle here\n")
    text = output(executed(box, "search", pattern="needle"))
    assert text.splitlines()[0] == "real.txt:1: a needle here"
    assert "2 skipped" in text and ".git" not in text


def test_search_caps_matches(box: Toolbox, ws: Path) -> None:
    (ws / "many.txt").write_text("hit\n" * (file_search.SEARCH_MAX_MATCHES + 20))
    text = output(executed(box, "search", pattern="hit"))
    assert text.count("many.txt:") == file_search.SEARCH_MAX_MATCHES
    assert "narrow the search" in text


def test_search_stops_a_catastrophic_pattern(
    box: Toolbox, ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # 2 s: the worker process starts within it even on a loaded machine; the pattern never ends
    monkeypatch.setattr(file_search, "SEARCH_SECONDS", 2.0)
    (ws / "evil.txt").write_text("a" * 5000 + "!\n")
    text = output(executed(box, "search", pattern=r"(a|aa)+$x"))
    assert "stopped in evil.txt: the search took over 2 s" in text


# --- write_file -----------------------------------------------------------------------------


def test_write_file_creates_folders_and_replaces(box: Toolbox, ws: Path) -> None:
    assert output(executed(box, "write_file", path="pkg/sub/new.py", content="x = 1\n")).startswith(
        "created pkg/sub/new.py: 6 bytes, 1 lines"
    )
    assert (ws / "pkg" / "sub" / "new.py").read_text() == "x = 1\n"
    assert output(executed(box, "write_file", path="README.md", content="short")).startswith(
        "replaced README.md"
    )
    assert (ws / "README.md").read_text() == "short"


def test_write_file_keeps_the_inode_and_mode(box: Toolbox, ws: Path) -> None:
    script = ws / "run.sh"
    script.write_text("#!/bin/sh\necho old and long\n")
    script.chmod(0o755)
    inode = script.stat().st_ino
    output(executed(box, "write_file", path="run.sh", content="#!/bin/sh\n"))
    assert script.read_text() == "#!/bin/sh\n"
    assert script.stat().st_ino == inode and script.stat().st_mode & 0o777 == 0o755


def test_write_file_refuses_folders_and_bad_paths(box: Toolbox) -> None:
    assert "is a directory" in error(executed(box, "write_file", path="src", content="x"))
    assert "is a directory" in error(executed(box, "write_file", path="new/", content="x"))
    assert "not a directory" in error(executed(box, "write_file", path="README.md/x", content="x"))
    assert "escapes" in error(executed(box, "write_file", path="../x", content="x"))


def test_write_file_round_trips_any_text(box: Toolbox, ws: Path) -> None:
    content = "naïve ✓\r\nzero\x00byte\n\udcff"
    output(executed(box, "write_file", path="odd.txt", content=content))
    assert (ws / "odd.txt").read_bytes() == content.encode("utf-8", "surrogateescape")


# --- edit_file ------------------------------------------------------------------------------


def test_edit_file_replaces_a_unique_snippet(box: Toolbox, ws: Path) -> None:
    text = output(
        executed(
            box,
            "edit_file",
            path="src/calc.py",
            old_text="def add(a, b):\n    return a - b",
            new_text="def add(a, b):\n    return a + b",
        )
    )
    assert text == "edited src/calc.py: replaced 2 line(s) with lines 1-2"
    assert (ws / "src" / "calc.py").read_text().startswith("def add(a, b):\n    return a + b\n")


def test_edit_file_missing_or_ambiguous_snippets_are_errors(box: Toolbox, ws: Path) -> None:
    before = (ws / "src" / "calc.py").read_text()
    ambiguous = error(
        executed(box, "edit_file", path="src/calc.py", old_text="return a - b", new_text="x")
    )
    assert "matches 2 times" in ambiguous
    missing = error(
        executed(box, "edit_file", path="src/calc.py", old_text="return a * b", new_text="x")
    )
    assert "not found" in missing
    assert "empty" in error(
        executed(box, "edit_file", path="src/calc.py", old_text="", new_text="x")
    )
    assert (ws / "src" / "calc.py").read_text() == before


def test_edit_file_can_shrink_and_keeps_undecodable_bytes(box: Toolbox, ws: Path) -> None:
    (ws / "mixed.txt").write_bytes(b"keep \xff bytes\nremove this long line\nend\n")
    output(
        executed(
            box, "edit_file", path="mixed.txt", old_text="remove this long line\n", new_text=""
        )
    )
    assert (ws / "mixed.txt").read_bytes() == b"keep \xff bytes\nend\n"


@settings(max_examples=60, deadline=None)
@given(
    prefix=st.text(max_size=40),
    old=st.text(min_size=1, max_size=20),
    new=st.text(max_size=20),
    suffix=st.text(max_size=40),
)
def test_edit_matches_str_replace_when_unique(
    tmp_path_factory: pytest.TempPathFactory, prefix: str, old: str, new: str, suffix: str
) -> None:
    root = tmp_path_factory.mktemp("edit")
    original = prefix + old + suffix
    (root / "f.txt").write_bytes(original.encode("utf-8", "surrogateescape"))
    result = executed(
        Toolbox(file_tools(Workspace(root))), "edit_file", path="f.txt", old_text=old, new_text=new
    )
    written = (root / "f.txt").read_bytes().decode("utf-8", "surrogateescape")
    if original.count(old) == 1:
        assert result.ok and written == prefix + new + suffix
    else:
        assert not result.ok and f"matches {original.count(old)} times" in (result.error or "")
        assert written == original
