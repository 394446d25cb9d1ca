"""Models: the ``Model`` protocol, the registry of providers and ``resolve_model``.

A spec is ``PROVIDER[:NAME]`` (``openai:gpt-4o-mini``, ``scripted:demo.json``, ``local``).
Every provider is a row of the roster (``roster.py``); ``PROVIDERS`` maps each prefix to its
adapter's ``from_spec``. Adapters are imported only when asked for, so ``import reactloop``
stays fast.

Adapters: ``openai/`` (Chat Completions), ``responses/`` (the Responses API), ``local/`` (the
embedded model), ``react/`` (text ReAct over any chat model), ``scripted.py``, ``replay.py`` (a
journal as a model). Shared by them: ``base.py`` (the ``Model`` protocol), ``sse.py``
(Server-Sent Events), ``reactloop.support.json_decode`` (JSON from outside, decoded safely),
``retry.py`` and ``http_deadline.py`` (retries and the run's time limit on the wire, for the
HTTP adapters). For the small models' prompts (native and text ReAct): ``worked_examples.py``
(the worked examples as data, and ``parroted``) and ``copy_guard.py`` (an answer copied from
them is refused). ``tool_search_support.py``: which models answer their provider's own tool
search.
"""

from typing import TYPE_CHECKING

from reactloop.models.base import Model, ModelRequest, ModelSettings, ReactFormat
from reactloop.support import lazy_names

if TYPE_CHECKING:  # loaded on first use, below: a run of a given model needs neither
    from reactloop.models.default import choose_default_model
    from reactloop.models.registry import PROVIDERS, resolve_model, split_spec

_LAZY = {
    "choose_default_model": "reactloop.models.default",
    "PROVIDERS": "reactloop.models.registry",
    "resolve_model": "reactloop.models.registry",
    "split_spec": "reactloop.models.registry",
}

__getattr__ = lazy_names.lazy_getattr(__name__, _LAZY)


__all__ = [
    "PROVIDERS",
    "Model",
    "ModelRequest",
    "ModelSettings",
    "ReactFormat",
    "choose_default_model",
    "resolve_model",
    "split_spec",
]
