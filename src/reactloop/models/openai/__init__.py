"""The Chat Completions adapter: OpenAI, DeepSeek, Qwen, Ollama, vLLM, SGLang, llama.cpp.

``OpenAIChatModel`` is the one public class (``from_spec`` builds it for ``--model``). Importing
this package does not import the ``openai`` SDK; making a model does. Files, by job:

- ``model.py``: ``OpenAIChatModel``: one call with retries under the run's time limit.
- ``request.py``: the request: history, tools and tool choice as wire JSON; the journal entry.
- ``reply.py``: a reply as a ``ModelTurn``: THE finish-reason map, usage reader and call ids.
- ``stream.py``: ``StreamAccumulator``: streamed chunks assembled into the same turn.
- ``response.py``: one HTTP reply (JSON body or event stream) read into a turn.
- ``errors.py``: provider error bodies, failures on the wire, and which are worth a retry.
- ``endpoints.py``: the services (``SERVICES``), their base URLs, keys and quirks.
- ``hermes.py``: tool calls a server left in the text (``<tool_call>…</tool_call>``).
- ``hermes_calls.py``: one such block's body read into calls, leniently (its repairs).

Shared with the other HTTP adapters, in ``reactloop.models``: ``sdk_client.py`` (the SDK
client, its deadline transport and TLS, the retry policy: ``retry.py``), ``http_deadline.py``
(no slow reply outlasts the run's time limit), ``sse.py`` (Server-Sent Events) and
``reactloop.support.json_decode`` (JSON from outside).
"""

from reactloop.models.openai.model import OpenAIChatModel, from_spec

__all__ = ["OpenAIChatModel", "from_spec"]
