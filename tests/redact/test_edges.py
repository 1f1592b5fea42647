"""The redactor at its edges: the shortest secret it replaces, user names that are keys,
malformed connection strings, values made of blanks, secrets found and encoded in one text,
base64 output wrapped over lines, and numbers in JSON. Each case is a way a secret could leak
or a text could be mangled."""

from __future__ import annotations

import base64

from gosling.redact import Redactor
from gosling.redact.encodings import base64_cores, unwrapped_blocks
from gosling.redact.redactor import MIN_SECRET_LENGTH

EIGHT = "q7Xk2Lm9"
SEVEN = EIGHT[:7]


def test_the_shortest_secret_replaced_has_eight_characters() -> None:
    assert len(EIGHT) == MIN_SECRET_LENGTH == 8
    assert Redactor({"DB_PASSWORD": EIGHT}).redact(f"pw {EIGHT} ok") == (
        "pw [REDACTED:DB_PASSWORD] ok"
    )
    # seven characters would match ordinary words: left alone
    assert Redactor({"DB_PASSWORD": SEVEN}).redact(f"pw {SEVEN} ok") == f"pw {SEVEN} ok"


def test_a_dsn_user_name_of_eight_characters_is_a_key_and_a_shorter_one_is_not() -> None:
    dsn = Redactor({"SENTRY_DSN": f"https://{EIGHT}@o1.ingest.sentry.io/42"})
    assert dsn.redact(f"key {EIGHT} sent") == "key [REDACTED:SENTRY_DSN] sent"
    key = "3f9a1c5e7b2d4f6a8c0e1b3d5f7a9c2e"  # what a real DSN's user part looks like
    real = Redactor({"SENTRY_DSN": f"https://{key}@o450.ingest.sentry.io/4"})
    assert real.redact(f"dsn key {key}") == "dsn key [REDACTED:SENTRY_DSN]"
    short = Redactor({"SENTRY_DSN": f"https://{SEVEN}@o1.ingest.sentry.io/42"})
    assert short.redact(f"user {SEVEN} here") == f"user {SEVEN} here"


def test_a_jdbc_password_printed_on_its_own_is_replaced() -> None:
    redactor = Redactor({"JDBC_URL": "jdbc:mysql://db:3306/app?user=app&password=Zq81mWx0pR"})
    assert redactor.redact("connecting with Zq81mWx0pR") == ("connecting with [REDACTED:JDBC_URL]")


def test_a_malformed_connection_url_still_has_its_value_redacted() -> None:
    broken = "postgres://app:Zq81mWx0pR@[::1"  # urlsplit refuses it: an unclosed IPv6 host
    redactor = Redactor({"DATABASE_URL": broken})
    assert redactor.redact(f"url={broken}") == "url=[REDACTED:DATABASE_URL]"


def test_a_credential_made_of_blanks_does_not_eat_the_indentation() -> None:
    code = "def f():\n        return 1\n"
    assert Redactor({"API_TOKEN": " " * 12}).redact(code) == code
    assert Redactor({"API_TOKEN": "\t" * 8}).redact("a\t\t\t\t\t\t\t\tb") == "a\t\t\t\t\t\t\t\tb"


def test_a_redactor_over_a_given_environment_follows_its_changes() -> None:
    environ = {"HOME": "/home/u"}
    redactor = Redactor(environ)
    assert redactor.redact("token Zq81mWx0pRk4") == "token Zq81mWx0pRk4"
    environ["SERVICE_TOKEN"] = "Zq81mWx0pRk4"
    assert redactor.redact("token Zq81mWx0pRk4") == "token [REDACTED:SERVICE_TOKEN]"


def test_a_key_found_in_a_text_is_replaced_in_its_encoded_forms_in_that_same_text() -> None:
    key = "ghp_" + "Zq81mWx0pRk4" * 3
    encoded = base64.b64encode(key.encode()).decode()
    redacted = Redactor({}).redact(f"token {key}\nas base64 {encoded}\n")
    assert key not in redacted and encoded[4:-4] not in redacted
    assert redacted.count("[REDACTED:github-token]") == 2


def test_a_labelled_password_of_eight_characters_is_remembered_for_later_texts() -> None:
    redactor = Redactor({})
    assert "Zq81mWx0" not in redactor.redact("jdbc:postgresql://db/app?password=Zq81mWx0")
    assert redactor.redact("echo Zq81mWx0") == "echo [REDACTED:connection-password]"


def _wrapped_redaction_oracle(text: str, secrets: dict[str, str]) -> str:
    """`text` with exactly the characters of each secret's base64 core replaced by its
    marker, the line breaks between them included (what a reader of `base64 file` output
    must get)."""
    spans: list[tuple[int, int, str]] = []
    for joined, positions in unwrapped_blocks(text):
        for name, secret in secrets.items():
            core = max(
                (c for c in base64_cores(secret.encode()) if c in joined), key=len, default=None
            )
            assert core is not None, f"no core of {name} in the text"
            at = joined.find(core)
            spans.append((positions[at], positions[at + len(core) - 1] + 1, name))
    for start, end, name in sorted(spans, reverse=True):
        text = text[:start] + f"[REDACTED:{name}]" + text[end:]
    return text


