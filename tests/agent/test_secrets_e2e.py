"""Twelve planted credentials, hunted through every artifact one `gosling run` leaves behind.

The run's environment holds credentials of every kind the redactor knows; a shell command
prints the environment, gosling's own environment (`/proc/$PPID/environ`) and a file of
key-shaped strings, long enough to spill; the provider then fails twice with an error body
that echoes the key (once retried, which is logged). Not one of the twelve values may appear
in the session database, its WAL, the exports, the log, the spill files, what the model was
sent, or stdout and stderr of `--output-format stream-json`.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from gosling.sessions import SqliteSessionStore
from tests.agent.test_run_e2e import gosling, gosling_env, run_args, tool
from tests.fakes import FakeLLMServer, Fault

ENV_SECRETS = {
    "ANTHROPIC_API_KEY": "sk-ant-api03-PLANTEDanthropicKEY0123456789abcdef",
    "OPENAI_API_KEY": "sk-proj-PLANTEDopenaiKEY0123456789abcdefghij",
    "AWS_ACCESS_KEY_ID": "AKIAPLANTED7EXAMPLE1",
    "AWS_SECRET_ACCESS_KEY": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYPLANTED0KEY",
    "DATABASE_URL": "postgres://app:Planted-DB-pass-42@db.internal:5432/app",
    "SLACK_WEBHOOK_URL": "https://hooks.slack.com/services/T0PLANT/B0PLANT/PlantedWebhook42",
    "STRIPE_SECRET_KEY": "sk_live_PLANTEDstripe0123456789",
    "GITHUB_TOKEN": "ghp_PLANTEDgithubToken0123456789abcdefghij",
}
OUTPUT_SECRETS = {
    "pem": "MIIEpAIBAAKCAQEAplantedPRIVATEkeyMATERIAL0123456789",
    "github_pat": "github_pat_11PLANTED0fine0grained0token0123456789",
    "slack_bot": "xoxb-1234567890-PLANTEDslackBOTtoken",
}
ERROR_SECRET = "rk_live_PLANTEDrestrictedKEY0123"
KEYS_FILE = f"""\
# a developer's scratch notes
-----BEGIN RSA PRIVATE KEY-----
{OUTPUT_SECRETS["pem"]}
-----END RSA PRIVATE KEY-----
token: {OUTPUT_SECRETS["github_pat"]}
slack: {OUTPUT_SECRETS["slack_bot"]}
"""
PLANTED = [*ENV_SECRETS.values(), *OUTPUT_SECRETS.values(), ERROR_SECRET]
# The parts that identify each secret on their own (a URL's password, say).
NEEDLES = [
    *(v for k, v in ENV_SECRETS.items() if k != "DATABASE_URL"),
    "Planted-DB-pass-42",
    *OUTPUT_SECRETS.values(),
    ERROR_SECRET,
]
COMMAND = (
    "seq 1 3000; env; tr '\\0' '\\n' < /proc/$PPID/environ; cat keys.txt; "
    "echo $DATABASE_URL $AWS_SECRET_ACCESS_KEY"
)


def leaks(data: bytes) -> list[str]:
    return [needle for needle in NEEDLES if needle.encode() in data]


def test_twelve_planted_credentials_never_reach_an_artifact(
    tmp_path: Path, _isolated_home: Path
) -> None:
    assert len(PLANTED) == 12
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "keys.txt").write_text(KEYS_FILE)
    home = _isolated_home
    # A reader holding the database open keeps gosling's WAL on disk to be inspected.
    reader = SqliteSessionStore.open_default(home / "data")
    echo = f"invalid x-api-key {ENV_SECRETS['ANTHROPIC_API_KEY']} (also saw {ERROR_SECRET})"
    with FakeLLMServer() as server:
        server.add(
            tool("developer__shell", command=COMMAND),
            Fault.http_status(
                429,
                {"type": "error", "error": {"type": "rate_limit_error", "message": echo}},
                {"retry-after": "0"},
            ),
            Fault.http_status(
                400, {"type": "error", "error": {"type": "invalid_request_error", "message": echo}}
            ),
        )
        env = gosling_env(**ENV_SECRETS, GOSLING_MAX_RETRIES="1")
        result = gosling(
            # Without the sandbox (which scrubs the tool environment) the redactor is the only
            # layer between the secrets and every artifact: that is what this test attacks.
            run_args(
                server,
                "anthropic",
                "-t",
                "look around",
                "--output-format",
                "stream-json",
                "--sandbox",
                "off",
            ),
            repo,
            env=env,
        )
        sent = b"".join(repr(r.body).encode() for r in server.model_requests())
    assert result.returncode == 1, result.stderr
    assert '"type": "tool_result"' in result.stdout
    assert "rate_limit_error" in (home / "state" / "logs" / "gosling.log").read_text()

    session_id = next(s.id for s in reader.list_sessions())
    exports = {}
    for fmt in ("jsonl", "markdown"):
        out = tmp_path / f"export.{fmt}"
        done = gosling(["sessions", "export", session_id, "--format", fmt, "-o", str(out)], repo)
        assert done.returncode == 0, done.stderr
        exports[fmt] = out.read_bytes()
    wal = home / "data" / "sessions.db-wal"
    spill_dir = home / "state" / "sessions" / session_id / "spill"
    spills = list(spill_dir.iterdir()) if spill_dir.is_dir() else []
    artifacts = {
        "sessions.db": (home / "data" / "sessions.db").read_bytes(),
        "sessions.db-wal": wal.read_bytes(),
        "export.jsonl": exports["jsonl"],
        "export.markdown": exports["markdown"],
        "gosling.log": (home / "state" / "logs" / "gosling.log").read_bytes(),
        **{f"spill {p.name}": p.read_bytes() for p in spills},
        "model requests": sent,
        "stdout": result.stdout.encode(),
        "stderr": result.stderr.encode(),
    }
    reader.close()
    assert len(artifacts["sessions.db-wal"]) > 0
    found = {name: leaks(data) for name, data in artifacts.items() if leaks(data)}
    assert found == {}
    assert spills, "the long output was not spilled into the session's directory"
    for spill in spills:
        assert stat.S_IMODE(spill.stat().st_mode) == 0o600
    assert b"3000" in spills[0].read_bytes() + spills[-1].read_bytes()
    # The secrets were there, redacted: in the stored tool output and the error line.
    assert b"[REDACTED:AWS_SECRET_ACCESS_KEY]" in exports["jsonl"]
    assert b"[REDACTED:private-key]" in exports["jsonl"]
    assert "[REDACTED:ANTHROPIC_API_KEY]" in result.stdout


def test_removing_a_session_removes_its_spill_files(tmp_path: Path, _isolated_home: Path) -> None:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    with FakeLLMServer() as server:
        server.add(tool("developer__shell", command="seq 1 5000"), "done")
        result = gosling(run_args(server, "anthropic", "-t", "count"), repo)
    assert result.returncode == 0, result.stderr
    session_dir = next((_isolated_home / "state" / "sessions").iterdir())
    assert list((session_dir / "spill").iterdir())
    assert stat.S_IMODE((session_dir / "spill").stat().st_mode) == 0o700
    removed = gosling(["sessions", "rm", "-y", session_dir.name], repo)
    assert removed.returncode == 0, removed.stderr
    assert not session_dir.exists()


@pytest.mark.parametrize("age_days, kept", [(8, False), (6, True)])
def test_spill_files_are_swept_after_seven_days(
    tmp_path: Path, _isolated_home: Path, age_days: int, kept: bool
) -> None:
    old = _isolated_home / "state" / "sessions" / "20260101_1" / "spill" / "gosling-stdout-x.txt"
    old.parent.mkdir(parents=True)
    old.write_text("old output")
    when = old.stat().st_mtime - age_days * 86400
    os.utime(old, (when, when))
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    with FakeLLMServer() as server:
        server.add("hi")
        result = gosling(run_args(server, "anthropic", "-t", "hi", "--no-session"), repo)
    assert result.returncode == 0, result.stderr
    assert old.exists() is kept
