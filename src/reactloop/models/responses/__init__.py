"""The Responses API adapter: OpenAI's ``/v1/responses``, and the Open Responses servers
(Ollama, OpenRouter, vLLM, llama.cpp's ``llama-server``).

``OpenAIResponsesModel`` is the one public class (``from_spec`` builds it for ``--model
responses:NAME``, and for ``--api responses`` with any OpenAI-compatible provider). Importing
this package does not import the ``openai`` SDK; making a model does. Files, by job:

- ``model.py``: ``OpenAIResponsesModel``: one call with retries under the run's time limit.
- ``request.py``: the history as input items (reasoning echoed), tools, tool choice, journal.
- ``reply.py``: a ``response`` object as a ``ModelTurn``: THE status table, the usage reader.
- ``stream.py``: ``ResponseStream``: the streamed events assembled into the same response.
- ``server_state.py``: ``--server-state``: ``previous_response_id``; a held history never
  edited.

Shared with the chat adapter, imported from ``models/openai/``: the error bodies and what is
retried (``errors.py``), the call and argument helpers and the empty-reply rule (``reply.py``),
the pairing rules' constants (``request.py``) and the endpoints (``endpoints.py``); from
``reactloop.models``: ``sdk_client.py`` (the SDK's client, retries and attempt), ``sse.py``.
"""

from reactloop.models.responses.model import OpenAIResponsesModel, from_spec

__all__ = ["OpenAIResponsesModel", "from_spec"]
