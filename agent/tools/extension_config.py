"""How an MCP extension is declared: `ExtensionConfig` and the `--with-extension` syntax.

The config loader builds `ExtensionConfig` values from the config file; the CLI builds them
with `parse_extension_spec` from strings like `"git:GIT_PAGER=cat uvx mcp-server-git"`.
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

EXTENSION_NAME_PATTERN = re.compile(r"^[a-zA-Z0-9-]+(?:_[a-zA-Z0-9-]+)*$")
"""Letters, digits, `-` and single `_`: a double underscore would blur `<ext>__<tool>`."""

DEFAULT_TOOL_TIMEOUT_SECS = 300.0
DEFAULT_STARTUP_TIMEOUT_SECS = 30.0

_ENV_ASSIGNMENT = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)=(.*)$", re.DOTALL)
_NAME_PREFIX = re.compile(r"^([a-zA-Z0-9_-]+):(.*)$", re.DOTALL)
_URL = re.compile(r"^https?://", re.IGNORECASE)


class ExtensionConfigError(ValueError):
    """An extension declaration that cannot work; the message says how to fix it."""


@dataclass(frozen=True)
class ExtensionConfig:
    """One MCP server to connect to at session start."""

    name: str
    """Prefix of its tools as the model sees them: `<name>__<tool>`."""
    type: Literal["stdio", "streamable_http"] = "stdio"
    command: str | None = None
    """stdio: the program that runs the server."""
    args: tuple[str, ...] = ()
    """stdio: its arguments."""
    env: Mapping[str, str] = field(default_factory=dict)
    """stdio: variables added to the server's minimal default environment (HOME, PATH, ...).
    Provider API keys are not passed unless listed here."""
    cwd: str | None = None
    """stdio: the server's working directory; None uses the session's working dir."""
    url: str | None = None
    """streamable_http: the endpoint, e.g. `http://localhost:8000/mcp`."""
    headers: Mapping[str, str] = field(default_factory=dict)
    """streamable_http: sent with every request (for example an Authorization header)."""
    timeout_secs: float = DEFAULT_TOOL_TIMEOUT_SECS
    """Longest a single tool call may take before it fails with a timeout error."""
    startup_timeout_secs: float = DEFAULT_STARTUP_TIMEOUT_SECS
    """Longest the server may take to start and list its tools."""
    network: bool = True
    """stdio: whether the server may use the network when tool processes are sandboxed."""
    available_tools: tuple[str, ...] = ()
    """When non-empty, only these tools (server-side names) are offered to the model."""
    enabled: bool = True

    def __post_init__(self) -> None:
        if not EXTENSION_NAME_PATTERN.match(self.name) or len(self.name) > 40:
            raise ExtensionConfigError(
                f"extension name {self.name!r} is not usable: use up to 40 letters, digits, "
                "'-' or single '_' (for example 'git' or 'my-server')"
            )
        if self.type == "stdio" and not self.command:
            raise ExtensionConfigError(f"extension {self.name!r}: a stdio server needs a command")
        if self.type == "streamable_http" and not (self.url and _URL.match(self.url)):
            raise ExtensionConfigError(
                f"extension {self.name!r}: a streamable_http server needs an http(s):// url"
            )
        if self.timeout_secs <= 0 or self.startup_timeout_secs <= 0:
            raise ExtensionConfigError(f"extension {self.name!r}: timeouts must be positive")

    def describe(self) -> str:
        """A short human description: the command line or the URL."""
        if self.type == "streamable_http":
            return str(self.url)
        return shlex.join([str(self.command), *self.args])


def parse_extension_spec(spec: str, *, timeout_secs: float | None = None) -> ExtensionConfig:
    """Parse a `--with-extension` value: `[name:][ENV=value ...] command [args ...]`.

    Examples: `"time:uvx mcp-server-time"`, `"git:GIT_PAGER=cat python -m mcp_server_git"`,
    `"docs:https://example.com/mcp"` (a streamable HTTP server). Without `name:` the name is
    the command's file name (goose's convention), which is why naming it is recommended.
    """
    text = spec.strip()
    if not text:
        raise ExtensionConfigError("empty --with-extension value; expected '[name:]command args'")
    name: str | None = None
    prefix = _NAME_PREFIX.match(text)
    if prefix and not _URL.match(text) and not prefix.group(2).startswith("//"):
        name, text = prefix.group(1), prefix.group(2).strip()
    try:
        words = shlex.split(text)
    except ValueError as exc:
        raise ExtensionConfigError(f"cannot parse extension {spec!r}: {exc}") from None
    env: dict[str, str] = {}
    while words and (assignment := _ENV_ASSIGNMENT.match(words[0])):
        env[assignment.group(1)] = assignment.group(2)
        words.pop(0)
    if not words:
        raise ExtensionConfigError(f"extension {spec!r} has no command; expected '[name:]command'")
    timeout = DEFAULT_TOOL_TIMEOUT_SECS if timeout_secs is None else timeout_secs
    if _URL.match(words[0]):
        if len(words) > 1 or env:
            raise ExtensionConfigError(f"extension {spec!r}: a URL takes no arguments or env")
        return ExtensionConfig(
            name=name or _name_from_url(words[0]),
            type="streamable_http",
            url=words[0],
            timeout_secs=timeout,
        )
    return ExtensionConfig(
        name=name or _name_from_command(words[0]),
        command=words[0],
        args=tuple(words[1:]),
        env=env,
        timeout_secs=timeout,
    )


def _name_from_command(command: str) -> str:
    base = os.path.basename(command).removesuffix(".exe")
    return _sanitize(base) or "extension"


def _name_from_url(url: str) -> str:
    host = re.sub(r"^https?://", "", url, flags=re.IGNORECASE).split("/")[0].split(":")[0]
    return _sanitize(host.split(".")[0]) or "http"


def _sanitize(text: str) -> str:
    cleaned = re.sub(r"_+", "_", re.sub(r"[^a-zA-Z0-9_-]", "-", text)).strip("_-")
    return cleaned[:40]
