"""An OTLP trace receiver on loopback, for tests: HTTP/protobuf (`POST /v1/traces`) and gRPC
(`TraceService/Export`), decoding `ExportTraceServiceRequest` with `opentelemetry-proto`.

    with OtlpReceiver("http") as receiver:      # or "grpc"
        env["OTEL_EXPORTER_OTLP_ENDPOINT"] = receiver.endpoint
        ...
        spans = receiver.spans()                # ReceivedSpan, in arrival order
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, Literal

from opentelemetry.proto.collector.trace.v1 import trace_service_pb2


@dataclass(frozen=True)
class ReceivedSpan:
    name: str
    trace_id: str
    span_id: str
    parent_span_id: str
    kind: int
    attributes: dict[str, Any]
    links: list[tuple[str, str]] = field(default_factory=list)
    """(trace id, span id) of each link."""
    service: str = ""
    status_code: int = 0
    start_ns: int = 0
    end_ns: int = 0
    """Start and end, nanoseconds since the epoch, as the exporter sent them."""


def _value(any_value: Any) -> Any:
    kind = any_value.WhichOneof("value")
    if kind == "array_value":
        return [_value(v) for v in any_value.array_value.values]
    if kind == "kvlist_value":
        return {kv.key: _value(kv.value) for kv in any_value.kvlist_value.values}
    return getattr(any_value, kind) if kind else None


def decode(body: bytes) -> list[ReceivedSpan]:
    request = trace_service_pb2.ExportTraceServiceRequest()
    request.ParseFromString(body)
    return _spans(request)


def _spans(request: Any) -> list[ReceivedSpan]:
    found = []
    for resource_spans in request.resource_spans:
        resource = {kv.key: _value(kv.value) for kv in resource_spans.resource.attributes}
        for scope_spans in resource_spans.scope_spans:
            for span in scope_spans.spans:
                found.append(
                    ReceivedSpan(
                        name=span.name,
                        trace_id=span.trace_id.hex(),
                        span_id=span.span_id.hex(),
                        parent_span_id=span.parent_span_id.hex(),
                        kind=span.kind,
                        attributes={kv.key: _value(kv.value) for kv in span.attributes},
                        links=[(ln.trace_id.hex(), ln.span_id.hex()) for ln in span.links],
                        service=str(resource.get("service.name", "")),
                        status_code=span.status.code,
                        start_ns=span.start_time_unix_nano,
                        end_ns=span.end_time_unix_nano,
                    )
                )
    return found


class OtlpReceiver:
    def __init__(self, protocol: Literal["http", "grpc"] = "http") -> None:
        self.protocol = protocol
        self._spans: list[ReceivedSpan] = []
        self._lock = threading.Lock()
        self.endpoint = ""
        self._http: ThreadingHTTPServer | None = None
        self._grpc: Any = None

    def spans(self) -> list[ReceivedSpan]:
        with self._lock:
            return list(self._spans)

    def _add(self, spans: list[ReceivedSpan]) -> None:
        with self._lock:
            self._spans.extend(spans)

    def __enter__(self) -> OtlpReceiver:
        if self.protocol == "http":
            self._start_http()
        else:
            self._start_grpc()
        return self

    def _start_http(self) -> None:
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                if self.path == "/v1/traces":
                    receiver._add(decode(body))
                    reply = trace_service_pb2.ExportTraceServiceResponse().SerializeToString()
                    self.send_response(200)
                else:
                    reply = b""
                    self.send_response(404)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", str(len(reply)))
                self.end_headers()
                self.wfile.write(reply)

            def log_message(self, *args: Any) -> None:
                pass

        self._http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.endpoint = f"http://127.0.0.1:{self._http.server_address[1]}"
        threading.Thread(target=self._http.serve_forever, daemon=True).start()

    def _start_grpc(self) -> None:
        from concurrent import futures

        import grpc
        from opentelemetry.proto.collector.trace.v1 import trace_service_pb2_grpc

        receiver = self

        class Service(trace_service_pb2_grpc.TraceServiceServicer):
            def Export(self, request: Any, context: Any) -> Any:
                receiver._add(_spans(request))
                return trace_service_pb2.ExportTraceServiceResponse()

        self._grpc = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
        add = trace_service_pb2_grpc.add_TraceServiceServicer_to_server
        add(Service(), self._grpc)  # type: ignore[no-untyped-call]
        port = self._grpc.add_insecure_port("127.0.0.1:0")
        self._grpc.start()
        self.endpoint = f"http://127.0.0.1:{port}"

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._http is not None:
            self._http.shutdown()
            self._http.server_close()
        if self._grpc is not None:
            self._grpc.stop(grace=None)
