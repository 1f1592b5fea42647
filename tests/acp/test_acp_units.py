"""The pure parts of `gosling acp`: what "always" may remember, how calls look in the editor,
prompts as user messages, lines that are not messages, the model list, the replay."""

from __future__ import annotations

from pathlib import Path

import pytest
from acp.schema import (
    BlobResourceContents,
    EmbeddedResourceContentBlock,
    ImageContentBlock,
    ResourceContentBlock,
    TextContentBlock,
    TextResourceContents,
)

from gosling.agent.acp.approval import already_allowed, always_rule, granted_rules
from gosling.agent.acp.history import replay
from gosling.agent.acp.mcp_servers import extension_name
from gosling.agent.acp.prompt_blocks import PromptBlock, command_text, prompt_message
from gosling.agent.acp.session_config import model_choices
from gosling.agent.acp.tool_view import describe_call, edit_preview
from gosling.agent.acp.transport import parse_message
from gosling.agent.config import Settings
from gosling.agent.permissions import PermissionMode, PermissionSettings, rules_from_lists
from gosling.conversation import ImageContent, Message, TextContent, ToolRequest, ToolResponse

APPROVE = PermissionSettings(mode=PermissionMode.APPROVE)


@pytest.fixture
def work(tmp_path: Path) -> Path:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "a.py").write_text("x = 1\n")
    (tmp_path / "odd[1]*.txt").write_text("odd\n")
    return tmp_path


def test_always_for_a_simple_command_is_that_command(work: Path) -> None:
    args = {"command": "git status --short"}
    rule = always_rule("developer__shell", args, None, APPROVE, work)
    assert rule == "developer__shell(git status --short)"
    granted = granted_rules([rule])
    assert already_allowed("developer__shell", args, None, APPROVE, granted, work)
    other = {"command": "git push"}
    assert not already_allowed("developer__shell", other, None, APPROVE, granted, work)


@pytest.mark.parametrize(
    "command", ["ls && rm -rf build", "echo hi > out.txt", "cat $(find .)", "echo 'open"]
)
def test_no_always_where_one_rule_cannot_cover_the_call(work: Path, command: str) -> None:
    assert always_rule("developer__shell", {"command": command}, None, APPROVE, work) is None


def test_always_for_a_file_is_that_file_only(work: Path) -> None:
    rule = always_rule("developer__write", {"path": "src/a.py"}, None, APPROVE, work)
    assert rule == "developer__write(/src/a.py)"
    granted = granted_rules([rule])
    for path, allowed in [("src/a.py", True), ("a.py", False), ("src/b.py", False)]:
        args = {"path": path}
        assert already_allowed("developer__write", args, None, APPROVE, granted, work) is allowed


def test_glob_characters_in_a_path_are_escaped(work: Path) -> None:
    rule = always_rule("developer__edit", {"path": "odd[1]*.txt"}, None, APPROVE, work)
    assert rule is not None
    granted = granted_rules([rule])
    assert already_allowed("developer__edit", {"path": "odd[1]*.txt"}, None, APPROVE, granted, work)
    (work / "odd1x.txt").write_text("")
    assert not already_allowed(
        "developer__edit", {"path": "odd1x.txt"}, None, APPROVE, granted, work
    )


def test_no_always_where_an_ask_rule_outranks_it(work: Path) -> None:
    """The default rules ask before touching .env files; an allow could never win."""
    assert always_rule("developer__view", {"path": ".env"}, None, APPROVE, work) is None
    asking = PermissionSettings(
        mode=PermissionMode.AUTO, rules=rules_from_lists(ask=["git__git_push"])
    )
    assert always_rule("git__git_push", {}, None, asking, work) is None


def test_tool_views_name_kinds_locations_and_diffs(work: Path) -> None:
    view = describe_call("developer__view", {"path": "src/a.py", "view_range": [3, 9]}, work)
    assert (view.title, view.kind) == ("Read src/a.py", "read")
    assert view.locations[0].path == str(work / "src/a.py") and view.locations[0].line == 3
    assert describe_call("developer__shell", {"command": "make  test"}, work).title == (
        "Run `make test`"
    )
    assert describe_call("git__git_log", {}, work).kind == "read"
    assert describe_call("web__fetch_url", {"url": "x"}, work).kind == "fetch"
    diff = edit_preview("developer__edit", {"path": "src/a.py", "old": "1", "new": "2"}, work)
    assert diff is not None and (diff.old_text, diff.new_text) == ("x = 1\n", "x = 2\n")
    created = edit_preview("developer__write", {"path": "new.py", "content": "y\n"}, work)
    assert created is not None and created.old_text is None
    assert edit_preview("developer__write", {"path": "../out", "content": ""}, work) is None


