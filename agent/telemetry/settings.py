"""Whether to trace, where to, and with what: the standard `OTEL_*` variables over config.

Pure and import-free: with no endpoint anywhere the answer is None and nothing of
OpenTelemetry is ever imported.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from gosling.agent.config import TelemetrySettings

Protocol = Literal["http/protobuf", "grpc"]
CAPTURE_CONTENT_VAR = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"
LINK_VAR = "GOSLING_TRACE_LINK"
"""A W3C `traceparent` every turn's trace links to (what `gosling batch` gives its tasks)."""


@dataclass(frozen=True)
class FileTelemetry:
    """`[telemetry]` read straight from a TOML table (the batch driver, which does not load
    the whole settings)."""

    endpoint: str | None = None
    protocol: Protocol | None = None
    capture_content: bool = False

    @classmethod
    def of(cls, table: object) -> FileTelemetry:
        if not isinstance(table, dict):
            return cls()
        endpoint = table.get("endpoint")
        protocol = table.get("protocol")
        return cls(
            endpoint if isinstance(endpoint, str) else None,
            protocol if protocol in ("grpc", "http/protobuf") else None,
            table.get("capture_content") is True,
        )


@dataclass(frozen=True)
class TraceSettings:
    endpoint: str | None
    """From config; None: the exporter reads `OTEL_EXPORTER_OTLP_[TRACES_]ENDPOINT`."""
    protocol: Protocol
    capture_content: bool
    service_name: str = "gosling"


def trace_settings(
    config: TelemetrySettings | FileTelemetry | None = None,
    environ: Mapping[str, str] | None = None,
) -> TraceSettings | None:
    """None when tracing is off: no endpoint in `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`,
    `OTEL_EXPORTER_OTLP_ENDPOINT` or `[telemetry] endpoint`, or `OTEL_SDK_DISABLED=true`,
    or `OTEL_TRACES_EXPORTER=none`."""
    env = os.environ if environ is None else environ
    if env.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return None
    if env.get("OTEL_TRACES_EXPORTER", "").strip().lower() == "none":
        return None
    from_env = env.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") or env.get(
        "OTEL_EXPORTER_OTLP_ENDPOINT"
    )
    endpoint = None if from_env else (config.endpoint if config is not None else None)
    if not from_env and not endpoint:
        return None
    raw = env.get("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL") or env.get("OTEL_EXPORTER_OTLP_PROTOCOL")
    protocol: Protocol = "http/protobuf"
    if raw:
        protocol = "grpc" if raw.strip().lower() == "grpc" else "http/protobuf"
    elif config is not None and config.protocol is not None:
        protocol = config.protocol
    capture = env.get(CAPTURE_CONTENT_VAR, "").strip().lower() == "true" or bool(
        config is not None and config.capture_content
    )
    service = env.get("OTEL_SERVICE_NAME") or "gosling"
    return TraceSettings(endpoint, protocol, capture, service)
