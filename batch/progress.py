"""What the user sees while a batch runs, always on stderr: a live bar on a terminal (done,
failed, running, tokens and cost so far), one plain line per finished task otherwise; and a
summary table at the end.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Mapping
from typing import IO, Any

from gosling.batch.scheduler import Summary


def _cost(summary: Summary) -> str:
    text = f"${summary.cost_usd:,.4f}"
    return text if summary.cost_known else f"{text}+ (some models unpriced)"


def _status(line: Mapping[str, Any]) -> str:
    code = line.get("exit_code")
    return "ok" if code == 0 else f"exit {code}"


def summary_rows(summary: Summary) -> list[tuple[str, str]]:
    rows = [
        ("tasks", str(summary.total)),
        ("skipped (done before)", str(summary.skipped)),
        ("succeeded", str(summary.succeeded)),
        ("failed", str(summary.failed)),
    ]
    if summary.cancelled:
        rows.append(("not run or cancelled", str(summary.cancelled)))
    if summary.retries:
        rows.append(("retried after a lost worker", str(summary.retries)))
    codes = ", ".join(f"{code}: {n}" for code, n in sorted(summary.exit_codes.items()))
    rows += [
        ("exit codes", codes or "-"),
        ("tokens", f"{summary.tokens:,}"),
        ("cost", _cost(summary)),
        ("wall time", f"{time.monotonic() - summary.started:.1f} s"),
    ]
    return rows


class PlainProgress:
    """For logs and pipes: a line per event, nothing redrawn."""

    def __init__(self, stream: IO[str] | None = None) -> None:
        self.stream = stream or sys.stderr
        self.total = 0
        self.done = 0

    def _say(self, text: str) -> None:
        self.stream.write(text + "\n")
        self.stream.flush()

    def begin(self, total: int, skipped: int) -> None:
        self.total, self.done = total, skipped
        extra = f" ({skipped} already done)" if skipped else ""
        self._say(f"batch: {total} task(s){extra}")

    def running(self, count: int) -> None:
        pass

    def finished(self, line: Mapping[str, Any]) -> None:
        self.done += 1
        tokens = (line.get("tokens") or {}).get("total", 0)
        error = f" - {line['error']}" if line.get("error") else ""
        self._say(
            f"[{self.done}/{self.total}] {line['task_id']}: {_status(line)} in "
            f"{line.get('duration_ms', 0) / 1000:.1f} s, {tokens:,} tokens{error}"
        )

    def note(self, text: str) -> None:
        self._say(f"batch: {text}")

    def end(self, summary: Summary) -> None:
        width = max(len(name) for name, _ in summary_rows(summary))
        for name, value in summary_rows(summary):
            self._say(f"{name:<{width}}  {value}")


class RichProgress:
    """For a terminal: one live bar, finished tasks scrolling above it."""

    def __init__(self) -> None:
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

        self.console = Console(stderr=True)
        self.bar = Progress(
            TextColumn("batch"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[status]}"),
            console=self.console,
            transient=True,
        )
        self.task_id = self.bar.add_task("batch", total=0, status="")
        self.in_flight = 0
        self.failed = 0
        self.tokens = 0
        self.cost = 0.0

    def _refresh(self) -> None:
        status = (
            f"failed {self.failed} · running {self.in_flight} · "
            f"{self.tokens:,} tokens · ${self.cost:,.4f}"
        )
        self.bar.update(self.task_id, status=status)

    def begin(self, total: int, skipped: int) -> None:
        self.bar.start()
        self.bar.update(self.task_id, total=total, completed=skipped)
        self._refresh()

    def running(self, count: int) -> None:
        if count != self.in_flight:
            self.in_flight = count
            self._refresh()

    def finished(self, line: Mapping[str, Any]) -> None:
        if line.get("exit_code") != 0:
            self.failed += 1
        self.tokens += int((line.get("tokens") or {}).get("total", 0))
        self.cost += float(line.get("total_cost_usd") or 0.0)
        mark = "[green]✓[/]" if line.get("exit_code") == 0 else "[red]✗[/]"
        self.console.print(f"{mark} {line['task_id']}: {_status(line)}", highlight=False)
        self.bar.advance(self.task_id)
        self._refresh()

    def note(self, text: str) -> None:
        self.console.print(f"[yellow]batch:[/] {text}", highlight=False)

    def end(self, summary: Summary) -> None:
        from rich.table import Table

        self.bar.stop()
        table = Table(title="gosling batch", show_header=False)
        table.add_column(style="bold")
        table.add_column(justify="right")
        for name, value in summary_rows(summary):
            table.add_row(name, value)
        self.console.print(table)


def progress_for(stream: IO[str]) -> PlainProgress | RichProgress:
    return RichProgress() if stream.isatty() else PlainProgress(stream)
