"""Assemble what a command needs: settings, provider, session store, tools and the agent.

Shared by `gosling run` and `gosling session`, so both behave the same way.
"""

from __future__ import annotations

import logging
import os
import shlex
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gosling.agent.agent import Agent
from gosling.agent.config import ExtensionSettings, LoadedSettings, Settings, load_settings
from gosling.agent.hooks.config import HookConfig
from gosling.agent.provider_choice import choose_provider
from gosling.agent.sandbox import SandboxChoice, choose_sandbox
from gosling.agent.sandbox.choice import project_root, sandbox_workspace
from gosling.agent.sdk_warm_up import warm_up_sdk
from gosling.agent.session import AgentSession
from gosling.agent.tool_runner import Approver
from gosling.agent.tools.developer import DeveloperSettings, ResultCaps, developer_extension
from gosling.agent.tools.developer.workspace import EditorFiles
from gosling.agent.tools.extension_config import ExtensionConfig, parse_extension_spec
from gosling.agent.tools.manager import ExtensionEvent, ExtensionManager
from gosling.agent.tools.mcp_json import load_mcp_json
from gosling.agent.tools.recall import context_extension
from gosling.agent.tools.spill import sweep_spill_files
from gosling.agent.trust import PROJECT_MCP_FILE, TRUST_FILE, TrustStore, project_files
from gosling.agent.user_inputs import use_user_prompts, use_user_token_cache
from gosling.prompts.locations import UserDirs, user_dirs
from gosling.providers import Provider
from gosling.sessions import SqliteSessionStore

if TYPE_CHECKING:
    from gosling.agent.telemetry.spans import Tracing


@dataclass(frozen=True)
class RunExtras:
    """What one command adds to the settings (`--append-system-prompt`, `--instructions`,
    `--allowed-tools`, `--disallowed-tools`, `--mcp-config`)."""

    append_system_prompt: str | None = None
    allow: tuple[str, ...] = ()
    """Allow rules added to the configured ones for this run."""
    deny: tuple[str, ...] = ()
    """Deny rules added to the configured ones for this run."""
    mcp_configs: tuple[Path, ...] = ()
    """Claude Code-format JSON files of MCP servers to start."""
    trace_link: str | None = None
    """A `traceparent` this run's traces link to (a `gosling batch` task's batch span)."""

    def apply(self, settings: Settings) -> Settings:
        permissions = settings.permissions.model_copy(
            update={
                "allow": [*settings.permissions.allow, *self.allow],
                "deny": [*settings.permissions.deny, *self.deny],
            }
        )
        update: dict[str, Any] = {"permissions": permissions}
        if self.append_system_prompt:
            joined = "\n\n".join(
                t for t in (settings.append_system_prompt, self.append_system_prompt) if t
            )
            update["append_system_prompt"] = joined
        return settings.model_copy(update=update)


@dataclass
class Runtime:
    settings: Settings
    provider: Provider
    store: SqliteSessionStore | None
    tools: ExtensionManager
    agent: Agent
    sandbox: SandboxChoice
    """Where tool processes run; `sandbox.warning` is for the user when none is available."""

    async def switch_model(self, session: AgentSession, model: str) -> Provider:
        """`/model NAME`: the same provider (or the configured one) with another model, from
        the next call of `session` on; the settings and the stored session follow. Raises
        ConfigError, ProviderError or ValueError with a clear message, changing nothing;
        a name the current provider cannot serve (`gpt-5` on Anthropic) is a ValueError."""
        from gosling.providers.model_family import model_mismatch

        mismatch = model_mismatch(self.provider.name, model)
        if mismatch is not None:
            raise ValueError(mismatch)
        updated = self.settings.model_copy(
            update={"model": model, "provider": self.settings.provider or self.provider.name}
        )
        provider = choose_provider(updated)
        await self.agent.switch_provider(session, provider)
        self.provider, self.settings = provider, updated
        if self.store is not None and session.id is not None:
            self.store.update_session(
                session.id, provider=provider.name, model=provider.model_config.model
            )
        return provider

    async def aclose(self) -> None:
        await self.tools.close()
        if self.store is not None:
            self.store.close()


def extension_config(ext: ExtensionSettings) -> ExtensionConfig:
    return ExtensionConfig(
        name=ext.name,
        type="streamable_http" if ext.url else "stdio",
        command=ext.command,
        args=tuple(ext.args),
        env=dict(ext.env),
        url=ext.url,
        headers=dict(ext.headers),
        timeout_secs=ext.timeout,
        network=ext.sandbox_network,
        enabled=ext.enabled,
    )


def open_store() -> SqliteSessionStore:
    return SqliteSessionStore.open_default(user_dirs().data)


