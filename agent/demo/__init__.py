"""A real transcript bundled with gosling, so a first run without any model provider can still
show the context pipeline at work (`gosling context demo`)."""

from __future__ import annotations

from pathlib import Path

DEMO_TRANSCRIPT = Path(__file__).with_name(
    "minisweagent_marshmallow-1343_deepseek-reasoner.traj.json"
)
"""mini-swe-agent solving SWE-bench task marshmallow-1343 with deepseek-reasoner: 86 model
calls, 85 tool results (MIT; see LICENSE.md beside it)."""

DEMO_CONTEXT_LIMIT = 16_000
"""A window small enough that keeping the whole history overflows it, so every strategy has
something to do."""
