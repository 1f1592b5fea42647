"""The tool interface: what a tool is, what it returns and what it is given when called.

A tool's failure is a result the model reads (`is_error=True`), never an exception that
escapes into the reply loop: `Tool.call` turns bad arguments and raised errors into results.
Only cancellation propagates, so that a cancelled turn really stops.
"""

from __future__ import annotations

import copy
import re
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable, Hashable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from pydantic import BaseModel, ValidationError

from gosling.agent.tools.schema import arguments_model, model_schema, parse_docstring
from gosling.conversation import ImageContent, Message, TextContent
from gosling.providers.base import ToolSpec

TOOL_NAME_PATTERN = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
"""What every provider accepts as a tool name (OpenAI's rule is the strictest)."""

NAME_SEPARATOR = "__"
"""Between the extension and the tool in an exposed name: `developer__shell`."""

ResultPart = TextContent | ImageContent


class ToolError(Exception):
    """Raised inside a tool to fail with a message written for the model (no exception type)."""


@dataclass(frozen=True)
class ToolAnnotations:
    """Hints about a tool's effects; `smart_approve` runs read-only tools without asking."""

    read_only: bool = False
    """The tool does not change anything outside gosling."""
    destructive: bool = False
    """The tool may overwrite or delete things."""
    open_world: bool = False
    """The tool reaches beyond the working directory (network, arbitrary programs)."""


@dataclass(frozen=True)
class ToolResult:
    """What a tool call returns: content parts for the model and whether the call failed."""

    content: tuple[ResultPart, ...] = ()
    is_error: bool = False

    @classmethod
    def text(cls, text: str) -> ToolResult:
        return cls((TextContent(text=text),))

    @classmethod
    def error(cls, text: str) -> ToolResult:
        return cls((TextContent(text=text),), is_error=True)

    def text_content(self) -> str:
        """The text parts joined by newlines (images are left out)."""
        return "\n".join(p.text for p in self.content if isinstance(p, TextContent))


class ExtensionData(Protocol):
    """Per-session storage that tools may read and write (the todo list lives here).

    Values must be JSON-serializable so a session store can persist them.
    """

    def get(self, key: str) -> Any: ...

    def set(self, key: str, value: Any) -> None: ...


class MemoryExtensionData:
    """`ExtensionData` in a dict: for tests and for runs without a session store."""

    def __init__(self, initial: dict[str, Any] | None = None) -> None:
        self.values: dict[str, Any] = dict(initial or {})

    def get(self, key: str) -> Any:
        return self.values.get(key)

    def set(self, key: str, value: Any) -> None:
        self.values[key] = value


@dataclass(frozen=True)
class ToolContext:
    """What a tool call is given besides its arguments.

    Cancellation needs no field here: the agent cancels the asyncio task running the call,
    and tools clean up (kill their processes) when `CancelledError` reaches them.
    """

    working_dir: Path
    extension_data: ExtensionData = field(default_factory=MemoryExtensionData)
    session_messages: Callable[[], Sequence[Message]] | None = None
    """Every message of the session, visible or not (`context__recall` reads hidden tool
    output from them); None when the call runs outside a session."""
    session_id: str | None = None
    """The stored session's id (its spill files live under it); None when not stored."""


