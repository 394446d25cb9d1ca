"""The actor side of the Ray backend (``ray_backend.py``): what runs on a Ray node."""

from __future__ import annotations

import dataclasses
import shutil
import tempfile
from pathlib import Path
from typing import Any

import reactloop
from reactloop.eval.records.record import EpisodeRecord
from reactloop.eval.run.episode import CancelScope, run_episode
from reactloop.eval.run.ray_journals import ActorJournals, Ended, Piece, Wanted
from reactloop.eval.run.ray_workspaces import UnpackedWorkspaces
from reactloop.eval.run.spec import EpisodeSpec
from reactloop.eval.run.throttle import EndpointGates


class EpisodeActor:
    """One Ray actor: its episodes run in threads as the local backend runs them, each journal
    in its own temporary folder, sent back with the record."""

    def __init__(self, caps: dict[str, int], default: int) -> None:
        import ray

        self.node: str = ray.get_runtime_context().get_node_id()
        self.scope = CancelScope()
        self.gates = EndpointGates(caps, default)
        self.folder = Path(tempfile.mkdtemp(prefix="reactloop-ray-"))
        self.workspaces = UnpackedWorkspaces(self.folder)
        self.journals = ActorJournals(self.folder)

    def ready(self) -> tuple[str, str]:
        """This node's reactloop version, and the node's id."""
        return reactloop.__version__, self.node

    def run(
        self, spec: EpisodeSpec, workspace: bytes | None = None, journal: bytes | None = None
    ) -> tuple[EpisodeRecord | None, Ended]:
        """The episode's record and journal; ``journal``: the one ``--resume`` may continue."""
        trace = self.journals.begin(spec.file_stem, journal)
        record = None
        try:
            spec = self.workspaces.local(spec, workspace)
            record = run_episode(spec, trace, self.scope, self.gates)
        finally:
            ended = self.journals.end(spec.file_stem)
        if record is None:
            return None, ended
        return dataclasses.replace(record, ray_node=self.node), ended

    def progress(self, wanted: dict[str, Wanted]) -> dict[str, Piece]:
        return self.journals.progress(wanted)

    def cancel(self) -> None:
        self.scope.cancel()

    def cleanup(self) -> None:
        shutil.rmtree(self.folder, ignore_errors=True)

    def endpoints(self) -> list[dict[str, Any]]:
        return self.gates.summaries()
