"""`GoslingAcpAgent`: the ACP agent side, one `LiveSession` per open session.

Every ACP session is a gosling session in the store: `session/new` creates one (in the
client's cwd, named after its first prompt), `session/load` and `session/resume` open a
stored one (any gosling session, wherever it was started) and `session/list` lists them.
Each session gets its own runtime (`build_runtime`: config, trust, permissions, sandbox,
store, hints, context pipeline, MCP servers), exactly as `gosling session` builds it, plus
the editor's MCP servers and, where the editor offers them, its file buffers.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from acp import PROTOCOL_VERSION, Client, RequestError
from acp.schema import (
    AgentCapabilities,
    ClientCapabilities,
    CloseSessionResponse,
    Implementation,
    InitializeResponse,
    ListSessionsResponse,
    LoadSessionResponse,
    McpCapabilities,
    NewSessionResponse,
    PromptCapabilities,
    PromptResponse,
    ResumeSessionResponse,
    SessionCapabilities,
    SessionCloseCapabilities,
    SessionInfo,
    SessionListCapabilities,
    SessionResumeCapabilities,
    SetSessionConfigOptionResponse,
    SetSessionModeResponse,
)

from gosling.agent.acp import errors, history, session_config, updates
from gosling.agent.acp.live import LiveSession
from gosling.agent.runtime import RunExtras
from gosling.agent.version import __version__

if TYPE_CHECKING:
    from gosling.agent.acp.opening import Opened
    from gosling.agent.session import AgentSession

logger = logging.getLogger(__name__)

PAGE_SIZE = 50


@dataclass(frozen=True)
class ServeOptions:
    """What `gosling acp` was started with; every session uses it."""

    flags: dict[str, Any] = field(default_factory=dict)
    """Settings given as flags (provider, model, base_url, context_limit, mode, sandbox)."""
    extensions: tuple[str, ...] = ()
    extras: RunExtras = field(default_factory=RunExtras)
    trust_project: bool = False

    @property
    def pinned(self) -> frozenset[str]:
        return frozenset(k for k in ("provider", "model", "mode") if self.flags.get(k))


class GoslingAcpAgent:
    def __init__(self, options: ServeOptions | None = None) -> None:
        self.options = options or ServeOptions()
        self.sessions: dict[str, LiveSession] = {}
        self.client: Client | None = None
        self.capabilities = ClientCapabilities()
        self._initialized = False
        self._opening: set[str] = set()

    def on_connect(self, conn: Client) -> None:
        self.client = conn

    # -- connection -----------------------------------------------------------------------------

    async def initialize(
        self,
        protocol_version: int,
        client_capabilities: ClientCapabilities | None = None,
        client_info: Implementation | None = None,
        **kwargs: Any,
    ) -> InitializeResponse:
        self.capabilities = client_capabilities or ClientCapabilities()
        self._initialized = True
        if client_info is not None:
            logger.info("ACP client: %s %s", client_info.name, client_info.version)
        return InitializeResponse(
            protocol_version=min(protocol_version, PROTOCOL_VERSION),
            agent_capabilities=AgentCapabilities(
                load_session=True,
                prompt_capabilities=PromptCapabilities(
                    image=True, audio=False, embedded_context=True
                ),
                mcp_capabilities=McpCapabilities(http=True, sse=False),
                session_capabilities=SessionCapabilities(
                    list=SessionListCapabilities(),
                    resume=SessionResumeCapabilities(),
                    close=SessionCloseCapabilities(),
                ),
            ),
            agent_info=Implementation(name="gosling", title="gosling", version=__version__),
            auth_methods=[],
        )

    async def authenticate(self, method_id: str, **kwargs: Any) -> None:
        raise errors.invalid_params(
            "gosling has no sign-in; set the provider's API key (ANTHROPIC_API_KEY, "
            "OPENAI_API_KEY, ...) in the environment the editor starts it with, or choose a "
            "local model in gosling's config",
            methodId=method_id,
        )

    # -- sessions -------------------------------------------------------------------------------

    async def new_session(
        self,
        cwd: str,
        mcp_servers: list[Any] | None = None,
        additional_directories: list[str] | None = None,
        **kwargs: Any,
    ) -> NewSessionResponse:
        self._require_initialized()
        from gosling.agent.acp.opening import open_runtime

        opened = await open_runtime(self, _directory(cwd), mcp_servers or [])
        try:
            session = opened.runtime.agent.new_session()
        except Exception as exc:
            await opened.runtime.aclose()
            raise errors.failed(f"cannot create a session: {exc}") from exc
        live = await self._register(opened, session)
        live.remember_choices()
        live.announce()
        return NewSessionResponse(
            session_id=live.id, modes=live.modes(), config_options=live.config_options()
        )

    async def load_session(
        self,
        cwd: str,
        session_id: str,
        mcp_servers: list[Any] | None = None,
        additional_directories: list[str] | None = None,
        **kwargs: Any,
    ) -> LoadSessionResponse:
        live = await self._reopen(cwd, session_id, mcp_servers or [])
        agent = live.runtime.agent
        for update in history.replay(
            live.session.messages, agent.working_dir, agent.tools.annotations
        ):
            live.post(update)
        await live.outbox.flush()
        live.announce()
        return LoadSessionResponse(modes=live.modes(), config_options=live.config_options())

    async def resume_session(
        self,
        cwd: str,
        session_id: str,
        mcp_servers: list[Any] | None = None,
        additional_directories: list[str] | None = None,
        **kwargs: Any,
    ) -> ResumeSessionResponse:
        live = await self._reopen(cwd, session_id, mcp_servers or [])
        live.announce()
        return ResumeSessionResponse(modes=live.modes(), config_options=live.config_options())

    async def list_sessions(
        self, cwd: str | None = None, cursor: str | None = None, **kwargs: Any
    ) -> ListSessionsResponse:
        self._require_initialized()
        from gosling.agent.runtime import open_store

        start = 0
        if cursor:
            if not cursor.isdigit():
                raise errors.invalid_params(f"cursor {cursor!r} is not one this agent gave out")
            start = int(cursor)
        where = _directory(cwd) if cwd else None
        store = await asyncio.to_thread(open_store)
        try:
            records = store.list_sessions()
        finally:
            store.close()
        if where is not None:
            records = [r for r in records if r.working_dir == where]
        page = records[start : start + PAGE_SIZE]
        more = start + PAGE_SIZE < len(records)
        return ListSessionsResponse(
            sessions=[
                SessionInfo(
                    session_id=r.id,
                    cwd=str(r.working_dir),
                    title=r.name or None,
                    updated_at=updates.iso_time(r.updated_at),
                )
                for r in page
            ],
            next_cursor=str(start + PAGE_SIZE) if more else None,
        )

    async def close_session(self, session_id: str, **kwargs: Any) -> CloseSessionResponse:
        self._require_initialized()
        live = self.sessions.pop(session_id, None)
        if live is None:
            raise errors.unknown_session(session_id)
        await live.close()
        return CloseSessionResponse()

    # -- modes and options ----------------------------------------------------------------------

    async def set_session_mode(
        self, mode_id: str, session_id: str, **kwargs: Any
    ) -> SetSessionModeResponse:
        live = self._live(session_id)
        live.set_mode(mode_id, announce="options")
        return SetSessionModeResponse()

    async def set_config_option(
        self, config_id: str, session_id: str, value: str | bool, **kwargs: Any
    ) -> SetSessionConfigOptionResponse:
        live = self._live(session_id)
        if not isinstance(value, str):
            raise errors.invalid_params(f"option {config_id!r} takes a string value")
        if config_id == session_config.MODE_OPTION:
            live.set_mode(value, announce="mode")
        elif config_id == session_config.MODEL_OPTION:
            if live.busy:
                raise errors.turn_running(session_id)
            await live.set_model(value, announce=False)
        else:
            known = f"{session_config.MODE_OPTION}, {session_config.MODEL_OPTION}"
            raise errors.invalid_params(
                f"unknown option {config_id!r}; the options are {known}", configId=config_id
            )
        return SetSessionConfigOptionResponse(config_options=live.config_options())

    # -- turns ----------------------------------------------------------------------------------

    async def prompt(self, prompt: list[Any], session_id: str, **kwargs: Any) -> PromptResponse:
        return await self._live(session_id).prompt(prompt)

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        live = self.sessions.get(session_id)
        if live is not None:
            live.cancel()

    # -- lifetime -------------------------------------------------------------------------------

    async def shutdown(self) -> None:
        """Close every session: running turns stop and answer their tool calls, empty new
        sessions are dropped, the rest are released for `gosling session -r`."""
        sessions = list(self.sessions.values())
        self.sessions.clear()
        results = await asyncio.gather(*(s.close() for s in sessions), return_exceptions=True)
        for result in results:
            if isinstance(result, BaseException):
                logger.error("closing a session failed: %s", result)

    # -- helpers --------------------------------------------------------------------------------

    def _require_initialized(self) -> None:
        if not self._initialized:
            raise errors.not_initialized()

    def _live(self, session_id: str) -> LiveSession:
        self._require_initialized()
        live = self.sessions.get(session_id)
        if live is None:
            raise errors.unknown_session(session_id)
        return live

    async def _register(self, opened: Opened, session: AgentSession) -> LiveSession:
        assert self.client is not None
        from gosling.agent.acp.opening import offered_models

        live = LiveSession(
            opened.runtime,
            session,
            self.client,
            pinned=self.options.pinned,
            notes=opened.notes,
            models=await offered_models(opened.runtime),
        )
        self.sessions[live.id] = live
        if opened.buffers is not None:
            opened.buffers.session_id = live.id
        return live

    async def _reopen(self, cwd: str, session_id: str, servers: list[Any]) -> LiveSession:
        """Open a stored session here (a session already open here is closed and opened
        afresh, unless it is answering a prompt)."""
        self._require_initialized()
        from gosling.agent.acp.opening import open_runtime, stored_session_exists

        working_dir = _directory(cwd)
        if session_id in self._opening:
            raise errors.turn_running(session_id)
        current = self.sessions.get(session_id)
        if current is not None and current.busy:
            raise errors.turn_running(session_id)
        if not await stored_session_exists(session_id):
            raise errors.unstored_session(session_id)
        self._opening.add(session_id)
        try:
            if current is not None:
                self.sessions.pop(session_id, None)
                await current.close(discard_empty=False)
            opened = await open_runtime(self, working_dir, servers)
            try:
                session = opened.runtime.agent.resume_session(session_id)
            except Exception as exc:
                await opened.runtime.aclose()
                raise _open_error(session_id, exc) from exc
            live = await self._register(opened, session)
            await live.restore_choices()
            return live
        finally:
            self._opening.discard(session_id)


def _directory(cwd: str) -> Path:
    path = Path(cwd)
    if not path.is_absolute():
        raise errors.invalid_params(f"cwd must be an absolute path, not {cwd!r}", cwd=cwd)
    if not path.is_dir():
        raise errors.invalid_params(f"cwd {cwd!r} is not a directory", cwd=cwd)
    return path.resolve()


def _open_error(session_id: str, exc: Exception) -> RequestError:
    from gosling.sessions import SessionStoreError
    from gosling.sessions.errors import SessionNotFound

    if isinstance(exc, SessionNotFound):
        return errors.unstored_session(session_id)
    if isinstance(exc, SessionStoreError):
        return errors.failed(str(exc), sessionId=session_id)
    return errors.failed(f"cannot open session {session_id}: {exc}", sessionId=session_id)
