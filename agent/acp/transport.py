"""JSON-RPC framing on stdio: one JSON message per line, and the protocol's answer to a line
that is not one.

The SDK's own stdio reader skips a line it cannot parse without a word and stops serving on
a line that parses to something other than an object (a batch array, a bare string). An
editor that sends such a line deserves the JSON-RPC error for it, and every session must
outlive it, so gosling reads the lines itself and hands the SDK only well-formed messages.

`protect_stdout` moves the protocol to a private copy of the stdout descriptor and points
descriptor 1 at stderr, so that nothing else in the process (a stray print, a library's
warning, a child process that inherits stdout) can write into the protocol stream.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import sys
import threading
from dataclasses import dataclass
from typing import Any, BinaryIO, Protocol

logger = logging.getLogger(__name__)

LINE_LIMIT = 50 * 1024 * 1024
"""Longest message accepted (an embedded image or file can be large)."""
MAX_DEPTH = 128
"""Deepest nesting accepted in one message; deeper JSON is refused, not parsed."""
PARSE_ERROR = -32700
INVALID_REQUEST = -32600


class Writer(Protocol):
    def write(self, data: bytes) -> None: ...

    async def drain(self) -> None: ...

    def close(self) -> None: ...


@dataclass(frozen=True)
class ProtocolPipes:
    """The descriptors the protocol reads from and writes to."""

    reading: int
    writing: int


def protect_stdout() -> ProtocolPipes:
    """Keep fd 0 for reading and a duplicate of fd 1 for writing; from now on fd 1 (and
    `sys.stdout`) go to stderr."""
    writing = os.dup(sys.stdout.fileno())
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    sys.stdout = sys.stderr
    return ProtocolPipes(reading=sys.stdin.fileno(), writing=writing)


class LineTransport:
    """The SDK's `Transport` over newline-delimited JSON, answering what is not a message."""

    def __init__(self, reader: asyncio.StreamReader, writer: Writer) -> None:
        self._reader = reader
        self._writer = writer
        self._closed = False

    async def send(self, message: dict[str, Any]) -> None:
        """Write at once, drain after: messages leave in the order `send` was called."""
        if self._closed:
            raise ConnectionError("the connection to the editor is closed")
        data = json.dumps(message, separators=(",", ":"), default=str) + "\n"
        self._writer.write(data.encode("utf-8"))
        await self._writer.drain()

    async def receive(self) -> dict[str, Any] | None:
        while True:
            line = await self._read_line()
            if line is None:
                return None
            if not line.strip():
                continue
            message, error = parse_message(line)
            if message is not None:
                return message
            assert error is not None
            logger.info("refused a message from the editor: %s", error["error"]["message"])
            try:
                await self.send(error)
            except (ConnectionError, OSError):
                return None

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        with contextlib.suppress(Exception):
            self._writer.close()

    async def _read_line(self) -> bytes | None:
        """The next line, or None at the end of input; an over-long line is skipped whole
        and answered like unreadable JSON."""
        try:
            line = await self._reader.readuntil(b"\n")
        except asyncio.IncompleteReadError as exc:
            return exc.partial or None
        except asyncio.LimitOverrunError as exc:
            await self._skip_line(exc.consumed)
            too_long = _error(PARSE_ERROR, f"message longer than {LINE_LIMIT:,} bytes")
            try:
                await self.send(too_long)
            except (ConnectionError, OSError):
                return None
            return b""
        return line

    async def _skip_line(self, consumed: int) -> None:
        await self._reader.readexactly(consumed)
        while True:
            try:
                await self._reader.readuntil(b"\n")
                return
            except asyncio.LimitOverrunError as exc:
                await self._reader.readexactly(exc.consumed)
            except asyncio.IncompleteReadError:
                return


def parse_message(line: bytes) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
    """(message, None) for a JSON-RPC object, else (None, the error response to send)."""
    try:
        value = json.loads(line)
    except (ValueError, RecursionError) as exc:
        return None, _error(PARSE_ERROR, f"not valid JSON: {exc}")
    if _too_deep(value):
        return None, _error(INVALID_REQUEST, f"nested deeper than {MAX_DEPTH} levels")
    if not isinstance(value, dict):
        kind = (
            "an array (JSON-RPC batches are not used by ACP)"
            if isinstance(value, list)
            else (type(value).__name__)
        )
        return None, _error(INVALID_REQUEST, f"a message must be a JSON object, not {kind}")
    method = value.get("method")
    if "method" in value and not isinstance(method, str):
        return None, _error(INVALID_REQUEST, "method must be a string", value.get("id"))
    if method is None and "id" not in value:
        return None, _error(INVALID_REQUEST, "a message needs a method or an id")
    params = value.get("params")
    if method is not None and params is not None and not isinstance(params, dict | list):
        return None, _error(INVALID_REQUEST, "params must be an object", value.get("id"))
    return value, None


def _too_deep(value: Any) -> bool:
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if depth > MAX_DEPTH:
            return True
        if isinstance(item, dict):
            stack.extend((v, depth + 1) for v in item.values())
        elif isinstance(item, list):
            stack.extend((v, depth + 1) for v in item)
    return False


def _error(code: int, message: str, request_id: Any = None) -> dict[str, Any]:
    if not isinstance(request_id, str | int) or isinstance(request_id, bool):
        request_id = None
    return {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}


async def open_stdio(pipes: ProtocolPipes) -> LineTransport:
    """Asyncio streams over the protocol's descriptors (a reader thread when stdin is a
    file rather than a pipe, as in `gosling acp < messages.jsonl`)."""
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=LINE_LIMIT)
    stdin = os.fdopen(pipes.reading, "rb", buffering=0, closefd=False)
    try:
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), stdin)
    except ValueError:
        _feed_from_thread(loop, reader, stdin.fileno())
    stdout = os.fdopen(pipes.writing, "wb", buffering=0)
    writer: Writer
    try:
        transport, protocol = await loop.connect_write_pipe(
            lambda: asyncio.streams.FlowControlMixin(loop), stdout
        )
        writer = asyncio.StreamWriter(transport, protocol, None, loop)
    except ValueError:
        writer = _FileWriter(stdout)
    return LineTransport(reader, writer)


class _FileWriter:
    """Writes to a regular file (stdout redirected to one), where no pipe transport works."""

    def __init__(self, file: BinaryIO) -> None:
        self._file = file

    def write(self, data: bytes) -> None:
        self._file.write(data)

    async def drain(self) -> None:
        return None

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self._file.close()


def _feed_from_thread(
    loop: asyncio.AbstractEventLoop, reader: asyncio.StreamReader, fd: int
) -> None:
    def pump() -> None:
        try:
            while chunk := os.read(fd, 65536):
                loop.call_soon_threadsafe(reader.feed_data, chunk)
        except OSError:
            pass
        finally:
            loop.call_soon_threadsafe(reader.feed_eof)

    threading.Thread(target=pump, name="acp-stdin", daemon=True).start()
