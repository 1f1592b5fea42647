"""gosling's settings: one model, filled from layers.

Precedence, highest first: command-line flags > `GOSLING_*` environment variables > the
project's `.gosling/config.toml` (nearest one from the working dir up to the git root) > the
user's `<config dir>/config.toml` > defaults. `load_settings` remembers where every value came
from, which `gosling config show` prints. A project file the user has not trusted
(`agent.trust`) applies only what `agent.untrusted_config` allows; the rest is reported in
`LoadedSettings.project`.
"""

from __future__ import annotations

import difflib
import json
import os
import re
import shlex
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    model_validator,
)

from gosling.agent.hooks.config import HookTable, validate_table
from gosling.agent.sandbox.policy import STRICTNESS, SandboxMode
from gosling.context_mgmt.masking import MASK_KEEP_LAST
from gosling.context_mgmt.summary_deadline import DEFAULT_CAP, DEFAULT_FLOOR
from gosling.context_mgmt.trim_plan import MASK_KEEP_TOKENS, TRIM_PATIENCE
from gosling.prompts.locations import UserDirs, user_dirs
from gosling.providers.pricing import ModelPrice
from gosling.providers.prompt_cache import CacheFamily, PromptCacheOverride

ENV_PREFIX = "GOSLING_"
PROJECT_CONFIG = Path(".gosling") / "config.toml"

ContextStrategy = Literal["summarize", "mask", "hybrid"]
PermissionMode = Literal["auto", "approve", "smart_approve", "chat"]


def _env_name(name: str) -> str:
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
        raise ValueError(
            f"{name!r} is not an environment variable name; use letters, digits and "
            "underscores, e.g. GITHUB_TOKEN"
        )
    return name


EnvName = Annotated[str, AfterValidator(_env_name)]
SandboxWorkspace = Literal["working-dir", "git-root"]


def _hidden_path(path: str) -> str:
    if not (path.startswith("/") or path == "~" or path.startswith("~/")):
        raise ValueError(
            f"{path!r} is not an absolute path; write it as /abs/path or ~/path "
            "(sandbox_hide names places outside any one project)"
        )
    return path


HiddenPath = Annotated[str, AfterValidator(_hidden_path)]


class PermissionLists(BaseModel):
    """Permission rules as `tool` or `tool(specifier)` strings: for shell tools the specifier
    is a command prefix (`developer__shell(git diff)`), for file tools gitignore-style path
    patterns (`developer__write(src/**)`). Deny beats ask beats allow."""

    model_config = ConfigDict(extra="forbid")

    allow: list[str] = Field(default_factory=list)
    ask: list[str] = Field(default_factory=list)
    deny: list[str] = Field(default_factory=list)


class ExtensionSettings(BaseModel):
    """An MCP server to start: `command`+`args` (stdio) or `url` (streamable HTTP)."""

    model_config = ConfigDict(extra="forbid")

    name: str
    command: str | None = None
    args: list[str] = Field(default_factory=list)
    env: dict[str, str] = Field(default_factory=dict)
    url: str | None = None
    headers: dict[str, str] = Field(default_factory=dict)
    timeout: float = 300.0
    enabled: bool = True
    sandbox_network: bool = True
    """Let the server use the network inside the sandbox. On by default (most servers are API
    clients); set false for local-only servers such as mcp-server-git."""


class ModelOverride(BaseModel):
    """Limits declared for one model; they always beat the built-in registry."""

    model_config = ConfigDict(extra="forbid")

    context_limit: int | None = None
    max_output_tokens: int | None = None
    price: ModelPrice | None = None
    """US dollars per million tokens (input, output, cache_read, cache_write), for
    `total_cost_usd`; beats the built-in price table."""
    cache: PromptCacheOverride | None = None
    """How the provider caches this model's prompts, for cost figures: `family`
    (anthropic, openai, none) and the ratios to one new input token (`read`, `write`,
    `output`), `min_tokens`, `block_tokens`; unset fields come from the family and price."""


