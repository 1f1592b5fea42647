"""Test doubles shared by every test package: the loopback fake LLM server (Anthropic
Messages, OpenAI Chat Completions, OpenAI Responses) and its script of turns and faults.
See README.md in this directory."""

from tests.fakes.llm_server import FakeLLMServer, FakeLLMServerProcess, RecordedRequest
from tests.fakes.script import FakeToolCall, FakeUsage, Fault, Turn, load_script

__all__ = [
    "FakeLLMServer",
    "FakeLLMServerProcess",
    "FakeToolCall",
    "FakeUsage",
    "Fault",
    "RecordedRequest",
    "Turn",
    "load_script",
]
