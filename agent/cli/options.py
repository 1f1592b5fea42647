"""Options shared by `gosling run` and `gosling session`: which model, where, with what; which
session; extra instructions, tool rules and MCP servers for this run. Flags that users of other
agent CLIs already type (`-c`, `-r [ID]`, `--append-system-prompt`, `--allowed-tools`,
`--mcp-config`) mean here what they mean there."""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

if TYPE_CHECKING:
    from gosling.agent.runtime import RunExtras

F = TypeVar("F", bound=Callable[..., object])

MODES = ["auto", "approve", "smart_approve", "chat"]


def model_options(function: F) -> F:
    """--provider, --model, --base-url, --context-limit, --with-extension, --working-dir."""
    options = [
        click.option("--provider", help="Provider name (anthropic, openai, ollama, ...)."),
        click.option("-m", "--model", help="Model name."),
        click.option("--base-url", help="Base URL of the provider's API (proxies, local servers)."),
        click.option(
            "--context-limit", type=click.IntRange(min=1), help="Context window in tokens."
        ),
        click.option(
            "--with-extension",
            "extensions",
            multiple=True,
            metavar="SPEC",
            help="Add an MCP server: 'name:ENV=v command args' or a URL. Repeatable.",
        ),
        click.option(
            "-C",
            "--working-dir",
            "--cd",
            "working_dir",
            type=click.Path(file_okay=False, path_type=Path),
            default=None,
            help="Work in this directory instead of the current one.",
        ),
    ]
    for option in reversed(options):
        function = option(function)
    return function


def resume_options(function: F) -> F:
    """-c/--continue and -r/--resume [ID]."""
    options = [
        click.option(
            "-c",
            "--continue",
            "continue_latest",
            is_flag=True,
            help="Continue the latest session of this directory.",
        ),
        click.option(
            "-r",
            "--resume",
            "resume_id",
            is_flag=False,
            flag_value="",
            default=None,
            metavar="[ID]",
            help="Continue session ID (the latest of this directory without ID).",
        ),
    ]
    for option in reversed(options):
        function = option(function)
    return function


PICK_SESSION = "\0pick"
"""`-r` without an ID: a picker on a terminal, the latest session of the directory if not."""
_SESSION_ID = re.compile(r"\d{8}_\d+")


def resume_request(
    continue_latest: bool, resume_id: str | None
) -> tuple[str | None, tuple[str, ...]]:
    """Which session to continue (None: a new one; "": the latest of the working dir;
    PICK_SESSION: ask; else that id) and the prompt words `-r` took by mistake: in
    `gosling run -r "keep going"` the words are the prompt, not an ID."""
    words: tuple[str, ...] = ()
    if resume_id is not None and resume_id and not _SESSION_ID.fullmatch(resume_id.strip()):
        words, resume_id = (resume_id,), ""
    if resume_id == "":
        resume_id = PICK_SESSION
    if continue_latest and resume_id is not None:
        if resume_id != PICK_SESSION:
            raise click.UsageError("-c continues the latest session; drop it to resume an ID")
        resume_id = None
    return ("" if continue_latest else resume_id), words


def agent_options(function: F) -> F:
    """--append-system-prompt, --instructions, --allowed-tools, --disallowed-tools,
    --mcp-config."""
    options = [
        click.option(
            "--append-system-prompt",
            metavar="TEXT",
            help="Text added to the end of the system prompt for this run.",
        ),
        click.option(
            "--instructions",
            "instructions_file",
            type=click.Path(exists=True, dir_okay=False, path_type=Path),
            help="A file whose text is added to the end of the system prompt.",
        ),
        click.option(
            "--allowed-tools",
            multiple=True,
            metavar="RULES",
            help="Allow rules for this run, comma- or space-separated "
            "(e.g. 'developer__shell(git diff)' developer__view). Repeatable.",
        ),
        click.option(
            "--disallowed-tools",
            multiple=True,
            metavar="RULES",
            help="Deny rules for this run, same syntax. Repeatable.",
        ),
        click.option(
            "--mcp-config",
            "mcp_configs",
            multiple=True,
            type=click.Path(exists=True, dir_okay=False, path_type=Path),
            help="MCP servers from a JSON file in Claude Code's format "
            '({"mcpServers": {...}}). Repeatable.',
        ),
    ]
    for option in reversed(options):
        function = option(function)
    return function


CLAUDE_CODE_TOOLS = {
    "Bash": "developer__shell",
    "Read": "developer__view",
    "Write": "developer__write",
    "Edit": "developer__edit",
    "MultiEdit": "developer__edit",
    "TodoWrite": "developer__todo_write",
}
"""Claude Code's tool names, so `--allowed-tools "Bash(git log:*)" Read` works as typed."""

_RULE_WORD = re.compile(r"[^\s,()]+(?:\([^)]*\))?")


