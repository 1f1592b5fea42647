"""A loopback fake of the Anthropic Messages, OpenAI Chat Completions and OpenAI Responses
APIs, driven by a script of turns and faults. The real SDKs talk to it over HTTP, so their
streaming parsers, error classes and our adapters are all exercised.

In-process (pytest)::

    with FakeLLMServer([Turn(text="hi"), Fault.rate_limit()]) as server:
        provider = create_provider("anthropic", base_url=server.url, api_key="test")
        ...
        assert server.requests[0].body["model"] == ...

As a subprocess (end-to-end tests that run `gosling` itself)::

    python -m tests.fakes.llm_server --script turns.json [--record requests.jsonl]

prints its base URL (``http://127.0.0.1:PORT``) as the first line of stdout and serves until
terminated. `FakeLLMServerProcess` wraps that for tests. See tests/fakes/README.md.
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import json
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import TracebackType
from typing import Any

from tests.fakes.faults import error_response, stream_error_frame
from tests.fakes.script import Fault, ScriptItem, Turn, as_turn, load_script
from tests.fakes.wire import (
    Api,
    Frame,
    RenderContext,
    anthropic_message,
    anthropic_stream,
    chat_completion,
    chat_stream,
    response_object,
    responses_stream,
)

_STREAM_FAULTS = frozenset({"drop", "malformed", "stream_error", "trickle"})


@dataclass(frozen=True)
class RecordedRequest:
    """One request the fake server received (header names lower-cased)."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any
    api: Api | None
    streamed: bool
    received_at: float = 0.0
    """`time.monotonic()` when the request's headers were read (one clock for every process
    on the machine, so a bench can time a subprocess's first request)."""
    size: int = 0
    """Bytes of the request body as it came over the wire."""


def _api_for(path: str) -> Api | None:
    path = path.split("?", 1)[0].rstrip("/")
    if path.endswith("/messages"):
        return "anthropic"
    if path.endswith("/chat/completions"):
        return "chat"
    if path.endswith("/responses"):
        return "responses"
    return None


