"""MCP servers declared in Claude Code's JSON format (`--mcp-config FILE`, a project's
`.mcp.json`):

    {"mcpServers": {"git": {"command": "uvx", "args": ["mcp-server-git"], "env": {...}},
                    "docs": {"type": "http", "url": "https://...", "headers": {...}}}}

`type` may be `stdio` (the default when a command is given), `http` or `streamable-http`;
`${VAR}` and `${VAR:-default}` in strings expand from the environment, as in Claude Code
(`check_mcp_json` checks a file with the variables that are not set now left empty).
SSE-only servers are refused with a message, since gosling speaks streamable HTTP.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from gosling.agent.tools.extension_config import ExtensionConfig, ExtensionConfigError

VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")
"""`${VAR}` or `${VAR:-default}` in a string of the file."""
_HTTP_TYPES = {"http", "streamable-http", "streamable_http"}


def _expand(value: str, environ: Mapping[str, str], where: str) -> str:
    def replace(match: re.Match[str]) -> str:
        name, default = match.group(1), match.group(2)
        if name in environ:
            return environ[name]
        if default is not None:
            return default
        if isinstance(environ, _UnsetIsEmpty):
            return ""
        raise ExtensionConfigError(f"{where}: ${{{name}}} is not set in the environment")

    return VARIABLE.sub(replace, value)


def _strings(value: Any, where: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ExtensionConfigError(f"{where}: expected a list of strings")
    return list(value)


def _string_map(value: Any, where: str) -> dict[str, str]:
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        raise ExtensionConfigError(f"{where}: expected an object of strings")
    return {str(k): v for k, v in value.items()}


def _server(name: str, spec: Any, path: Path, environ: Mapping[str, str]) -> ExtensionConfig:
    where = f"{path}: mcpServers.{name}"
    if not isinstance(spec, dict):
        raise ExtensionConfigError(f"{where}: expected an object")
    kind = str(spec.get("type") or ("stdio" if "command" in spec else "http")).lower()
    if kind == "sse":
        raise ExtensionConfigError(
            f"{where}: SSE servers are not supported; use the server's streamable HTTP endpoint"
        )
    if kind in _HTTP_TYPES:
        url = spec.get("url")
        if not isinstance(url, str):
            raise ExtensionConfigError(f"{where}: an http server needs a url")
        headers = _string_map(spec.get("headers", {}), f"{where}.headers")
        return ExtensionConfig(
            name=name,
            type="streamable_http",
            url=_expand(url, environ, where),
            headers={k: _expand(v, environ, where) for k, v in headers.items()},
        )
    if kind != "stdio":
        raise ExtensionConfigError(f"{where}: unknown type {kind!r}; use stdio or http")
    command = spec.get("command")
    if not isinstance(command, str) or not command:
        raise ExtensionConfigError(f"{where}: a stdio server needs a command")
    args = _strings(spec.get("args", []), f"{where}.args")
    env = _string_map(spec.get("env", {}), f"{where}.env")
    return ExtensionConfig(
        name=name,
        command=_expand(command, environ, where),
        args=tuple(_expand(a, environ, where) for a in args),
        env={k: _expand(v, environ, where) for k, v in env.items()},
    )


class _UnsetIsEmpty(dict[str, str]):
    """An environment in which a variable that is not set expands to nothing."""


def check_mcp_json(path: Path) -> list[ExtensionConfig]:
    """The servers `path` declares, for checking the file (`gosling trust`): a `${VAR}` not
    set now is no error (it may be set when gosling runs)."""
    return load_mcp_json(path, _UnsetIsEmpty(os.environ))


def load_mcp_json(path: Path, environ: Mapping[str, str] | None = None) -> list[ExtensionConfig]:
    """The servers `path` declares; ExtensionConfigError names the file and the entry."""
    environ = os.environ if environ is None else environ
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise ExtensionConfigError(f"{path}: cannot read MCP config: {exc}") from exc
    except json.JSONDecodeError as exc:
        raise ExtensionConfigError(
            f"{path}: not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})"
        ) from exc
    servers = data.get("mcpServers") if isinstance(data, dict) else None
    if not isinstance(servers, dict):
        raise ExtensionConfigError(f'{path}: expected {{"mcpServers": {{"name": {{...}}}}}}')
    return [_server(str(name), spec, path, environ) for name, spec in servers.items()]
