"""Observation masking: which results are masked, what the placeholder says, and that the
originals and the pairing survive; plus the context-strategy policy."""

from __future__ import annotations

import pytest

from gosling.context_mgmt.masking import (
    MASK_BATCH_SIZE,
    MASK_KEEP_LAST,
    SMALL_OUTPUT_CHARS,
    MaskingPresenter,
    masked_copy,
    messages_to_mask,
)
from gosling.context_mgmt.recall import recall_hint, recall_tool_output
from gosling.conversation import ImageContent, Message, TextContent, ToolResponse, fix_conversation
from gosling.conversation import ToolRequest as ToolRequestPart
from tests.context_mgmt.tool_conversations import (
    answers,
    asks,
    call,
    mark_masked,
    output,
    session,
    shown,
    view_issues,
)


def result_ids(messages: list[Message], calls: range) -> list[str]:
    wanted = {f"call_{n}" for n in calls}
    return [m.id for m in messages if m.tool_responses and m.tool_responses[0].id in wanted]


# -- which results ----------------------------------------------------------------------------


def test_results_older_than_the_last_n_calls_are_masked_in_whole_batches() -> None:
    keep, batch = MASK_KEEP_LAST, MASK_BATCH_SIZE
    assert messages_to_mask(session(keep + batch - 1), keep, batch) == []
    messages = session(keep + batch)
    assert messages_to_mask(messages, keep, batch) == result_ids(messages, range(batch))


def test_the_masked_set_only_moves_every_batch_of_calls() -> None:
    masked_at = {}
    for calls in range(10, 45):
        messages = session(calls)
        masked_at[calls] = len(messages_to_mask(messages, keep_last=10, batch=10))
    assert sorted(set(masked_at.values())) == [0, 10, 20, 30]
    changes = [c for c in range(11, 45) if masked_at[c] != masked_at[c - 1]]
    assert changes == [20, 30, 40]


def test_already_masked_and_hidden_results_are_not_chosen_again() -> None:
    messages = session(25)
    first = messages_to_mask(messages, 10, 5)
    assert len(first) == 15
    masked = mark_masked(messages, first)
    assert messages_to_mask(masked, 10, 5) == []
    hidden = [m.with_agent_invisible() if m.id in first[:3] else m for m in messages]
    assert not set(first[:3]) & set(messages_to_mask(hidden, 10, 5))


def test_small_outputs_are_not_worth_a_placeholder() -> None:
    small = session(25, lines=1)
    assert len(small[2].tool_responses[0].text()) <= SMALL_OUTPUT_CHARS
    assert messages_to_mask(small, 10, 10) == []


def test_a_parallel_result_message_waits_until_all_its_calls_are_old() -> None:
    ids = [f"q{k}" for k in range(4)]
    messages = [
        Message.user("go"),
        asks(*(call(i) for i in ids)),
        answers(*(output(i, "o" * 1000) for i in ids)),
    ]
    assert messages_to_mask(messages, keep_last=1, batch=1) == []
    assert messages_to_mask(messages, keep_last=0, batch=1) == [messages[2].id]


def test_bad_settings_are_refused_with_a_clear_message() -> None:
    with pytest.raises(ValueError, match="keep_last"):
        messages_to_mask(session(3), keep_last=-1)
    with pytest.raises(ValueError, match="batch"):
        messages_to_mask(session(3), batch=0)


# -- what the model sees ----------------------------------------------------------------------


def test_the_placeholder_names_tool_arguments_size_and_recall() -> None:
    text = "\n".join(f"line {n}" for n in range(212))
    messages = [
        Message.user("run the tests"),
        asks(call("call_abc", command="pytest -x")),
        answers(output("call_abc", text)),
    ]
    requests = {r.id: r for r in messages[1].tool_requests}
    [part] = masked_copy(messages[2], requests).content
    assert isinstance(part, ToolResponse) and part.id == "call_abc"
    [shown] = part.content
    assert isinstance(shown, TextContent)
    assert shown.text == (
        '[output of developer__shell {"command": "pytest -x"} hidden to save context: '
        f"212 lines, {len(text):,} chars; call {recall_hint('call_abc')} to see it]"
    )


def test_error_results_keep_their_first_lines() -> None:
    error = "Traceback (most recent call last):\n  File x.py, line 3\n  boom()\n" + "z\n" * 300
    response = output("e1", error, is_error=True)
    copy = masked_copy(answers(response), {})
    [part] = copy.content
    assert isinstance(part, ToolResponse) and part.is_error
    shown = part.text()
    assert shown.startswith("[error output of tool call e1 hidden to save context")
    assert shown.splitlines()[1:] == [
        "Traceback (most recent call last):",
        "  File x.py, line 3",
        "  boom()",
    ]
    assert recall_hint("e1") in shown


def test_an_error_line_up_to_200_characters_is_kept_whole_and_a_longer_one_cut() -> None:
    error = "E" * 200 + "\n" + "L" * 300 + "\n" + "z\n" * 300
    [part] = masked_copy(answers(output("e1", error, is_error=True)), {}).content
    assert isinstance(part, ToolResponse)
    kept, cut = part.text().splitlines()[1:3]
    assert kept == "E" * 200
    assert cut == "L" * 199 + "…"