class TelemetrySettings(BaseModel):
    """Where traces go; the standard `OTEL_*` variables win over these."""

    model_config = ConfigDict(extra="forbid")

    endpoint: str | None = None
    """OTLP endpoint (`http://localhost:4318` for HTTP, `http://localhost:4317` for gRPC);
    unset and no `OTEL_EXPORTER_OTLP_ENDPOINT`: no traces, and no OpenTelemetry import."""
    protocol: Literal["http/protobuf", "grpc"] | None = None
    """Unset: `OTEL_EXPORTER_OTLP_PROTOCOL`, else http/protobuf."""
    capture_content: bool = False
    """Put prompts, replies and tool arguments (redacted) on spans, like
    `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true`."""


class Settings(BaseModel):
    """Every setting a user can change."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True)

    provider: str | None = None
    """Provider name (anthropic, openai, openai-responses, ollama, vllm, llamacpp, lmstudio,
    openrouter, openai-compatible). Unset: chosen from the API keys in the environment."""
    model: str | None = None
    """Model name; unset uses the provider's default."""
    base_url: str | None = None
    """Base URL of the provider's API (OpenAI-compatible servers, proxies)."""
    fast_model: str | None = None
    """A cheaper model for summaries; unset uses `model`."""
    context_limit: int | None = Field(default=None, gt=0)
    """Context window of the model in tokens; beats the built-in registry."""
    max_output_tokens: int | None = Field(default=None, gt=0)
    """Cap on the tokens of one reply."""
    temperature: float | None = Field(default=None, ge=0, le=2)
    """Sampling temperature; unset uses the provider's default."""
    models: dict[str, ModelOverride] = Field(default_factory=dict)
    """Per-model limits, e.g. `[models."qwen3:32b"] context_limit = 32768`."""

    auto_compact_threshold: float = Field(default=0.8, ge=0, le=1)
    """Compact when the context passes this fraction of the window (0 to 1); 0 or 1
    turns automatic compaction off."""
    compaction_form: Literal["auto", "prefix", "transcript"] = "auto"
    """How a compaction's summary call is made: prefix: on the session's own request as last
    sent, with the instruction last (the provider's prompt cache serves almost all of it);
    transcript: the history as text in a new system prompt (works with any provider, every
    token a cache miss); auto: prefix when the provider caches prompts."""
    compaction_reread_files: int = Field(default=5, ge=0)
    """After a compaction, this many of the files the session touched last are read again
    from disk and sent after the summary (0: none)."""
    compaction_reread_tokens: int = Field(default=20_000, ge=0)
    """...within this many tokens in all (never more than a tenth of the window)."""
    compaction_timeout_floor: float = Field(default=DEFAULT_FLOOR, gt=0)
    """Seconds a compaction's summary call may always take, however small its input."""
    compaction_timeout_cap: float = Field(default=DEFAULT_CAP, gt=0)
    """Seconds a compaction's summary call may take at most; between floor and cap the
    deadline grows with the input (2 s per 1,000 tokens)."""
    context_strategy: ContextStrategy = "hybrid"
    """summarize: compaction + model summaries of old tool calls (goose-like); mask: replace
    old tool outputs by placeholders; hybrid: mask first, compaction as the backstop."""
    tool_pair_summarization: bool = True
    """Summarize old tool calls with the fast model (summarize strategy)."""
    tool_call_cutoff: int | None = Field(default=None, gt=0)
    """Tool calls kept verbatim before old ones are summarized; unset derives it from the
    context window."""
    mask_keep_last: int = Field(default=MASK_KEEP_LAST, ge=0)
    """Tool results kept verbatim by observation masking; older ones become placeholders."""
    mask_keep_tokens: int = Field(default=MASK_KEEP_TOKENS, ge=0)
    """...and only while those results hold at most this many tokens (the newest result is
    always kept whole)."""
    trim_patience: float = Field(default=TRIM_PATIENCE, ge=0)
    """Old tool output is masked or folded once keeping it has cost this many times what the
    change costs in prompt-cache misses (1: the break-even point; 0: on every call)."""
    prompt_cache: CacheFamily | None = None
    """How the provider caches prompts (anthropic, openai, local, none), for when to trim old tool
    output and for cost figures; unset: from the provider and the model name."""
    context_file_names: list[str] = Field(default_factory=lambda: [".goosehints", "AGENTS.md"])
    """Hint files loaded from the git root down to the working dir, in this order."""

    append_system_prompt: str | None = None
    """Text added to the end of the system prompt (also `--append-system-prompt`)."""

    mode: PermissionMode = "auto"
    """auto: run every tool; approve: ask before each; smart_approve: ask for tools that are
    not read-only; chat: no tools."""
    permissions: PermissionLists = Field(default_factory=PermissionLists)
    """`[permissions]` allow / ask / deny lists of tool rules."""
    extensions: list[ExtensionSettings] = Field(default_factory=list)
    """MCP servers started with every session."""
    developer_extension: bool = True
    """Offer the built-in developer tools (shell, files, todo)."""
    shell_timeout: float = Field(default=300.0, gt=0)
    """Seconds before a shell command's process group is killed."""
    sandbox: SandboxMode = "workspace-write"
    """Where shell commands and stdio MCP servers run (Linux with bubblewrap): workspace-write:
    the working dir and a private /tmp writable, everything else read-only, no view of other
    processes, no credentials in the environment; read-only: the working dir read-only too;
    off: unsandboxed. Without bubblewrap it is off, with one warning. A project config file
    may make it stricter, never looser."""
    sandbox_network: bool = False
    """Let sandboxed shell commands use the network (MCP servers: per extension)."""
    sandbox_workspace: SandboxWorkspace = "working-dir"
    """What sandboxed commands may write: working-dir (the directory gosling runs in, or
    `--working-dir`), or git-root (the whole repository around it; also
    `--sandbox-workspace git-root`). A `.git` inside stays read-only either way."""
    sandbox_hide: list[HiddenPath] = Field(default_factory=list)
    """Further files or directories hidden from sandboxed commands (absolute or `~/...`),
    beside the credential locations always hidden (`~/.ssh`, `~/.aws`, `~/.netrc`, ...)."""
    shell_env_allow: list[EnvName] = Field(default_factory=list)
    """Credential-like environment variables shell commands still get, by name (e.g.
    `["GITHUB_TOKEN"]` so that `gh` and `git push` work). Their values stay redacted from
    tool output, the store and the model. Only your own config or `GOSLING_SHELL_ENV_ALLOW`
    can add a name; a project config cannot."""
    max_turns: int = Field(default=1000, gt=0)
    """Model calls allowed in one reply before it stops."""
    max_retries: int = Field(default=3, ge=0)
    """Retries of a failed model call (rate limits, overload, 5xx, dropped connections)."""
    request_timeout: float = Field(default=600.0, gt=0)
    """Seconds one model call may take in all, however steadily the server trickles bytes;
    passing it counts as a failed call and is retried."""
    first_byte_timeout: float = Field(default=120.0, gt=0)
    """Seconds to wait for a model call's response to start."""

    hooks: HookTable = Field(default_factory=dict)
    """Commands run at events of a session, in Claude Code's shape: `[[hooks.PreToolUse]]`
    with `matcher = "Bash"` and `[[hooks.PreToolUse.hooks]]` with `command` and `timeout`.
    The user's and a trusted project's hooks all run (`gosling hooks` lists them)."""
    hook_settings: list[str] = Field(default_factory=list)
    """Claude Code `settings.json` files whose `hooks` also run, e.g.
    `["~/.claude/settings.json"]`; a relative path is the project's (run once it is trusted)."""
    telemetry: TelemetrySettings = Field(default_factory=lambda: TelemetrySettings())
    """`[telemetry]`: OpenTelemetry traces (off unless an endpoint is set here or in
    `OTEL_EXPORTER_OTLP_ENDPOINT`)."""

    @model_validator(mode="after")
    def _compaction_timeouts_ordered(self) -> Settings:
        if self.compaction_timeout_floor > self.compaction_timeout_cap:
            raise ValueError(
                f"compaction_timeout_floor ({self.compaction_timeout_floor:g}) is above "
                f"compaction_timeout_cap ({self.compaction_timeout_cap:g}); lower the floor "
                "or raise the cap"
            )
        return self


