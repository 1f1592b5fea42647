"""What the README promises about wiring, each pinned so that breaking it fails a test:
the provider auto-choice order, `--no-session`, `--name`, `gosling config path`, a config
model limit reaching the provider, the undo depth and `permission_denials` in the JSON result."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from gosling.agent.config import Settings
from gosling.agent.provider_choice import NoProviderFound, choose_provider
from gosling.agent.tools import ToolContext
from gosling.agent.tools.developer import developer_extension
from gosling.sessions import SqliteSessionStore
from tests.agent.test_run_e2e import gosling, gosling_env, run_args, tool
from tests.fakes import FakeLLMServer, FakeToolCall, FakeUsage, Turn

SUMMARY = '<analysis>a</analysis>\n```json\n{"user_intent": ["say hi"]}\n```'


def _store() -> SqliteSessionStore:
    return SqliteSessionStore.open_default(Path(os.environ["GOSLING_HOME"]) / "data")


@pytest.mark.parametrize(
    ("keys", "ollama_models", "chosen"),
    [
        ({"ANTHROPIC_API_KEY": "a-key", "OPENAI_API_KEY": "o-key"}, ["qwen3"], "anthropic"),
        ({"OPENAI_API_KEY": "o-key"}, ["qwen3"], "openai"),
        ({}, ["llama3.2", "qwen3"], "ollama"),
    ],
)
def test_provider_auto_choice_order(
    keys: dict[str, str], ollama_models: list[str], chosen: str
) -> None:
    provider = choose_provider(
        Settings(), env=keys, probe=lambda url: ollama_models, window_probe=lambda *a: None
    )
    assert provider.name == chosen
    if chosen == "ollama":
        assert provider.model_config.model == "llama3.2"


def test_no_key_and_no_ollama_names_every_way_out() -> None:
    with pytest.raises(NoProviderFound) as caught:
        choose_provider(Settings(), env={}, probe=lambda url: None)
    message = str(caught.value)
    assert "ANTHROPIC_API_KEY" in message and "OPENAI_API_KEY" in message
    assert "Ollama" in message


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    work = tmp_path / "repo"
    (work / ".git").mkdir(parents=True)
    return work


@pytest.fixture
def server() -> Iterator[FakeLLMServer]:
    fake = FakeLLMServer().start()
    try:
        yield fake
    finally:
        fake.stop()


def test_no_session_stores_nothing_and_name_names_the_session(
    repo: Path, server: FakeLLMServer
) -> None:
    server.add(Turn(text="one"), Turn(text="two"))
    unstored = gosling(run_args(server, "anthropic", "--no-session", "-t", "hi"), repo)
    assert unstored.returncode == 0, unstored.stderr
    store = _store()
    assert store.list_sessions() == []
    store.close()

    named = gosling(run_args(server, "anthropic", "--name", "nightly triage", "-t", "hi"), repo)
    assert named.returncode == 0, named.stderr
    store = _store()
    (session,) = store.list_sessions()
    store.close()
    assert session.name == "nightly triage"


def test_config_path_is_the_file_gosling_reads(repo: Path) -> None:
    printed = gosling(["config", "path"], repo)
    assert printed.returncode == 0, printed.stderr
    path = Path(printed.stdout.strip())
    assert path.is_relative_to(Path(os.environ["GOSLING_HOME"]))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("mask_keep_last = 7\n")
    shown = gosling(["config", "show", "--json"], repo)
    assert shown.returncode == 0, shown.stderr
    assert json.loads(shown.stdout)["mask_keep_last"] == {"value": 7, "source": str(path)}


def test_a_model_limit_declared_in_config_toml_sizes_compaction(
    repo: Path, server: FakeLLMServer
) -> None:
    """`[models."test-model"] context_limit = 4000`: 3,500 input tokens pass 0.8 of it, so the
    history is compacted before the next call (with the registry's 128k it would not be)."""
    config = Path(gosling(["config", "path"], repo).stdout.strip())
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text('[models."test-model"]\ncontext_limit = 4000\n')
    server.add(
        Turn(
            tool_calls=[FakeToolCall("developer__shell", {"command": "echo step"})],
            usage=FakeUsage(input_tokens=3_500, output_tokens=20),
        ),
        Turn(text=SUMMARY),
        Turn(text="Done after compacting."),
    )
    result = gosling(run_args(server, "anthropic", "-t", "say hi"), repo)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "Done after compacting."
    assert "compacting" in result.stderr


def test_permission_denied_is_listed_in_the_json_result(repo: Path, server: FakeLLMServer) -> None:
    server.add(tool("developer__shell", command="touch made"), Turn(text="I could not."))
    result = gosling(
        run_args(server, "anthropic", "--mode", "approve", "--output-format", "json", "-t", "x"),
        repo,
        env=gosling_env(),
    )
    assert result.returncode == 4, result.stderr
    payload = json.loads(result.stdout)
    assert [d["tool_name"] for d in payload["permission_denials"]] == ["developer__shell"]
    assert not (repo / "made").exists()


async def test_undo_goes_back_twenty_versions_and_no_further(tmp_path: Path) -> None:
    tools = {t.name: t for t in developer_extension().tools()}
    context = ToolContext(tmp_path)
    for version in range(22):
        await tools["write"].call({"path": "f.txt", "content": f"v{version}\n"}, context)
    for expected in range(20, 0, -1):
        undone = await tools["undo_edit"].call({"path": "f.txt"}, context)
        assert not undone.is_error, undone.text_content()
        assert (tmp_path / "f.txt").read_text() == f"v{expected}\n"
    beyond = await tools["undo_edit"].call({"path": "f.txt"}, context)
    assert beyond.is_error
    assert (tmp_path / "f.txt").read_text() == "v1\n"
