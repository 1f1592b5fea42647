"""The structured compaction summary (reference §5): find the JSON document in the model's
reply, decode it leniently, render it as markdown.

Anything that is not a complete, marker-anchored summary document falls back to the raw
reply, unchanged. That fallback is lossless, so the rules for accepting a document are
strict: it must sit right after a ```json marker or right at the start of the text (or of
the text after `</analysis>`), and it must close its braces. Truncated JSON is never repaired:
repair would silently drop the late sections (current work, next step) that matter most for
carrying on.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator, Mapping
from dataclasses import asdict, dataclass, field, replace
from typing import TYPE_CHECKING, Any

from gosling.context_mgmt.templates import DEFAULT_TEMPLATES, SUMMARY_TEMPLATE, CompactionTemplates
from gosling.prompts import PromptError

if TYPE_CHECKING:
    from gosling.context_mgmt.artifact_trail import ArtifactTrail
    from gosling.context_mgmt.artifact_trail import FileTouch as ArtifactTrailFile

logger = logging.getLogger(__name__)

ANALYSIS_START = "<analysis>"
ANALYSIS_END = "</analysis>"
JSON_FENCE = "```json"

LIST_FIELDS = (
    "user_intent",
    "technical_concepts",
    "errors_and_fixes",
    "problem_solving",
    "user_messages",
    "pending_tasks",
)
TEXT_FIELDS = ("current_work", "next_step")
KNOWN_FIELDS = frozenset({*LIST_FIELDS, "files", *TEXT_FIELDS})


@dataclass(frozen=True)
class FileActivity:
    """One file the session touched: what happened to it and the code that matters."""

    path: str = ""
    summary: str = ""
    key_code: str | None = None
    activity: str | None = None
    """What the session's tool calls did to it (`read 2×; edited (+3/−1 lines)`), from the
    artifact trail; None for a file only the model named."""


@dataclass(frozen=True)
class StructuredSummary:
    """The nine fields the compaction prompt asks for, lists ordered most important first.

    `extra` keeps unknown top-level fields (a customised prompt may add some) for customised
    render templates; it never makes an otherwise empty summary usable.
    """

    user_intent: tuple[str, ...] = ()
    technical_concepts: tuple[str, ...] = ()
    files: tuple[FileActivity, ...] = ()
    errors_and_fixes: tuple[str, ...] = ()
    problem_solving: tuple[str, ...] = ()
    user_messages: tuple[str, ...] = ()
    pending_tasks: tuple[str, ...] = ()
    current_work: str | None = None
    next_step: str | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def parse(cls, text: str) -> StructuredSummary | None:
        """The first usable summary document in `text`, or None to keep the raw text."""
        for candidate in json_candidates(text):
            try:
                value = json.loads(candidate, strict=False)
            except ValueError:
                continue
            if not isinstance(value, dict):
                continue
            summary = cls.from_json(value)
            if not summary.is_empty():
                return summary
        return None

    @classmethod
    def from_json(cls, document: Mapping[str, Any]) -> StructuredSummary:
        """Decode a JSON object leniently; blank entries are dropped."""
        return cls(
            user_intent=_clean_list(document.get("user_intent")),
            technical_concepts=_clean_list(document.get("technical_concepts")),
            files=tuple(_files(document.get("files"))),
            errors_and_fixes=_clean_list(document.get("errors_and_fixes")),
            problem_solving=_clean_list(document.get("problem_solving")),
            user_messages=_clean_list(document.get("user_messages")),
            pending_tasks=_clean_list(document.get("pending_tasks")),
            current_work=_clean_text(document.get("current_work")),
            next_step=_clean_text(document.get("next_step")),
            extra={k: v for k, v in document.items() if k not in KNOWN_FIELDS},
        )

    def is_empty(self) -> bool:
        return not (
            any(getattr(self, name) for name in LIST_FIELDS)
            or self.files
            or self.current_work is not None
            or self.next_step is not None
        )

    def template_context(
        self, trail: ArtifactTrail | None = None, *, trail_only: bool = False
    ) -> dict[str, Any]:
        context = asdict(self)
        context["extra"] = dict(self.extra)
        shown = trail is not None and (
            (trail_only and trail.files)
            or trail.commands
            or trail.errors
            or trail.tests_fixed
            or trail.folded_files
        )
        # Without commands, errors or tests the trail's files are all in `files` already.
        context["trail"] = trail.template_context() if trail is not None and shown else None
        context["trail_only"] = trail_only
        return context

    def with_trail(self, trail: ArtifactTrail) -> StructuredSummary:
        """`files` with the trail merged in: each file the model listed gets what the tool
        calls did to it, and changed files it left out are added (read-only ones too, after
        them), so no touched file depends on the model remembering it."""
        recorded = {touch.path: touch for touch in trail.files}
        merged: list[FileActivity] = []
        for item in self.files:
            touch = recorded.pop(item.path, None) or _by_suffix(recorded, item.path)
            merged.append(replace(item, activity=touch.activity) if touch else item)
        rest = sorted(recorded.values(), key=lambda t: not t.changed)
        merged.extend(FileActivity(path=t.path, activity=t.activity) for t in rest)
        return replace(self, files=tuple(merged))

    def render(
        self, templates: CompactionTemplates | None = None, trail: ArtifactTrail | None = None
    ) -> str:
        """Markdown through `compaction_summary.md` (a user override wins), or through
        `templates.summary` when the caller passes one; `trail` adds the artifact trail.

        Raises `prompts.PromptError` when the template is broken; see `apply_structured`.
        """
        return (templates or DEFAULT_TEMPLATES).render_summary(**self.template_context(trail))


def _by_suffix(recorded: dict[str, ArtifactTrailFile], path: str) -> ArtifactTrailFile | None:
    """The recorded file the model meant when it shortened an absolute path (or the other way
    round): one whose path ends with the other's, at a `/`."""
    if not path.strip():
        return None
    for key in list(recorded):
        if key.endswith("/" + path.lstrip("./")) or path.endswith("/" + key.lstrip("./")):
            return recorded.pop(key)
    return None


