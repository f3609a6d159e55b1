"""``vigente mcp`` over stdin/stdout with the bounds of the HTTP API: a line of JSON-RPC is a
body too.

The SDK's stdio transport reads a line of any length and parses it whole; here each line is
read up to the HTTP API's largest body and measured (:class:`~vigente.jsonlimits.JSONMeter`)
before the SDK parses it. A line past a bound is not handed on: the client gets a JSON-RPC
error (``-32600``, Invalid Request) for the request's id, naming the bound and how to fix it,
so it never waits for an answer that will not come; the server reads on.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import AsyncIterator
from contextlib import redirect_stdout
from io import TextIOWrapper
from typing import Any, BinaryIO

import anyio
import anyio.to_thread
from mcp.server.stdio import stdio_server

from vigente.jsonlimits import JSON_LIMITS, JSONLimitExceeded, JSONLimits, check_json_limits

__all__ = ["MAX_LINE_BYTES", "serve_bounded_stdio"]

#: The longest line read: the HTTP API's largest body (``vigente serve --max-body-bytes``).
MAX_LINE_BYTES = 8 * 1024 * 1024
INVALID_REQUEST = -32600
# a JSON-RPC request's id, looked for before its params (where every client puts it), so that
# an "id" inside the params is never taken for it
_ID = re.compile(rb'"id"\s*:\s*(-?\d{1,19}(?![\d.eE])|"(?:[^"\\]|\\.){0,256}")')


def request_id(line: bytes) -> int | str | None:
    """The id of the request ``line`` (without parsing it), or None."""
    params = line.find(b'"params"')
    found = _ID.search(line, 0, params if params >= 0 else min(len(line), 4096))
    if found is None:
        return None
    value: int | str = json.loads(found.group(1))
    return value


class _Writer:
    """The wire's stdout, one whole line per write (the SDK's answers and our refusals)."""

    def __init__(self, stream: Any) -> None:
        self._stream = stream
        self._lock = anyio.Lock()

    async def write(self, text: str) -> None:
        async with self._lock:
            await self._stream.write(text)

    async def flush(self) -> None:
        await self._stream.flush()

    async def refuse(self, ident: int | str | None, code: str, message: str) -> None:
        error = {"code": INVALID_REQUEST, "message": message, "data": {"code": code}}
        await self.write(json.dumps({"jsonrpc": "2.0", "id": ident, "error": error}) + "\n")
        await self.flush()


class _BoundedLines:
    """The lines of stdin the SDK may parse: each at most ``max_bytes`` and within
    ``limits``; the others are answered with an error by ``writer``."""

    def __init__(self, source: BinaryIO, writer: _Writer, limits: JSONLimits,
                 max_bytes: int) -> None:
        self._source, self._writer = source, writer
        self._limits, self._max_bytes = limits, max_bytes

    async def _readline(self, most: int) -> bytes:
        return await anyio.to_thread.run_sync(self._source.readline, most)

    async def __aiter__(self) -> AsyncIterator[str]:
        while True:
            line = await self._readline(self._max_bytes + 1)
            if not line:
                return
            if len(line) > self._max_bytes and not line.endswith(b"\n"):
                ident = request_id(line)
                while True:  # the rest of the line is read and dropped
                    rest = await self._readline(1 << 20)
                    if not rest or rest.endswith(b"\n"):
                        break
                await self._writer.refuse(
                    ident, "request_too_large",
                    f"the message is larger than {self._max_bytes} bytes: send smaller "
                    "batches")
                continue
            try:
                check_json_limits(line, self._limits)
            except JSONLimitExceeded as exc:
                await self._writer.refuse(request_id(line), exc.code, str(exc))
                continue
            yield line.decode("utf-8", "replace")


async def serve_bounded_stdio(server: Any, *, limits: JSONLimits = JSON_LIMITS,
                              max_bytes: int = MAX_LINE_BYTES,
                              stdin: BinaryIO | None = None,
                              stdout: BinaryIO | None = None) -> None:
    """Serve ``server`` (the SDK's low-level server) over stdin/stdout, each line bounded.
    While serving, ``print`` and stray writes to ``sys.stdout`` go to stderr, off the wire."""
    source = stdin or sys.stdin.buffer
    wire = anyio.wrap_file(TextIOWrapper(stdout or sys.stdout.buffer, encoding="utf-8",
                                         write_through=True))
    writer = _Writer(wire)
    lines = _BoundedLines(source, writer, limits, max_bytes)
    with redirect_stdout(sys.stderr):
        async with stdio_server(stdin=lines, stdout=writer) as (read, write):  # type: ignore[arg-type]
            await server.run(read, write, server.create_initialization_options())