FIELD_NAMES = tuple(Settings.model_fields)


class ConfigError(Exception):
    """A config file or variable is malformed; the message names where and how to fix it."""


@dataclass(frozen=True)
class ProjectConfig:
    """The project's config file and whether the user trusts it."""

    path: Path
    root: Path
    """The project directory (the parent of `.gosling/`), resolved."""
    trusted: bool
    ignored: tuple[str, ...] = ()
    """Keys the file sets that were ignored because it is untrusted."""
    why_untrusted: str | None = None
    """Why a folder the user trusted once is untrusted now (`TrustStore.why_untrusted`)."""

    def warning(self) -> str | None:
        """The one line to print when something was ignored."""
        if not self.ignored:
            return None
        why = f" ({self.why_untrusted})" if self.why_untrusted else ""
        return (
            f"ignored {', '.join(self.ignored)} from untrusted {self.path}{why}; "
            f"to apply them run: gosling trust {shlex.quote(str(self.root))}"
        )


@dataclass(frozen=True)
class LoadedSettings:
    settings: Settings
    sources: dict[str, str]
    """Where each field's value came from: "default", a file path, an env var or a flag."""
    files: tuple[Path, ...]
    project: ProjectConfig | None = None
    hook_layers: tuple[tuple[str, HookTable], ...] = ()
    """Each layer's `hooks` with its origin (they add up rather than replace each other)."""
    global_hint_names: tuple[str, ...] | None = None
    """The hint file names to look up in the user's config dir when the project's config
    chose `context_file_names` (the names that apply without it); None: the setting's."""


