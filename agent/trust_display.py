"""What trusting a folder would run and send, as `gosling trust` and the session's question
show it.

For each MCP server (the project config's `[[extensions]]`, `.mcp.json`'s `mcpServers`): the
exact command and arguments, or the URL, and the `env` and `headers` it gets. Every
`${VAR}` / `${VAR:-default}` is shown as `${VAR}`, the variable's name, never its default
(which is not what is sent when the variable is set) or its value; one whose variable holds a
credential (`redact.is_credential_env`) is marked: trusting the folder hands that secret to a
program or a URL the repository chose. Then each hook command (the project config's `hooks`,
`.claude/settings.json`'s) and the repository files those commands run by path, which are
hashed with the trust (`agent.trust_scripts`).
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from gosling.agent.tools.mcp_json import VARIABLE
from gosling.redact import is_credential_env

NOT_SHOWN = ("extensions", "hooks")
"""Config keys shown in full by this module instead of as one JSON value."""


def as_written(value: str) -> str:
    """`value` with each `${VAR:-default}` shown as `${VAR}`."""
    return VARIABLE.sub(lambda m: "${" + m.group(1) + "}", value)


def secrets_in(values: Iterable[str], environ: Mapping[str, str] | None = None) -> list[str]:
    """The credential variables (`${VAR}`) the strings `values` would carry, in order."""
    environ = os.environ if environ is None else environ
    found: dict[str, None] = {}
    for value in values:
        for match in VARIABLE.finditer(value):
            name = match.group(1)
            if is_credential_env(name, environ.get(name, "")):
                found.setdefault(name)
    return list(found)


def describe_server(name: str, spec: Mapping[str, Any], *, expands: bool) -> list[str]:
    """Lines for one server declared as `spec` (raw, as in the file). `expands`: the file
    expands `${VAR}` (`.mcp.json`); a config extension's strings are sent as written."""
    url = spec.get("url")
    headers = _strings(spec.get("headers"))
    env = _strings(spec.get("env"))
    if isinstance(url, str) and not spec.get("command"):
        host = urlsplit(as_written(url)).hostname or url
        lines = [f"{name} (http): {as_written(url)}"]
        lines += [f"    header {k}: {as_written(v)}" for k, v in headers.items()]
        sent = [url, *headers.values()]
        where = f"to {host}"
    else:
        command = spec.get("command")
        args = [a for a in spec.get("args", []) if isinstance(a, str)]
        words = [as_written(str(command)), *(as_written(a) for a in args)]
        lines = [f"{name} (stdio): {shlex.join(words)}"]
        lines += [f"    env {k}={as_written(v)}" for k, v in env.items()]
        sent = [str(command), *args, *env.values()]
        where = "to this command"
    secrets = secrets_in(sent) if expands else []
    if secrets:
        lines.append(f"    ! sends your secret {', '.join(secrets)} {where}")
    return lines


def describe_servers(servers: Mapping[str, Any], *, expands: bool) -> list[str]:
    lines = []
    for name, spec in servers.items():
        if isinstance(spec, Mapping):
            lines += describe_server(str(name), spec, expands=expands)
    return lines


def config_extensions(data: Mapping[str, Any]) -> dict[str, Any]:
    """The project config's `[[extensions]]` by name."""
    found = data.get("extensions")
    return {
        str(ext.get("name", f"#{i}")): ext
        for i, ext in enumerate(found if isinstance(found, list) else [])
        if isinstance(ext, Mapping)
    }


def describe_hooks(hooks: Iterable[Any], root: Path) -> list[str]:
    """One line per hook command (`ConfiguredHook`s), with the file it came from."""
    lines = []
    for hook in hooks:
        matcher = f" [{hook.matcher}]" if hook.matcher not in ("", "*") else ""
        source = _relative(root, hook.source)
        lines.append(f"{hook.event}{matcher}: {hook.command}  (from {source})")
    return lines


def _strings(value: Any) -> dict[str, str]:
    if not isinstance(value, Mapping):
        return {}
    return {str(k): v for k, v in value.items() if isinstance(v, str)}


def _relative(root: Path, source: str) -> str:
    path = Path(source)
    return str(path.relative_to(root)) if path.is_relative_to(root) else source


def trust_lines(root: Path, *, settings: bool = True) -> list[str]:
    """Everything trusting `root` would apply (`settings`: with the config's other
    settings), run and send; ValueError names a project file that cannot be used."""
    from gosling.agent.config import ConfigError, read_config_file
    from gosling.agent.hooks.config import flatten, read_claude_settings, validate_table
    from gosling.agent.tools.mcp_json import check_mcp_json
    from gosling.agent.trust import (
        PROJECT_CLAUDE_SETTINGS,
        PROJECT_MCP_FILE,
        gated_files,
        project_files,
    )
    from gosling.agent.untrusted_config import describe_values

    lines: list[str] = []
    hooks: list[Any] = []
    config = root / ".gosling" / "config.toml"
    if config.is_file():
        try:
            data = read_config_file(config)
            if "hooks" in data:
                hooks += flatten(validate_table(data["hooks"], str(config)), str(config))
        except ConfigError as exc:
            raise ValueError(str(exc)) from exc
        if settings:
            values = describe_values(data, [k for k in data if k not in NOT_SHOWN])
            lines.append(f"{config} sets:")
            lines += [f"  {line}" for line in values or ["(no other setting)"]]
        servers = config_extensions(data)
        if servers:
            lines.append(f"{config} starts these MCP servers:")
            lines += [f"  {line}" for line in describe_servers(servers, expands=False)]
    mcp = root / PROJECT_MCP_FILE
    if mcp.is_file():
        check_mcp_json(mcp)  # ExtensionConfigError (a ValueError) names the file
        raw = _json(mcp)
        lines.append(f"{mcp} starts these MCP servers:")
        lines += [f"  {line}" for line in describe_servers(raw, expands=True) or ["(none)"]]
    claude = root / PROJECT_CLAUDE_SETTINGS
    claude_note = ""
    if claude.is_file():
        found, _ = read_claude_settings(claude, str(claude))
        hooks += found
        if found and not _names_claude_settings(root):
            claude_note = (
                f"  (the hooks of {PROJECT_CLAUDE_SETTINGS} run only when hook_settings "
                f'names it: hook_settings = ["{PROJECT_CLAUDE_SETTINGS}"])'
            )
    if hooks:
        lines.append("these hook commands run at session events:")
        lines += [f"  {line}" for line in describe_hooks(hooks, root)]
        if claude_note:
            lines.append(claude_note)
    scripts = project_files(root)[len(gated_files(root)) :]
    if scripts:
        lines.append("files of the repository these commands run, hashed with the trust:")
        lines += [f"  {path.relative_to(root)}" for path in scripts]
    return lines


def _json(path: Path) -> dict[str, Any]:
    import json

    data = json.loads(path.read_text(encoding="utf-8"))
    servers = data.get("mcpServers") if isinstance(data, dict) else None
    return servers if isinstance(servers, dict) else {}


def _names_claude_settings(root: Path) -> bool:
    """Whether the settings that apply once trusted run `.claude/settings.json`'s hooks."""
    from gosling.agent.config import ConfigError, load_settings
    from gosling.agent.trust import PROJECT_CLAUDE_SETTINGS

    try:
        names = load_settings(root, trust_project=True).settings.hook_settings
    except (ConfigError, ValueError, OSError):
        return False
    return any(Path(name) == PROJECT_CLAUDE_SETTINGS for name in names)