def split_rules(values: Iterable[str]) -> list[str]:
    """Rules from `--allowed-tools`/`--disallowed-tools` values: split on commas and spaces
    outside parentheses, Claude Code's names and `prefix:*` specifiers translated."""
    rules: list[str] = []
    for value in values:
        for word in _RULE_WORD.findall(value):
            name, paren, rest = word.partition("(")
            name = CLAUDE_CODE_TOOLS.get(name, name)
            if paren:
                specifier = rest[:-1].strip()
                specifier = specifier[:-2].rstrip() if specifier.endswith(":*") else specifier
                rules.append(f"{name}({specifier})")
            else:
                rules.append(name)
    return rules


def run_extras(
    append_system_prompt: str | None,
    instructions_file: Path | None,
    allowed_tools: tuple[str, ...],
    disallowed_tools: tuple[str, ...],
    mcp_configs: tuple[Path, ...],
) -> RunExtras:
    """The `agent_options` of one command as a `RunExtras`."""
    from gosling.agent.runtime import RunExtras

    parts = [append_system_prompt or ""]
    if instructions_file is not None:
        try:
            parts.append(instructions_file.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError) as exc:
            raise click.BadParameter(f"cannot read {instructions_file}: {exc}") from exc
    text = "\n\n".join(part.strip() for part in parts if part.strip())
    return RunExtras(
        append_system_prompt=text or None,
        allow=tuple(split_rules(allowed_tools)),
        deny=tuple(split_rules(disallowed_tools)),
        mcp_configs=mcp_configs,
    )


SANDBOX_MODES = ["off", "read-only", "workspace-write"]


def sandbox_option(function: F) -> F:
    """--sandbox: where shell commands and stdio MCP servers run; --sandbox-workspace: what
    they may write."""
    widen = click.option(
        "--sandbox-workspace",
        type=click.Choice(["working-dir", "git-root"]),
        help="What sandboxed commands may write: the working directory (default) or the "
        "whole git repository around it (its .git stays read-only).",
    )
    return click.option(
        "--sandbox",
        type=click.Choice(SANDBOX_MODES),
        help="Tool process sandbox (bubblewrap, Linux): workspace-write (default where "
        "available), read-only, or off.",
    )(widen(function))


def trust_option(function: F) -> F:
    """--trust-project: apply the project's config for this run as if trusted."""
    option = click.option(
        "--trust-project",
        is_flag=True,
        help="Apply the project's .gosling/config.toml for this run even if the folder is "
        "not trusted (`gosling trust` records trust for good).",
    )
    return option(function)


PERMISSION_MODES: dict[str, tuple[str, tuple[str, ...], tuple[str, ...]]] = {
    "default": ("smart_approve", (), ()),
    "acceptEdits": ("smart_approve", ("developer__edit", "developer__write"), ()),
    "plan": ("smart_approve", (), ("developer__edit", "developer__write")),
    "bypassPermissions": ("auto", (), ()),
}
"""Claude Code's `--permission-mode` values as (gosling mode, allow rules, deny rules)."""


def familiar_flags(function: F) -> F:
    """Claude Code's and Codex's permission flags, mapped onto `--mode` and tool rules:
    `--permission-mode`, `--dangerously-skip-permissions` and `--full-auto` (both `auto`; the
    sandbox stays as configured), and `--verbose` (accepted: progress is on stderr anyway)."""

    @functools.wraps(function)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        claude_mode = kwargs.pop("permission_mode")
        skip = kwargs.pop("dangerously_skip_permissions") or kwargs.pop("full_auto")
        kwargs.pop("full_auto", None)
        kwargs.pop("verbose")
        mapped = _mapped_mode(claude_mode, skip)
        if mapped is not None:
            mode, allow, deny = mapped
            if kwargs.get("mode") not in (None, mode):
                raise click.UsageError(
                    f"--mode {kwargs['mode']} and the permission flag mean different modes; "
                    "give one"
                )
            kwargs["mode"] = mode
            kwargs["allowed_tools"] = (*kwargs["allowed_tools"], *allow)
            kwargs["disallowed_tools"] = (*kwargs["disallowed_tools"], *deny)
        return function(*args, **kwargs)

    options = [
        click.option(
            "--permission-mode",
            type=click.Choice(sorted(PERMISSION_MODES)),
            help="Claude Code's modes: default and acceptEdits (smart_approve, edits allowed), "
            "plan (no edits), bypassPermissions (auto).",
        ),
        click.option(
            "--dangerously-skip-permissions",
            is_flag=True,
            help="Same as --mode auto (the sandbox stays on).",
        ),
        click.option("--full-auto", is_flag=True, help="Same as --mode auto (Codex)."),
        click.option("--verbose", is_flag=True, hidden=True),
    ]
    decorated: Any = wrapper
    for option in reversed(options):
        decorated = option(decorated)
    return decorated  # type: ignore[no-any-return]


def _mapped_mode(
    claude_mode: str | None, skip: bool
) -> tuple[str, tuple[str, ...], tuple[str, ...]] | None:
    if claude_mode is not None and skip and claude_mode != "bypassPermissions":
        raise click.UsageError(
            f"--permission-mode {claude_mode} and --dangerously-skip-permissions disagree; give one"
        )
    if skip:
        return PERMISSION_MODES["bypassPermissions"]
    return None if claude_mode is None else PERMISSION_MODES[claude_mode]
