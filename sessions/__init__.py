"""Durable sessions: the `SessionStore` interface, its SQLite implementation, export/import.

Nothing at import time touches the disk; callers pick the file (by default
`SqliteSessionStore.open_default(user_dirs().data)`).
"""

from gosling.sessions.errors import (
    CorruptStore,
    ImportFailed,
    MessageConflict,
    SchemaTooNew,
    SecretRefused,
    SessionBusy,
    SessionNotFound,
    SessionStoreError,
    StoreUnusable,
    StoreUnwritable,
)
from gosling.sessions.importing import (
    ExportFormat,
    Importer,
    export_session,
    import_jsonl,
    import_session,
    importers,
    parse_session_text,
    register_importer,
)
from gosling.sessions.records import (
    Session,
    SessionChanges,
    SessionSnapshot,
    TokenTotals,
    UsageKind,
    UsageRecord,
)
from gosling.sessions.schema import LATEST_VERSION
from gosling.sessions.sqlite_store import DEFAULT_FILENAME, SqliteSessionStore
from gosling.sessions.store import SessionStore

__all__ = [
    "DEFAULT_FILENAME",
    "LATEST_VERSION",
    "CorruptStore",
    "ExportFormat",
    "ImportFailed",
    "Importer",
    "MessageConflict",
    "SchemaTooNew",
    "SecretRefused",
    "Session",
    "SessionBusy",
    "SessionChanges",
    "SessionNotFound",
    "SessionSnapshot",
    "SessionStore",
    "SessionStoreError",
    "SqliteSessionStore",
    "StoreUnusable",
    "StoreUnwritable",
    "TokenTotals",
    "UsageKind",
    "UsageRecord",
    "export_session",
    "import_jsonl",
    "import_session",
    "importers",
    "parse_session_text",
    "register_importer",
]
