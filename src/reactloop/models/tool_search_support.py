"""Which models answer their provider's own tool search, by name.

The adapters that have one (``native_tool_search``: ``AnthropicModel``,
``OpenAIResponsesModel``) say through ``model_has_tool_search`` whether their model does, so
that ``Agent(tool_search="auto")`` uses it only there (``tools/search.py``: ``search_mode``);
``tool_search="native"`` sends it to any model of such an adapter.

* Anthropic's tool-search tool (``tool_search_tool_bm25_20251119`` and the regex variant):
  Claude Haiku 4.5, Sonnet 4.5 and Opus 4.5 and every later version of the three families;
  not Opus 4.1, Opus 4, Sonnet 4 nor the 3.x models. A name is read wherever it stands
  (``claude-sonnet-4-5-20250929``, Bedrock's ``anthropic.claude-opus-4-5-…-v1:0``, Vertex's
  ``claude-haiku-4-5@…``); a date is not a version.
* The Responses API's hosted ``tool_search``: ``gpt-5.4`` and later (``gpt-5.4-pro``,
  ``gpt-5.5``, ``gpt-6``).

A name read neither way (another server's model, a test's) gets the harness's pair. An HTTP 400
about the search (``with_search_hint``) says how to do without it.
"""

from __future__ import annotations

import re

from reactloop.errors import ModelError, ProviderError

CLAUDE_FIRST = (4, 5)  # the first version of each Claude family with tool search
GPT_FIRST = (5, 4)  # the first GPT with the hosted ``tool_search``

_CLAUDE = re.compile(r"claude-(?:opus|sonnet|haiku)-(\d{1,2})(?:[-.](\d{1,2}))?(?![\d])")
_GPT = re.compile(r"^(?:openai/)?gpt-(\d{1,2})(?:\.(\d{1,2}))?(?![\d])")


def claude_has_tool_search(model: str) -> bool:
    """Whether the Claude model ``model`` names has Anthropic's tool-search tool."""
    found = _CLAUDE.search(model.lower())
    return found is not None and _version(found) >= CLAUDE_FIRST


def gpt_has_tool_search(model: str) -> bool:
    """Whether the OpenAI model ``model`` names has the Responses API's ``tool_search``."""
    found = _GPT.search(model.lower())
    return found is not None and _version(found) >= GPT_FIRST


def _version(found: re.Match[str]) -> tuple[int, int]:
    return int(found.group(1)), int(found.group(2) or 0)


SEARCH_WORDS = ("tool_search", "defer_loading", "tool_reference")  # in a refusal of the search
SEARCH_HINT = (
    " (the provider refused its tool search: this model may not have it; "
    "tool_search='own' (--tool-search own) searches with the harness's search_tools)"
)


def with_search_hint(error: ModelError) -> ModelError:
    """``error``, saying how to go on when it is an HTTP 400 about the provider's tool search
    (a model ``tool_search="native"`` was forced on, or one the table thinks has it)."""
    if not isinstance(error, ProviderError) or error.status != 400:
        return error
    if not any(word in str(error).lower() for word in SEARCH_WORDS):
        return error
    return ProviderError(
        f"{error}{SEARCH_HINT}",
        status=error.status,
        code=error.code,
        retryable=error.retryable,
        retry_after=error.retry_after,
        kind=error.kind,
    )
