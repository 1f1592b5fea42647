"""Traces from `gosling run` and `gosling batch` to an OTLP receiver on loopback."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.agent.test_run_e2e import SUMMARY_TEXT, gosling, gosling_env, run_args, tool
from tests.batch.helpers import batch_env, gosling_batch, write_tasks
from tests.fakes import FakeLLMServer, FakeToolCall, FakeUsage, Turn
from tests.fakes.otlp_receiver import OtlpReceiver, ReceivedSpan

SECRET = "sk-ant-api03-" + "Zx9Yw8Vu" * 6


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    work = tmp_path / "repo"
    (work / ".git").mkdir(parents=True)
    return work


@pytest.fixture
def server() -> Iterator[FakeLLMServer]:
    with FakeLLMServer() as fake:
        yield fake


def by_name(spans: list[ReceivedSpan], name: str) -> list[ReceivedSpan]:
    return [s for s in spans if s.name == name]


@pytest.mark.parametrize("protocol", ["http", "grpc"])
def test_a_run_exports_one_trace_with_model_tool_and_compaction_spans(
    protocol: str, repo: Path, server: FakeLLMServer
) -> None:
    server.add(
        Turn(
            tool_calls=[FakeToolCall("developer__shell", {"command": "echo step one"})],
            usage=FakeUsage(
                input_tokens=30_000,
                output_tokens=20,
                cache_read_tokens=25_000,
                cache_write_tokens=4_000,
            ),
        ),
        Turn(text=SUMMARY_TEXT),
        Turn(text="Done after compacting.", usage=FakeUsage(input_tokens=900, output_tokens=7)),
    )
    with OtlpReceiver(protocol) as receiver:  # type: ignore[arg-type]
        env = gosling_env(
            GOSLING_AUTO_COMPACT_THRESHOLD="0.5",
            OTEL_EXPORTER_OTLP_ENDPOINT=receiver.endpoint,
            OTEL_EXPORTER_OTLP_PROTOCOL="grpc" if protocol == "grpc" else "http/protobuf",
            OTEL_SERVICE_NAME="team-agents",
        )
        prompt = f"edit it, my key is {SECRET}"
        args = run_args(server, "anthropic", "--context-limit", "40000", "-t", prompt)
        result = gosling(args, repo, env=env)
        assert result.returncode == 0, result.stderr
        spans = receiver.spans()
    (turn,) = by_name(spans, "invoke_agent gosling")
    assert turn.parent_span_id == "" and turn.service == "team-agents"
    assert {s.trace_id for s in spans} == {turn.trace_id}
    assert turn.attributes["gen_ai.operation.name"] == "invoke_agent"
    assert turn.attributes["gosling.stop_reason"] == "end_turn"
    chats = by_name(spans, "chat test-model")
    assert len(chats) == 3
    first = chats[0]
    assert first.parent_span_id == turn.span_id and first.kind == 3  # CLIENT
    assert first.attributes["gen_ai.system"] == "anthropic"
    assert first.attributes["gen_ai.request.model"] == "test-model"
    assert first.attributes["gen_ai.usage.cache_read.input_tokens"] == 25_000
    assert first.attributes["gen_ai.usage.cache_creation.input_tokens"] == 4_000
    assert first.attributes["gen_ai.usage.output_tokens"] == 20
    assert first.attributes["gen_ai.response.finish_reasons"] == ["tool_use"]
    (compaction,) = by_name(spans, "gosling.compaction")
    assert compaction.parent_span_id == turn.span_id
    assert compaction.attributes["gosling.compaction.trigger"] == "threshold"
    assert (
        compaction.attributes["gosling.tokens_before"]
        > compaction.attributes["gosling.tokens_after"]
    )
    summarizer = [c for c in chats if c.parent_span_id == compaction.span_id]
    assert len(summarizer) == 1 and summarizer[0].attributes["gosling.fast"] is True
    (shell,) = by_name(spans, "execute_tool developer__shell")
    assert shell.parent_span_id == turn.span_id
    assert shell.attributes["gen_ai.tool.name"] == "developer__shell"
    assert shell.attributes["gosling.tool.approved"] is True
    assert shell.attributes["gosling.tool.status"] == "ok"
    for inner in [*chats, shell, compaction]:  # a trace viewer draws them inside the turn
        assert turn.start_ns <= inner.start_ns < inner.end_ns <= turn.end_ns, inner.name
    assert shell.end_ns <= chats[1].start_ns  # the tool ended before any later model call
    everything = json.dumps([s.attributes for s in spans])
    assert "gen_ai.input.messages" not in everything and "edit it" not in everything
    assert SECRET not in everything


def test_content_is_captured_only_when_opted_in_and_redacted(
    repo: Path, server: FakeLLMServer
) -> None:
    server.add(tool("developer__shell", command=f"echo {SECRET}"), Turn(text="Printed it."))
    with OtlpReceiver("http") as receiver:
        env = gosling_env(
            OTEL_EXPORTER_OTLP_ENDPOINT=receiver.endpoint,
            OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT="true",
        )
        result = gosling(
            run_args(server, "anthropic", "-t", f"print {SECRET} please"), repo, env=env
        )
        assert result.returncode == 0, result.stderr
        spans = receiver.spans()
    first = by_name(spans, "chat test-model")[0]
    assert "print [REDACTED" in first.attributes["gen_ai.input.messages"]
    output = json.loads(first.attributes["gen_ai.output.messages"])
    assert output[0]["parts"][0]["type"] == "tool_call"
    (shell,) = by_name(spans, "execute_tool developer__shell")
    assert "[REDACTED" in shell.attributes["gen_ai.tool.call.arguments"]
    assert "[REDACTED" in shell.attributes["gen_ai.tool.call.result"]
    assert SECRET not in json.dumps([s.attributes for s in spans])


def test_batch_links_every_tasks_trace_to_the_batch(tmp_path: Path, server: FakeLLMServer) -> None:
    for task in ("one", "two"):
        server.add_conversation(f"[{task}]", Turn(text=f"Task {task} done."))
    (tmp_path / "src").mkdir()
    tasks = write_tasks(
        tmp_path / "tasks.jsonl",
        [
            {"id": t, "prompt": f"[{t}] do it", "working_dir": str(tmp_path / "src")}
            for t in ("one", "two")
        ],
    )
    with OtlpReceiver("http") as receiver:
        env = batch_env(OTEL_EXPORTER_OTLP_ENDPOINT=receiver.endpoint)
        run = gosling_batch(tasks, tmp_path / "out", server, "--workers", "2", env=env)
        assert run.returncode == 0, run.stderr
        spans = receiver.spans()
    (batch,) = by_name(spans, "gosling.batch")
    assert batch.attributes["gosling.batch.tasks"] == 2
    turns = by_name(spans, "invoke_agent gosling")
    assert len(turns) == 2
    assert len({t.trace_id for t in turns} | {batch.trace_id}) == 3
    assert all(t.links == [(batch.trace_id, batch.span_id)] for t in turns)


def test_tracing_off_imports_no_opentelemetry(repo: Path, server: FakeLLMServer) -> None:
    server.add(tool("developer__shell", command="echo hi"), Turn(text="hi"))
    command = [sys.executable, "-X", "importtime", "-m", "gosling"]
    args = run_args(server, "anthropic", "-t", "hi")
    result = subprocess.run(
        [*command, *args], cwd=repo, env=gosling_env(), capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    imported = {line.rsplit("|", 1)[-1].strip() for line in result.stderr.splitlines()}
    assert "gosling.agent.hooks.steps" in imported  # the import log is there
    # The `mcp` SDK imports the OpenTelemetry API itself; the SDK and exporters are ours.
    assert not {
        m for m in imported if m.startswith(("opentelemetry.sdk", "opentelemetry.exporter"))
    }
    assert not {m for m in imported if m.startswith(("grpc", "gosling.agent.telemetry."))} - {
        "gosling.agent.telemetry.settings"
    }
