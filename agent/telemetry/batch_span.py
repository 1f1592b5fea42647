"""`gosling batch`'s own span: the trace a fleet of task traces links to."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from opentelemetry import context as otel_context
from opentelemetry.trace import Status, StatusCode

from gosling.agent.telemetry import otel
from gosling.agent.telemetry.settings import TraceSettings
from gosling.agent.telemetry.spans import traceparent_of


class BatchTrace:
    """A `gosling.batch` span from the start of the batch to its summary."""

    def __init__(self, config: TraceSettings, tasks: int, out_dir: Path) -> None:
        self.config = config
        self.span: Any = otel.tracer(config).start_span(
            "gosling.batch",
            context=otel_context.Context(),
            attributes={"gosling.batch.tasks": tasks, "gosling.batch.output_dir": str(out_dir)},
        )
        self.traceparent = traceparent_of(self.span)
        """What each task gets (`RunDefaults.trace_link`)."""

    def end(self, exit_code: int) -> None:
        self.span.set_attribute("gosling.batch.exit_code", exit_code)
        if exit_code != 0:
            self.span.set_status(Status(StatusCode.ERROR))
        self.span.end()
        otel.flush(self.config)
