"""The Messages API adapter: Anthropic's Claude models and compatible servers (llama-server).

``AnthropicModel`` is the one public class (``from_spec`` builds it for ``--model``). Importing
this package does not import the ``anthropic`` SDK; making a model does. Files, by job:

- ``model.py``: ``AnthropicModel``: one call with retries under the run's time limit;
  ``pause_turn`` continued.
- ``request.py``: the request: system, history as alternating messages with ``tool_result``
  blocks, tools, tool choice; journal entries.
- ``reply.py``: a reply as a ``ModelTurn``: THE stop-reason map and usage reader.
- ``stream.py``: ``StreamAccumulator``: streamed events assembled into the same message.
- ``errors.py``: error bodies, failures on the wire, and which are worth a retry.
- ``caching.py``: prompt-cache breakpoints and the minimum cacheable length.
- ``endpoint.py``: the base URL and ``ANTHROPIC_API_KEY``.

Shared with the other HTTP adapters: ``models/sdk_client.py`` (the SDK's client, the retries
and one call through it: ``models/sdk_attempt.py``), ``models/retry.py``,
``models/http_deadline.py``, ``models/http_errors.py``, ``models/sse.py``,
``reactloop.support.json_decode``.
"""

from reactloop.models.anthropic.model import AnthropicModel, from_spec

__all__ = ["AnthropicModel", "from_spec"]
