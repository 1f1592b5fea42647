"""`gosling context replay` as a user runs it."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from gosling.agent.cli.main import cli
from tests.agent.replay_transcripts import write_run


def replay(*args: str) -> Result:
    return CliRunner().invoke(cli, ["context", "replay", *args])


@pytest.fixture
def run_file(tmp_path: Path) -> Path:
    return write_run(tmp_path / "run.json", turns=(24, 4))


def test_json_reports_every_strategy_and_every_call(run_file: Path) -> None:
    result = replay(str(run_file), "--json", "--context-limit", "8000")
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["options"] == {
        "context_limit": 8000,
        "threshold": 0.8,
        "keep_last": 10,
        "keep_tokens": 4000,
        "patience": 2.0,
        "tool_call_cutoff": 10,
        "cache_family": "anthropic",
        "summarizer": "stub",
    }
    [transcript] = data["transcripts"]
    assert transcript["name"] == "run.json" and transcript["format"] == "openai-chat"
    assert transcript["model_calls"] == 30 and transcript["tool_calls"] == 28
    assert list(transcript["strategies"]) == ["none", "summarize", "mask", "hybrid"]
    for name, strategy in transcript["strategies"].items():
        assert len(strategy["calls"]) == 30
        assert strategy["tokens_sent"] == sum(c["tokens"] for c in strategy["calls"])
        assert strategy["peak_context"] == max(c["tokens"] for c in strategy["calls"])
        assert strategy["valid"] is True, name
        assert set(strategy["calls"][0]) == {
            "call",
            "tokens",
            "messages",
            "masked_tokens",
            "labels",
            "events",
            "overflow",
            "valid",
            "issues",
            "cache_read",
            "cache_write",
            "cost",
        }
        calls_cost = sum(c["cost"] for c in strategy["calls"])
        assert abs(strategy["cost"] - calls_cost - strategy["side_cost"]) <= 2
        # Summarizer calls are paid too: a strategy that made them says what they cost.
        assert (strategy["side_cost"] > 0) == (strategy["side_calls"] > 0)
        assert 0 <= strategy["hidden_then_used"] <= strategy["later_uses"]
    none = transcript["strategies"]["none"]
    assert none["relative_to_none"] == 1.0 and none["overflows"] > 0
    assert transcript["strategies"]["hybrid"]["compactions"] > 0
    assert transcript["strategies"]["hybrid"]["relative_to_none"] < 1.0
    assert none["cost_relative_to_none"] == 1.0


def test_one_strategy_and_options_reach_the_replay(run_file: Path) -> None:
    result = replay(
        str(run_file), "--json", "--strategy", "mask", "--keep-last", "0", "--cache", "none"
    )
    assert result.exit_code == 0, result.output
    [transcript] = json.loads(result.output)["transcripts"]
    assert list(transcript["strategies"]) == ["mask"]
    mask = transcript["strategies"]["mask"]
    assert mask["relative_to_none"] is None  # nothing to compare with
    first = next(c for c in mask["calls"] if "masked" in c["labels"])
    assert first["events"][0]["type"] == "context_trimmed"  # the loop's own event
    # Keep 0 and no cache to pay for a change: the first output is masked on the next call.
    assert first["call"] == 2
    assert json.loads(result.output)["options"]["cache_family"] == "none"


def test_the_table_names_each_strategy_and_says_whether_views_were_valid(run_file: Path) -> None:
    result = replay(str(run_file), "--per-call")
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0] == "run.json"
    for name in ("none", "summarize", "mask", "hybrid"):
        row = next(line for line in lines if line.startswith(f"{name} "))
        assert row.rstrip().endswith("yes")
    # the cost table: one more row per strategy, `none` the reference for cost
    none_rows = [line for line in lines if line.startswith("none ")]
    assert len(none_rows) == 2 and "100.0%" in none_rows[1]
    assert any("hidden used" in line and "cached" in line for line in lines)
    assert "tokens per model call" in result.output


def test_plot_without_matplotlib_says_how_to_install_it(
    run_file: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # makes `import matplotlib` fail
    target = tmp_path / "plot.png"
    result = replay(str(run_file), "--plot", str(target))
    assert result.exit_code == 1
    assert "-m pip install matplotlib" in result.output
    assert not target.exists()


def test_plot_writes_a_png(run_file: Path, tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    target = tmp_path / "plot.png"
    result = replay(str(run_file), "--plot", str(target), "--json")
    assert result.exit_code == 0, result.output
    assert target.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_plot_can_draw_cost(run_file: Path, tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    target = tmp_path / "cost.png"
    result = replay(str(run_file), "--plot", str(target), "--plot-metric", "cost", "--json")
    assert result.exit_code == 0, result.output
    assert target.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_a_file_that_is_no_transcript_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_text("just some notes\n", encoding="utf-8")
    result = replay(str(path))
    assert result.exit_code == 2  # bad input, as the README's exit codes say
    assert "error:" in result.output and "notes.txt" in result.output


def test_a_run_that_does_not_exist_is_a_clear_error(tmp_path: Path) -> None:
    path = write_run(tmp_path / "runs.jsonl", runs=2, turns=(3,))
    result = replay(str(path), "--run", "3")
    assert result.exit_code == 2
    assert "holds 2 runs; --run must be between 1 and 2" in result.output


def test_model_summarizer_without_a_provider_says_what_to_configure(
    run_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OLLAMA_HOST", "127.0.0.1:9")  # nothing listens there
    result = replay(str(run_file), "--summarizer", "model")
    assert result.exit_code == 2
    assert "--summarizer model needs a model provider" in result.output
    assert "GOSLING_PROVIDER" in result.output and "--provider" not in result.output


def test_the_command_is_listed_in_help() -> None:
    result = CliRunner().invoke(cli, ["--help"])
    assert "context" in result.output
    assert "Replay a session through the context pipeline." in result.output


def test_plot_keeps_coinciding_strategies_visible_and_says_so(
    run_file: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("matplotlib")
    from matplotlib.figure import Figure

    drawn: list[Figure] = []
    save = Figure.savefig

    def keep(self: Figure, *args: object, **kwargs: object) -> None:
        drawn.append(self)
        save(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(Figure, "savefig", keep)
    monkeypatch.setattr("matplotlib.pyplot.close", lambda figure: None)
    result = replay(str(run_file), "--plot", str(tmp_path / "plot.png"), "--cache", "none")
    assert result.exit_code == 0, result.output
    [axes] = drawn[0].axes
    box = axes.get_legend()
    assert box is not None
    legend = [t.get_text() for t in box.get_texts()]
    # With a large window hybrid never summarizes, so it sends exactly what mask sends.
    assert [t.split(":")[0] for t in legend[:4]] == ["none", "summarize", "mask", "hybrid"]
    assert legend[3].endswith("(same as mask)") and "same as" not in legend[2]
    lines = {str(line.get_label()).split(":")[0]: line for line in axes.get_lines()[:4]}
    styles = {(line.get_linestyle(), line.get_marker()) for line in lines.values()}
    assert len(styles) == 4  # each strategy has its own line style and marker
    mask, hybrid = lines["mask"], lines["hybrid"]
    assert hybrid.get_zorder() > mask.get_zorder() and hybrid.get_linewidth() < mask.get_linewidth()
    assert mask.get_markevery() != hybrid.get_markevery()  # markers at different calls
