"""A second, independently written client: the official TypeScript SDK (`@agentclientprotocol/sdk`,
installed from `tests/acp/ts_client/package-lock.json` by `python3 dev.py test`) drives
`gosling acp` through a session. Its schema checks every message gosling sends."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.acp.client import agent_args, agent_env
from tests.fakes import FakeLLMServer, FakeToolCall, Turn

CLIENT = Path(__file__).resolve().parent / "ts_client"


def node_or_skip() -> str:
    node = shutil.which("node")
    installed = (CLIENT / "node_modules" / "@agentclientprotocol" / "sdk").is_dir()
    if node is not None and installed:
        return node
    if node is None:
        reason = "node is not installed; the TypeScript SDK client needs node 20 or later"
    else:
        reason = "the TypeScript SDK is not installed: run python3 dev.py test (it runs npm ci)"
    if os.environ.get("CI"):
        pytest.fail(f"CI must run the TypeScript client test, but {reason}")
    pytest.skip(reason)


@pytest.mark.timeout(240)
def test_the_typescript_sdk_client_drives_a_session(tmp_path: Path) -> None:
    node = node_or_skip()
    home, repo = tmp_path / "home", tmp_path / "repo"
    repo.mkdir()
    (repo / "hello.txt").write_text("hello world\n")
    with FakeLLMServer() as server:
        server.add(
            Turn(
                text="Editing.",
                tool_calls=[
                    FakeToolCall(
                        "developer__edit", {"path": "hello.txt", "old": "world", "new": "ts"}
                    )
                ],
            ),
            Turn(text="Done from TypeScript."),
        )
        command = [sys.executable, *agent_args(server, "--mode", "approve")]
        result = subprocess.run(
            [node, str(CLIENT / "client.mjs"), str(repo), *command],
            cwd=CLIENT,
            env=agent_env(home),
            capture_output=True,
            text=True,
            timeout=200,
        )
    assert result.returncode == 0, result.stderr[-3000:]
    seen = json.loads(result.stdout.splitlines()[-1])
    assert seen["exitCode"] == 0
    assert seen["init"]["agentInfo"]["name"] == "gosling"
    assert seen["turn"]["stopReason"] == "end_turn"
    assert seen["asked"] == [
        {"title": "Edit hello.txt", "options": ["allow_once", "allow_always", "reject_once"]}
    ]
    assert (repo / "hello.txt").read_text() == "hello ts\n"
    kinds = [u["sessionUpdate"] for u in seen["updates"]]
    for kind in ("available_commands_update", "usage_update", "tool_call", "tool_call_update"):
        assert kind in kinds
    text = "".join(
        u["content"]["text"] for u in seen["updates"] if u["sessionUpdate"] == "agent_message_chunk"
    )
    assert text == "Editing.Done from TypeScript."
    mode = next(o for o in seen["options"]["configOptions"] if o["id"] == "mode")
    assert mode["currentValue"] == "smart_approve"
    assert [s["sessionId"] for s in seen["listed"]["sessions"]] == [seen["session"]["sessionId"]]
    assert seen["unknownSession"] == -32002
