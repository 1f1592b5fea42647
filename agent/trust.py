"""Folder trust: which project files the user has agreed to act on.

A cloned repository is untrusted input. Its project-level files that can run code, move data
or loosen safety (`.gosling/config.toml`, `.mcp.json`, `.claude/settings.json`; any such file
added later goes into `PROJECT_FILES`) count only once the user trusts the folder: `gosling
trust DIR`, the prompt of `gosling session`, or `--trust-project` for one run. Trust is
stored per real (resolved) project path with the sha256 of each file's content, in `<state
dir>/trust.json` (written atomically, mode 0600); a changed, added or removed file makes the
folder untrusted again. The repository's files that those project files run by path
(`scripts/server.py` in `.mcp.json`, a hook's `./hooks/check.sh`: `agent.trust_scripts`) are
hashed with them, so a checkout that changes such a script untrusts the folder too.

`trust_root(dir)` is the folder that trust and revoke name, from anywhere inside it (and
through a symlink): the directory holding the nearest `.gosling/config.toml` up to the git
root, else the git root, else the directory itself. `why_untrusted` says why a folder the
user once trusted is not trusted now (a file that changed or was added, or a file gosling
started counting after the trust was recorded, such as `.claude/settings.json`).
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

PROJECT_MCP_FILE = Path(".mcp.json")
"""MCP servers a project declares in Claude Code's format; started only when trusted."""
PROJECT_CLAUDE_SETTINGS = Path(".claude") / "settings.json"
"""Claude Code's project settings: its `hooks` run when the user's `hook_settings` names it
and the folder is trusted."""
PROJECT_FILES: tuple[Path, ...] = (
    Path(".gosling") / "config.toml",
    PROJECT_MCP_FILE,
    PROJECT_CLAUDE_SETTINGS,
)
"""Project files (relative to the project root) that are acted on only when trusted."""
TRUST_FILE = "trust.json"
_VERSION = 2
LEGACY_GATED: tuple[Path, ...] = (Path(".gosling") / "config.toml", PROJECT_MCP_FILE)
"""What trust covered before entries recorded it (`.claude/settings.json` and the scripts
run by path came later)."""


def gated_files(project_dir: Path) -> list[Path]:
    """The gated project files (`PROJECT_FILES`) that exist in `project_dir`."""
    return [project_dir / rel for rel in PROJECT_FILES if (project_dir / rel).is_file()]


def project_files(project_dir: Path) -> list[Path]:
    """Everything trust covers in `project_dir`: the gated files that exist, and the files
    of the repository their commands run by path."""
    from gosling.agent.trust_scripts import scripts_run_by_path

    gated = gated_files(project_dir)
    return [*gated, *scripts_run_by_path(project_dir, gated)]


def trust_root(directory: Path) -> Path:
    """The project folder that `directory` (anywhere inside it) belongs to, resolved."""
    start = directory.resolve()
    for candidate in (start, *start.parents):
        if (candidate / ".gosling" / "config.toml").is_file():
            return candidate
        if (candidate / ".git").exists():
            return candidate
    return start


def file_digest(path: Path) -> str | None:
    """sha256 of the file's bytes; None when it cannot be read."""
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return None


def _key(project_dir: Path) -> str:
    return str(project_dir.resolve())


@dataclass(frozen=True)
class TrustedProject:
    path: str
    files: dict[str, str]
    """File path relative to the project -> sha256 of the content that was trusted."""
    trusted_at: float | None
    """When (Unix time); None for an entry that does not say (written by hand)."""


