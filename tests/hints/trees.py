"""Building small file trees for hint tests."""

from __future__ import annotations

from pathlib import Path


def write(path: Path, text: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


CORPUS = Path(__file__).resolve().parents[2] / "corpus" / "hints" / "cloudflare-agents"
"""A real tree of nested AGENTS.md and .gitignore files (read-only; tests copy it)."""


def copy_corpus(destination: Path) -> Path:
    """A writable copy of the corpus tree made a git root by an empty `.git` dir."""
    import shutil

    shutil.copytree(CORPUS, destination, copy_function=shutil.copyfile)
    for directory in [destination, *destination.rglob("*")]:
        if directory.is_dir():
            directory.chmod(0o755)
    (destination / ".git").mkdir()
    return destination
