"""``reactloop --help`` lists every command with its exit codes, and each command's own
``--help`` states them (issue 37)."""

from __future__ import annotations

import re

from helpers import invoke
from reactloop.cli.app import COMMANDS


def exit_code_block(text: str) -> dict[str, str]:
    """command -> its exit codes, from the main help's ``Exit codes`` block."""
    block = text.split("Exit codes", 1)[1].split("\n\n", 1)[0]
    rows: dict[str, str] = {}
    names: list[str] = []
    for line in block.splitlines()[1:]:
        found = re.match(r"^    (\S[^ ].*?)  +(\S.*)$", line)
        if found:
            names = [n.strip() for n in found.group(1).split(",")]
            for name in names:
                rows[name] = found.group(2)
        elif line.strip():  # a wrapped row continues the one before
            for name in names:
                rows[name] += " " + line.strip()
    return rows


def test_the_main_help_lists_every_command_with_its_exit_codes() -> None:
    code, out, _ = invoke("--help")
    assert code == 0
    assert "every command: 2 a usage error" in out
    rows = exit_code_block(out)
    assert set(rows) == set(COMMANDS)
    assert all(row.startswith("0") for row in rows.values()), rows
    assert "3 an answer forced or failed its checks" in rows["run"]
    assert "130" in rows["run"] and rows["run"] == rows["resume"]


def test_each_command_states_its_exit_codes_in_its_own_help() -> None:
    for name in COMMANDS:
        code, out, _ = invoke(name, "--help")
        assert code == 0, name
        assert re.search(r"\bExit\b|exit codes", " ".join(out.split())), name
