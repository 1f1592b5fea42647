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
    ],
)
def test_credential_names_are_recognised(name: str) -> None:
    assert is_credential_env(name, "some-value-123")


@pytest.mark.parametrize("name", ["PATH", "HOME", "LANG", "TERM", "EDITOR", "DATABASE_URL"])
def test_ordinary_names_are_not_credentials(name: str) -> None:
    assert not is_credential_env(name, "/usr/bin:/bin")


def test_url_with_password_is_a_credential_whatever_its_name() -> None:
    env = {
        "DATABASE_URL": "postgres://app:hunter2hunter2@db.internal:5432/app",
        "PUBLIC_URL": "https://example.test/path@x",
        "MIRROR_URL": "https://user@example.test/",
    }
    assert credential_env(env) == {"DATABASE_URL": env["DATABASE_URL"]}