def find_project_config(working_dir: Path) -> Path | None:
    """The nearest `.gosling/config.toml` from `working_dir` up to the git root."""
    for directory in (working_dir, *working_dir.parents):
        candidate = directory / PROJECT_CONFIG
        if candidate.is_file():
            return candidate
        if (directory / ".git").exists():
            return None
    return None


def read_config_file(path: Path) -> dict[str, Any]:
    """The settings a config file sets; `ConfigError` names the file and what is wrong."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: malformed TOML: {exc}") from exc
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read config: {exc}") from exc
    unknown = [key for key in data if key not in FIELD_NAMES]
    for key in unknown:
        close = difflib.get_close_matches(key, FIELD_NAMES, n=1)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        raise ConfigError(f"{path}: unknown setting {key!r}{hint}")
    return data


def _without_sandbox_loosening(
    data: dict[str, Any], below: Mapping[str, Any], origin: str
) -> dict[str, Any]:
    """A project file (trusted or not: it came with the checkout) may tighten the sandbox,
    never loosen it, and may not hand the user's credentials to shell commands
    (`shell_env_allow` beyond what applies without it); such keys are dropped with a
    warning."""
    import logging

    current_mode = str(below.get("sandbox", Settings.model_fields["sandbox"].default))
    current_network = bool(below.get("sandbox_network", False))
    dropped = []
    mode = data.get("sandbox")
    if mode is not None and STRICTNESS.get(str(mode), 99) < STRICTNESS.get(current_mode, 0):
        dropped.append("sandbox")
    if data.get("sandbox_network") is True and not current_network:
        dropped.append("sandbox_network")
    if data.get("sandbox_workspace") == "git-root" and below.get("sandbox_workspace") != "git-root":
        dropped.append("sandbox_workspace")
    if "sandbox_hide" in data:  # may add places to hide, never un-hide the user's
        data = {**data, "sandbox_hide": [*below.get("sandbox_hide", []), *data["sandbox_hide"]]}
    allowed = below.get("shell_env_allow", [])
    if "shell_env_allow" in data and not set(_names(data["shell_env_allow"])) <= set(allowed):
        dropped.append("shell_env_allow")
    if not dropped:
        return data
    logging.getLogger(__name__).warning(
        "%s: ignored %s: a project config may only tighten the sandbox and cannot pass "
        "credentials to commands; set it in your own config or with a flag",
        origin,
        ", ".join(dropped),
    )
    return {k: v for k, v in data.items() if k not in dropped}


def _names(value: Any) -> list[str]:
    return [str(v) for v in value] if isinstance(value, list) else [str(value)]


def _env_layer(environ: Mapping[str, str]) -> dict[str, tuple[Any, str]]:
    layer: dict[str, tuple[Any, str]] = {}
    for name in FIELD_NAMES:
        var = ENV_PREFIX + name.upper()
        raw = environ.get(var)
        if raw is None or raw == "":
            continue
        layer[name] = (parse_text_value(name, raw, var), f"env {var}")
    return layer


def parse_text_value(name: str, raw: str, var: str) -> Any:
    """A setting given as text (an environment variable, `config set`) as its own type."""
    annotation = str(Settings.model_fields[name].annotation)
    structured = annotation.startswith(("list", "dict")) or "list[" in annotation
    if raw.lstrip().startswith(("[", "{")):
        try:
            return json.loads(raw)
        except json.JSONDecodeError as exc:
            raise ConfigError(
                f"{var}: not valid JSON ({exc.msg}); use e.g. '[\"AGENTS.md\"]'"
            ) from exc
    if structured and annotation.startswith(("list[str]", "list[typing.Annotated[str")):
        return [part.strip() for part in raw.split(",") if part.strip()]
    if structured:
        raise ConfigError(f"{var}: expected a JSON value, got {raw!r}")
    return raw


def load_settings(
    working_dir: Path | None = None,
    *,
    flags: Mapping[str, Any] | None = None,
    environ: Mapping[str, str] | None = None,
    dirs: UserDirs | None = None,
    trust_project: bool = False,
) -> LoadedSettings:
    """Build the effective settings and remember where each value came from.

    `trust_project` applies the project file as trusted for this call only
    (`--trust-project`); otherwise the user's trust store decides."""
    working_dir = (working_dir or Path.cwd()).resolve()
    environ = os.environ if environ is None else environ
    dirs = dirs or user_dirs()

    layers: list[tuple[dict[str, Any], str]] = []
    files: list[Path] = []
    user_file = dirs.config / "config.toml"
    if user_file.is_file():
        layers.append((read_config_file(user_file), str(user_file)))
        files.append(user_file)
    project: ProjectConfig | None = None
    project_file = find_project_config(working_dir)
    if project_file is not None:
        data, project = _project_layer(project_file, layers, dirs, trust_project)
        layers.append((data, str(project_file)))
        files.append(project_file)

    values: dict[str, Any] = {}
    sources = dict.fromkeys(FIELD_NAMES, "default")
    hook_layers: list[tuple[str, HookTable]] = []
    env = [(({key: value}), origin) for key, (value, origin) in _env_layer(environ).items()]
    for data, origin in [*layers, *env]:
        if project_file is not None and origin == str(project_file):
            data = _without_sandbox_loosening(data, values, origin)
        for key, value in data.items():
            if key == "hooks":
                value = _added_hooks(values.get(key), value, origin, hook_layers)
            values[key], sources[key] = value, origin
    for key, value in (flags or {}).items():
        if value is None:
            continue
        if key not in FIELD_NAMES:
            raise ConfigError(f"unknown setting {key!r} given as a flag")
        values[key], sources[key] = value, f"flag --{key.replace('_', '-')}"

    settings = validate_settings(values, sources)
    global_names = None
    if project_file is not None and sources["context_file_names"] == str(project_file):
        user_layers = [d for d, origin in layers if origin != str(project_file)]
        chosen = [d["context_file_names"] for d in user_layers if "context_file_names" in d]
        below = chosen[-1] if chosen else Settings().context_file_names
        global_names = tuple(
            validate_settings({"context_file_names": below}, sources).context_file_names
        )
    return LoadedSettings(
        settings, sources, tuple(files), project, tuple(hook_layers), global_names
    )


