"""Recognising "the request did not fit the context window" in each server's own words.

Context overflow is the one error the agent recovers from by itself (compact, then retry),
so a miss loops on the same 400 and a false match destroys history for nothing. The
patterns below are therefore narrow: each quotes the message a real server returns, with
where it was seen. A reply cut short by its *output* limit (`max_tokens`, `length`) is not
an overflow: it is a normal completion with a stop reason, never matched here.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

OVERFLOW_CODES = frozenset({"context_length_exceeded", "exceed_context_size_error"})
"""Machine-readable codes/types that mean overflow (OpenAI `code`, llama.cpp `type`)."""

_SOURCES: tuple[tuple[str, str], ...] = (
    # Anthropic: "prompt is too long: 213462 tokens > 200000 maximum"
    # (400 invalid_request_error; code-yeongyu/oh-my-openagent#96).
    (r"prompt is too long", "anthropic"),
    # Anthropic: "input length and `max_tokens` exceed context limit: 198227 + 20000 > 200000,
    # decrease input length or `max_tokens` and try again" (anthropics/claude-code#4006).
    (r"input length and .{0,3}max_tokens.{0,3} exceed context limit", "anthropic"),
    # OpenAI Chat: "This model's maximum context length is 128000 tokens. However, your
    # messages resulted in ..."; vLLM: "This model's maximum context length is 6048 tokens.
    # However, you requested 6616 tokens (568 in the messages, 6048 in the completion)"
    # (ogx-ai/ogx#4534, vllm-project/vllm#20409, earendil-works/pi#5930); OpenRouter:
    # "This endpoint's maximum context length is 200000 tokens. However, you requested about".
    (r"maximum context length is \d+", "openai/vllm/openrouter"),
    # OpenAI Responses: "Your input exceeds the context window of this model. Please adjust
    # your input and try again." (code context_length_exceeded; anomalyco/opencode#8089).
    (r"exceeds the context window", "openai"),
    # llama.cpp server: "the request exceeds the available context size. try increasing the
    # context size or enable context shift" (ggml-org/llama.cpp#15780) and "request (4390
    # tokens) exceeds the available context size (4096 tokens), try increasing it"
    # (ggml-org/llama.cpp#19774); Ollama since 2026 (ollama/ollama#16800) says the same.
    (r"exceeds? the available context size", "llamacpp/ollama"),
    # llama.cpp server, older builds: 500 "Context size has been exceeded." (llama.cpp#19774).
    (r"context size has been exceeded", "llamacpp"),
    # llama-cpp-python: "Requested tokens (2285) exceed context window of 2048".
    (r"requested tokens \(\d+\) exceed context window", "llama-cpp-python"),
    # Ollama: "the input length exceeds the context length" (400/500 from its runner).
    (r"input length exceeds the context length", "ollama"),
    # Ollama and generic servers: "context length exceeded".
    (r"context length exceeded", "ollama"),
    # vLLM: "The decoder prompt (length 17772) is longer than the maximum model length of
    # 16384" / "Prompt length of 5016 is longer than the maximum model length of 4096".
    (r"is longer than the maximum model length", "vllm"),
    # vLLM, older: "The prompt (total length 25938) is too long to fit into the model
    # (context length 4096)" (vllm-project/vllm#12165).
    (r"too long to fit into the model", "vllm"),
    # LM Studio: "Trying to keep the first 15857 tokens when context the overflows. However,
    # the model is loaded with context length of only 4096 tokens, which is not enough."
    # (lmstudio-ai/lmstudio-bug-tracker#237, #546).
    (r"loaded with (?:a )?context length of only \d+", "lmstudio"),
    # LM Studio mid-generation: "Reached context length of 32000 tokens with model (arch:
    # gpt-oss) that does not currently support mid-generation context overflow."
    # (lmstudio-ai/lmstudio-bug-tracker#1024).
    (r"reached context length of \d+ tokens", "lmstudio"),
    # Gemini-style gateways: "The input token count (582632) exceeds the maximum number of
    # tokens allowed (131072)." (JohnnyZ93/oai-compatible-copilot#13).
    (r"input token count \(?\d+\)? exceeds the maximum number of tokens", "gemini"),
)

OVERFLOW_PATTERNS: tuple[re.Pattern[str], ...] = tuple(
    re.compile(pattern, re.IGNORECASE) for pattern, _ in _SOURCES
)


def is_context_overflow(
    *texts: str | None,
    codes: Iterable[str | None] = (),
    extra_patterns: Iterable[str] = (),
) -> bool:
    """True when an error's code or any of its texts says the input did not fit.

    `texts` are the error message and the raw body (either may be None); `codes` are the
    provider's machine codes (`code`, `type`); `extra_patterns` come from a server profile.
    """
    if any(code is not None and str(code).lower() in OVERFLOW_CODES for code in codes):
        return True
    patterns = list(OVERFLOW_PATTERNS)
    patterns.extend(re.compile(p, re.IGNORECASE) for p in extra_patterns)
    return any(text and any(pattern.search(text) for pattern in patterns) for text in texts)