def test_prompt_blocks_become_one_user_message(work: Path) -> None:
    blocks: list[PromptBlock] = [
        TextContentBlock(type="text", text="Explain "),
        ResourceContentBlock(type="resource_link", name="a.py", uri=f"file://{work}/src/a.py"),
        EmbeddedResourceContentBlock(
            type="resource",
            resource=TextResourceContents(uri=f"file://{work}/notes.md", text="unsaved notes"),
        ),
        EmbeddedResourceContentBlock(
            type="resource", resource=BlobResourceContents(uri="file:///x.bin", blob="AAAA")
        ),
        ImageContentBlock(type="image", data="aGk=", mime_type="image/png"),
    ]
    message = prompt_message(blocks, work, images=True)
    text, image = message.content
    assert isinstance(text, TextContent) and isinstance(image, ImageContent)
    assert text.text.startswith('Explain @src/a.py\n<file path="notes.md">\nunsaved notes')
    assert "binary content is not included" in text.text
    no_images = prompt_message(blocks, work, images=False)
    assert "takes none" in no_images.text
    with pytest.raises(ValueError, match="empty"):
        prompt_message([TextContentBlock(type="text", text="  ")], work, images=True)
    assert prompt_message(
        [TextContentBlock(type="text", text="//etc")], work, images=True
    ).text == ("/etc")


def test_slash_commands_are_recognised() -> None:
    assert command_text([TextContentBlock(type="text", text="/compact keep the API")]) == (
        "/compact keep the API"
    )
    assert command_text([TextContentBlock(type="text", text="//not a command")]) is None
    assert command_text([TextContentBlock(type="text", text="hello /compact")]) is None


@pytest.mark.parametrize(
    ("line", "error"),
    [
        (b"{nope", -32700),
        (b"[]", -32600),
        (b'"text"', -32600),
        (b'{"jsonrpc": "2.0", "id": 1, "method": ["x"]}', -32600),
        (b'{"jsonrpc": "2.0", "id": 1, "method": "m", "params": 5}', -32600),
        (b'{"jsonrpc": "2.0"}', -32600),
        (b"[" * 200 + b"]" * 200, -32600),
    ],
)
def test_lines_that_are_not_messages_get_their_error(line: bytes, error: int) -> None:
    message, answer = parse_message(line)
    assert message is None and answer is not None and answer["error"]["code"] == error


def test_messages_pass_through() -> None:
    message, answer = parse_message(b'{"jsonrpc": "2.0", "id": 1, "result": {}}')
    assert answer is None and message == {"jsonrpc": "2.0", "id": 1, "result": {}}


def test_model_choices_are_the_providers() -> None:
    settings = Settings(models={"qwen3:32b": {"context_limit": 32768}})
    anthropic = model_choices("anthropic", "claude-sonnet-4-5", settings)
    assert anthropic[0] == "claude-sonnet-4-5"
    assert "claude-opus-4-5" in anthropic and not any(m.startswith("gpt") for m in anthropic)
    assert "qwen3:32b" not in anthropic
    local = model_choices("ollama", "qwen3", settings, local=["qwen3", "llama3.2"])
    assert local == ["qwen3", "qwen3:32b", "llama3.2"]


def test_extension_names_for_editor_servers() -> None:
    taken = {"developer"}
    assert extension_name("My Files", taken) == "My_Files"
    assert extension_name("developer", taken) == "developer-2"
    assert extension_name("a__b", taken) == "a_b"
    assert extension_name("!!!", taken) == "editor"


def test_replay_shows_what_the_user_saw(work: Path) -> None:
    request = ToolRequest(id="t1", name="developer__view", arguments={"path": "src/a.py"})
    messages = [
        Message.user("look at a.py"),
        Message.assistant("Looking.", request),
        Message(role="user", content=(ToolResponse(id="t1", content=(TextContent(text="x"),)),)),
        Message.user("summary for the model").agent_only(),
        Message.assistant("It sets x."),
    ]
    kinds = [u.session_update for u in replay(messages, work)]
    assert kinds == [
        "user_message_chunk",
        "agent_message_chunk",
        "tool_call",
        "agent_message_chunk",
    ]
    call = next(u for u in replay(messages, work) if u.session_update == "tool_call")
    assert (call.status, call.kind, call.title) == ("completed", "read", "Read src/a.py")
