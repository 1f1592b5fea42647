"""Tolerant reading of JSON and JSON Lines written by other tools."""

from __future__ import annotations

import ast
import math
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

from gosling.conversation import ImageContent, TextContent
from gosling.sessions.importers.builder import TranscriptBuilder
from gosling.sessions.json_limits import load_json

COMMENT_PREFIXES = ("//", "#")


def iter_json_lines(text: str, builder: TranscriptBuilder | None = None) -> Iterator[Any]:
    """The decoded values of the JSON lines in `text`.

    Blank lines are ignored; comment lines (`//`, `#`) and lines that are not JSON are counted
    as skipped on `builder`, never fatal: people annotate and truncate these logs.
    """
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped:
            continue
        if stripped.startswith(COMMENT_PREFIXES):
            if builder is not None:
                builder.skip("comment line")
            continue
        try:
            yield load_json(stripped)
        except ValueError:
            if builder is not None:
                builder.skip("line is not JSON")


def as_dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def as_str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def epoch_seconds(value: Any) -> int | None:
    """Seconds since the epoch from an ISO 8601 string or a number (seconds or milliseconds);
    times without a zone are taken as UTC so an import does not depend on the local zone."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        if not math.isfinite(value):
            return None
        return int(value / 1000 if value > 10**11 else value)
    if isinstance(value, str):
        try:
            moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            return None
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=UTC)
        return int(moment.timestamp())
    return None


def decode_arguments(raw: Any) -> tuple[dict[str, Any], str | None]:
    """Tool-call arguments as a dict, plus an error text when they were not valid JSON.

    OpenAI-style logs keep arguments as a JSON string; a model that wrote broken JSON still
    made the call, so the request is kept with `error` set and the raw text in it.
    """
    if raw is None or raw == "":
        return {}, None
    if isinstance(raw, dict):
        return raw, None
    if not isinstance(raw, str):
        return {"value": raw}, None
    try:
        value = load_json(raw)
    except ValueError:
        return {}, f"arguments are not valid JSON: {raw}"
    return (value if isinstance(value, dict) else {"value": value}), None


def literal_or_json(text: str) -> Any:
    """A value logged either as JSON or as a Python repr (some tools `str()` their dicts)."""
    try:
        return load_json(text)
    except ValueError:
        pass
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return None


def image_from_data_url(url: str) -> ImageContent | None:
    """An image from a `data:<mime>;base64,<data>` URL; None for anything else."""
    if not url.startswith("data:") or ";base64," not in url:
        return None
    header, data = url[5:].split(";base64,", 1)
    return ImageContent(data=data, mime_type=header or "image/png")


def openai_content_parts(
    content: Any, builder: TranscriptBuilder
) -> list[TextContent | ImageContent]:
    """Parts from OpenAI-style `content`: a string, or a list of text and image parts."""
    if isinstance(content, str):
        return [TextContent(text=content)] if content else []
    parts: list[TextContent | ImageContent] = []
    for item in as_list(content):
        if isinstance(item, str):
            parts.append(TextContent(text=item))
            continue
        item = as_dict(item)
        kind = as_str(item.get("type"))
        text = as_str(item.get("text"))
        if kind in ("text", "input_text", "output_text") and text is not None:
            if text:
                parts.append(TextContent(text=text))
        elif kind in ("image_url", "input_image"):
            url_field = item.get("image_url")
            url = as_str(as_dict(url_field).get("url")) or as_str(url_field) or ""
            image = image_from_data_url(url)
            parts.append(image if image is not None else TextContent(text=f"[image: {url}]"))
        else:
            builder.skip(f"content part {kind!r}")
    return parts