def _default_cut(api: Api, frames: list[Frame]) -> int:
    """How many frames precede a mid-stream fault by default: through the first content
    delta, so the client has already shown something."""
    for i, (event, _) in enumerate(frames):
        if api == "anthropic" and event == "content_block_delta":
            return i + 1
        if api == "responses" and event is not None and event.endswith(".delta"):
            return i + 1
        if api == "chat" and i >= 1:
            return i + 1
    return max(1, len(frames) // 2)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        """Silent: the recorded requests are the log."""

    # -- plumbing ---------------------------------------------------------------------------

    def _send_json(self, status: int, body: Any, headers: dict[str, str] | None = None) -> None:
        raw = (
            body
            if isinstance(body, bytes)
            else (body if isinstance(body, str) else json.dumps(body)).encode()
        )
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(raw)))
        self.send_header("Connection", "close")
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(raw)
        self.close_connection = True

    def _start_stream(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True

    def _write_frame(self, frame: Frame) -> None:
        event, data = frame
        text = (f"event: {event}\n" if event else "") + f"data: {data}\n\n"
        raw = text.encode()
        self.wfile.write(f"{len(raw):x}\r\n".encode() + raw + b"\r\n")
        self.wfile.flush()

    def _end_stream(self) -> None:
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def _drop_connection(self) -> None:
        self.wfile.flush()
        with contextlib.suppress(OSError):
            self.connection.shutdown(socket.SHUT_RDWR)
        self.close_connection = True

    # -- routes -----------------------------------------------------------------------------

    def do_GET(self) -> None:
        info = self.server.fake.info_routes.get(("GET", self.path))
        if info is not None:
            self._send_json(200, info)
        elif self.path.startswith("/_fake/requests"):
            self._send_json(200, [asdict(r) for r in self.server.fake.requests])
        elif self.path.startswith("/_fake/state"):
            fake = self.server.fake
            self._send_json(200, {"pending": fake.pending, "served": len(fake.model_requests())})
        else:
            self._send_json(
                404, {"error": {"message": f"fake LLM server: no route GET {self.path}"}}
            )

    def do_POST(self) -> None:
        received_at = time.monotonic()
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        if len(raw) < length:
            # The client died mid-send (a test killed it): a real server never sees such a
            # request as one, so it is neither recorded nor answered.
            self.close_connection = True
            return
        try:
            body: Any = json.loads(raw) if raw else None
        except json.JSONDecodeError:
            body = raw.decode(errors="replace")
        if self.path.startswith("/_fake/turns"):
            self.server.fake.add(*load_script(body if isinstance(body, dict | list) else []))
            self._send_json(200, {"pending": self.server.fake.pending})
            return
        info = self.server.fake.info_routes.get(("POST", self.path))
        if info is not None:
            self._send_json(200, info)
            return
        api = _api_for(self.path)
        streamed = isinstance(body, dict) and body.get("stream") is True
        headers = {k.lower(): v for k, v in self.headers.items()}
        fake = self.server.fake
        turn = fake._record_and_pop(
            RecordedRequest("POST", self.path, headers, body, api, streamed, received_at, len(raw))
        )
        if api is None:
            self._send_json(
                404, {"error": {"message": f"fake LLM server: no route POST {self.path}"}}
            )
            return
        if turn is None:
            served = len(fake.requests)
            message = (
                f"fake LLM server: no scripted turn left for POST {self.path} "
                f"({served} requests received)"
            )
            self._send_json(
                400,
                {"type": "error", "error": {"type": "invalid_request_error", "message": message}},
            )
            return
        if turn.delay and self.server.stopping.wait(turn.delay):
            return
        ctx = RenderContext(
            model=str(body.get("model", "fake-model")) if isinstance(body, dict) else "fake-model",
            request_bytes=len(raw),
            include_usage=isinstance(body, dict)
            and bool((body.get("stream_options") or {}).get("include_usage")),
            include_encrypted_reasoning=isinstance(body, dict)
            and "reasoning.encrypted_content" in (body.get("include") or []),
            ids=fake._ids,
        )
        fault = turn.fault
        if fault is not None and (fault.kind not in _STREAM_FAULTS or not streamed):
            self._answer_fault(api, fault)
        elif streamed:
            self._stream(api, turn, ctx)
        else:
            renderer = {
                "anthropic": anthropic_message,
                "chat": chat_completion,
                "responses": response_object,
            }[api]
            self._send_json(200, renderer(turn, ctx))

    def _trickle(self, interval: float) -> None:
        """Keep-alive comments until the client gives up or the server stops."""
        while not self.server.stopping.wait(interval):
            try:
                self.wfile.write(b"8\r\n: ping\n\n\r\n")  # one chunk: an SSE comment
                self.wfile.flush()
            except OSError:
                return

    def _answer_fault(self, api: Api, fault: Fault) -> None:
        if fault.kind == "trickle":  # not streamed: a JSON body that never starts
            self._start_stream()
            self._trickle(fault.interval or 0.05)
        elif fault.kind == "drop":
            self._drop_connection()
        elif fault.kind == "malformed":
            self._send_json(200, b'{"id": "broken", "content": [')
        else:
            status, headers, body = error_response(api, fault)
            self._send_json(status, body if body is not None else b"", headers)

    def _stream(self, api: Api, turn: Turn, ctx: RenderContext) -> None:
        renderer = {
            "anthropic": anthropic_stream,
            "chat": chat_stream,
            "responses": responses_stream,
        }[api]
        frames = renderer(turn, ctx)
        fault = turn.fault
        cut = len(frames)
        if fault is not None:
            cut = (
                fault.after_events if fault.after_events is not None else _default_cut(api, frames)
            )
        self._start_stream()
        for frame in frames[:cut]:
            self._write_frame(frame)
        if fault is None:
            self._end_stream()
        elif fault.kind == "trickle":
            self._trickle(fault.interval or 0.05)
        elif fault.kind == "drop":
            self._drop_connection()
        elif fault.kind == "malformed":
            self._write_frame(
                (frames[cut][0] if cut < len(frames) else None, '{"type": "broken", ')
            )
            self._end_stream()
        else:
            self._write_frame(stream_error_frame(api, fault, cut))
            self._end_stream()


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False

    def __init__(self, address: tuple[str, int], fake: FakeLLMServer) -> None:
        super().__init__(address, _Handler)
        self.fake = fake
        self.stopping = threading.Event()


class FakeLLMServer:
    """A threaded loopback server that serves scripted turns, one per model request."""

    def __init__(
        self, turns: Iterable[ScriptItem] = (), *, host: str = "127.0.0.1", port: int = 0
    ) -> None:
        self._turns: list[Turn] = [as_turn(t) for t in turns]
        self._conversations: dict[str, list[Turn]] = {}
        self._requests: list[RecordedRequest] = []
        self._lock = threading.Condition()
        self._ids = itertools.count(1)
        self._address = (host, port)
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None
        self.record_path: Path | None = None
        self.info_routes: dict[tuple[str, str], Any] = {}
        """(method, path) -> a JSON body served as is, never consuming a turn: what a local
        server says about itself (`/api/show`, `/props`, `/v1/models`, ...)."""
        self.keep_bodies = True
        """False: model requests are recorded without their bodies (a bench of hundreds of
        large requests); `on_request` still sees each one whole."""
        self.on_request: Callable[[RecordedRequest], None] | None = None
        self.reply_for: Callable[[RecordedRequest], Turn | None] | None = None
        """Chooses the turn that answers a model request from the request itself (its usage
        counted from its body, say); None falls back to the conversations and the queue."""

    # -- lifecycle --------------------------------------------------------------------------

    def start(self) -> FakeLLMServer:
        self._server = _Server(self._address, self)
        self._thread = threading.Thread(
            target=self._server.serve_forever,
            kwargs={"poll_interval": 0.02},
            name="fake-llm-server",
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.stopping.set()
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> FakeLLMServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    # -- addresses --------------------------------------------------------------------------

    @property
    def port(self) -> int:
        if self._server is None:
            raise RuntimeError("the fake LLM server is not running; use it as a context manager")
        return int(self._server.server_address[1])

    @property
    def url(self) -> str:
        """Base URL for Anthropic (the SDK appends /v1/messages)."""
        return f"http://127.0.0.1:{self.port}"

    @property
    def openai_url(self) -> str:
        """Base URL for the OpenAI SDK and OpenAI-compatible servers (ends in /v1)."""
        return f"{self.url}/v1"

    # -- script and records -----------------------------------------------------------------

    def add(self, *items: ScriptItem) -> None:
        with self._lock:
            self._turns.extend(as_turn(i) for i in items)

    def add_conversation(self, marker: str, *items: ScriptItem) -> None:
        """Replies for every conversation whose first user message contains `marker`, by
        position: its n-th model call (n assistant messages so far) gets the n-th item. Stateless,
        so concurrent conversations (a batch) and a conversation started over (a retried task)
        get the same replies. Anthropic Messages and Chat Completions requests only."""
        with self._lock:
            self._conversations[marker] = [as_turn(i) for i in items]

    def _conversation_turn(self, body: Any) -> Turn | None:
        messages = body.get("messages") if isinstance(body, dict) else None
        if not self._conversations or not isinstance(messages, list):
            return None
        users = [m for m in messages if isinstance(m, dict) and m.get("role") == "user"]
        if not users:
            return None
        first = json.dumps(users[0].get("content"))
        matches = [marker for marker in self._conversations if marker in first]
        if not matches:
            return None
        turns = self._conversations[max(matches, key=len)]
        calls = sum(1 for m in messages if isinstance(m, dict) and m.get("role") == "assistant")
        return turns[calls] if calls < len(turns) else None

    @property
    def pending(self) -> int:
        with self._lock:
            return len(self._turns)

    @property
    def requests(self) -> list[RecordedRequest]:
        with self._lock:
            return list(self._requests)

    def model_requests(self) -> list[RecordedRequest]:
        """Requests to a model endpoint (not the /_fake control routes)."""
        return [r for r in self.requests if r.api is not None]

    def assert_complete(self) -> None:
        if self.pending:
            raise AssertionError(f"{self.pending} scripted turn(s) were never requested")

    def wait_for_requests(self, count: int, timeout: float = 5.0) -> list[RecordedRequest]:
        """Block until `count` requests arrived (for subprocess tests), or fail."""
        deadline = time.monotonic() + timeout
        with self._lock:
            while len(self._requests) < count:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise AssertionError(f"expected {count} requests, got {len(self._requests)}")
                self._lock.wait(remaining)
            return list(self._requests)

    def _record_and_pop(self, request: RecordedRequest) -> Turn | None:
        with self._lock:
            self._requests.append(request)
            self._lock.notify_all()
            if self.record_path is not None:
                with self.record_path.open("a", encoding="utf-8") as out:
                    out.write(json.dumps(asdict(request)) + "\n")
            if request.api is None:
                return None
            if self.on_request is not None:
                self.on_request(request)
            scripted = self.reply_for(request) if self.reply_for is not None else None
            if scripted is None:
                scripted = self._conversation_turn(request.body)
            if not self.keep_bodies:
                self._requests[-1] = replace(request, body=None)
            if scripted is not None or not self._turns:
                return scripted
            return self._turns.pop(0)


class FakeLLMServerProcess:
    """The fake server in a child process: `with FakeLLMServerProcess(script_path) as fake:`
    gives `fake.url`, and `fake.requests()` reads what it received."""

    def __init__(
        self, script: str | Path, *, cwd: str | Path | None = None, startup_timeout: float = 10.0
    ) -> None:
        self.script = Path(script)
        self.cwd = Path(cwd) if cwd else Path(__file__).resolve().parents[2]
        self.startup_timeout = startup_timeout
        self.url = ""
        self._process: subprocess.Popen[str] | None = None

    def __enter__(self) -> FakeLLMServerProcess:
        command = [sys.executable, "-m", "tests.fakes.llm_server", "--script", str(self.script)]
        self._process = subprocess.Popen(command, cwd=self.cwd, stdout=subprocess.PIPE, text=True)
        assert self._process.stdout is not None
        line = self._process.stdout.readline().strip()
        if not line.startswith("http://"):
            self._process.kill()
            raise RuntimeError(f"fake LLM server did not start (first line: {line!r})")
        self.url = line
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._process is not None:
            self._process.terminate()
            self._process.wait(timeout=10)
            if self._process.stdout is not None:
                self._process.stdout.close()

    @property
    def openai_url(self) -> str:
        return f"{self.url}/v1"

    def requests(self) -> list[dict[str, Any]]:
        with urllib.request.urlopen(f"{self.url}/_fake/requests", timeout=5) as response:
            result: list[dict[str, Any]] = json.loads(response.read())
        return [r for r in result if r.get("api") is not None]

    def state(self) -> dict[str, int]:
        with urllib.request.urlopen(f"{self.url}/_fake/state", timeout=5) as response:
            result: dict[str, int] = json.loads(response.read())
        return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tests.fakes.llm_server", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument(
        "--script", type=Path, help='JSON file: {"turns": [...]} (see tests/fakes/README.md)'
    )
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--record", type=Path, help="append each received request as a JSON line")
    args = parser.parse_args(argv)
    server = FakeLLMServer(
        load_script(args.script) if args.script else (), host=args.host, port=args.port
    )
    server.record_path = args.record
    server.start()
    print(server.url, flush=True)
    done = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: done.set())
    try:
        done.wait()
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
