"""OpenAI-compatible servers: the Chat adapter plus where to find the server and how it
deviates from OpenAI, as data.

A `CompatProfile` is the connection (default base URL, the env vars for URL and key) and
the `ChatQuirks` of one kind of server. Adding a server is adding a profile.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from gosling.providers.base import ModelConfig
from gosling.providers.openai_chat import ChatQuirks, OpenAIChatProvider

if TYPE_CHECKING:
    from gosling.providers.deadlines import CallDeadlines
from gosling.providers.retry import RetryPolicy


@dataclass(frozen=True)
class CompatProfile:
    """One kind of OpenAI-compatible server."""

    name: str
    default_base_url: str | None
    """None: the user must give one (flag, config or env)."""
    base_url_env: str | None = None
    base_url_suffix: str = ""
    """Appended to a URL taken from `base_url_env` (OLLAMA_HOST names the host, not /v1)."""
    api_key_env: str | None = None
    api_key_required: bool = False
    placeholder_api_key: str = "not-needed"
    """Sent when no key is configured: the SDK insists on one, local servers ignore it."""
    default_model: str | None = None
    quirks: ChatQuirks = field(default_factory=ChatQuirks)
    extra_headers: Mapping[str, str] = field(default_factory=dict)
    notes: str = ""


_COMPAT_QUIRKS = ChatQuirks(max_tokens_field="max_tokens", whole_argument_chunks=True)

PROFILES: dict[str, CompatProfile] = {
    "ollama": CompatProfile(
        name="ollama",
        default_base_url="http://localhost:11434/v1",
        base_url_env="OLLAMA_HOST",
        base_url_suffix="/v1",
        placeholder_api_key="ollama",
        default_model="qwen3",
        quirks=_COMPAT_QUIRKS,
        notes="whole tool arguments in one chunk, finish_reason 'stop' after tool calls, "
        "older versions put every tool call on index 0",
    ),
    "vllm": CompatProfile(
        name="vllm",
        default_base_url="http://localhost:8000/v1",
        base_url_env="VLLM_BASE_URL",
        api_key_env="VLLM_API_KEY",
        quirks=_COMPAT_QUIRKS,
        notes="reasoning in delta.reasoning_content; overflow as a flat 400 body",
    ),
    "llamacpp": CompatProfile(
        name="llamacpp",
        default_base_url="http://localhost:8080/v1",
        base_url_env="LLAMACPP_BASE_URL",
        api_key_env="LLAMACPP_API_KEY",
        quirks=_COMPAT_QUIRKS,
        notes="overflow as exceed_context_size_error (400; 500 on older builds)",
    ),
    "lmstudio": CompatProfile(
        name="lmstudio",
        default_base_url="http://localhost:1234/v1",
        base_url_env="LMSTUDIO_BASE_URL",
        placeholder_api_key="lm-studio",
        quirks=_COMPAT_QUIRKS,
        notes="overflow reported as a bare string error; may stop with finish_reason "
        "'length' when its own context fills (a normal, truncated reply)",
    ),
    "openrouter": CompatProfile(
        name="openrouter",
        default_base_url="https://openrouter.ai/api/v1",
        api_key_env="OPENROUTER_API_KEY",
        api_key_required=True,
        quirks=_COMPAT_QUIRKS,
        extra_headers={"X-Title": "gosling"},
        notes="model names carry the vendor (anthropic/claude-sonnet-4.5); cache writes in "
        "prompt_tokens_details.cache_write_tokens",
    ),
    "openai-compatible": CompatProfile(
        name="openai-compatible",
        default_base_url=None,
        base_url_env="OPENAI_BASE_URL",
        api_key_env="OPENAI_API_KEY",
        quirks=_COMPAT_QUIRKS,
        notes="any other Chat Completions server; give its base URL",
    ),
}


class OpenAICompatibleProvider(OpenAIChatProvider):
    """The Chat adapter pointed at a compatible server, with that server's quirks."""

    def __init__(
        self,
        model_config: ModelConfig,
        *,
        profile: CompatProfile,
        base_url: str,
        api_key: str | None = None,
        retry: RetryPolicy | None = None,
        timeout: float = 600.0,
        deadlines: CallDeadlines | None = None,
    ) -> None:
        hint = f"set {profile.api_key_env}" if profile.api_key_env else None
        super().__init__(
            model_config,
            api_key=api_key or profile.placeholder_api_key,
            base_url=base_url,
            quirks=profile.quirks,
            retry=retry,
            timeout=timeout,
            deadlines=deadlines,
            name=profile.name,
            auth_hint=hint,
            default_headers=profile.extra_headers,
        )
        self.profile = profile
