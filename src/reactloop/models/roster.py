"""The roster of providers: every ``--model`` prefix, once, with all that is known of it.

A row names the adapter that builds the provider's models (``"module:from_spec"``), where the
provider lives and the variables that configure it, and — for the OpenAI-compatible ones — the
quirks of its wire. Everything else is read from this one table: the registry's ``PROVIDERS``
(``registry.py``), the OpenAI-compatible services (``openai/endpoints.py``), Anthropic's
endpoint, and the model ``reactloop run`` chooses without ``--model`` (``default.py``).

Adding a provider is one row here (and, for a new protocol, one adapter package).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Literal

OPENAI_ADAPTER = "reactloop.models.openai:from_spec"
ADAPTER_SDKS: Mapping[str, str] = MappingProxyType(
    {
        OPENAI_ADAPTER: "openai",
        "reactloop.models.responses:from_spec": "openai",
        "reactloop.models.anthropic:from_spec": "anthropic",
    }
)
"""The SDK each adapter's client is made with (an eval's forkserver imports it for its workers)."""
JsonSchemaMode = Literal["with_tools", "alone", ""]


@dataclass(frozen=True, kw_only=True)
class Provider:
    """One provider.

    ``key_env`` names the variable holding the API key (None: the provider needs none);
    ``base_url_env`` a variable that overrides ``default_base_url``. ``default_model``: the
    model used without ``--model`` when ``key_env`` is set (``model_env`` overrides it; None:
    the provider is never chosen that way).

    The OpenAI-compatible wire: ``ollama_host`` says the base URL may also come from
    ``OLLAMA_HOST`` (``host:port``, no ``/v1``); ``json_schema`` says when a typed answer is
    asked for as a ``response_format`` JSON Schema: ``"with_tools"`` on every call,
    ``"alone"`` only on calls that may not call a tool (servers that constrain the whole reply,
    tool calls included, by grammar), ``""`` never.
    """

    name: str
    adapter: str
    default_base_url: str = ""
    key_env: str | None = None
    base_url_env: str | None = None
    default_model: str | None = None
    model_env: str | None = None
    example_model: str = "MODEL"
    supports_tool_choice: bool = True
    echo_tool_name: bool = False
    max_tokens_field: str = "max_tokens"
    ollama_host: bool = False
    json_schema: JsonSchemaMode = ""

    @property
    def is_local(self) -> bool:
        return self.key_env is None

    @property
    def sdk(self) -> str:
        """The SDK package its adapter makes its client with ("" for none)."""
        return ADAPTER_SDKS.get(self.adapter, "")


def _local_server(name: str, port: int, example: str, **quirks: bool | str) -> Provider:
    return Provider(
        name=name,
        adapter=OPENAI_ADAPTER,
        default_base_url=f"http://localhost:{port}/v1",
        example_model=example,
        echo_tool_name=True,
        json_schema="alone",
        **quirks,  # type: ignore[arg-type]
    )


_ROWS = (
    Provider(name="scripted", adapter="reactloop.models.scripted:from_spec"),
    Provider(name="replay", adapter="reactloop.models.replay:from_spec"),
    Provider(
        name="openai",
        adapter=OPENAI_ADAPTER,
        default_base_url="https://api.openai.com/v1",
        key_env="OPENAI_API_KEY",
        base_url_env="OPENAI_BASE_URL",
        default_model="gpt-4o-mini",
        model_env="OPENAI_MODEL",
        example_model="gpt-4o-mini",
        max_tokens_field="max_completion_tokens",
        json_schema="with_tools",
    ),
    Provider(
        name="responses",
        adapter="reactloop.models.responses:from_spec",
        default_base_url="https://api.openai.com/v1",
        key_env="OPENAI_API_KEY",
        base_url_env="OPENAI_BASE_URL",
        example_model="gpt-5-mini",
        max_tokens_field="max_output_tokens",
    ),
    Provider(
        name="anthropic",
        adapter="reactloop.models.anthropic:from_spec",
        default_base_url="https://api.anthropic.com",
        key_env="ANTHROPIC_API_KEY",
        base_url_env="ANTHROPIC_BASE_URL",
        default_model="claude-haiku-4-5",
        model_env="ANTHROPIC_MODEL",
        example_model="claude-sonnet-4-6",
    ),
    Provider(
        name="deepseek",
        adapter=OPENAI_ADAPTER,
        default_base_url="https://api.deepseek.com",
        key_env="DEEPSEEK_API_KEY",
        default_model="deepseek-chat",
        model_env="DEEPSEEK_MODEL",
        example_model="deepseek-chat",
    ),
    Provider(
        name="qwen",
        adapter=OPENAI_ADAPTER,
        default_base_url="https://dashscope.aliyuncs.com/compatible-mode/v1",
        key_env="DASHSCOPE_API_KEY",
        example_model="qwen-plus",
    ),
    _local_server("ollama", 11434, "qwen3:8b", supports_tool_choice=False, ollama_host=True),
    _local_server("vllm", 8000, "Qwen/Qwen3-8B"),
    _local_server("sglang", 30000, "Qwen/Qwen3-8B"),
    _local_server("llamacpp", 8080, "default"),
    Provider(name="local", adapter="reactloop.models.local:from_spec"),
)

ROSTER: Mapping[str, Provider] = MappingProxyType({row.name: row for row in _ROWS})
