"""A doc snippet that opens the repository's ``tests/wire_formats/`` by a relative path works
only from the root of a checkout (the files are not in the installed package): the prose just
before it says so. ``tests/test_docs_snippets.py`` runs the snippets themselves."""

from __future__ import annotations

import re
from pathlib import Path

DOCS = Path(__file__).resolve().parent.parent.parent / "docs"
SNIPPET = re.compile(r"```python\n(.*?)```", re.DOTALL)
RELATIVE_OPEN = re.compile(r"""["']tests/wire_formats/""")


def test_snippets_that_open_wire_files_by_a_relative_path_say_where_they_run() -> None:
    found = []
    for doc in sorted(DOCS.glob("*.md")):
        text = doc.read_text(encoding="utf-8")
        for match in SNIPPET.finditer(text):
            if not RELATIVE_OPEN.search(match.group(1)):
                continue
            before = " ".join(text[: match.start()].rstrip().split("\n\n")[-1].split())
            found.append(doc.name)
            assert "relative to the root of a reactloop checkout" in before, doc.name
            assert "not in the installed package" in before, doc.name
    assert {"testing.md", "providers.md"} <= set(found)