class TrustStore:
    """The user's trust decisions, one JSON file. An unreadable file trusts nothing."""

    def __init__(self, path: Path) -> None:
        self.path = path

    @classmethod
    def default(cls) -> TrustStore:
        from gosling.prompts.locations import user_dirs

        return cls(user_dirs().state / TRUST_FILE)

    def _load(self) -> dict[str, Any]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        projects = data.get("projects") if isinstance(data, dict) else None
        return projects if isinstance(projects, dict) else {}

    def _save(self, projects: dict[str, Any]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        text = json.dumps({"version": _VERSION, "projects": projects}, indent=2, sort_keys=True)
        fd, temp = tempfile.mkstemp(dir=self.path.parent, prefix=".trust.", suffix=".tmp")
        try:
            os.fchmod(fd, 0o600)
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(text + "\n")
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(temp, self.path)
        except BaseException:
            Path(temp).unlink(missing_ok=True)
            raise

    def is_trusted(self, project_dir: Path, files: Iterable[Path]) -> bool:
        """True when every file in `files` has the content the user trusted in `project_dir`
        (a gated file added since, or one whose content changed, makes it False)."""
        root = project_dir.resolve()
        entry = self._load().get(_key(root))
        if not isinstance(entry, dict) or not isinstance(entry.get("files"), dict):
            return False
        recorded: dict[str, Any] = entry["files"]
        current = {_relative(root, f): file_digest(f) for f in files}
        return bool(current) and all(
            digest is not None and recorded.get(rel) == digest for rel, digest in current.items()
        )

    def was_trusted(self, project_dir: Path) -> bool:
        """Whether the user trusted `project_dir` once (its files may have changed since)."""
        return isinstance(self._load().get(_key(project_dir.resolve())), dict)

    def why_untrusted(self, project_dir: Path, files: Iterable[Path]) -> str | None:
        """Why `project_dir`, trusted once, is not trusted with `files` now; None when it is
        trusted or never was."""
        root = project_dir.resolve()
        entry = self._load().get(_key(root))
        if not isinstance(entry, dict) or not isinstance(entry.get("files"), dict):
            return None
        recorded: dict[str, Any] = entry["files"]
        gated = entry.get("gated")
        counted = {str(p) for p in (gated if isinstance(gated, list) else LEGACY_GATED)}
        scripts_counted = isinstance(gated, list)
        gated_now = {str(p) for p in PROJECT_FILES}
        reasons = []
        for path in files:
            rel = _relative(root, path)
            digest = file_digest(path)
            if rel in recorded:
                if recorded[rel] != digest:
                    reasons.append(f"{rel} changed since you trusted the folder")
            elif rel in gated_now and rel not in counted:
                reasons.append(
                    f"you trusted the folder before gosling counted {rel} (it can run "
                    "commands); review it"
                )
            elif rel not in gated_now and not scripts_counted:
                reasons.append(
                    f"you trusted the folder before gosling hashed {rel}, which a trusted "
                    "command runs; review it"
                )
            else:
                reasons.append(f"{rel} was added since you trusted the folder")
        return "; ".join(reasons) or None

    def trust(self, project_dir: Path, files: Iterable[Path]) -> TrustedProject:
        """Record the current content of `files` as trusted for `project_dir`."""
        root = project_dir.resolve()
        digests: dict[str, str] = {}
        for path in files:
            digest = file_digest(path)
            if digest is None:
                raise OSError(f"cannot read {path} to trust it")
            digests[_relative(root, path)] = digest
        projects = self._load()
        entry = TrustedProject(_key(root), digests, time.time())
        projects[entry.path] = {
            "files": digests,
            "trusted_at": entry.trusted_at,
            "gated": [str(p) for p in PROJECT_FILES],
        }
        self._save(projects)
        return entry

    def trusted_folder(self, directory: Path) -> Path | None:
        """The trusted folder `directory` is in (itself or its nearest trusted parent)."""
        projects = self._load()
        start = directory.resolve()
        for candidate in (start, *start.parents):
            if isinstance(projects.get(_key(candidate)), dict):
                return candidate
        return None

    def revoke(self, project_dir: Path) -> Path | None:
        """Forget the trust of the folder `project_dir` is in (`trusted_folder`); the folder
        whose trust was forgotten, or None when none was trusted."""
        folder = self.trusted_folder(project_dir)
        if folder is None:
            return None
        projects = self._load()
        projects.pop(_key(folder), None)
        self._save(projects)
        return folder

    def entries(self) -> list[TrustedProject]:
        found = []
        for path, entry in sorted(self._load().items()):
            if isinstance(entry, dict) and isinstance(entry.get("files"), dict):
                when = entry.get("trusted_at")
                at = float(when) if isinstance(when, int | float) and when > 0 else None
                found.append(TrustedProject(path, dict(entry["files"]), at))
        return found


def _relative(root: Path, path: Path) -> str:
    resolved = path.resolve()
    return str(resolved.relative_to(root)) if resolved.is_relative_to(root) else str(resolved)
