"""Render prompt templates: the built-in `.md` files, each overridable by a file of the same
name in an override directory that a caller opts into.

Nothing outside the package is read by default: a library caller gets the built-ins (or
passes its own text, see `render_source` and `CompactionTemplates`). The command line opts
into the user's `<config dir>/prompts/` with `use_override_dir(user_override_dir())`."""

from __future__ import annotations

import os
import re
from functools import cache, lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gosling.prompts.locations import user_dirs

if TYPE_CHECKING:
    import jinja2

BUILTIN_DIR = Path(__file__).resolve().parent / "templates"
_BACKTICK_RUN = re.compile("`+")


class PromptError(Exception):
    """A template is missing, broken, or was rendered without a variable it needs."""


def code_fence(text: str) -> str:
    """Fence `text` with more backticks than its longest backtick run (at least three)."""
    longest = max((len(run) for run in _BACKTICK_RUN.findall(text)), default=0)
    fence = "`" * max(longest + 1, 3)
    return f"{fence}\n{text.rstrip(chr(10))}\n{fence}"


_override_dir: Path | None = None


def user_override_dir() -> Path:
    """Where the command line's user overrides live: `<config dir>/prompts/`."""
    return user_dirs().config / "prompts"


def use_override_dir(directory: str | os.PathLike[str] | None) -> Path | None:
    """Make `render` prefer files in `directory` over the built-ins, process-wide (None: the
    built-ins only, the default). Returns the previous directory so a caller can restore it.
    The command line calls this with `user_override_dir()` when it starts."""
    global _override_dir
    previous = _override_dir
    _override_dir = None if directory is None else Path(directory).expanduser()
    return previous


def override_dir() -> Path | None:
    """The override directory in use, or None when only the built-ins are read."""
    return _override_dir


def template_path(name: str) -> Path:
    """The file that `render(name)` would use: the override if one is in use and present,
    else the built-in."""
    filename = name if name.endswith(".md") else f"{name}.md"
    if os.sep in filename or "/" in filename:
        raise PromptError(f"prompt name {name!r} must be a plain file name like 'system.md'")
    if _override_dir is not None:
        user_file = _override_dir / filename
        if user_file.is_file():
            return user_file
    builtin = BUILTIN_DIR / filename
    if not builtin.is_file():
        raise PromptError(f"no prompt template named {filename!r} (looked in {BUILTIN_DIR})")
    return builtin


@cache
def _environment() -> jinja2.Environment:
    import jinja2

    env = jinja2.Environment(
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        autoescape=False,
        keep_trailing_newline=False,
    )
    env.filters["code_fence"] = code_fence
    return env


@cache
def _compile(path: Path, mtime_ns: int) -> jinja2.Template:
    import jinja2

    try:
        source = path.read_text(encoding="utf-8")
        return _environment().from_string(source)
    except (OSError, UnicodeDecodeError) as exc:
        raise PromptError(f"cannot read prompt template {path}: {exc}") from exc
    except jinja2.TemplateSyntaxError as exc:
        raise PromptError(
            f"prompt template {path} line {exc.lineno}: {exc.message}; fix or delete the file"
        ) from exc


def render(name: str, /, **context: Any) -> str:
    """Render the template `name` with `context`; the result is stripped of outer whitespace."""
    path = template_path(name)
    return _render(_compile(path, path.stat().st_mtime_ns), str(path), context)


def render_source(source: str, /, *, label: str = "given as text", **context: Any) -> str:
    """Render template text passed in by a caller (instead of a file), with the same engine,
    filters and strictness as `render`. `label` names the template in errors."""
    import jinja2

    try:
        template = _compile_source(source)
    except jinja2.TemplateSyntaxError as exc:
        raise PromptError(f"prompt template {label} line {exc.lineno}: {exc.message}") from exc
    return _render(template, label, context)


@lru_cache(maxsize=32)
def _compile_source(source: str) -> jinja2.Template:
    return _environment().from_string(source)


def _render(template: jinja2.Template, label: str, context: dict[str, Any]) -> str:
    import jinja2

    try:
        return template.render(**context).strip()
    except jinja2.UndefinedError as exc:
        raise PromptError(f"prompt template {label}: {exc.message}") from exc
    except jinja2.TemplateError as exc:
        raise PromptError(f"prompt template {label}: {exc}") from exc


def builtin_source(name: str) -> str:
    """The text of the built-in template `name` (never an override), to start a custom one."""
    filename = name if name.endswith(".md") else f"{name}.md"
    path = BUILTIN_DIR / filename
    if "/" in filename or os.sep in filename or not path.is_file():
        raise PromptError(f"no built-in prompt template named {filename!r} (in {BUILTIN_DIR})")
    return path.read_text(encoding="utf-8")