def test_a_secret_at_the_start_of_wrapped_base64_is_cut_out_exactly() -> None:
    secret = "Zq81mWx0pRk4" * 5  # 60 bytes: 80 base64 characters, over the 76-column wrap
    text = "$ base64 .env\n" + base64.encodebytes(secret.encode() + b"\nDEBUG=1\n").decode()
    redacted = Redactor({"API_TOKEN": secret}).redact(text)
    assert redacted == _wrapped_redaction_oracle(text, {"API_TOKEN": secret})
    assert redacted.startswith("$ base64 .env\n[REDACTED:API_TOKEN]")


def test_two_wrapped_secrets_in_one_block_are_both_cut_out_exactly() -> None:
    first, second = "Zq81mWx0pRk4" * 5, "Hn27cVb5tYu3" * 5
    data = b"A=" + first.encode() + b"\nB=" + second.encode() + b"\n"
    text = base64.encodebytes(data).decode()
    redacted = Redactor({"FIRST_TOKEN": first, "SECOND_TOKEN": second}).redact(text)
    secrets = {"FIRST_TOKEN": first, "SECOND_TOKEN": second}
    assert redacted == _wrapped_redaction_oracle(text, secrets)
    assert "[REDACTED:FIRST_TOKEN]" in redacted and "[REDACTED:SECOND_TOKEN]" in redacted


def test_numbers_in_a_json_value_stay_numbers_unless_they_are_secrets() -> None:
    redactor = Redactor({"DB_PASSWORD": "73310925"})
    value = {"port": 5432, "ratio": 0.5, "pin": 73310925, "ok": True}
    assert redactor.redact_value(value) == {
        "port": 5432,
        "ratio": 0.5,
        "pin": "[REDACTED:DB_PASSWORD]",
        "ok": True,
    }


def test_a_url_password_printed_on_its_own_is_replaced() -> None:
    redactor = Redactor({"DATABASE_URL": "postgres://app:Zq81mWx0pR@db:5432/app"})
    assert redactor.redact("PGPASSWORD=Zq81mWx0pR psql") == (
        "PGPASSWORD=[REDACTED:DATABASE_URL] psql"
    )


def test_the_latest_64_keys_found_are_remembered_in_encoded_form_and_older_ones_forgotten() -> None:
    redactor = Redactor({})
    keys = [f"ghp_{n:02d}" + "Zq81mWx0pRk4Hn27cVb5tYu3Lm9Q" + f"{n:06d}" for n in range(65)]

    def encoded(key: str) -> str:
        return base64.b64encode(key.encode()).decode()

    for key in keys[:64]:
        assert key not in redactor.redact(f"found {key}")
    assert encoded(keys[0]) not in redactor.redact(f"later {encoded(keys[0])}")  # all 64 kept
    redactor.redact(f"found {keys[64]}")
    assert encoded(keys[0]) in redactor.redact(f"later {encoded(keys[0])}")  # the oldest went
    assert encoded(keys[1]) not in redactor.redact(f"later {encoded(keys[1])}")


def test_a_key_found_in_a_text_is_replaced_where_that_text_wraps_its_base64() -> None:
    key = "ghp_" + "Zq81mWx0pRk4Hn27cVb5tYu3Lm9QwE6r" + "AbCd"
    wrapped = base64.encodebytes(b"#" * 50 + key.encode() + b"\n").decode()
    redacted = Redactor({}).redact(f"{key}\n{wrapped}")
    assert redacted == _wrapped_redaction_oracle(
        f"[REDACTED:github-token]\n{wrapped}", {"github-token": key}
    )


def test_two_secrets_side_by_side_in_wrapped_base64_are_both_cut_out() -> None:
    first, second = "Zq81mWx0pRk4" * 5, "Hn27cVb5tYu3" * 5  # 60 bytes each: cores that touch
    text = base64.encodebytes((first + second).encode()).decode()
    secrets = {"FIRST_TOKEN": first, "SECOND_TOKEN": second}
    redacted = Redactor(secrets).redact(text)
    assert redacted == _wrapped_redaction_oracle(text, secrets)


def test_of_two_keys_found_together_the_longer_encoded_form_goes_whole() -> None:
    """A password found by one format is a prefix of a longer one found by another: the
    longer's base64 holds the shorter's, so the longer must be replaced first, or its tail
    stays readable."""
    short, long = "Zq81mWx0", "Zq81mWx0pRk4Hn27"
    encoded = base64.b64encode(long.encode()).decode()
    for text in (  # whichever format finds the longer one first
        f"a?password={short}; postgres://u:{long}@db/app {encoded}",
        f"postgres://u:{short}@db/app a?password={long}; {encoded}",
    ):
        redacted = Redactor({}).redact(text)
        assert encoded[8:16] not in redacted and long not in redacted, redacted


def test_a_private_key_of_4096_characters_is_also_caught_base64_encoded_later() -> None:
    head, tail = "-----BEGIN PRIVATE KEY-----\n", "\n-----END PRIVATE KEY-----"
    body = ("MIIEvQIBADANBgkqhkiG9w0BAQEFAASC" * 200)[: 4096 - len(head) - len(tail)]
    pem = head + body + tail
    assert len(pem) == 4096
    redactor = Redactor({})
    assert redactor.redact(pem) == "[REDACTED:private-key]"
    encoded = base64.b64encode(pem.encode()).decode()
    assert encoded[100:200] not in redactor.redact(f"cat key | base64\n{encoded}")
