"""The redactor on gosling's hot paths: every tool result, store write, log record and
stdout line passes it. Clean text (the common case) and text full of secrets, with a
realistic environment of credentials."""

from __future__ import annotations

import os
import statistics
import time
from pathlib import Path
from typing import Any

from gosling.redact import Redactor

SOURCE = Path(__file__).resolve().parents[1] / "agent" / "agent.py"
ENV = {
    **{f"SERVICE_{i}_API_KEY": f"key-{i:04d}-abcdefghijklmnop" for i in range(20)},
    "DATABASE_URL": "postgres://app:db-password-123@db/app",
    "HOME": "/home/user",
    "PATH": "/usr/local/bin:/usr/bin:/bin",
}
SECRETS = (
    "token sk-ant-api03-abcdefghijklmnopqrstuvwxyz key-0007-abcdefghijklmnop "
    "AKIAIOSFODNN7EXAMPLE https://me:pw-123456@host/x ghp_" + "a" * 36 + "\n"
)


def _per_call_us(redactor: Redactor, text: str, repeat: int) -> float:
    times = []
    for _ in range(5):
        start = time.perf_counter()
        for _ in range(repeat):
            redactor.redact(text)
        times.append((time.perf_counter() - start) / repeat)
    return statistics.median(times) * 1e6


def run() -> dict[str, Any]:
    redactor = Redactor(ENV)
    clean_big = SOURCE.read_text() * 10
    dirty_big = clean_big + SECRETS * 1000
    small = "Exit code: 0\n--- stdout ---\nok\n--- stderr: (empty) ---"
    process = Redactor()  # the process environment, with its change detection
    return {
        "clean_small_us": round(_per_call_us(redactor, small, 2000), 2),
        "process_env_small_us": round(_per_call_us(process, small, 2000), 2),
        "clean_MB_per_s": round(len(clean_big) / _per_call_us(redactor, clean_big, 3), 1),
        "with_secrets_MB_per_s": round(len(dirty_big) / _per_call_us(redactor, dirty_big, 3), 1),
        "environment_variables": len(os.environ),
    }


if __name__ == "__main__":
    print(run())