async def build_runtime(
    *,
    flags: Mapping[str, Any],
    working_dir: Path | None = None,
    use_store: bool = True,
    with_extensions: Sequence[str] = (),
    approver: Approver | None = None,
    on_extension_event: Callable[[ExtensionEvent], None] | None = None,
    provider: Provider | None = None,
    extras: RunExtras | None = None,
    trust_project: bool = False,
    on_warning: Callable[[str], None] | None = None,
    editor_files: EditorFiles | None = None,
) -> Runtime:
    """Everything for one command; raises ConfigError/ProviderError with a clear message.

    `on_warning` receives the one line naming what an untrusted project config set that
    was ignored (it is logged as well). `editor_files`: the editor's buffers, for the file
    tools of an ACP session."""
    working_dir = (working_dir or Path.cwd()).resolve()
    extras = extras or RunExtras()
    use_user_prompts()
    use_user_token_cache()
    loaded = load_settings(working_dir, flags=flags, trust_project=trust_project)
    settings = extras.apply(loaded.settings)
    if provider is None:
        warm_up_sdk(settings.provider)  # imported beside the store, hints and tokenizer
    warning = loaded.project.warning() if loaded.project else None
    if warning is not None:
        logging.getLogger(__name__).info("%s", warning)
        if on_warning is not None:
            on_warning(warning)
    sweep_spill_files()
    provider = provider or choose_provider(settings)
    store = open_store() if use_store else None
    dirs = user_dirs()
    sandbox = choose_sandbox(
        settings.sandbox,
        workspace=sandbox_workspace(working_dir, git_root=settings.sandbox_workspace == "git-root"),
        network=settings.sandbox_network,
        hidden=(
            dirs.config,
            dirs.data,
            dirs.state,
            *map(Path, settings.sandbox_hide),  # "~/..." expanded by choose_sandbox
        ),
        server_caches=dirs.state / "mcp-cache",
        filters=dirs.state / "sandbox",
    )
    developer = DeveloperSettings(
        shell_timeout_secs=settings.shell_timeout,
        sandbox=sandbox.policy,
        env_allow=tuple(settings.shell_env_allow),
        editor_files=editor_files,
    )
    caps = ResultCaps.from_settings(developer)
    tools = ExtensionManager(
        on_event=on_extension_event, log_dir=dirs.state / "logs", result_limit=caps
    )
    if settings.developer_extension:
        tools.add(developer_extension(developer, spill_files=caps.spill_files))
    tools.add(context_extension())
    configs = [extension_config(e) for e in settings.extensions if e.enabled]
    configs += [parse_extension_spec(spec) for spec in with_extensions]
    for path in extras.mcp_configs:
        configs += load_mcp_json(path)
    configs += _project_mcp_servers(working_dir, trust_project, dirs, on_warning)
    if configs:
        await tools.start_mcp(configs, working_dir, sandbox=sandbox.policy)
    agent = Agent(
        provider,
        tools=tools,
        session_store=store,
        config=settings,
        working_dir=working_dir,
        approver=approver,
        hooks=_hooks(loaded, working_dir, trust_project, on_warning),
        transcripts_dir=dirs.state / "transcripts",
        tracing=_tracing(settings, extras.trace_link),
        global_hint_files=loaded.global_hint_names,
    )
    return Runtime(settings, provider, store, tools, agent, sandbox)


def _tracing(settings: Settings, link: str | None) -> Tracing | None:
    """OpenTelemetry for this run, or None (then none of it is imported)."""
    from gosling.agent.telemetry.settings import LINK_VAR, trace_settings

    config = trace_settings(settings.telemetry)
    if config is None:
        return None
    from gosling.agent.telemetry.spans import Tracing

    return Tracing(config, link=link or os.environ.get(LINK_VAR))


def _hooks(
    loaded: LoadedSettings,
    working_dir: Path,
    trust_project: bool,
    on_warning: Callable[[str], None] | None,
) -> HookConfig:
    """Every configured hook; a settings file that cannot be used is one warning each."""
    if not loaded.hook_layers and not loaded.settings.hook_settings:
        return HookConfig()
    from gosling.agent.hooks.sources import collect_hooks

    found = collect_hooks(loaded, working_dir, trust_project=trust_project)
    for problem in found.problems:
        logging.getLogger(__name__).info("%s", problem)
        if on_warning is not None:
            on_warning(problem)
    return found


def _project_mcp_servers(
    working_dir: Path,
    trust_project: bool,
    dirs: UserDirs,
    on_warning: Callable[[str], None] | None,
) -> list[ExtensionConfig]:
    """The servers of the project's `.mcp.json` (Claude Code's format) at the project root,
    only when the user trusts the folder: a cloned repository must not start programs."""
    root = project_root(working_dir)
    path = root / PROJECT_MCP_FILE
    if not path.is_file():
        return []
    store = TrustStore(dirs.state / TRUST_FILE)
    files = project_files(root)
    if trust_project or store.is_trusted(root, files):
        return load_mcp_json(path)
    reason = store.why_untrusted(root, files)
    why = f"{path}: {reason}" if reason else f"untrusted {path}"
    warning = (
        f"ignored the MCP servers of {why}; to start them run: "
        f"gosling trust {shlex.quote(str(root))}"
    )
    logging.getLogger(__name__).info("%s", warning)
    if on_warning is not None:
        on_warning(warning)
    return []