def render_trail(trail: ArtifactTrail, templates: CompactionTemplates | None = None) -> str:
    """The trail alone, through the same template (`trail_only`), to follow a raw summary."""
    if trail.is_empty():
        return ""
    context = StructuredSummary().template_context(trail, trail_only=True)
    return (templates or DEFAULT_TEMPLATES).render_summary(**context)


def apply_structured(
    raw: str, templates: CompactionTemplates | None = None, trail: ArtifactTrail | None = None
) -> tuple[str, StructuredSummary | None]:
    """The text to keep as the summary: the rendered document, or `raw` unchanged when there
    is no usable document or the template fails (logged, so a broken override is findable).
    `trail` is merged into the document's files and rendered with it; after a raw summary it
    follows on its own."""
    summary = StructuredSummary.parse(raw)
    if summary is None:
        return with_raw_trail(raw, templates, trail)
    if trail is not None:
        summary = summary.with_trail(trail)
    try:
        rendered = summary.render(templates, trail)
    except PromptError as exc:
        logger.warning("cannot render the structured compaction summary, keeping raw: %s", exc)
        return raw, None
    if not rendered.strip():
        logger.warning(
            "the structured compaction summary rendered empty (broken %s override?), "
            "keeping the raw output",
            SUMMARY_TEMPLATE,
        )
        return raw, None
    return rendered, summary


def with_raw_trail(
    raw: str, templates: CompactionTemplates | None, trail: ArtifactTrail | None
) -> tuple[str, None]:
    """A raw (unparsed) summary followed by the trail rendered on its own."""
    if trail is None or trail.is_empty():
        return raw, None
    try:
        rendered = render_trail(trail, templates)
    except PromptError as exc:
        logger.warning("cannot render the artifact trail, keeping the raw summary: %s", exc)
        return raw, None
    return (f"{raw.rstrip()}\n\n{rendered}" if rendered.strip() else raw), None