_BOUNDS = {"gt": ">", "ge": ">=", "lt": "<", "le": "<="}


def allowed_range(key: str) -> str | None:
    """`between 0 and 1`, `>= 1`, ... from the field's constraints, or None."""
    bounds = {
        name: getattr(item, name)
        for item in Settings.model_fields[key].metadata
        for name in _BOUNDS
        if getattr(item, name, None) is not None
    }
    low = bounds.get("ge", bounds.get("gt"))
    high = bounds.get("le", bounds.get("lt"))
    if "ge" in bounds and "le" in bounds:
        return f"between {low:g} and {high:g}"
    return " and ".join(f"{_BOUNDS[name]} {value:g}" for name, value in bounds.items()) or None


def validate_settings(values: Mapping[str, Any], sources: Mapping[str, str]) -> Settings:
    """`Settings` from raw values, or a ConfigError naming the source, the key and, for a
    number out of range, the range (`auto_compact_threshold = 5` is refused, not taken as
    "off")."""
    try:
        return Settings.model_validate(values)
    except ValidationError as exc:
        first = exc.errors()[0]
        if not first["loc"]:  # a rule across settings: its message names them
            message = str(first["msg"]).removeprefix("Value error, ")
            keys = [k for k in Settings.model_fields if k in message and k in sources]
            where = ", ".join(dict.fromkeys(sources[k] for k in keys)) or "config"
            raise ConfigError(f"{where}: {message}") from exc
        key = str(first["loc"][0])
        where = sources.get(key, "?")
        limits = allowed_range(key) if key in Settings.model_fields else None
        if limits is not None and first["type"] in (
            "greater_than",
            "greater_than_equal",
            "less_than",
            "less_than_equal",
        ):
            raise ConfigError(
                f"{where}: {key} = {first['input']} is out of range; it must be {limits}"
            ) from exc
        raise ConfigError(f"{where}: invalid value for {key!r}: {first['msg']}") from exc


