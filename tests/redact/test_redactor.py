"""The one redactor: environment credentials and well-known key formats, wherever they are."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gosling.redact import Redactor, redact

FORMATS = [
    ("sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123", "anthropic-key"),
    ("sk-proj-abcdefghijklmnopqrstuvwxyz0123", "openai-key"),
    ("sk-abcdefghijklmnopqrstuvwxyz0123", "openai-key"),
    ("AKIAIOSFODNN7EXAMPLE", "aws-access-key-id"),
    ("ASIAIOSFODNN7EXAMPLE", "aws-access-key-id"),
    ("ghp_" + "a1" * 18, "github-token"),
    ("gho_" + "b2" * 18, "github-token"),
    ("ghs_" + "c3" * 18, "github-token"),
    ("github_pat_11ABCDEFG0123456789_abcdefghijklmnop", "github-token"),
    ("xoxb-1234567890-abcdefghijkl", "slack-token"),
    ("xoxp-1234567890-abcdefghijkl", "slack-token"),
    ("https://hooks.slack.com/services/T000/B000/XXXXXXXXXXXX", "slack-webhook"),
    ("sk_live_abcdefghij0123456789", "stripe-key"),
    ("rk_live_abcdefghij0123456789", "stripe-key"),
    ("sk_test_abcdefghij0123456789", "stripe-key"),
    ("glpat-AbCdEfGhIjKlMnOpQrSt", "gitlab-token"),
    ("glrt-t1_AbCdEfGhIjKlMnOpQrSt", "gitlab-token"),
    ("gldt-AbCdEfGhIjKlMnOpQrSt", "gitlab-token"),
    ("AIzaSyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q", "google-api-key"),
    (
        "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJjaS1qb2IifQ.c2lnbmF0dXJlLW9mLXRoZS10b2tlbg",
        "jwt",
    ),
]


@pytest.mark.parametrize(("secret", "kind"), FORMATS)
def test_known_key_formats_are_replaced_wherever_they_appear(secret: str, kind: str) -> None:
    redactor = Redactor({})
    for text in (secret, f"export X={secret}\n", f'{{"k": "{secret}"}}', f"({secret})"):
        out = redactor.redact(text)
        assert secret not in out
        assert f"[REDACTED:{kind}]" in out


def test_aws_secret_next_to_its_key_id_and_labelled() -> None:
    secret = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
    redactor = Redactor({})
    for text in (
        f"AKIAIOSFODNN7EXAMPLE,{secret}",
        f"aws_secret_access_key = {secret}",
        f'"SecretAccessKey": "{secret}"',
    ):
        out = redactor.redact(text)
        assert secret not in out and "[REDACTED:aws-secret-key]" in out, out


def test_pem_private_key_blocks_plain_and_json_escaped() -> None:
    block = (
        "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXk\nAAAA\n"
        "-----END OPENSSH PRIVATE KEY-----"
    )
    redactor = Redactor({})
    assert redactor.redact(f"key:\n{block}\nafter") == "key:\n[REDACTED:private-key]\nafter"
    as_json = json.dumps({"out": block})
    assert json.loads(redactor.redact_json(as_json)) == {"out": "[REDACTED:private-key]"}


def test_url_passwords_and_bearer_tokens() -> None:
    redactor = Redactor({})
    assert (
        redactor.redact("clone https://me:s3cretpass@git.example.com/r.git")
        == "clone https://me:[REDACTED:url-password]@git.example.com/r.git"
    )
    assert redactor.redact("Authorization: Bearer abcdefghijklmnop1234") == (
        "Authorization: Bearer [REDACTED:bearer-token]"
    )


def test_credential_environment_values_are_replaced_by_their_names() -> None:
    env = {
        "MY_SERVICE_TOKEN": "tok-12345678",
        "DATABASE_URL": "postgres://app:pw-9876543@db/app",
        "HOME": "/home/someone",
        "SHORT_SECRET": "abc",
    }
    redactor = Redactor(env)
    assert redactor.redact("t=tok-12345678") == "t=[REDACTED:MY_SERVICE_TOKEN]"
    assert redactor.redact("postgres://app:pw-9876543@db/app") == "[REDACTED:DATABASE_URL]"
    assert (
        redactor.redact("password alone: pw-9876543") == "password alone: [REDACTED:DATABASE_URL]"
    )
    assert redactor.redact("/home/someone abc") == "/home/someone abc"


def test_json_escaped_values_are_found_and_json_stays_valid() -> None:
    value = 'pa"ss\\word-123'
    redactor = Redactor({"APP_PASSWORD": value})
    text = json.dumps({"out": f"x {value} y"})
    assert json.loads(redactor.redact_json(text)) == {"out": "x [REDACTED:APP_PASSWORD] y"}


def test_the_process_redactor_follows_environment_changes(monkeypatch: pytest.MonkeyPatch) -> None:
    assert redact("value-abcdefgh") == "value-abcdefgh"
    monkeypatch.setenv("LATE_API_KEY", "value-abcdefgh")
    assert redact("value-abcdefgh") == "[REDACTED:LATE_API_KEY]"
    monkeypatch.delenv("LATE_API_KEY")
    assert redact("value-abcdefgh") == "value-abcdefgh"


@pytest.mark.parametrize(
    "text",
    [
        "commit 3f786850e387550fdab836ed7e6dc881de23001b",
        "see https://example.com:8080/path/to@x and http://a.b/c:d@e",
        "task-abcdefghijklmnopqrstuvwxyz risk-abcdefghijklmnopqrstuvwxyz",
        "def test_live_test_(): pass",
        "ordinary output\nwith lines\n",
    ],
)
def test_ordinary_text_is_left_alone(text: str) -> None:
    assert Redactor({}).redact(text) == text


@given(st.text(max_size=200))
def test_redacting_json_always_gives_valid_json(noise: str) -> None:
    """A secret can sit where plain-text replacement breaks the document (a numeric value, a
    key): the stored tool call must still load, and hold no secret."""
    secret = "9876543210123"
    redactor = Redactor({"X_TOKEN": "tok\\en-123456", "PIN_SECRET": secret})
    doc = json.dumps(
        {
            "a": noise + "tok\\en-123456" + noise,
            "b": [noise, "sk-" + "a" * 24],
            "pin": int(secret),
            secret: noise,
        }
    )
    redacted = redactor.redact_json(doc)
    loaded = json.loads(redacted)
    assert secret not in redacted and "tok\\en-123456" not in json.dumps(loaded)
    assert loaded["pin"] == "[REDACTED:PIN_SECRET]"
    assert loaded["[REDACTED:PIN_SECRET]"] == redactor.redact(noise)


@pytest.mark.parametrize(
    "text",
    [
        "jdbc:mysql://db.internal:3306/app?user=app&password=Hunter2-conn",
        "jdbc:postgresql://db/app?password=Hunter2-conn&ssl=true",
        "Server=db;Database=app;User Id=app;Password=Hunter2-conn;",
        "Password=Hunter2-conn;Server=db",
        "Driver={ODBC};Server=db;Uid=app;Pwd=Hunter2-conn",
        "jdbc:oracle:thin:scott/Hunter2-conn@db.internal:1521/orcl",
        "https://deploy:Hunter2-conn@git.example.test/repo.git",
    ],
)
def test_connection_string_passwords_in_any_form(text: str) -> None:
    out = Redactor({}).redact(text)
    assert "Hunter2-conn" not in out and "[REDACTED:" in out, out


@pytest.mark.parametrize(
    "code",
    [
        "login(user, password=password)",
        'password = os.environ["DB_PASS"]',
        "cd /tmp && pwd",
        "PWD=/home/dev/project",
        "config.password = read_password();",
    ],
)
def test_code_that_names_a_password_is_left_alone(code: str) -> None:
    assert Redactor({}).redact(code) == code


def test_encoded_forms_of_an_environment_secret() -> None:
    import base64
    from urllib.parse import quote

    key = "s3cr3t/Value+with=odd&chars-0123"
    redactor = Redactor({"DB_PASS": key})
    line = f"export DB_PASS={key}\n".encode()
    for prefix in (b"", b"x", b"xy"):
        data = b"# ~/.bashrc\n" + prefix + line
        for encoded in (
            base64.b64encode(data),
            base64.urlsafe_b64encode(data),
            data.hex().encode(),
        ):
            out = redactor.redact(encoded.decode())
            assert "[REDACTED:DB_PASS]" in out
            assert base64.b64encode(key.encode())[4:-4].decode() not in out
    assert redactor.redact(f"?q={quote(key, safe='')}") == "?q=[REDACTED:DB_PASS]"


def test_wrapped_base64_output_is_matched_across_its_line_breaks() -> None:
    import base64
    import textwrap

    key = "glpat-Wr4pped0ver0Lines0Key"
    redactor = Redactor({"GLPAT": key})
    data = ("# shell setup\n" * 5 + f"export GLPAT={key}\n" + "alias ll='ls -l'\n" * 5).encode()
    for offset in range(76):
        wrapped = "\n".join(textwrap.wrap(base64.b64encode(b"." * offset + data).decode(), 76))
        out = redactor.redact(wrapped + "\n")
        assert "[REDACTED:GLPAT]" in out, offset
        joined = out.replace("\n", "")
        for core in (base64.b64encode(b"\0" * n + key.encode()).decode()[4:-4] for n in range(3)):
            assert core[4:] not in joined


def test_a_key_found_in_plain_text_is_then_matched_encoded() -> None:
    import base64

    token = "ghp_" + "Found0nce" * 4
    redactor = Redactor({})
    assert redactor.redact(f"token: {token}") == "token: [REDACTED:github-token]"
    encoded = base64.b64encode(f"x{token}y".encode()).decode()
    assert "[REDACTED:github-token]" in redactor.redact(encoded)