def test_long_arguments_are_cut_and_images_counted() -> None:
    request = call("img", name="browser__screenshot", url="https://example.com/" + "a" * 500)
    response = ToolResponse(id="img", content=(TextContent(text="page"), ImageContent(data="AAAA")))
    [part] = masked_copy(answers(response), {"img": request}).content
    assert isinstance(part, ToolResponse)
    shown = part.text()
    assert "browser__screenshot" in shown and "…" in shown and len(shown) < 400
    assert "1 line, 4 chars, 1 image;" in shown
    two = ToolResponse(id="img", content=(ImageContent(data="AAAA"), ImageContent(data="BBBB")))
    [part] = masked_copy(answers(two), {"img": request}).content
    assert isinstance(part, ToolResponse)
    assert "2 images;" in part.text()


def test_small_responses_inside_a_masked_message_stay_verbatim() -> None:
    message = answers(output("a", "short"), output("b", "b" * 5_000))
    a, b = masked_copy(message, {}).content
    assert a == message.content[0]
    assert isinstance(b, ToolResponse) and "hidden to save context" in b.text()


def test_masking_keeps_pairs_roles_order_and_the_originals() -> None:
    messages = session(30)
    masked = mark_masked(messages, messages_to_mask(messages, 10, 10))
    view = shown(masked)

    assert [(m.id, m.role) for m in view] == [(m.id, m.role) for m in messages]
    assert sum(m.metadata.masked for m in view) == 20
    assert fix_conversation(view)[1] == []
    assert view_issues(masked) == []
    assert [m.content for m in masked] == [m.content for m in messages]  # stored as is
    original = messages[2].tool_responses[0].text()
    assert original not in view[2].tool_responses[0].text()
    assert original in recall_tool_output(masked, "call_0")
    assert view[-1].content == messages[-1].content  # recent results untouched
    assert len("".join(m.tool_responses[0].text() for m in view if m.tool_responses)) < sum(
        len(m.tool_responses[0].text()) for m in messages if m.tool_responses
    )


def test_the_presenter_reuses_copies_and_passes_other_messages_through() -> None:
    plain = session(30)
    messages = mark_masked(plain, messages_to_mask(plain, 10, 10))
    presenter = MaskingPresenter()
    first = [presenter(m) for m in messages]
    second = [presenter(m) for m in messages]
    assert all(a is b for a, b in zip(first, second, strict=True))
    assert all(a is b for a, b in zip(first, messages, strict=True) if not b.metadata.masked)
    assert "developer__shell" in first[2].tool_responses[0].text()

    changed = list(messages)
    index = next(i for i, m in enumerate(messages) if m.metadata.masked)
    changed[index] = messages[index].with_content([output("call_0", "y" * 1000)])
    third = [presenter(m) for m in changed]
    assert "1,000 chars" in third[index].tool_responses[0].text()


def test_the_copy_cache_keeps_as_many_copies_as_its_size() -> None:
    """A library user sizing the cache gets that many copies kept, the oldest dropped."""
    from gosling.context_mgmt.masking import MaskingCache

    cache = MaskingCache(size=2)
    a, b, c = (answers(output(f"call_{n}", "x" * 1000)) for n in range(3))
    first_a, first_b = cache.get(a, {}), cache.get(b, {})
    assert cache.get(a, {}) is first_a and cache.get(b, {}) is first_b
    cache.get(c, {})  # a is now the least recently used: dropped
    assert cache.get(b, {}) is first_b
    assert cache.get(a, {}) is not first_a


# -- long arguments of old calls ---------------------------------------------------------------


def _writes(count: int, size: int) -> list[Message]:
    messages: list[Message] = [Message.user("write the files")]
    for n in range(count):
        body = f"# file {n}\n" + "x = 1\n" * (size // 6)
        request = ToolRequestPart(
            id=f"w{n}", name="developer__write", arguments={"path": f"f{n}.py", "content": body}
        )
        messages.append(Message.assistant(f"writing f{n}.py", request))
        messages.append(
            Message.user(
                None, ToolResponse(id=f"w{n}", content=(TextContent(text=f"Wrote f{n}.py"),))
            )
        )
    return messages


def test_old_calls_with_long_arguments_are_masked_with_their_head_kept() -> None:
    messages = _writes(20, 3_000)
    chosen = messages_to_mask(messages, keep_last=10, batch=10)
    old_calls = [m.id for m in messages if m.role == "assistant"][:10]
    assert chosen == old_calls  # short "Wrote ..." results are not worth a placeholder
    masked = mark_masked(messages, chosen)
    view = shown(masked)
    [request] = view[1].tool_requests
    assert request.arguments["path"] == "f0.py"
    content = request.arguments["content"]
    assert content.startswith("# file 0\nx = 1") and len(content) < 300
    assert recall_hint("w0") in content and "more chars hidden" in content
    assert view[-2].tool_requests == messages[-2].tool_requests  # recent calls untouched
    assert view_issues(view) == []
    recalled = recall_tool_output(masked, "w0")
    assert messages[1].tool_requests[0].arguments["content"] in recalled.replace("\\n", "\n")


def test_short_arguments_keep_the_call_unmasked() -> None:
    assert messages_to_mask(_writes(20, 100), keep_last=10, batch=10) == []
