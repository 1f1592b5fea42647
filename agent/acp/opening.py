"""Building the runtime of one ACP session, the way `gosling session` builds its own.

Failures become the protocol's errors with gosling's own message: a missing key or no
provider at all is "authentication required" (the editor then says what to set), a bad
config or flag is "invalid params", anything else "internal error".
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gosling.agent.acp import errors
from gosling.agent.acp.buffers import EditorBuffers
from gosling.agent.acp.mcp_servers import extension_configs
from gosling.agent.runtime import Runtime

if TYPE_CHECKING:
    from gosling.agent.acp.server import GoslingAcpAgent

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Opened:
    runtime: Runtime
    notes: list[str]
    """Warnings for the user (ignored project settings, no sandbox, a server that failed)."""
    buffers: EditorBuffers | None


async def open_runtime(agent: GoslingAcpAgent, working_dir: Path, servers: list[Any]) -> Opened:
    from gosling.agent.config import ConfigError
    from gosling.agent.provider_choice import NoProviderFound
    from gosling.agent.runtime import build_runtime
    from gosling.agent.tools.extension_config import ExtensionConfigError
    from gosling.providers import ProviderError
    from gosling.providers.errors import AuthenticationFailed
    from gosling.sessions import SessionStoreError

    assert agent.client is not None
    notes: list[str] = []
    fs = agent.capabilities.fs
    buffers = None
    if fs is not None and (fs.read_text_file or fs.write_text_file):
        buffers = EditorBuffers(
            agent.client,
            asyncio.get_running_loop(),
            read=bool(fs.read_text_file),
            write=bool(fs.write_text_file),
        )
    options = agent.options
    try:
        runtime = await build_runtime(
            flags=options.flags,
            working_dir=working_dir,
            with_extensions=options.extensions,
            on_extension_event=lambda e: _extension_note(notes, e),
            extras=options.extras,
            trust_project=options.trust_project,
            on_warning=notes.append,
            editor_files=buffers,
        )
    except (NoProviderFound, AuthenticationFailed) as exc:
        raise errors.auth_required(str(exc)) from exc
    except (ConfigError, ExtensionConfigError, ValueError) as exc:
        raise errors.invalid_params(str(exc)) from exc
    except (ProviderError, SessionStoreError) as exc:
        raise errors.failed(str(exc)) from exc
    if runtime.sandbox.warning:
        notes.append(runtime.sandbox.warning)
    configs, skipped = extension_configs(servers, runtime.tools.names)
    notes += skipped
    if configs:
        await runtime.tools.start_mcp(configs, working_dir, sandbox=runtime.sandbox.policy)
    return Opened(runtime, notes, buffers)


def _extension_note(notes: list[str], event: Any) -> None:
    if event.kind != "started":
        notes.append(event.message)


async def stored_session_exists(session_id: str) -> bool:
    from gosling.agent.runtime import open_store
    from gosling.sessions import SessionStoreError
    from gosling.sessions.errors import SessionNotFound

    def look() -> bool:
        store = open_store()
        try:
            store.get(session_id)
        except SessionNotFound:
            return False
        finally:
            store.close()
        return True

    try:
        return await asyncio.to_thread(look)
    except SessionStoreError as exc:
        raise errors.failed(str(exc)) from exc


async def offered_models(runtime: Runtime) -> list[str]:
    """The models the session's model option offers (a local Ollama is asked which it has)."""
    from gosling.agent.acp.session_config import model_choices

    provider = runtime.provider
    local: list[str] = []
    if provider.name == "ollama":
        import os

        from gosling.agent.provider_choice import probe_ollama
        from gosling.providers.factory import ollama_base_url

        host = runtime.settings.base_url or os.environ.get("OLLAMA_HOST") or "localhost:11434"
        try:
            found = await asyncio.to_thread(probe_ollama, ollama_base_url(host))
        except (OSError, ValueError):
            found = None
        local = found or []
    return model_choices(provider.name, provider.model_config.model, runtime.settings, local)
