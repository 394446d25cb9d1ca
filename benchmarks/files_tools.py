"""Cost of confinement for the ``files`` tools: openat2 against the O_NOFOLLOW walk.

    python benchmarks/files_tools.py [--repeat 2000]

Prints the median time of one ``Workspace.open_file`` (a path three folders deep, plain and
through an inside symlink), one ``read_file`` and one ``write_file`` call through a
``Toolbox``, and one ``search`` over 300 files, for both resolution paths.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from reactloop.messages import ToolCall
from reactloop.sandbox.paths import Workspace, openat2_available
from reactloop.tools.families.files import file_tools
from reactloop.tools.toolbox import Toolbox


def median_us(action: Callable[[], object], repeat: int) -> float:
    samples = []
    for _ in range(repeat):
        started = time.perf_counter()
        action()
        samples.append(time.perf_counter() - started)
    return statistics.median(samples) * 1e6


def make_tree(root: Path) -> None:
    deep = root / "a" / "b" / "c"
    deep.mkdir(parents=True)
    (deep / "file.py").write_text("def f():\n    return 1\n" * 50)
    os.symlink("a/b", root / "link")
    for n in range(300):
        folder = root / "pkg" / f"m{n // 30}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"mod{n}.py").write_text(f"value_{n} = {n}\n" * 40)


def measure(root: Path, use_openat2: bool, repeat: int) -> dict[str, float]:
    workspace = Workspace(root, use_openat2=use_openat2)
    box = Toolbox(file_tools(workspace), max_output_chars=100_000)

    def run(name: str, **arguments: object) -> None:
        result = box.execute(ToolCall(id="b", name=name, arguments=json.dumps(arguments)))
        assert result.ok, result.error

    return {
        "open_file a/b/c/file.py": median_us(
            lambda: os.close(workspace.open_file("a/b/c/file.py")), repeat
        ),
        "open_file link/c/file.py": median_us(
            lambda: os.close(workspace.open_file("link/c/file.py")), repeat
        ),
        "read_file (100 lines)": median_us(lambda: run("read_file", path="a/b/c/file.py"), repeat),
        "write_file (1 KB)": median_us(
            lambda: run("write_file", path="a/b/c/out.txt", content="x" * 1024), repeat
        ),
        "search, 300 files": median_us(lambda: run("search", pattern="value_299 ="), 20),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=2000)
    args = parser.parse_args()
    modes = [True, False] if openat2_available() else [False]
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        make_tree(root)
        results = {mode: measure(root, mode, args.repeat) for mode in modes}
    print(
        "| measurement | " + " | ".join("openat2" if m else "O_NOFOLLOW walk" for m in modes) + " |"
    )
    print("|---|" + "---|" * len(modes))
    for name in results[modes[0]]:
        cells = " | ".join(f"{results[m][name]:.1f} µs" for m in modes)
        print(f"| {name} | {cells} |")


if __name__ == "__main__":
    main()
