"""The one module that imports the OpenTelemetry SDK and its OTLP exporters (the `otel`
extra), and only when tracing is on.

One tracer provider per process and endpoint: a batch worker runs many tasks and exports
through the same one, flushed after each run (`flush`), shut down at exit.
"""

from __future__ import annotations

import atexit
import functools
from typing import Any

from gosling.agent.telemetry.settings import TraceSettings

FLUSH_TIMEOUT_MS = 10_000


class TelemetryUnavailable(ValueError):
    """Tracing was asked for but the `otel` extra is not installed."""


@functools.lru_cache(maxsize=4)
def tracer_provider(config: TraceSettings) -> Any:
    """The process's `TracerProvider` for `config`, exporting in batches over OTLP."""
    try:
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor
    except ImportError as exc:
        raise TelemetryUnavailable(
            "tracing is on (an OTLP endpoint is set) but OpenTelemetry is not installed; "
            "install it with: pip install 'gosling-agent[otel]'"
        ) from exc
    from gosling.agent.version import __version__

    resource = Resource.create(
        {"service.name": config.service_name, "service.version": __version__}
    )
    provider = TracerProvider(resource=resource)
    provider.add_span_processor(BatchSpanProcessor(_exporter(config)))
    atexit.register(provider.shutdown)
    return provider


def _exporter(config: TraceSettings) -> Any:
    endpoint = config.endpoint
    if config.protocol == "grpc":
        from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter

        if endpoint is None:
            return OTLPSpanExporter()
        return OTLPSpanExporter(endpoint=endpoint, insecure=endpoint.startswith("http://"))
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import (
        OTLPSpanExporter as HttpExporter,
    )

    if endpoint is None:
        return HttpExporter()
    return HttpExporter(endpoint=endpoint.rstrip("/") + "/v1/traces")


def tracer(config: TraceSettings) -> Any:
    from gosling.agent.version import __version__

    return tracer_provider(config).get_tracer("gosling", __version__)


def flush(config: TraceSettings) -> None:
    """Export every finished span now (before the process may exit)."""
    tracer_provider(config).force_flush(FLUSH_TIMEOUT_MS)
