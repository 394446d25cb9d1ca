"""Task workspaces (``"workspace": FOLDER`` in a suite file) sent to the Ray actors.

The folder is on the driver's disk; a node of a cluster has no such folder. The driver packs
each folder once (a gzipped tar, put in Ray's object store once, so each node fetches it
once), and each actor unpacks it once into its own temporary folder, then runs the episode
with the task's ``workspace`` pointing there.
"""

from __future__ import annotations

import dataclasses
import hashlib
import io
import tarfile
import threading
from pathlib import Path
from typing import Any

from reactloop.eval.run.spec import EpisodeSpec


def pack(folder: Path) -> bytes:
    """The folder's files as a gzipped tar, their names relative to it."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        archive.add(folder, arcname=".")
    return buffer.getvalue()


class PackedWorkspaces:
    """The driver's side: each task folder's tar, put in the object store once."""

    def __init__(self, ray: Any) -> None:
        self.ray = ray
        self._refs: dict[Path, Any] = {}

    def ref(self, spec: EpisodeSpec) -> Any:
        """The object holding the task's workspace, or None when it has no folder."""
        folder = spec.task.workspace
        if folder is None:
            return None
        if folder not in self._refs:
            self._refs[folder] = self.ray.put(pack(folder))
        return self._refs[folder]


class UnpackedWorkspaces:
    """An actor's side: each tar unpacked once under ``root``."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._folders: dict[str, Path] = {}
        self._lock = threading.Lock()  # the actor's threads share it

    def local(self, spec: EpisodeSpec, packed: bytes | None) -> EpisodeSpec:
        """``spec`` with its task's workspace unpacked here (unchanged without one)."""
        if packed is None:
            return spec
        digest = hashlib.sha256(packed).hexdigest()[:16]
        with self._lock:
            if digest not in self._folders:
                folder = self.root / f"workspace-{digest}"
                with tarfile.open(fileobj=io.BytesIO(packed), mode="r:gz") as archive:
                    archive.extractall(folder, filter="data")
                self._folders[digest] = folder
            task = dataclasses.replace(spec.task, workspace=self._folders[digest])
        return dataclasses.replace(spec, task=task)
