"""Each episode's part of the report, put aside as its record arrives and read back in report
order: its row of results.csv, its entry of results.json, its row of index.html (less the link
to its viewer page, known once the pages are made) and its line of report.md when it errored.

The records arrive as their episodes finish, in no set order; the files list them in the
plan's. The parts go to one temporary file as they come; the spool keeps where each starts, by
its position in the report (8 bytes an episode), so that no record is held, read back from
``episodes/`` or encoded again to write the report.
"""

from __future__ import annotations

import struct
import tempfile
from array import array
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

_ABSENT = -1
_ENCODING, _ERRORS = "utf-8", "surrogatepass"  # any str round-trips, as the files take it


class EpisodePart(NamedTuple):
    row: str  # results.csv's row, with its line end
    entry: str  # results.json's entry, indented as it nests there
    key: str
    trace: str  # the record's journal ("" without one): the link to its page is made from it
    cells: str  # index.html's row after its first cell
    errored: str  # report.md's line with its newline when it errored, else ""


_HEAD = struct.Struct(f"<{len(EpisodePart._fields)}I")


class Spool:
    """The parts, on disk in the order they came, read back by position."""

    def __init__(self, folder: Path) -> None:
        self._file = tempfile.TemporaryFile("w+b", dir=folder)  # noqa: SIM115  (close())
        self._at = array("q")  # position -> offset of its part, or _ABSENT
        self._end = 0

    def __contains__(self, position: int) -> bool:
        return 0 <= position < len(self._at) and self._at[position] != _ABSENT

    def put(self, position: int, part: EpisodePart) -> None:
        """Keep the part at ``position`` (one part a position: a second one replaces it)."""
        if position >= len(self._at):
            self._at.extend([_ABSENT] * (position + 1 - len(self._at)))
        pieces = [piece.encode(_ENCODING, _ERRORS) for piece in part]
        self._file.seek(self._end)
        self._file.write(_HEAD.pack(*map(len, pieces)))
        self._file.write(b"".join(pieces))
        self._at[position] = self._end
        self._end = self._file.tell()

    def parts(self) -> Iterator[EpisodePart]:
        """Every part kept, in the order of their positions."""
        for offset in self._at:
            if offset != _ABSENT:
                yield self._read(offset)

    def _read(self, offset: int) -> EpisodePart:
        self._file.seek(offset)
        sizes = _HEAD.unpack(self._file.read(_HEAD.size))
        body = memoryview(self._file.read(sum(sizes)))
        pieces, start = [], 0
        for size in sizes:
            pieces.append(str(body[start : start + size], _ENCODING, _ERRORS))
            start += size
        return EpisodePart(*pieces)

    def close(self) -> None:
        self._file.close()
