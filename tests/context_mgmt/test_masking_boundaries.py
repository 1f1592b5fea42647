"""The 400-character boundaries the README promises: an old output of at most 400 characters
stays whole (a placeholder would cost about as much), one of 401 is masked; an old call's
string argument of at most 400 characters stays whole, one of 401 is cut to its head."""

from __future__ import annotations

from gosling.context_mgmt.masking import masked_copy, messages_to_mask
from gosling.conversation import Message
from tests.context_mgmt.tool_conversations import answers, asks, call, output, tool_loop


def _conversation() -> list[Message]:
    return [
        Message.user("Fix the failing tests."),
        asks(call("out_400")),
        answers(output("out_400", "a" * 400)),
        asks(call("out_401")),
        answers(output("out_401", "b" * 401)),
        asks(call("arg_400", "developer__write", path="f.txt", content="c" * 400)),
        answers(output("arg_400", "ok")),
        asks(call("arg_401", "developer__write", path="g.txt", content="d" * 401)),
        answers(output("arg_401", "ok")),
        *tool_loop(16),
    ]


def _holding(messages: list[Message], call_id: str, role: str) -> Message:
    for message in messages:
        ids = {r.id for r in message.tool_requests} | {r.id for r in message.tool_responses}
        if message.role == role and call_id in ids:
            return message
    raise AssertionError(f"no {role} message holds {call_id}")


def test_outputs_up_to_400_characters_stay_whole() -> None:
    messages = _conversation()
    chosen = set(messages_to_mask(messages, keep_last=10, batch=10))
    assert _holding(messages, "out_400", "user").id not in chosen
    assert _holding(messages, "out_401", "user").id in chosen


def test_arguments_up_to_400_characters_stay_whole() -> None:
    messages = _conversation()
    chosen = set(messages_to_mask(messages, keep_last=10, batch=10))
    kept = _holding(messages, "arg_400", "assistant")
    cut = _holding(messages, "arg_401", "assistant")
    assert kept.id not in chosen
    assert cut.id in chosen
    shown = masked_copy(cut).tool_requests[0].arguments["content"]
    assert shown.startswith("d" * 80 + "…[321 more chars hidden")
    assert masked_copy(kept).tool_requests[0].arguments["content"] == "c" * 400


def test_a_400_character_argument_stays_whole_beside_a_longer_one_that_is_cut() -> None:
    request = call("both", "developer__write", path="p" * 400, content="q" * 401)
    shown = masked_copy(asks(request)).tool_requests[0].arguments
    assert shown["path"] == "p" * 400
    assert shown["content"].startswith("q" * 80 + "…[321 more chars hidden")
