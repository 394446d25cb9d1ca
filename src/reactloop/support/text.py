"""``text_problem``: whether a text can be sent to a model, said in one line if not.

A ``str`` can hold what UTF-8 cannot encode: a surrogate code point, alone or as half of a pair
held as two code points. Python makes one of each byte that is not UTF-8 when it decodes with
``surrogateescape``, as it does the command line (``reactloop run $'\\xff\\xfe'``) and file
names. No provider takes such a text: the adapter fails on it, deep in the SDK, with a
``UnicodeEncodeError``. So a task is checked where it comes in (``Agent.run``, ``arun``,
``astream``; ``reactloop run`` and ``chat``), and refused with this line.
"""

from __future__ import annotations

import re

_SURROGATES = re.compile("[\ud800-\udfff]+")
_ESCAPED_BYTE = range(0xDC80, 0xDD00)  # surrogateescape's code points for the bytes 0x80-0xff


def text_problem(text: str, what: str = "the task") -> str | None:
    """None when ``text`` is UTF-8 text; else one line naming what is wrong, and where."""
    if text.isascii():
        return None
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        pass
    else:
        return None
    found = _SURROGATES.search(text)
    assert found is not None  # only a surrogate makes ``encode`` fail
    run, at = found.group(), found.start()
    if all(ord(unit) in _ESCAPED_BYTE for unit in run):
        data = bytes(ord(unit) - 0xDC00 for unit in run[:8])
        shown = repr(data) + ("..." if len(run) > 8 else "")
        return f"{what} is not UTF-8 text: it holds the bytes {shown} at character {at}"
    return (
        f"{what} is not valid text: it holds the surrogate code point "
        f"U+{ord(run[0]):04X} at character {at}, which UTF-8 cannot encode"
    )
