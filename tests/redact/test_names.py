from __future__ import annotations

import pytest

from gosling.redact import credential_env, is_credential_env


@pytest.mark.parametrize(
    "name",
    [
        "ANTHROPIC_API_KEY",
        "AWS_SECRET_ACCESS_KEY",
        "STRIPE_SECRET_KEY",
        "SLACK_WEBHOOK_URL",
        "GITHUB_TOKEN",
        "PGPASSWORD",
        "MYSQL_PASSWD",
        "GOOGLE_APPLICATION_CREDENTIALS",
        "AUTH_HEADER",
        "apikey",
        "MYSQL_PWD",
        "DB_PASS",
        "SMTP_PASS",
        "KEYSTORE_PASS",
        "GPG_PASSPHRASE",
        "CI_JOB_JWT",
        "SENTRY_DSN",
        "SESSION_COOKIE",
        "AIRTABLE_PAT",
        "GLPAT",
        "AWS_CREDENTIALS",
        "SSH_PRIVATE",
        "dbPass",
    ],
)
def test_credential_names_are_recognised(name: str) -> None:
    assert is_credential_env(name, "some-value-123")


@pytest.mark.parametrize(
    "name",
    [
        "PATH",
        "PYTHONPATH",
        "HOME",
        "LANG",
        "TERM",
        "EDITOR",
        "DATABASE_URL",
        "PWD",
        "OLDPWD",
        "NO_PROXY_BYPASS",
        "PATCH_LEVEL",
    ],
)
def test_ordinary_names_are_not_credentials(name: str) -> None:
    assert not is_credential_env(name, "/usr/bin:/bin")


def test_url_with_password_is_a_credential_whatever_its_name() -> None:
    env = {
        "DATABASE_URL": "postgres://app:hunter2hunter2@db.internal:5432/app",
        "PUBLIC_URL": "https://example.test/path@x",
        "MIRROR_URL": "https://user@example.test/",
    }
    assert credential_env(env) == {"DATABASE_URL": env["DATABASE_URL"]}


@pytest.mark.parametrize(
    "value",
    [
        "jdbc:mysql://db:3306/app?user=app&password=hunter2hunter2",
        "Server=db;Database=app;Password=hunter2hunter2;",
        "host=db user=app password=hunter2hunter2",
        "jdbc:oracle:thin:scott/hunter2hunter2@db:1521/orcl",
    ],
)
def test_connection_string_with_a_password_is_a_credential_whatever_its_name(
    value: str,
) -> None:
    assert is_credential_env("JDBC_URL", value)
