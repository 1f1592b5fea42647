"""The Python examples of the README's "Use as a library" section and of docs/library.md, as
the test suite runs them (each block is a program of its own)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
GUIDE = ROOT / "docs" / "library.md"
LIBRARY_SECTION = "## Use as a library"

_BLOCK = re.compile(r"^```python\n(.*?)^```$", re.MULTILINE | re.DOTALL)


def python_blocks(text: str) -> list[str]:
    return _BLOCK.findall(text)


def readme_examples() -> list[str]:
    text = README.read_text(encoding="utf-8")
    start = text.index(LIBRARY_SECTION)
    end = text.find("\n## ", start + len(LIBRARY_SECTION))
    return python_blocks(text[start : end if end != -1 else None])


def guide_examples() -> list[str]:
    return python_blocks(GUIDE.read_text(encoding="utf-8"))


def all_examples() -> dict[str, str]:
    """`{id: code}`: `readme-1`, ..., `library-1`, ..."""
    found = {f"readme-{n}": code for n, code in enumerate(readme_examples(), 1)}
    found.update({f"library-{n}": code for n, code in enumerate(guide_examples(), 1)})
    return found
