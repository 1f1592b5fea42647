"""Shared by the sandbox tests: when they can run, and the secrets they plant."""

from __future__ import annotations

import pytest

from gosling.agent.sandbox import bwrap_status

needs_bwrap = pytest.mark.skipif(
    bwrap_status().path is None, reason=f"no usable bwrap: {bwrap_status().problem}"
)
"""Skip only where bwrap cannot run here; `.ci/run` installs it, so CI runs these tests."""

PLANTED = {
    "ANTHROPIC_API_KEY": "sk-ant-planted-QZK1111",
    "OPENAI_API_KEY": "sk-planted-QZK2222",
    "AWS_SECRET_ACCESS_KEY": "planted-aws-QZK3333",
    "DATABASE_URL": "postgres://app:planted-pw-QZK4444@db/app",
}
PLANTED_MARKS = ("QZK1111", "QZK2222", "QZK3333", "QZK4444")
"""A piece of each planted value: none may show in a tool's output. Upper case and letters
outside hex, so a random id in a response (`...164444a0...`) cannot match by chance."""
