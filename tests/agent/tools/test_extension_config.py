"""`--with-extension` strings and `ExtensionConfig` validation."""

from __future__ import annotations

import pytest

from gosling.agent.tools import ExtensionConfig, ExtensionConfigError, parse_extension_spec


def test_name_env_command_and_args() -> None:
    config = parse_extension_spec("git:GIT_PAGER=cat TOKEN='a b' uvx mcp-server-git --repository .")
    assert config == ExtensionConfig(
        name="git",
        command="uvx",
        args=("mcp-server-git", "--repository", "."),
        env={"GIT_PAGER": "cat", "TOKEN": "a b"},
    )


def test_without_a_name_the_command_names_the_extension() -> None:
    config = parse_extension_spec("/usr/local/bin/mcp-server-time --local-timezone UTC")
    assert config.name == "mcp-server-time"
    assert config.command == "/usr/local/bin/mcp-server-time"
    assert config.args == ("--local-timezone", "UTC")


def test_urls_declare_streamable_http_servers() -> None:
    named = parse_extension_spec("docs:https://example.com/mcp", timeout_secs=20)
    assert (named.name, named.type, named.url, named.timeout_secs) == (
        "docs",
        "streamable_http",
        "https://example.com/mcp",
        20,
    )
    unnamed = parse_extension_spec("http://localhost:8000/mcp")
    assert (unnamed.name, unnamed.url) == ("localhost", "http://localhost:8000/mcp")


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("", "empty --with-extension value"),
        ("x:FOO=1", "has no command"),
        ("bad__name:cmd", "is not usable"),
        ("x:cmd 'unclosed", "cannot parse extension"),
        ("x:https://a.example/mcp extra", "a URL takes no arguments"),
    ],
)
def test_bad_specs_say_what_to_fix(spec: str, message: str) -> None:
    with pytest.raises(ExtensionConfigError, match=message):
        parse_extension_spec(spec)


def test_configs_are_validated() -> None:
    with pytest.raises(ExtensionConfigError, match="needs a command"):
        ExtensionConfig(name="x")
    with pytest.raises(ExtensionConfigError, match="needs an http"):
        ExtensionConfig(name="x", type="streamable_http", url="ftp://x")
    with pytest.raises(ExtensionConfigError, match="timeouts must be positive"):
        ExtensionConfig(name="x", command="y", timeout_secs=0)
