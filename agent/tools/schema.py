"""JSON schemas for tool arguments, derived from a typed Python function and its docstring.

The function signature is the single source of truth: a pydantic model built from it both
produces the schema the model sees and validates the arguments the model sends, so the two
cannot drift apart. Descriptions come from the Google-style `Args:` section of the docstring.
"""

from __future__ import annotations

import inspect
import re
import typing
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, create_model

_SECTION = re.compile(r"^(Args|Arguments|Parameters|Returns|Raises|Yields|Examples?|Notes?):\s*$")
_ARG_LINE = re.compile(r"^(\*{0,2}\w+)\s*(?:\([^)]*\))?\s*:\s*(.*)$")


@dataclass(frozen=True)
class ParsedDocstring:
    summary: str
    """Everything before the first section header: the tool description."""
    params: dict[str, str]
    """Parameter name -> description, from the `Args:` section."""


def parse_docstring(doc: str | None) -> ParsedDocstring:
    """Split a Google-style docstring into its description and per-argument descriptions."""
    lines = inspect.cleandoc(doc or "").splitlines()
    summary: list[str] = []
    params: dict[str, str] = {}
    section: str | None = None
    current: str | None = None
    arg_indent: int | None = None
    for line in lines:
        header = _SECTION.match(line.strip()) if not line.startswith((" ", "\t")) else None
        if header:
            section, current, arg_indent = header.group(1), None, None
            continue
        if section is None:
            summary.append(line)
            continue
        if section not in ("Args", "Arguments", "Parameters") or not line.strip():
            continue
        indent = len(line) - len(line.lstrip())
        match = _ARG_LINE.match(line.strip())
        if match and (arg_indent is None or indent <= arg_indent):
            arg_indent = indent
            current = match.group(1).lstrip("*")
            params[current] = match.group(2).strip()
        elif current is not None:
            params[current] = f"{params[current]} {line.strip()}".strip()
    return ParsedDocstring("\n".join(summary).strip(), params)


def arguments_model(
    fn: Callable[..., Any], *, skip: Callable[[Any], bool], model_name: str
) -> tuple[type[BaseModel], tuple[str, ...]]:
    """A pydantic model of `fn`'s parameters and the names of the parameters left out of it.

    Parameters whose type `skip` accepts (for example the tool context) are injected by the
    caller, not sent by the model, so they are not part of the schema.
    """
    hints = typing.get_type_hints(fn, include_extras=True)
    docs = parse_docstring(fn.__doc__).params
    fields: dict[str, Any] = {}
    injected: list[str] = []
    for name, param in inspect.signature(fn).parameters.items():
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            raise TypeError(f"tool function {fn.__name__} may not take *args or **kwargs")
        annotation = hints.get(name)
        if annotation is None:
            raise TypeError(f"tool function {fn.__name__}: parameter {name!r} needs a type hint")
        if skip(annotation):
            injected.append(name)
            continue
        default = ... if param.default is param.empty else param.default
        fields[name] = (annotation, Field(default, description=docs.get(name)))
    model = create_model(model_name, __config__=ConfigDict(extra="forbid"), **fields)
    return model, tuple(injected)


def model_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The model's JSON schema, made compact and self-contained for providers.

    References to `$defs` are inlined, `title` keys dropped and `X | None = None` written as
    plain `X` (optional because it is not required), which every provider accepts.
    """
    raw = model.model_json_schema()
    defs: dict[str, Any] = raw.pop("$defs", {})
    schema: dict[str, Any] = _clean(raw, defs, depth=0)
    schema.setdefault("properties", {})
    if not schema.get("required"):
        schema.pop("required", None)
    schema["additionalProperties"] = False
    return schema


def _clean(node: Any, defs: dict[str, Any], depth: int) -> Any:
    if depth > 20:
        raise TypeError("tool argument types may not be recursive")
    if isinstance(node, list):
        return [_clean(item, defs, depth + 1) for item in node]
    if not isinstance(node, dict):
        return node
    ref = node.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        merged = {
            **defs[ref.removeprefix("#/$defs/")],
            **{k: v for k, v in node.items() if k != "$ref"},
        }
        return _clean(merged, defs, depth + 1)
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key == "title":
            continue
        if key == "properties" and isinstance(value, dict):
            out[key] = {name: _clean(sub, defs, depth + 1) for name, sub in value.items()}
        else:
            out[key] = _clean(value, defs, depth + 1)
    return _drop_null_branch(out)


def _drop_null_branch(node: dict[str, Any]) -> dict[str, Any]:
    options = node.get("anyOf")
    if not isinstance(options, list) or node.get("default", ...) is not None:
        return node
    non_null = [o for o in options if o != {"type": "null"}]
    if len(non_null) != 1 or len(non_null) == len(options):
        return node
    rest = {k: v for k, v in node.items() if k not in ("anyOf", "default")}
    return {**non_null[0], **rest}