class Tool(ABC):
    """A named, described, schema-checked async operation the model can ask for."""

    name: str
    description: str
    input_schema: dict[str, Any]
    annotations: ToolAnnotations
    caps_own_output: bool = False
    """The tool keeps its results small by its own rules (the shell's tail and spill file,
    `view`'s line ranges), so the general cap on tool results leaves them alone."""

    @abstractmethod
    async def run(self, arguments: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """Do the work; may raise (`ToolError` for a message meant for the model)."""

    async def call(self, arguments: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """Run the tool; every failure except cancellation comes back as an error result."""
        try:
            return await self.run(arguments, ctx)
        except ToolError as exc:
            return ToolResult.error(str(exc))
        except Exception as exc:
            return ToolResult.error(f"{self.name} failed: {type(exc).__name__}: {exc}")

    def to_spec(self, exposed_name: str | None = None) -> ToolSpec:
        """The tool as the model sees it, under `exposed_name` (default: its own name)."""
        return ToolSpec(exposed_name or self.name, self.description, self.input_schema)


ToolFunction = Callable[..., Awaitable[Any]]


class FunctionTool(Tool):
    """A tool made from a typed async function: the signature is the schema.

    The function may take a `ToolContext` parameter (injected, not in the schema) and may
    return a `ToolResult`, a string, or a sequence of content parts.
    """

    def __init__(
        self,
        fn: ToolFunction,
        *,
        name: str | None = None,
        description: str | None = None,
        annotations: ToolAnnotations | None = None,
        caps_own_output: bool = False,
    ) -> None:
        self.fn = fn
        self.caps_own_output = caps_own_output
        self.name = name or fn.__name__
        if not TOOL_NAME_PATTERN.match(self.name):
            raise ValueError(f"tool name {self.name!r} must match {TOOL_NAME_PATTERN.pattern}")
        self.description = description or parse_docstring(fn.__doc__).summary
        if not self.description:
            raise ValueError(f"tool {self.name!r} needs a description (write a docstring)")
        self.annotations = annotations or ToolAnnotations()
        self.model, self._injected, schema = _signature(fn, f"{self.name}_arguments")
        self.input_schema = copy.deepcopy(schema)

    async def run(self, arguments: dict[str, Any], ctx: ToolContext) -> ToolResult:
        try:
            parsed = self.model.model_validate(arguments)
        except ValidationError as exc:
            return ToolResult.error(format_validation_error(self.name, exc))
        values = {name: getattr(parsed, name) for name in type(parsed).model_fields}
        values.update(dict.fromkeys(self._injected, ctx))
        return as_result(await self.fn(**values))


_SIGNATURES: dict[Hashable, tuple[type[BaseModel], tuple[str, ...], dict[str, Any]]] = {}
"""Argument models by what they are made from. Tools that close over a run's state are made
again for every run (a `gosling batch` worker makes them for every task); building their
pydantic models and schemas is the costly part, and it depends only on the code."""
_SIGNATURES_MAX = 512


def _signature(
    fn: ToolFunction, model_name: str
) -> tuple[type[BaseModel], tuple[str, ...], dict[str, Any]]:
    """`fn`'s argument model, injected parameters and JSON schema, built once per definition
    (same code, defaults, annotations and docstring) in a process."""
    try:
        key: Hashable = (
            fn.__code__,
            id(fn.__globals__),
            fn.__defaults__,
            tuple(sorted((fn.__kwdefaults__ or {}).items())),
            tuple(fn.__annotations__.items()),
            fn.__doc__,
            model_name,
        )
        hash(key)
    except (AttributeError, TypeError):  # not a plain function, or unhashable defaults
        key = None
    if key is not None and key in _SIGNATURES:
        return _SIGNATURES[key]
    model, injected = arguments_model(
        fn, skip=lambda hint: hint is ToolContext, model_name=model_name
    )
    built = (model, injected, model_schema(model))
    if key is not None:
        if len(_SIGNATURES) >= _SIGNATURES_MAX:
            _SIGNATURES.clear()
        _SIGNATURES[key] = built
    return built


def tool(
    *,
    name: str | None = None,
    read_only: bool = False,
    destructive: bool = False,
    open_world: bool = False,
    caps_own_output: bool = False,
) -> Callable[[ToolFunction], FunctionTool]:
    """Decorator: turn a typed async function into a `FunctionTool`."""

    def wrap(fn: ToolFunction) -> FunctionTool:
        return FunctionTool(
            fn,
            name=name,
            annotations=ToolAnnotations(read_only, destructive, open_world),
            caps_own_output=caps_own_output,
        )

    return wrap


def as_result(value: Any) -> ToolResult:
    """Normalise what a tool function returned into a `ToolResult`."""
    if isinstance(value, ToolResult):
        return value
    if isinstance(value, str):
        return ToolResult.text(value)
    if isinstance(value, TextContent | ImageContent):
        return ToolResult((value,))
    if isinstance(value, Sequence) and all(
        isinstance(p, TextContent | ImageContent) for p in value
    ):
        return ToolResult(tuple(value))
    if isinstance(value, BaseModel):
        return ToolResult.text(value.model_dump_json(indent=2))
    raise TypeError(f"a tool returned {type(value).__name__}; return a str or a ToolResult")


def format_validation_error(tool_name: str, exc: ValidationError) -> str:
    """One line per problem, naming the argument, so the model can fix its call."""
    problems = []
    for error in exc.errors():
        where = ".".join(str(part) for part in error["loc"]) or "arguments"
        if error["type"] == "extra_forbidden":
            problems.append(f"- {where}: unexpected argument")
        else:
            problems.append(f"- {where}: {error['msg']}")
    return f"Invalid arguments for {tool_name}:\n" + "\n".join(problems)


def exposed_name(extension: str, tool_name: str) -> str:
    """`<extension>__<tool>`, squeezed into the provider name rules when it does not fit.

    Characters providers reject become `_`; names over 64 characters keep their start and
    end around a short hash so that two long names stay distinct.
    """
    name = re.sub(r"[^a-zA-Z0-9_-]", "_", f"{extension}{NAME_SEPARATOR}{tool_name}")
    if len(name) <= 64:
        return name
    import hashlib

    digest = hashlib.sha256(name.encode()).hexdigest()[:8]
    return f"{name[:40]}_{digest}_{name[-14:]}"
