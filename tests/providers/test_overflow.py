"""Context overflow is recognised in each server's real words, and nothing else is taken
for it. Every message below was returned by a real server; the id names where it was seen."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from gosling.providers import ContextLengthExceeded, RateLimited, RequestFailed, is_context_overflow
from gosling.providers.error_mapping import classify_error

REAL_OVERFLOW_MESSAGES = {
    # Anthropic, 400 invalid_request_error
    "anthropic-prompt-too-long (oh-my-openagent#96)": "prompt is too long: 214676 tokens > 200000 maximum",  # noqa: E501
    "anthropic-input-plus-max-tokens (claude-code#4006)": "input length and `max_tokens` exceed context limit: 198227 + 20000 > 200000, decrease input length or `max_tokens` and try again",  # noqa: E501
    # OpenAI
    "openai-chat-maximum-context-length": "This model's maximum context length is 128000 tokens. However, your messages resulted in 130542 tokens. Please reduce the length of the messages.",  # noqa: E501
    "openai-responses-context-window (opencode#8089)": "Your input exceeds the context window of this model. Please adjust your input and try again.",  # noqa: E501
    # vLLM
    "vllm-you-requested (ogx#4534)": "This model's maximum context length is 6048 tokens. However, you requested 6616 tokens (568 in the messages, 6048 in the completion). Please reduce the length of the messages or completion.",  # noqa: E501
    "vllm-output-and-prompt (kon#91)": "This model's maximum context length is 196608 tokens. However, you requested 16384 output tokens and your prompt contains at least 180225 input tokens, for a total of at least 196609 tokens. Please reduce the length of the input prompt or the number of requested output tokens. (parameter=input_tokens, value=180225)",  # noqa: E501
    "vllm-decoder-prompt (xorbitsai#3785)": "The decoder prompt (length 21535) is longer than the maximum model length of 16384",  # noqa: E501
    "vllm-prompt-length (LlamaFactory#7723)": "Prompt length of 5016 is longer than the maximum model length of 4096.",  # noqa: E501
    "vllm-too-long-to-fit (vllm#12165)": "The prompt (total length 25938) is too long to fit into the model (context length 4096). Make sure that `max_model_len` is no smaller than the number of text tokens plus multimodal tokens.",  # noqa: E501
    # llama.cpp server
    "llamacpp-exceeds-available (llama.cpp#15780)": "the request exceeds the available context size. try increasing the context size or enable context shift",  # noqa: E501
    "llamacpp-request-tokens (llama.cpp#19774)": "request (4390 tokens) exceeds the available context size (4096 tokens), try increasing it",  # noqa: E501
    "llamacpp-500 (llama.cpp#19774)": "Context size has been exceeded.",
    "llama-cpp-python (logdetective#193)": "Requested tokens (2285) exceed context window of 2048",
    # Ollama
    "ollama-exceeds-available (ollama#16800)": "request (351 tokens) exceeds the available context size (256 tokens), try increasing it",  # noqa: E501
    "ollama-input-length": "the input length exceeds the context length",
    "ollama-context-length-exceeded": "context length exceeded",
    # LM Studio
    "lmstudio-keep-first (lmstudio#237)": "Trying to keep the first 15857 tokens when context the overflows. However, the model is loaded with context length of only 4096 tokens, which is not enough. Try to load the model with a larger context length, or provide a shorter input",  # noqa: E501
    "lmstudio-keep-first-newer (page-assist#356)": "Trying to keep the first 6547 tokens when context overflows. However, the model is loaded with a context length of only 4096 tokens, which is not enough.",  # noqa: E501
    "lmstudio-mid-generation (lmstudio#1024)": "Reached context length of 32000 tokens with model (arch: gpt-oss) that does not currently support mid-generation context overflow. Try reloading with a larger context length or shortening the prompt/chat.",  # noqa: E501
    # OpenRouter and Gemini-style gateways
    "openrouter-endpoint": "This endpoint's maximum context length is 200000 tokens. However, you requested about 250123 tokens (250123 of text input).",  # noqa: E501
    "gemini-input-token-count (oai-compatible-copilot#13)": "The input token count (582632) exceeds the maximum number of tokens allowed (131072).",  # noqa: E501
}  # fmt: skip

NOT_OVERFLOW = {
    # hermes-agent#52261: a memory guard that merely mentions context length
    "omlx-memory-guard": "oMLX prefill memory guard: Prefill would require ~15.27 GB peak (current 13.46 GB + KV+SDPA 1.80 GB) but dynamic ceiling is 13.50 GB ... or reduce context length.",  # noqa: E501
    "openai-rate-limit": "Rate limit reached for gpt-4o in organization org-x on tokens per min (TPM): Limit 30000, Used 29000, Requested 2000.",  # noqa: E501
    "vllm-negative-max-tokens (vllm#4667)": "max_tokens must be at least 1, got -186.",
    "anthropic-overloaded": "Overloaded",
    "bad-tool-schema": "tools.0.custom.input_schema: JSON schema is invalid",
}  # fmt: skip


@pytest.mark.parametrize("message", REAL_OVERFLOW_MESSAGES.values(), ids=REAL_OVERFLOW_MESSAGES)
def test_real_overflow_message_is_recognised(message: str) -> None:
    assert is_context_overflow(message)


@pytest.mark.parametrize("message", NOT_OVERFLOW.values(), ids=NOT_OVERFLOW)
def test_other_errors_are_not_taken_for_overflow(message: str) -> None:
    assert not is_context_overflow(message)


def test_overflow_codes_alone_are_enough() -> None:
    assert is_context_overflow(None, codes=["context_length_exceeded"])
    assert is_context_overflow("", codes=["exceed_context_size_error"])
    assert not is_context_overflow("", codes=["invalid_request_error", None])


def test_profile_patterns_extend_the_builtin_ones() -> None:
    assert not is_context_overflow("KV cache is full")
    assert is_context_overflow("KV cache is full", extra_patterns=[r"kv cache is full"])


OVERFLOW_BODIES: dict[str, Any] = json.loads(
    (Path(__file__).parents[1] / "fakes" / "overflow_bodies.json").read_text()
)


@pytest.mark.parametrize("flavor", OVERFLOW_BODIES)
def test_each_servers_overflow_body_maps_to_context_length_exceeded(flavor: str) -> None:
    entry = OVERFLOW_BODIES[flavor]
    body = entry["body"]
    # The OpenAI SDK hands over the inner "error" object; Anthropic's keeps the whole body.
    sdk_body = body if flavor == "anthropic" else (body.get("error", body))
    error = classify_error(provider=flavor, status=entry["status"], body=sdk_body)
    assert isinstance(error, ContextLengthExceeded)
    assert error.status == entry["status"]


def test_rate_limit_mentioning_tokens_stays_a_rate_limit() -> None:
    body = {"error": {"message": NOT_OVERFLOW["openai-rate-limit"], "code": "rate_limit_exceeded"}}
    assert isinstance(classify_error(provider="openai", status=429, body=body), RateLimited)


def test_resource_error_with_context_words_stays_a_request_failure() -> None:
    error = classify_error(
        provider="omlx", status=400, body={"error": NOT_OVERFLOW["omlx-memory-guard"]}
    )
    assert type(error) is RequestFailed
