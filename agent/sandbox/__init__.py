"""Where tool processes run: a bubblewrap sandbox when the machine has one, and a lifetime
tied to their call and to gosling. See README.md."""

from __future__ import annotations

from gosling.agent.sandbox.choice import SandboxChoice, choose_sandbox, mcp_policy
from gosling.agent.sandbox.launch import Launch, plan_launch, spawn
from gosling.agent.sandbox.policy import (
    SANDBOX_MODES,
    STRICTNESS,
    SandboxMode,
    SandboxPolicy,
    bwrap_argv,
    tool_environment,
)
from gosling.agent.sandbox.probe import BwrapStatus, bwrap_status

__all__ = [
    "SANDBOX_MODES",
    "STRICTNESS",
    "BwrapStatus",
    "Launch",
    "SandboxChoice",
    "SandboxMode",
    "SandboxPolicy",
    "bwrap_argv",
    "bwrap_status",
    "choose_sandbox",
    "mcp_policy",
    "plan_launch",
    "spawn",
    "tool_environment",
]
