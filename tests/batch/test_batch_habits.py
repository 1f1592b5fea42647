"""`gosling batch` options checked before anything runs, `--retry-failed`, and batch
sessions kept out of the user's session list (issue 31), through the real command."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.batch.helpers import REPO, batch_env, gosling_batch, write_tasks
from tests.fakes import FakeLLMServer, Fault, Turn

pytestmark = pytest.mark.timeout(600)


@pytest.fixture
def server() -> Iterator[FakeLLMServer]:
    with FakeLLMServer() as fake:
        yield fake


def _results(out: Path) -> list[dict[str, object]]:
    path = out / "results.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def test_a_wrong_batch_option_fails_before_any_task_and_retry_failed_reruns_the_failed(
    tmp_path: Path, server: FakeLLMServer
) -> None:
    tasks = write_tasks(
        tmp_path / "tasks.jsonl",
        [{"id": "good", "prompt": "[good] go"}, {"id": "flaky", "prompt": "[flaky] go"}],
    )
    out = tmp_path / "out"
    typo = subprocess.run(
        [
            *(sys.executable, "-m", "gosling", "batch", str(tasks), "-o", str(out)),
            *("--provider", "antropic", "--base-url", server.url),
        ],
        cwd=REPO,
        env=batch_env(),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert typo.returncode == 2
    assert "unknown provider 'antropic'; did you mean 'anthropic'" in typo.stderr
    assert typo.stderr.startswith("error: --provider antropic")
    assert "no task was run" in typo.stderr
    assert _results(out) == [] and server.model_requests() == []
    wrong_vendor = gosling_batch(tasks, out, server, "--model", "gpt-5")
    assert wrong_vendor.returncode == 2 and "not 'gpt-5'" in wrong_vendor.stderr

    server.add_conversation("[good]", Turn(text="Good."))
    server.add_conversation("[flaky]", Turn(fault=Fault.auth()))
    first = gosling_batch(tasks, out, server)
    assert first.returncode == 1, first.stderr
    assert {r["task_id"]: r["exit_code"] for r in _results(out)} == {"good": 0, "flaky": 1}

    server.add_conversation("[flaky]", Turn(text="Fixed."))
    plain = gosling_batch(tasks, out, server)
    assert plain.returncode == 1 and len(_results(out)) == 2  # a rerun skips both as done
    again = gosling_batch(tasks, out, server, "--retry-failed")
    assert again.returncode == 0, again.stderr
    assert "running 1 failed task(s) again" in again.stderr
    lines = _results(out)
    assert [(r["task_id"], r["exit_code"], r["result"]) for r in lines] == [
        ("good", 0, "Good."),
        ("flaky", 0, "Fixed."),
    ]

    listed = subprocess.run(
        [sys.executable, "-m", "gosling", "sessions", "list"],
        cwd=REPO,
        env=batch_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert "batch session(s) not shown" in listed.stdout
    assert "batch good" not in listed.stdout
    every = subprocess.run(
        [sys.executable, "-m", "gosling", "sessions", "list", "--all", "--json"],
        cwd=REPO,
        env=batch_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    names = {s["name"]: s["origin"] for s in json.loads(every.stdout)}
    assert names.get("batch good") == "batch"