# -- lenient decoding (reference §5.3) --------------------------------------------------------


def stringify(value: Any) -> str:
    """Any JSON value as text: objects as `k: v; k: v` in document order, arrays joined with
    `; `, null as empty, numbers and booleans as their JSON text."""
    if isinstance(value, str):
        return value
    if value is None:
        return ""
    if isinstance(value, dict):
        return "; ".join(f"{k}: {stringify(v)}" for k, v in value.items())
    if isinstance(value, list):
        return "; ".join(stringify(item) for item in value)
    return json.dumps(value)


def _clean_list(value: Any) -> tuple[str, ...]:
    if value is None:
        items: list[str] = []
    elif isinstance(value, list):
        items = [stringify(item) for item in value]
    else:
        items = [stringify(value)]
    return tuple(item for item in items if item.strip())


def _clean_text(value: Any) -> str | None:
    if value is None:
        return None
    text = stringify(value)
    return text if text.strip() else None


def _files(value: Any) -> Iterator[FileActivity]:
    if value is None:
        return
    for item in value if isinstance(value, list) else [value]:
        if isinstance(item, dict):
            activity = FileActivity(
                path=stringify(item.get("path")),
                summary=stringify(item.get("summary")),
                key_code=_clean_text(item.get("key_code")),
            )
            if activity.path.strip() or activity.summary.strip() or activity.key_code:
                yield activity
        else:
            path = stringify(item)
            if path.strip():
                yield FileActivity(path=path)


# -- candidate extraction (reference §5.4, rule V3) -------------------------------------------


def json_candidates(text: str) -> list[str]:
    """Possible summary documents, most likely first.

    For each `</analysis>` from the last back to the first: the ```json blocks after it
    (last first), then an object starting right after it. A candidate must contain every
    `</analysis>` that follows its cut point: that proves those were quoted inside the
    summary, and keeps a fenced example in the scratchpad (which precedes the real
    terminator) from ever being taken. Last, an object starting the whole text.

    A reply that opens a scratchpad and never closes it (cut off while thinking) has no
    candidates at all: everything in it is scratch work, examples included.
    """
    if ANALYSIS_END not in text and text.lstrip().startswith(ANALYSIS_START):
        return []
    cuts = [i + len(ANALYSIS_END) for i in _find_all(text, ANALYSIS_END)] or [0]
    candidates: list[str] = []
    for cut in reversed(cuts):
        tail = text[cut:]
        later = tail.count(ANALYSIS_END)
        for candidate in [*_fenced_objects(tail), leading_object(tail)]:
            if candidate is not None and candidate.count(ANALYSIS_END) == later:
                candidates.append(candidate)
    whole = leading_object(text)
    if whole is not None:
        candidates.append(whole)
    return [c for i, c in enumerate(candidates) if i == 0 or c != candidates[i - 1]]


def _find_all(text: str, marker: str) -> list[int]:
    found: list[int] = []
    start = text.find(marker)
    while start != -1:
        found.append(start)
        start = text.find(marker, start + len(marker))
    return found


def _fenced_objects(text: str) -> list[str]:
    """The object right after each ```json marker, last marker first (a string value may
    quote a fenced snippet of its own, which must not shadow the real block)."""
    objects = []
    for start in reversed(_find_all(text, JSON_FENCE)):
        found = leading_object(text[start + len(JSON_FENCE) :])
        if found is not None:
            objects.append(found)
    return objects


def leading_object(text: str) -> str | None:
    """The brace-balanced object at the start of `text` (after whitespace), or None when the
    text does not start with `{` or the object never closes. Braces in strings don't count."""
    body = text.lstrip()
    if not body.startswith("{"):
        return None
    depth = 0
    in_string = False
    escaped = False
    for index, char in enumerate(body):
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
            if depth == 0:
                return body[: index + 1]
    return None