def _added_hooks(
    below: Any, raw: Any, origin: str, hook_layers: list[tuple[str, HookTable]]
) -> HookTable:
    """The hooks of the layers so far plus `raw`'s (hooks add up across layers)."""
    try:
        table = validate_table(raw, origin)
    except ValueError as exc:
        raise ConfigError(str(exc)) from exc
    hook_layers.append((origin, table))
    merged: HookTable = {event: list(groups) for event, groups in (below or {}).items()}
    for event, groups in table.items():
        merged[event] = [*merged.get(event, []), *groups]
    return merged


def _project_layer(
    path: Path, lower: list[tuple[dict[str, Any], str]], dirs: UserDirs, trust_project: bool
) -> tuple[dict[str, Any], ProjectConfig]:
    """The project file's values that apply, and its trust state."""
    from gosling.agent.trust import TRUST_FILE, TrustStore, project_files
    from gosling.agent.untrusted_config import filter_untrusted

    data = read_config_file(path)
    root = path.parent.parent.resolve()
    store = TrustStore(dirs.state / TRUST_FILE)
    files = project_files(root)
    if trust_project or store.is_trusted(root, files):
        return data, ProjectConfig(path, root, trusted=True)
    base: dict[str, Any] = Settings().model_dump()
    for layer, _ in lower:
        base.update(layer)
    kept = filter_untrusted(data, base)
    why = store.why_untrusted(root, files)
    return kept.values, ProjectConfig(path, root, False, tuple(kept.ignored), why)
