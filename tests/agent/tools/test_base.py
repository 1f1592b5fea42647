"""The tool interface: schemas from signatures, failures as results, dispatch by exposed name."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import Literal

import pytest

from gosling.agent.tools import (
    TOOL_NAME_PATTERN,
    BuiltinExtension,
    ExtensionManager,
    FunctionTool,
    ToolContext,
    ToolError,
    ToolResult,
    exposed_name,
    tool,
)
from gosling.agent.tools.schema import parse_docstring
from gosling.conversation import ToolRequest


@tool(read_only=True)
async def greet(
    ctx: ToolContext, name: str, times: int = 1, tone: Literal["warm", "dry"] = "warm"
) -> str:
    """Greet someone.

    Args:
        name: Who to greet.
        times: How many
            times to say it.
        tone: warm or dry.
    """
    return " ".join([f"hello {name} from {ctx.working_dir.name}"] * times)


@tool()
async def explode(reason: str) -> str:
    """Always fails."""
    if reason == "tool-error":
        raise ToolError("a message for the model")
    raise RuntimeError(f"boom: {reason}")


@tool()
async def wait_forever() -> str:
    """Never returns."""
    await asyncio.Event().wait()
    return "unreachable"


def context(tmp_path: Path) -> ToolContext:
    return ToolContext(tmp_path)


def test_schema_comes_from_the_signature_and_docstring() -> None:
    schema = greet.input_schema
    assert schema["required"] == ["name"]
    assert schema["properties"]["name"] == {"type": "string", "description": "Who to greet."}
    assert schema["properties"]["times"]["description"] == "How many times to say it."
    assert schema["properties"]["tone"]["enum"] == ["warm", "dry"]
    assert "ctx" not in schema["properties"]
    assert schema["additionalProperties"] is False
    assert greet.description == "Greet someone."
    assert greet.annotations.read_only


def test_docstring_sections_other_than_args_are_not_descriptions() -> None:
    parsed = parse_docstring("Do it.\n\nArgs:\n    a: first\n\nReturns:\n    b: not an arg\n")
    assert parsed.summary == "Do it."
    assert parsed.params == {"a": "first"}


async def test_a_valid_call_injects_the_context(tmp_path: Path) -> None:
    result = await greet.call({"name": "ada", "times": 2}, context(tmp_path))
    assert not result.is_error
    assert result.text_content() == f"hello ada from {tmp_path.name} hello ada from {tmp_path.name}"


def _counting_tool(start: int) -> FunctionTool:
    """A tool made afresh for every run, closing over the run's settings (as the developer
    tools do)."""

    @tool()
    async def count(ctx: ToolContext, first: int = start) -> str:
        """Count from a number.

        Args:
            first: Where to start.
        """
        return f"{first} in {ctx.working_dir.name}"

    return count


async def test_tools_made_for_each_run_keep_their_own_defaults_and_schema(
    tmp_path: Path,
) -> None:
    first, again, other = _counting_tool(5), _counting_tool(5), _counting_tool(7)
    assert first.input_schema["properties"]["first"]["default"] == 5
    assert other.input_schema["properties"]["first"]["default"] == 7
    assert (await other.call({}, context(tmp_path))).text_content() == f"7 in {tmp_path.name}"
    first.input_schema["properties"]["first"]["description"] = "changed by one run"
    assert again.input_schema["properties"]["first"]["description"] == "Where to start."
    assert "ctx" not in again.input_schema["properties"]


@pytest.mark.parametrize(
    ("arguments", "complaint"),
    [
        ({}, "name: Field required"),
        ({"name": "x", "times": "many"}, "times: Input should be a valid integer"),
        ({"name": "x", "colour": "red"}, "colour: unexpected argument"),
        ({"name": "x", "tone": "loud"}, "tone: Input should be 'warm' or 'dry'"),
    ],
)
async def test_bad_arguments_become_an_error_result(
    tmp_path: Path, arguments: dict[str, object], complaint: str
) -> None:
    result = await greet.call(dict(arguments), context(tmp_path))
    assert result.is_error
    assert result.text_content().startswith("Invalid arguments for greet:")
    assert complaint in result.text_content()


async def test_exceptions_in_a_tool_become_error_results(tmp_path: Path) -> None:
    crashed = await explode.call({"reason": "disk"}, context(tmp_path))
    assert crashed.is_error
    assert crashed.text_content() == "explode failed: RuntimeError: boom: disk"
    refused = await explode.call({"reason": "tool-error"}, context(tmp_path))
    assert refused == ToolResult.error("a message for the model")


async def test_cancellation_is_not_swallowed(tmp_path: Path) -> None:
    task = asyncio.create_task(wait_forever.call({}, context(tmp_path)))
    await asyncio.sleep(0)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


def test_exposed_names_fit_provider_rules() -> None:
    assert exposed_name("developer", "shell") == "developer__shell"
    odd = exposed_name("my-server", "files.read/all")
    assert odd == "my-server__files_read_all"
    long_a = exposed_name("a" * 30, "b" * 40 + "_one")
    long_b = exposed_name("a" * 30, "b" * 40 + "_two")
    for name in (odd, long_a, long_b):
        assert TOOL_NAME_PATTERN.match(name)
    assert long_a != long_b


def test_tool_names_are_checked() -> None:
    async def bad() -> str:
        """Doc."""
        return ""

    with pytest.raises(ValueError, match="must match"):
        tool(name="has space")(bad)


async def test_manager_dispatches_by_exposed_name(tmp_path: Path) -> None:
    manager = ExtensionManager([BuiltinExtension("demo", [greet, explode])])
    assert [spec.name for spec in manager.specs()] == ["demo__greet", "demo__explode"]
    assert manager.annotations("demo__greet") == greet.annotations
    response = await manager.respond(
        ToolRequest(id="t1", name="demo__greet", arguments={"name": "bo"}), context(tmp_path)
    )
    assert response.id == "t1" and not response.is_error
    assert response.text().startswith("hello bo")


async def test_unknown_and_malformed_calls_are_answered_with_errors(tmp_path: Path) -> None:
    manager = ExtensionManager([BuiltinExtension("demo", [greet])])
    unknown = await manager.call("demo__greeet", {}, context(tmp_path))
    assert unknown.is_error
    assert unknown.text_content() == "Unknown tool 'demo__greeet'. Available tools: demo__greet"
    malformed = await manager.respond(
        ToolRequest(id="t2", name="demo__greet", error="arguments were not JSON"), context(tmp_path)
    )
    assert malformed.is_error and "arguments were not JSON" in malformed.text()


def test_extension_names_must_be_unique() -> None:
    manager = ExtensionManager([BuiltinExtension("demo", [greet])])
    with pytest.raises(ValueError, match="already loaded"):
        manager.add(BuiltinExtension("demo", [explode]))


def test_every_exposed_developer_name_is_valid() -> None:
    from gosling.agent.tools import developer_extension

    names = [spec.name for spec in ExtensionManager([developer_extension()]).specs()]
    assert names == [
        "developer__shell",
        "developer__view",
        "developer__write",
        "developer__edit",
        "developer__undo_edit",
        "developer__tree",
        "developer__todo_write",
        "developer__todo_read",
    ]
    assert all(re.match(r"^[a-zA-Z0-9_-]{1,64}$", n) for n in names)
