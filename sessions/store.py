"""`SessionStore`: the interface the agent writes sessions through.

The embedded default is `SqliteSessionStore`; a shared server database can implement the same
methods later. Rules every implementation keeps:

- Nothing is deleted except by `delete`. Visibility flips change metadata only.
- A `commit` is atomic: after a crash either all of it is stored or none of it.
- One writer per session: message, usage and extension writes take the session's writer
  lease (on first use, or up front with `open_for_writing`); a session another live process
  holds raises `SessionBusy`.
- Messages load in the order they were appended, with their metadata.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol

from gosling.conversation import Message, MessageMetadata
from gosling.sessions.records import Session, SessionChanges, SessionSnapshot, UsageRecord


class SessionStore(Protocol):
    # -- sessions -------------------------------------------------------------------------------

    def create(
        self,
        *,
        working_dir: Path | str,
        name: str = "",
        provider: str | None = None,
        model: str | None = None,
    ) -> Session:
        """A new empty session with a fresh id."""
        ...

    def get(self, session_id: str) -> Session:
        """The session, or `SessionNotFound`."""
        ...

    def list_sessions(self, *, limit: int | None = None) -> list[Session]:
        """Sessions, most recently updated first."""
        ...

    def rename(self, session_id: str, name: str, *, by_user: bool = True) -> Session:
        """Set the name; `by_user` marks it so automatic naming leaves it alone."""
        ...

    def update_session(
        self,
        session_id: str,
        *,
        working_dir: Path | str | None = None,
        provider: str | None = None,
        model: str | None = None,
    ) -> Session:
        """Change where the session works or what it talks to; None leaves a field as is."""
        ...

    def delete(self, session_id: str) -> None:
        """Remove the session and everything in it (refused while another process writes)."""
        ...

    # -- writer lease ---------------------------------------------------------------------------

    def open_for_writing(self, session_id: str) -> None:
        """Take the session's writer lease now, so a conflict shows before any work is done."""
        ...

    def release(self, session_id: str) -> None:
        """Give the writer lease back (no-op when not held)."""
        ...

    # -- messages and usage ---------------------------------------------------------------------

    def commit(self, session_id: str, changes: SessionChanges) -> None:
        """Apply one turn's writes atomically."""
        ...

    def append_messages(self, session_id: str, messages: Sequence[Message]) -> None: ...

    def update_message_metadata(
        self, session_id: str, message_id: str, metadata: MessageMetadata
    ) -> None: ...

    def update_messages_metadata(
        self, session_id: str, updates: Mapping[str, MessageMetadata]
    ) -> None: ...

    def replace_agent_view(
        self,
        session_id: str,
        messages: Sequence[Message],
        *,
        usage: Sequence[UsageRecord] = (),
        context_tokens: int | None = None,
    ) -> None:
        """Make the stored agent view equal that of `messages` without deleting anything.

        Known messages take the metadata given; new ones are appended; stored messages
        missing from `messages` become agent-invisible. This is how a compaction result
        (originals flipped, summary appended) is saved.
        """
        ...

    def record_usage(self, session_id: str, record: UsageRecord) -> None: ...

    def load_messages(self, session_id: str) -> list[Message]:
        """Every message, in order, with metadata."""
        ...

    def usage_records(self, session_id: str) -> list[UsageRecord]: ...

    # -- extension data -------------------------------------------------------------------------

    def get_extension_data(self, session_id: str) -> dict[str, Any]: ...

    def set_extension_data(self, session_id: str, key: str, value: Any) -> None:
        """Store one JSON value under `key` (None removes it)."""
        ...

    # -- whole sessions -------------------------------------------------------------------------

    def snapshot(self, session_id: str) -> SessionSnapshot:
        """A consistent copy of the whole session."""
        ...

    def restore(self, snapshot: SessionSnapshot) -> Session:
        """Write a whole session in one transaction; a taken or malformed id gets replaced."""
        ...

    def close(self) -> None: ...
