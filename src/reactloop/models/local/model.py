"""``LocalLlamaModel``: a GGUF model run by llama.cpp in a child process the harness owns.

``local`` (the default embedded model), ``local:smollm2-135m``, ``local:gemma3-270m`` or
``local:PATH.gguf``. Decoding is constrained: in the text protocol by a GBNF grammar made from
the toolbox, in the native protocol by a JSON Schema over the tool calls, so every step parses
and names a real tool. Sampling is greedy by default (temperature 0, fixed seed). The prompt is
rendered append-only (see ``chat_format``) so llama.cpp reuses its KV cache and evaluates only
the tokens added since the previous step; each turn reports evaluated versus reused tokens.
"""

from __future__ import annotations

import atexit
import itertools
import threading
import time
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from reactloop.messages import ModelTurn
from reactloop.models.base import ModelRequest
from reactloop.models.default import DEFAULT_EMBEDDED
from reactloop.models.local.catalog import EMBEDDED, model_path
from reactloop.models.local.engines import choose_engine
from reactloop.models.local.options import LocalOptions, options_from_settings
from reactloop.models.local.process import ModelProcess

if TYPE_CHECKING:
    from reactloop.models.base import ModelSettings

_PROCESSES: dict[tuple[str, int, int, str, str], ModelProcess] = {}
_PROCESSES_LOCK = threading.Lock()
_SESSION_IDS = itertools.count(1)


@atexit.register
def _stop_processes() -> None:
    with _PROCESSES_LOCK:
        for process in _PROCESSES.values():
            process.stop()
        _PROCESSES.clear()


def model_process(path: Path, options: LocalOptions) -> ModelProcess:
    """The process holding ``path`` loaded this way, started on first use and shared; each
    model sharing it decodes under its own options (grammar, sampling, prompt)."""
    key = (str(path), options.n_ctx, options.n_threads, options.extra_buffer_types, options.engine)
    with _PROCESSES_LOCK:
        process = _PROCESSES.get(key)
        if process is None:
            process = _PROCESSES[key] = ModelProcess(path, options)
        return process


class LocalLlamaModel:
    """A GGUF model with grammar-constrained steps and prefix reuse, crash-isolated."""

    native_tools: bool = False
    load_seconds = 0.0

    def __init__(self, process: ModelProcess, *, name: str, options: LocalOptions) -> None:
        self.name = name
        self.options = options
        self.prefers_worked_example = options.worked_example
        self.process = process
        self._session = next(_SESSION_IDS)

    @property
    def info(self) -> dict[str, Any]:
        """What the model process reported: ``use_extra_bufts`` and llama.cpp's system info."""
        return self.process.info

    def complete(self, request: ModelRequest) -> ModelTurn:
        return self.process.complete(self._session, self.name, self.options, request)


def from_spec(provider: str, name: str, settings: ModelSettings) -> LocalLlamaModel:
    """``local[:NAME|PATH.gguf]`` → a ready model, its process started and the file loaded."""
    options = options_from_settings(settings)
    options = replace(options, engine=choose_engine(options.engine))
    chosen = name.strip() or DEFAULT_EMBEDDED
    path = model_path(chosen)
    label = chosen.lower() if chosen.lower() in EMBEDDED else Path(chosen).name
    start = time.monotonic()
    model = LocalLlamaModel(model_process(path, options), name=f"local:{label}", options=options)
    entry = EMBEDDED.get(chosen.lower())
    # By measurement (docs/local_models.md) the embedded models do better with JSON-schema
    # calls; an arbitrary GGUF file gets the text protocol, which any chat model can follow.
    model.native_tools = entry.native_tools if entry is not None else False
    model.load_seconds = time.monotonic() - start
    return model
