"""A model that failed to load (a corrupt GGUF file, a model process killed while loading, an
adapter whose construction raised): ``reactloop run`` still makes it a run, journaled with its
``run_start`` and a ``stop`` with ``model_error``, and printed (``--json``: its one object).
"""

from __future__ import annotations

from reactloop.agent import Agent
from reactloop.errors import ERROR_KINDS, ModelError, describe_exception
from reactloop.limits import StopReason
from reactloop.messages import ModelTurn
from reactloop.models.base import ModelRequest
from reactloop.result import RunResult, Stop


class UnloadedModel:
    """Stands for the model ``spec`` names, which could not be built; ``error`` says why."""

    native_tools = False

    def __init__(self, spec: str, error: Exception) -> None:
        self.name = spec
        self.error = error

    @property
    def message(self) -> str:
        why = str(self.error) if isinstance(self.error, ModelError) else None
        return f"the model {self.name} could not be loaded: {why or describe_exception(self.error)}"

    @property
    def kind(self) -> str:
        error_kind = getattr(self.error, "kind", None)
        return error_kind if isinstance(error_kind, str) and error_kind in ERROR_KINDS else "other"

    def complete(self, request: ModelRequest) -> ModelTurn:
        raise ModelError(self.message, kind=self.kind)  # never asked: the run stops first


def unstarted_run(agent: Agent, task: str, model: UnloadedModel) -> RunResult:
    """The run of ``task`` that stopped before its first model call, with ``model_error``."""
    from reactloop.loop.run_loop import RunLoop  # the loop's modules load with the first run

    run = RunLoop(agent.settings(), task)
    run.start()
    stop = Stop(StopReason.MODEL_ERROR, None, model.message, error_kind=model.kind)
    return run.finish(stop)
