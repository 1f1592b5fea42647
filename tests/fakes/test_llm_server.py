"""The fake LLM server itself: script loading, clear errors, control routes, subprocess mode."""

from __future__ import annotations

import json
import socket
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.llm_server import FakeLLMServer, FakeLLMServerProcess
from tests.fakes.script import FakeToolCall, Fault, Turn, load_script


def post(url: str, body: dict[str, Any]) -> tuple[int, Any]:
    request = urllib.request.Request(
        url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"}
    )
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


SCRIPT = {
    "turns": [
        {
            "text": "Checking.",
            "tool_calls": [{"name": "ls", "arguments": {"dir": "."}, "id": "c1"}],
        },
        {"fault": {"kind": "rate_limit", "retry_after": "3"}},
        {"text": "Done.", "usage": {"input_tokens": 7, "output_tokens": 2, "cache_read_tokens": 5}},
        {"fault": "server_error"},
    ]
}


def test_json_script_matches_the_python_form() -> None:
    turns = load_script(SCRIPT)
    assert turns[0] == Turn(
        text="Checking.", tool_calls=(FakeToolCall("ls", {"dir": "."}, id="c1"),)
    )
    assert turns[1].fault == Fault.rate_limit(retry_after="3")
    assert turns[2].usage is not None and turns[2].usage.cache_read_tokens == 5
    assert turns[3].fault == Fault("server_error")


@pytest.mark.parametrize(
    ("item", "message"),
    [
        ({"txt": "typo"}, "unknown turn field"),
        ({"fault": "explode"}, "unknown fault kind"),
        ({"fault": {"kind": "drop", "after": 2}}, "unknown fault field"),
        ({"text": "x", "quirks": ["weird"]}, "unknown quirk"),
    ],
)
def test_script_mistakes_are_reported_clearly(item: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        load_script([item])


def test_unscripted_request_gets_an_explanation_not_a_hang() -> None:
    with FakeLLMServer() as server:
        status, body = post(f"{server.url}/v1/messages", {"model": "m", "messages": []})
    assert status == 400
    assert "no scripted turn left" in body["error"]["message"]


def test_a_request_cut_off_mid_body_is_neither_recorded_nor_answered() -> None:
    """A client killed between the headers and the end of its body sent no request."""
    with FakeLLMServer([Turn(text="never sent")]) as server:
        host, port = server.url.removeprefix("http://").split(":")
        with socket.create_connection((host, int(port)), timeout=5) as client:
            client.sendall(
                b"POST /v1/messages HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                b'Content-Length: 400\r\n\r\n{"model": "m"'
            )
            client.shutdown(socket.SHUT_WR)
            assert client.recv(100) == b""
        status, reply = post(f"{server.url}/v1/messages", {"model": "m", "messages": []})
        assert server.model_requests()[0].body == {"model": "m", "messages": []}
    assert len(server.model_requests()) == 1
    assert status == 200 and reply["content"][0]["text"] == "never sent"


def test_control_routes_add_turns_and_list_requests() -> None:
    with FakeLLMServer() as server:
        status, state = post(f"{server.url}/_fake/turns", {"turns": [{"text": "hi"}]})
        assert (status, state) == (200, {"pending": 1})
        status, reply = post(
            f"{server.openai_url}/chat/completions", {"model": "m", "messages": []}
        )
        assert status == 200 and reply["choices"][0]["message"]["content"] == "hi"
        with urllib.request.urlopen(f"{server.url}/_fake/requests", timeout=5) as response:
            recorded = json.loads(response.read())
    model_requests = [r for r in recorded if r["api"] is not None]
    assert [(r["path"], r["api"], r["streamed"]) for r in model_requests] == [
        ("/v1/chat/completions", "chat", False)
    ]


def test_rate_limit_fault_sends_retry_after_and_an_api_shaped_body() -> None:
    with FakeLLMServer([Fault.rate_limit(retry_after="4")]) as server:
        request = urllib.request.Request(
            f"{server.url}/v1/messages",
            data=b'{"model": "m"}',
            headers={"Content-Type": "application/json"},
        )
        with pytest.raises(urllib.error.HTTPError) as failure:
            urllib.request.urlopen(request, timeout=5)
    assert failure.value.code == 429
    assert failure.value.headers["retry-after"] == "4"
    assert json.loads(failure.value.read())["error"]["type"] == "rate_limit_error"


def test_subprocess_mode_prints_its_url_and_records(tmp_path: Path) -> None:
    script = tmp_path / "turns.json"
    script.write_text(json.dumps({"turns": [{"text": "from a child process"}]}))
    with FakeLLMServerProcess(script) as fake:
        assert fake.url.startswith("http://127.0.0.1:")
        status, reply = post(f"{fake.url}/v1/responses", {"model": "m", "input": "hi"})
        assert status == 200
        assert reply["output"][0]["content"][0]["text"] == "from a child process"
        assert [r["api"] for r in fake.requests()] == ["responses"]
        assert fake.state() == {"pending": 0, "served": 1}
