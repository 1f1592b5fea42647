"""Credentials under the names and in the shapes the first round missed, and encoded ones.

The run's environment holds eleven credentials whose names say so only in words such as
PWD, PASS, PASSPHRASE, JWT, DSN, COOKIE and PAT (or whose value is a JDBC URL with a
password); a file holds key formats (GitLab, Google, a JWT, an ADO.NET connection string);
the shell command prints gosling's own environment, the file, and a `~/.bashrc`-like file
that exports the keys, base64-encoded (wrapped and not), hex and URL-encoded. None of the
secrets, in any of those encodings, may reach the model, the session store, an export or
stdout.
"""

from __future__ import annotations

import base64
from pathlib import Path
from urllib.parse import quote

from gosling.sessions import SqliteSessionStore
from tests.agent.test_run_e2e import gosling, gosling_env, run_args, tool
from tests.fakes import FakeLLMServer

JWT = "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJwcm9qZWN0X3BhdGg6Z3JvdXAvYXBwIn0.UGxhbnRlZEpvYkpXVHNpZw"
ENV_SECRETS = {
    "MYSQL_PWD": "Planted-mysql-pwd-41",
    "DB_PASS": "Planted-db-pass-42",
    "SMTP_PASS": "Planted-smtp-pass-43",
    "GPG_PASSPHRASE": "planted gpg passphrase 44",
    "CI_JOB_JWT": JWT,
    "SENTRY_DSN": "https://PlantedSentryKey45abcdef@o123.ingest.sentry.io/4567",
    "JDBC_URL": "jdbc:mysql://db.internal:3306/app?user=app&password=Planted-jdbc-46",
    "SESSION_COOKIE": "sid=PlantedSessionCookie47",
    "KEYSTORE_PASS": "Planted-keystore-48",
    "AIRTABLE_PAT": "patPlanted49.0123456789abcdef0123456789abcdef",
    "GLPAT": "glpat-PlantedGitLab50xyzAB",
}
FILE_SECRETS = {
    "gitlab runner": "glrt-PlantedRunnerToken51abc",
    "google": "AIzaSyPlanted52GoogleApiKey0123456789ab",
    "jwt": "eyJhbGciOiJIUzI1NiJ9.eyJ1c2VyIjoicGxhbnRlZCJ9.UGxhbnRlZEZpbGVKV1Q1Mw",
    "ado.net": "Planted-ado-pass-54",
}
KEYS_FILE = f"""\
runner: {FILE_SECRETS["gitlab runner"]}
maps: {FILE_SECRETS["google"]}
auth: {FILE_SECRETS["jwt"]}
Server=db;Database=app;User Id=app;Password={FILE_SECRETS["ado.net"]};
"""
BASHRC = "# ~/.bashrc\nalias ll='ls -l'\n" + "".join(
    f"export {name}='{value}'\n" for name, value in ENV_SECRETS.items()
)
COMMAND = (
    "tr '\\0' '\\n' < /proc/$PPID/environ; cat keys.txt; "
    "base64 bashrc; base64 -w0 bashrc; echo; base64 keys.txt; "
    "od -An -v -tx1 bashrc | tr -d ' \\n'; echo; "
    "python3 -c 'import urllib.parse; print(urllib.parse.quote(open(\"bashrc\").read()))'"
)
# The part of each secret that identifies it (the key of a DSN, the password of a URL).
PLAIN = {
    **ENV_SECRETS,
    "SENTRY_DSN": "PlantedSentryKey45abcdef",
    "JDBC_URL": "Planted-jdbc-46",
    **FILE_SECRETS,
}


def _needles() -> dict[str, str]:
    """Each secret plain, hex, URL-encoded and base64 at every alignment."""
    found = {}
    for name, secret in PLAIN.items():
        data = secret.encode()
        found[name] = secret
        found[f"{name} hex"] = data.hex()
        if quote(secret, safe="") != secret:
            found[f"{name} url-encoded"] = quote(secret, safe="")
        for offset in range(3):
            encoded = base64.b64encode(b"\0" * offset + data).decode()
            found[f"{name} base64+{offset}"] = encoded[4 if offset else 0 : -4]
    return found


NEEDLES = _needles()


def leaks(data: bytes) -> list[str]:
    # Wrapped base64 is stored with its line breaks (escaped in JSON): look through them.
    flat = data.replace(b"\\n", b"").replace(b"\n", b"")
    return [name for name, needle in NEEDLES.items() if needle.encode() in flat]


def test_secret_names_formats_and_encodings_never_reach_an_artifact(
    tmp_path: Path, _isolated_home: Path
) -> None:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "keys.txt").write_text(KEYS_FILE)
    (repo / "bashrc").write_text(BASHRC)
    reader = SqliteSessionStore.open_default(_isolated_home / "data")
    with FakeLLMServer() as server:
        server.add(tool("developer__shell", command=COMMAND), "looked")
        result = gosling(
            # No sandbox: the redactor is the only layer between the secrets and the artifacts.
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
            env=gosling_env(**ENV_SECRETS),
        )
        sent = b"".join(repr(r.body).encode() for r in server.model_requests())
    assert result.returncode == 0, result.stderr
    tool_output = sent.decode()
    assert "Server=db;Database=app" in tool_output  # the output reached the model
    session_id = next(s.id for s in reader.list_sessions())
    reader.close()
    exports = {}
    for fmt in ("jsonl", "markdown"):
        out = tmp_path / f"export.{fmt}"
        done = gosling(["sessions", "export", session_id, "--format", fmt, "-o", str(out)], repo)
        assert done.returncode == 0, done.stderr
        exports[fmt] = out.read_bytes()
    home = _isolated_home
    artifacts = {
        "model requests": sent,
        "sessions.db": (home / "data" / "sessions.db").read_bytes(),
        "export.jsonl": exports["jsonl"],
        "export.markdown": exports["markdown"],
        "stdout": result.stdout.encode(),
        "stderr": result.stderr.encode(),
    }
    wal = home / "data" / "sessions.db-wal"
    if wal.exists():
        artifacts["sessions.db-wal"] = wal.read_bytes()
    found = {name: leaks(data) for name, data in artifacts.items() if leaks(data)}
    assert found == {}
    for marker in ("MYSQL_PWD", "GLPAT", "gitlab-token", "google-api-key", "jwt"):
        assert f"[REDACTED:{marker}]" in tool_output, marker
