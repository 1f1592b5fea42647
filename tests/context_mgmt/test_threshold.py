"""The auto-compaction threshold check (reference §2)."""

from __future__ import annotations

import pytest

from gosling.context_mgmt import (
    DEFAULT_COMPACTION_THRESHOLD,
    auto_compact_enabled,
    needs_compaction,
)


def test_default_is_eighty_percent() -> None:
    assert DEFAULT_COMPACTION_THRESHOLD == 0.8
    assert needs_compaction(801, 1000, DEFAULT_COMPACTION_THRESHOLD)
    assert not needs_compaction(799, 1000, DEFAULT_COMPACTION_THRESHOLD)


def test_equality_does_not_trigger() -> None:
    assert not needs_compaction(800, 1000, 0.8)
    assert needs_compaction(800, 1000, 0.7999)


@pytest.mark.parametrize("threshold", [0.0, -0.1, 1.0, 1.5, float("nan")])
def test_thresholds_outside_the_open_unit_interval_disable_it(threshold: float) -> None:
    assert not auto_compact_enabled(threshold)
    assert not needs_compaction(10**9, 1000, threshold)


@pytest.mark.parametrize("threshold", [0.8, 0.01, 0.99])
def test_thresholds_inside_enable_it(threshold: float) -> None:
    assert auto_compact_enabled(threshold)
    assert needs_compaction(1000, 1000, threshold)


@pytest.mark.parametrize("limit", [0, -5])
def test_unknown_window_never_triggers(limit: int) -> None:
    assert not needs_compaction(500, limit, 0.8)


def test_no_tokens_never_triggers() -> None:
    assert not needs_compaction(0, 1000, 0.01)
