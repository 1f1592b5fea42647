"""A first run without any model provider still shows something real and says how to get a
model: `gosling context demo`, `gosling config provider` and `python3 dev.py run`."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.agent.test_run_e2e import REPO, gosling

STRATEGIES = ("none", "summarize", "mask", "hybrid")


def _no_provider_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env["OLLAMA_HOST"] = "127.0.0.1:9"  # nothing listens there: no Ollama either
    env["NO_COLOR"] = "1"
    return env


def _rows(table: str) -> dict[str, list[str]]:
    """Each strategy's row of the first table (the tokens; the cost table follows it)."""
    rows: dict[str, list[str]] = {}
    for line in table.splitlines():
        cells = line.split()
        if cells and cells[0] in STRATEGIES:
            rows.setdefault(cells[0], cells)
    return rows


def test_context_demo_replays_the_bundled_session_without_a_model(tmp_path: Path) -> None:
    result = gosling(["context", "demo"], tmp_path, env=_no_provider_env())
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("No model was called")
    rows = _rows(result.stdout)
    assert set(rows) == set(STRATEGIES)
    overflow = {name: int(cells[-3]) for name, cells in rows.items()}
    assert overflow["none"] > 0  # the whole history does not fit the demo's window
    assert overflow["hybrid"] == overflow["mask"] == overflow["summarize"] == 0
    assert all(cells[-1] == "yes" for cells in rows.values())  # every view was valid


def test_config_provider_names_the_choice_or_the_local_routes(tmp_path: Path) -> None:
    env = _no_provider_env()
    missing = gosling(["config", "provider"], tmp_path, env=env)
    assert missing.returncode == 2
    assert "ollama pull" in missing.stderr
    assert "gosling run --provider ollama --model" in missing.stderr
    assert "llama-server" in missing.stderr and "lms server start" in missing.stderr

    found = gosling(["config", "provider"], tmp_path, env={**env, "OPENAI_API_KEY": "sk-test"})
    assert found.returncode == 0, found.stderr
    assert "openai  [OPENAI_API_KEY is set]" in found.stdout


def test_dev_py_run_without_a_provider_shows_the_demo_and_exits_0(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, str(REPO / "dev.py"), "run"],
        cwd=tmp_path,
        env=_no_provider_env(),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    assert "No model was called" in result.stdout
    assert set(_rows(result.stdout)) == set(STRATEGIES)
    assert "ollama pull" in result.stderr
    assert "gosling is " in result.stderr.splitlines()[-1]


def test_config_show_names_the_effective_provider_model_and_window(tmp_path: Path) -> None:
    env = {k: v for k, v in _no_provider_env().items() if not k.startswith("GOSLING_")}
    env["GOSLING_HOME"] = os.environ["GOSLING_HOME"]
    keyed = gosling(["config", "show"], tmp_path, env={**env, "ANTHROPIC_API_KEY": "sk-test"})
    assert keyed.returncode == 0, keyed.stderr
    lines = keyed.stdout.splitlines()
    start = lines.index("a run here would use:")
    assert lines[start + 1].split() == ["provider", "anthropic", "[ANTHROPIC_API_KEY", "is", "set]"]
    assert lines[start + 2].split()[:2] == ["model", "claude-sonnet-4-6"]
    assert "[anthropic's default model]" in lines[start + 2]
    assert "1,000,000 tokens  [model registry (claude-sonnet-4-6)]" in lines[start + 3]
    assert not any(
        line.split()[:2] == ["provider", "null"] and "[default]" in line for line in lines
    )

    flagged = gosling(
        ["config", "show"],
        tmp_path,
        env={**env, "GOSLING_PROVIDER": "openai", "GOSLING_MODEL": "gpt-4o", "OPENAI_API_KEY": "k"},
    )
    assert flagged.returncode == 0, flagged.stderr
    assert "provider        openai  [the provider setting (env GOSLING_PROVIDER)]" in flagged.stdout
    assert "model           gpt-4o  [the model setting (env GOSLING_MODEL)]" in flagged.stdout

    missing = gosling(["config", "show"], tmp_path, env=env)
    assert missing.returncode == 0, missing.stderr
    assert "provider        none  [no API key set and no Ollama server answered" in missing.stdout
    assert "gosling config provider` says how to get one" in missing.stdout
