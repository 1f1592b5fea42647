"""SIGKILL `gosling run` at random moments and resume the session each time, against a fake
OpenAI-compatible server that numbers tool calls per reply (every call is `call_0`).

Every request the server receives must be one a real server accepts: each assistant tool
call answered by exactly one tool message right after it, and no tool message answering
nothing. Used by tests/agent/test_kill_resume.py (a few kills) and bench/sigkill_resume.py
(50 and more, with figures).
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.fakes import FakeLLMServer, FakeToolCall, Turn

REPO = Path(__file__).resolve().parents[2]
REUSED_ID = "call_0"


def chat_request_problems(messages: list[dict[str, Any]]) -> list[str]:
    """Why an OpenAI Chat Completions `messages` list would be refused (empty when valid)."""
    problems: list[str] = []
    waiting: list[str] = []
    for index, message in enumerate(messages):
        role = message.get("role")
        if role == "tool":
            call_id = message.get("tool_call_id")
            if call_id in waiting:
                waiting.remove(call_id)
            else:
                problems.append(f"message {index}: tool result {call_id!r} answers no open call")
            continue
        if waiting:
            problems.append(f"message {index}: calls {waiting} were never answered")
            waiting = []
        if role == "assistant":
            waiting = [call["id"] for call in message.get("tool_calls") or []]
    if waiting:
        problems.append(f"the request ends with calls {waiting} unanswered")
    return problems


@dataclass
class KillReport:
    seed: int
    kills: int = 0
    resumes: int = 0
    requests: int = 0
    invalid: list[str] = field(default_factory=list)
    sessions: int = 0


def _env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.update(
        {
            "OPENAI_API_KEY": "test-key",
            "GOSLING_HOME": str(home),
            "GOSLING_MAX_RETRIES": "0",
            "NO_COLOR": "1",
            "PYTHONPATH": str(REPO),
        }
    )
    return env


def _start(
    server: FakeLLMServer, work: Path, home: Path, extra: list[str]
) -> subprocess.Popen[str]:
    args = ["run", "--provider", "openai", "--model", "m", "--base-url", server.openai_url]
    return subprocess.Popen(
        [sys.executable, "-m", "gosling", *args, "--output-format", "stream-json", *extra],
        cwd=work,
        env=_env(home),
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )


def kill_and_resume(kills: int, seed: int, directory: Path) -> KillReport:
    """One session, killed `kills` times at seeded random moments and resumed after each."""
    rng = random.Random(seed)
    report = KillReport(seed)
    work, home = directory / "work", directory / "home"
    work.mkdir(parents=True, exist_ok=True)
    step = Turn(tool_calls=[FakeToolCall("developer__shell", {"command": "sleep 0.2"}, REUSED_ID)])
    with FakeLLMServer([step] * (kills * 40)) as server:
        session_id: str | None = None
        while report.kills < kills:
            extra = ["-t", "keep going"] + (["--resume", session_id] if session_id else [])
            seen = len(server.model_requests())
            process = _start(server, work, home, extra)
            assert process.stdout is not None
            init = json.loads(process.stdout.readline() or "{}")
            if init.get("type") != "init":
                process.kill()
                process.wait()
                raise AssertionError(f"gosling run did not start (seed {seed})")
            session_id = session_id or init["session_id"]
            report.resumes += seen > 0
            # After the run's first request, so every run shows the server what it resumed.
            server.wait_for_requests(len(server.requests) + 1, timeout=60)
            time.sleep(rng.uniform(0.0, 1.0))
            process.send_signal(signal.SIGKILL)
            process.wait()
            process.stdout.close()
            report.kills += 1
            for request in server.model_requests()[seen:]:
                report.requests += 1
                problems = chat_request_problems(request.body["messages"])
                if problems:
                    report.invalid.append(f"kill {report.kills}: {problems[0]}")
        report.sessions = 1
    return report
