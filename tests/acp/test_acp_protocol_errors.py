"""Malformed and out-of-order messages, written as raw JSON lines (an SDK client would refuse
to send them): each gets the protocol's error answer, the server keeps serving, and the
sessions in the store are left as they were."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from gosling.conversation import Message
from gosling.sessions import SqliteSessionStore
from tests.acp.client import REPO, WAIT_SECS, agent_args, agent_env
from tests.fakes import FakeLLMServer, Turn


class RawPeer:
    """Writes lines to `gosling acp` and reads its answers by id."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process
        self.answers: dict[Any, dict[str, Any]] = {}
        self.unnumbered: list[dict[str, Any]] = []
        self.notifications: list[dict[str, Any]] = []

    async def send(self, line: str | dict[str, Any]) -> None:
        assert self.process.stdin is not None
        raw = line if isinstance(line, str) else json.dumps(line)
        self.process.stdin.write(raw.encode() + b"\n")
        await self.process.stdin.drain()

    async def request(self, number: int, method: str, params: Any = None) -> dict[str, Any]:
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": number, "method": method}
        if params is not None:
            message["params"] = params
        await self.send(message)
        return await self.answer(number)

    async def answer(self, number: int) -> dict[str, Any]:
        async with asyncio.timeout(WAIT_SECS):
            while number not in self.answers:
                await self._read_one()
        return self.answers.pop(number)

    async def next_unnumbered(self) -> dict[str, Any]:
        async with asyncio.timeout(WAIT_SECS):
            while not self.unnumbered:
                await self._read_one()
        return self.unnumbered.pop(0)

    async def notification(self, kind: str) -> dict[str, Any]:
        def found() -> dict[str, Any] | None:
            return next(
                (n for n in self.notifications if n["params"]["update"]["sessionUpdate"] == kind),
                None,
            )

        async with asyncio.timeout(WAIT_SECS):
            while (hit := found()) is None:
                await self._read_one()
        return hit

    async def _read_one(self) -> None:
        assert self.process.stdout is not None
        line = await self.process.stdout.readline()
        assert line, "gosling acp closed its output"
        message = json.loads(line)
        if "method" in message:
            self.notifications.append(message)
        elif message.get("id") is None:
            self.unnumbered.append(message)
        else:
            self.answers[message["id"]] = message


def code(answer: dict[str, Any]) -> int:
    assert "error" in answer, answer
    return int(answer["error"]["code"])


@pytest.mark.timeout(300)
async def test_bad_messages_get_protocol_errors_and_leave_the_store_intact(
    tmp_path: Path,
) -> None:
    home, repo = tmp_path / "home", tmp_path / "repo"
    repo.mkdir()
    with SqliteSessionStore.open_default(home / "data") as store:
        kept = store.create(working_dir=repo, name="kept", provider="anthropic", model="m")
        store.append_messages(kept.id, [Message.user("keep me"), Message.assistant("kept")])
        before = store.load_messages(kept.id)
    with FakeLLMServer() as server:
        server.add(Turn(text="slow reply", delay=30))
        log = (tmp_path / "stderr.log").open("wb")
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            *agent_args(server),
            cwd=REPO,
            env=agent_env(home),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=log,
        )
        peer = RawPeer(process)
        try:
            # Out of order: nothing but initialize before initialize.
            early = await peer.request(1, "session/new", {"cwd": str(repo), "mcpServers": []})
            assert code(early) == -32600 and "initialize" in early["error"]["message"]
            init = await peer.request(2, "initialize", {"protocolVersion": 1})
            assert init["result"]["protocolVersion"] == 1

            await peer.send("this is not json")
            assert code(await peer.next_unnumbered()) == -32700
            await peer.send("[1, 2, 3]")
            assert code(await peer.next_unnumbered()) == -32600
            await peer.send('{"jsonrpc": "2.0", "id": 3, "method": 42}')
            assert code(await peer.answer(3)) == -32600
            await peer.send("[" * 5000 + "]" * 5000)
            assert code(await peer.next_unnumbered()) in (-32700, -32600)

            assert code(await peer.request(4, "no/such_method", {})) == -32601
            assert code(await peer.request(5, "session/new", {"cwd": 7})) == -32602
            relative = await peer.request(6, "session/new", {"cwd": "repo", "mcpServers": []})
            assert code(relative) == -32602 and "absolute" in relative["error"]["message"]
            missing = {"sessionId": "nope", "prompt": [{"type": "text", "text": "hi"}]}
            assert code(await peer.request(7, "session/prompt", missing)) == -32002
            load = {"sessionId": "nope", "cwd": str(repo), "mcpServers": []}
            assert code(await peer.request(8, "session/load", load)) == -32002
            assert code(await peer.request(9, "session/close", {"sessionId": "nope"})) == -32002
            mode = {"sessionId": "nope", "modeId": "auto"}
            assert code(await peer.request(10, "session/set_mode", mode)) == -32002

            new = await peer.request(11, "session/new", {"cwd": str(repo), "mcpServers": []})
            sid = new["result"]["sessionId"]
            bad_mode = await peer.request(
                12, "session/set_mode", {"sessionId": sid, "modeId": "yolo"}
            )
            assert code(bad_mode) == -32602 and "smart_approve" in bad_mode["error"]["message"]
            empty = await peer.request(13, "session/prompt", {"sessionId": sid, "prompt": []})
            assert code(empty) == -32602

            # A prompt while a turn runs is refused; the running turn is not disturbed.
            first = {"sessionId": sid, "prompt": [{"type": "text", "text": "take your time"}]}
            await peer.send(
                {"jsonrpc": "2.0", "id": 14, "method": "session/prompt", "params": first}
            )
            await peer.notification("session_info_update")  # the turn has started
            second = await peer.request(15, "session/prompt", first)
            assert code(second) == -32600 and "session/cancel" in second["error"]["message"]
            await peer.send(
                {"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": sid}}
            )
            stopped = await peer.answer(14)
            assert stopped["result"]["stopReason"] == "cancelled"

            listed = await peer.request(16, "session/list", {"cursor": "not-a-cursor"})
            assert code(listed) == -32602
            assert process.returncode is None  # still serving after all of it
        finally:
            assert process.stdin is not None
            process.stdin.close()
            await asyncio.wait_for(process.wait(), WAIT_SECS)
            log.close()
    assert process.returncode == 0
    with SqliteSessionStore.open_default(home / "data") as store:
        assert store.load_messages(kept.id) == before
        turn = store.load_messages(sid)
    assert turn[0].text == "take your time"
    assert turn[-1].role == "assistant"  # the interrupted turn was closed, nothing dangling
