"""`gosling context replay FILE`: what each context strategy would send for a recorded session.

The replay itself is `agent.replay.run` (importable; it drives the reply loop); this module
only picks the summarizer, runs it and renders the result as a table, JSON or a plot.
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import click

if TYPE_CHECKING:
    from rich.console import JustifyMethod

    from gosling.agent.replay.results import (
        ReplayCall,
        ReplayOptions,
        ReplayStrategy,
        TranscriptReplay,
    )
    from gosling.providers import Provider
    from gosling.providers.prompt_cache import CacheFamily

STRATEGY_CHOICES = ("none", "summarize", "mask", "hybrid", "all")
PLOT_INSTALL_HINT = f"{sys.executable} -m pip install matplotlib"
"""Installs into the environment gosling runs from (a checkout's .venv or a tool env)."""


@click.group("context")
def context_group() -> None:
    """Replay a session through the context pipeline."""


@context_group.command("replay")
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option(
    "--strategy",
    type=click.Choice(STRATEGY_CHOICES),
    default="all",
    show_default=True,
    help="Context strategy to replay; 'all' replays and reports each.",
)
@click.option(
    "--context-limit",
    type=click.IntRange(min=1),
    default=128_000,
    show_default=True,
    help="The model's context window in tokens.",
)
@click.option(
    "--threshold",
    type=click.FloatRange(0, 1),
    default=0.8,
    show_default=True,
    help="Auto-compaction threshold (share of the window); 0 or 1 turns it off.",
)
@click.option(
    "--keep-last",
    type=click.IntRange(min=0),
    default=10,
    show_default=True,
    help="Tool results masking keeps verbatim.",
)
@click.option(
    "--keep-tokens",
    type=click.IntRange(min=0),
    default=4_000,
    show_default=True,
    help="...while they hold at most this many tokens (the newest is always kept).",
)
@click.option(
    "--summarizer",
    type=click.Choice(["stub", "model"]),
    default="stub",
    show_default=True,
    help="stub: deterministic summaries, no model; model: the configured provider.",
)
@click.option(
    "--run",
    "run_number",
    type=click.IntRange(min=1),
    default=None,
    help="Replay only run N of a file that holds several (OpenHands output.jsonl).",
)
@click.option(
    "--cache",
    "cache_family",
    type=click.Choice(["anthropic", "openai", "local", "none"]),
    default="anthropic",
    show_default=True,
    help="Price requests with this provider family's prompt cache (masking decides by it too).",
)
@click.option("--per-call", is_flag=True, help="Also print the tokens of every model call.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object for scripts.")
@click.option(
    "--plot",
    type=click.Path(dir_okay=False, writable=True, path_type=Path),
    default=None,
    help="Write a PNG of tokens per call, one line per strategy (needs matplotlib).",
)
@click.option(
    "--plot-metric",
    type=click.Choice(["tokens", "cost"]),
    default="tokens",
    show_default=True,
    help="What --plot draws per call: tokens sent, or cost in new-input-token units.",
)
def replay_command(
    file: Path,
    strategy: str,
    context_limit: int,
    threshold: float,
    keep_last: int,
    keep_tokens: int,
    summarizer: str,
    run_number: int | None,
    cache_family: CacheFamily,
    per_call: bool,
    as_json: bool,
    plot: Path | None,
    plot_metric: str,
) -> None:
    """Walk the session in FILE turn by turn as if it were live and report, per model call
    and in total, the tokens each context strategy would send, what they cost with prompt
    caching, and how often a strategy hid a tool output that a later reply used.

    FILE is any transcript `gosling sessions import` reads: Claude Code JSONL, mini-swe-agent
    .traj.json, OpenHands events or output.jsonl, OpenAI-chat JSON, a gosling export.
    """
    from gosling.agent.cli.errors import ConfigProblem
    from gosling.agent.replay.results import REPLAY_STRATEGIES, ReplayOptions
    from gosling.agent.replay.run import ReplayError, replay_file
    from gosling.sessions import ImportFailed

    if plot is not None:
        _require_matplotlib()
    strategies: tuple[ReplayStrategy, ...] = (
        REPLAY_STRATEGIES if strategy == "all" else (_strategy(strategy),)
    )
    options = ReplayOptions(
        context_limit=context_limit,
        threshold=threshold,
        keep_last=keep_last,
        keep_tokens=keep_tokens,
        cache_family=cache_family,
    )
    provider = _model_summarizer() if summarizer == "model" else None
    try:
        replays = asyncio.run(
            replay_file(file, strategies, run=run_number, summarizer=provider, options=options)
        )
    except (ImportFailed, ReplayError) as exc:
        raise ConfigProblem(str(exc)) from exc  # the file (or --run) is wrong: exit 2
    if plot is not None:
        write_plot(replays, plot, metric="cost" if plot_metric == "cost" else "tokens")
    if as_json:
        click.echo(json.dumps(as_dict(replays, options, summarizer), indent=2))
    else:
        render_tables(replays, per_call=per_call)
    if plot is not None:
        click.echo(f"wrote {plot}", err=True)


@context_group.command("demo")
def demo_command() -> None:
    """Replay a bundled real transcript through every context strategy; no model is called.

    What a first run without any model provider can still show: mini-swe-agent's 86-call
    solution of a SWE-bench task, replayed at a 16k window so that keeping the whole history
    overflows it while masking and compaction keep every call inside it.
    """
    from gosling.agent.demo import DEMO_CONTEXT_LIMIT, DEMO_TRANSCRIPT
    from gosling.agent.replay.results import REPLAY_STRATEGIES, ReplayOptions
    from gosling.agent.replay.run import replay_file

    options = ReplayOptions(context_limit=DEMO_CONTEXT_LIMIT)
    click.echo(
        "No model was called: this replays a recorded session (mini-swe-agent with "
        "deepseek-reasoner on SWE-bench task marshmallow-1343), feeding its recorded replies and "
        "tool results through gosling's context pipeline, with deterministic stand-in summaries.\n"
    )
    replays = asyncio.run(replay_file(DEMO_TRANSCRIPT, REPLAY_STRATEGIES, options=options))
    render_tables(replays, per_call=False)
    click.echo(
        "\nKeeping the whole history (none) goes over the window; mask hides old tool output "
        "behind recallable placeholders; summarize and hybrid also compact into a structured "
        "summary. Replay your own sessions with `gosling context replay FILE`."
    )


def _strategy(name: str) -> ReplayStrategy:
    from gosling.agent.replay.results import REPLAY_STRATEGIES

    for known in REPLAY_STRATEGIES:
        if known == name:
            return known
    raise click.BadParameter(f"unknown strategy {name!r}", param_hint="--strategy")


def _model_summarizer() -> Provider:
    """The configured provider (flags, env, config), as `gosling run` would pick it."""
    from gosling.agent.cli.errors import ConfigProblem
    from gosling.agent.config import ConfigError, load_settings
    from gosling.agent.provider_choice import NoProviderFound, choose_provider
    from gosling.providers import ProviderError

    try:
        return choose_provider(load_settings().settings)
    except NoProviderFound as exc:
        raise ConfigProblem(
            "--summarizer model needs a model provider: set ANTHROPIC_API_KEY or "
            "OPENAI_API_KEY, or choose one with GOSLING_PROVIDER and GOSLING_MODEL (or "
            "`provider` and `model` in config.toml); `--summarizer stub` needs none"
        ) from exc
    except (ConfigError, ProviderError) as exc:
        raise ConfigProblem(f"--summarizer model: {exc}") from exc


def _require_matplotlib() -> None:
    try:
        import matplotlib  # noqa: F401
    except ImportError as exc:
        raise click.ClickException(
            f"--plot needs matplotlib, which is not installed; install it with "
            f"`{PLOT_INSTALL_HINT}`"
        ) from exc


# -- JSON ---------------------------------------------------------------------------------------


def as_dict(
    replays: Sequence[TranscriptReplay], options: ReplayOptions, summarizer: str
) -> dict[str, Any]:
    return {
        "options": {**options.to_dict(), "summarizer": summarizer},
        "transcripts": [r.to_dict() for r in replays],
    }


# -- tables -------------------------------------------------------------------------------------


def _k(n: int) -> str:
    return f"{n:,}"


def _short(n: int) -> str:
    if n < 10_000:
        return f"{n:,}"
    if n < 1_000_000:
        return f"{n / 1000:.1f}k"
    return f"{n / 1_000_000:.2f}M"


SUMMARY_COLUMNS: tuple[tuple[str, JustifyMethod], ...] = (
    ("strategy", "left"),
    ("sent", "right"),
    ("vs none", "right"),
    ("peak", "right"),
    ("compact", "right"),
    ("pairs", "right"),
    ("masked", "right"),
    ("overflow", "right"),
    ("summarizer", "right"),
    ("valid", "left"),
)


def render_tables(replays: Sequence[TranscriptReplay], *, per_call: bool) -> None:
    from rich.console import Console
    from rich.table import Table

    console = Console()
    for replay in replays:
        options = replay.options
        console.print(
            f"[bold]{replay.name}[/bold]\n{replay.source_format}, {replay.messages} messages, "
            f"{replay.model_calls} model calls, {replay.tool_calls} tool calls; system prompt: "
            f"{replay.system_prompt} ({_k(replay.system_tokens)} tokens); window "
            f"{_k(options.context_limit)}, threshold {options.threshold:g}, keep last "
            f"{options.keep_last} (up to {_k(options.keep_tokens)} tokens)"
        )
        if replay.source_repairs:
            more = ", ..." if len(replay.source_repairs) > 1 else ""
            console.print(
                f"repaired in the source before replaying: {len(replay.source_repairs)} "
                f"({replay.source_repairs[0]}{more})"
            )
        table = Table(box=None, pad_edge=False, padding=(0, 1, 0, 0))
        for title, justify in SUMMARY_COLUMNS:
            table.add_column(title, justify=justify, no_wrap=True)
        for name, result in replay.results.items():
            relative = replay.relative(name)
            table.add_row(
                name,
                _short(result.tokens_sent),
                "-" if relative is None else f"{relative:.1%}",
                _short(result.peak_context),
                str(result.compactions),
                str(result.pair_summaries),
                _short(result.tokens_masked),
                str(result.overflows),
                _short(result.side_input_tokens),
                "yes" if result.all_valid else "[red]NO[/red]",
            )
        console.print(table)
        console.print(
            "sent: tokens of all model calls; compact: compactions; pairs: tool calls "
            "summarized; masked: tokens masking saved (placeholders and cut arguments); "
            "overflow: calls over the "
            "window; summarizer: input tokens of summary calls",
            style="dim",
        )
        console.print(_cost_table(replay))
        console.print(
            f"cost: all model calls priced with the {options.cache_family} prompt cache, and "
            "the summarizer's calls as new input, in new input tokens (replies included); "
            "cached: share of sent tokens read from the "
            "cache; hidden used: later uses of a tool output the call's view did not show "
            "whole, of all later uses",
            style="dim",
        )
        for name, result in replay.results.items():
            for failure in result.failures:
                console.print(f"[yellow]{name}: {failure}[/yellow]")
            for number, receipt in enumerate(result.receipts, 1):
                line = receipt.get("line") or "no receipt"
                console.print(f"{name}: compaction {number} ({receipt.get('trigger')}): {line}")
            for call in result.calls:
                if not call.valid:
                    console.print(f"[red]{name} call {call.call}: {'; '.join(call.issues)}[/red]")
        if per_call:
            console.print(_per_call_table(replay))
        console.print()


COST_COLUMNS: tuple[tuple[str, JustifyMethod], ...] = (
    ("strategy", "left"),
    ("cost", "right"),
    ("vs none", "right"),
    ("cached", "right"),
    ("per call", "right"),
    ("hidden used", "right"),
)


def _cost_table(replay: TranscriptReplay) -> Any:
    from rich.table import Table

    table = Table(box=None, pad_edge=False, padding=(0, 1, 0, 0))
    for title, justify in COST_COLUMNS:
        table.add_column(title, justify=justify, no_wrap=True)
    for name, result in replay.results.items():
        relative = replay.relative_cost(name)
        per_call = round(result.cost / len(result.calls)) if result.calls else 0
        table.add_row(
            name,
            _short(round(result.cost)),
            "-" if relative is None else f"{relative:.1%}",
            f"{result.cached_share:.0%}",
            _short(per_call),
            f"{result.hidden_then_used}/{result.later_uses}",
        )
    return table


def _per_call_table(replay: TranscriptReplay) -> Any:
    from rich.table import Table

    table = Table(box=None, pad_edge=False, title="tokens per model call")
    table.add_column("call", justify="right")
    for name in replay.results:
        table.add_column(name, justify="right")
    table.add_column("events")
    rows = max(len(r.calls) for r in replay.results.values())
    for index in range(rows):
        cells = [str(index + 1)]
        events: list[str] = []
        for name, result in replay.results.items():
            call = result.calls[index] if index < len(result.calls) else None
            cells.append("" if call is None else _k(call.tokens) + ("!" if call.overflow else ""))
            if call is not None and call.labels:
                events.append(f"{name}: {', '.join(call.labels)}")
        table.add_row(*cells, "; ".join(events))
    return table


# -- plot ---------------------------------------------------------------------------------------

PlotMetric = Literal["tokens", "cost"]


def _metric(call: ReplayCall, metric: PlotMetric) -> float:
    return call.tokens if metric == "tokens" else call.cost


LINE_STYLES: dict[str, tuple[str, str, float, str]] = {
    "none": ("#7f7f7f", "-", 3.2, "o"),
    "summarize": ("#1f77b4", "--", 2.4, "s"),
    "mask": ("#2ca02c", "-.", 1.8, "^"),
    "hybrid": ("#d62728", ":", 1.4, "D"),
}
"""Colour, line style, width and marker per strategy: each differs in all four, wider lines
are drawn first and markers sit at staggered calls, so coinciding strategies stay visible."""
OTHER_STYLE = ("black", "-", 1.0, "x")


def same_as(series: Mapping[str, Sequence[float]]) -> dict[str, str]:
    """For each series equal to an earlier one, the name of the first such series."""
    seen: dict[tuple[float, ...], str] = {}
    equal: dict[str, str] = {}
    for name, values in series.items():
        key = tuple(values)
        if key in seen:
            equal[name] = seen[key]
        else:
            seen[key] = name
    return equal


def write_plot(
    replays: Sequence[TranscriptReplay], path: Path, *, metric: PlotMetric = "tokens"
) -> None:
    """Tokens sent (or cost) per model call, one line per strategy, one panel per
    transcript."""
    _require_matplotlib()
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(
        len(replays), 1, figsize=(8, 3.6 * len(replays)), squeeze=False, layout="constrained"
    )
    for replay, ax in zip(replays, axes[:, 0], strict=True):
        results = replay.results
        equal = same_as(
            {name: [_metric(c, metric) for c in r.calls] for name, r in results.items()}
        )
        for index, (name, result) in enumerate(results.items()):
            xs = [c.call for c in result.calls]
            ys = [_metric(c, metric) for c in result.calls]
            total = result.tokens_sent if metric == "tokens" else round(result.cost)
            color, style, width, marker = LINE_STYLES.get(name, OTHER_STYLE)
            label = f"{name}: {_k(total)}"
            if name in equal:
                label += f" (same as {equal[name]})"
            step = max(len(xs) // 8, len(results))
            (line,) = ax.plot(
                xs,
                ys,
                ls=style,
                color=color,
                lw=width,
                marker=marker,
                ms=5,
                markevery=(index % step, step),
                zorder=2 + index,
                label=label,
            )
            compacted = [
                c for c in result.calls if {"compaction", "overflow compaction"} & set(c.labels)
            ]
            if compacted:
                ax.plot(
                    [c.call for c in compacted],
                    [_metric(c, metric) for c in compacted],
                    "v",
                    color=line.get_color(),
                    ms=7,
                    zorder=10,
                )
        options = replay.options
        peak = max(r.peak_context for r in replay.results.values())
        at = options.context_limit * options.threshold
        if metric == "tokens" and 0 < options.threshold < 1 and peak >= 0.5 * at:
            ax.axhline(at, color="grey", ls="--", lw=0.8, label="compaction threshold")
        if metric == "tokens" and peak >= 0.5 * options.context_limit:
            ax.axhline(options.context_limit, color="black", ls=":", lw=0.8, label="window")
        ax.set_title(
            f"{replay.name}: {replay.model_calls} calls, window {_k(options.context_limit)}",
            fontsize=10,
        )
        ax.set_xlabel("model call")
        label = "tokens sent" if metric == "tokens" else "cost (new input tokens)"
        ax.set_ylabel(label)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8, title=f"strategy: {label}", title_fontsize=8)
    figure.savefig(path, dpi=90)
    plt.close(figure)
