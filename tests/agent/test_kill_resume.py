"""`gosling run` killed with SIGKILL at random moments and resumed, against a server that
reuses the tool call id `call_0`: every request it then sends is valid. bench/sigkill_resume.py
runs the same loop with 50 and more kills."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.agent.kill_resume import chat_request_problems, kill_and_resume

SEEDS = (11,)


@pytest.mark.timeout(400)
@pytest.mark.parametrize("seed", SEEDS)
def test_every_request_after_a_kill_is_valid(tmp_path: Path, seed: int) -> None:
    print(f"kill schedule seed {seed}")
    report = kill_and_resume(kills=6, seed=seed, directory=tmp_path)
    assert report.resumes >= 5, report
    assert report.invalid == [], f"seed {seed}: {report.invalid}"


def test_the_validator_refuses_an_unanswered_reused_id() -> None:
    call = {"role": "assistant", "tool_calls": [{"id": "call_0"}]}
    answer = {"role": "tool", "tool_call_id": "call_0"}
    user = {"role": "user", "content": "go on"}
    assert chat_request_problems([user, call, answer, call, answer, user]) == []
    assert chat_request_problems([user, call, answer, call, user])
