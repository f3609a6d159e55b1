"""A lean HTTP/1.1 load generator for ``python -m vigente.bench serve``: keep-alive connections
on asyncio streams, requests written as bytes, answers read by their Content-Length.

On a 2-core machine the load generator shares the cores with the server it measures. A general
client (httpx) spends about as long per request as the server does on a cheap one, so it, not
the server, set the ceiling (about 900 requests/s against an endpoint that does nothing). This
client spends a few tens of microseconds per request, so the figures are the server's. It
speaks only what ``vigente serve`` answers: ``Content-Length`` bodies, keep-alive.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Answer", "Connection", "LoadResult", "closed_loop"]


@dataclass(frozen=True, slots=True)
class Answer:
    status: int
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


class Connection:
    """One keep-alive connection to ``host:port``, sending with one bearer key."""

    def __init__(self, host: str, port: int, key: str) -> None:
        self.host = host
        self.port = port
        self._head = (
            f"Host: {host}:{port}\r\nAuthorization: Bearer {key}\r\n"
            "Content-Type: application/json\r\n"
        ).encode()
        self._reader: asyncio.StreamReader | None = None
        self._writer: asyncio.StreamWriter | None = None

    @property
    def local_port(self) -> int | None:
        """The client-side port of the open connection (``None`` before the first request)."""
        return None if self._writer is None else self._writer.get_extra_info("sockname")[1]

    async def _open(self) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        if self._reader is None or self._writer is None:
            self._reader, self._writer = await asyncio.open_connection(self.host, self.port)
        return self._reader, self._writer

    async def post(self, path: str, body: bytes) -> Answer:
        reader, writer = await self._open()
        writer.write(
            b"POST " + path.encode() + b" HTTP/1.1\r\n" + self._head
            + b"Content-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body
        )
        head = await reader.readuntil(b"\r\n\r\n")
        status = int(head[9:12])
        length = 0
        close = False
        for line in head.split(b"\r\n")[1:]:
            name, _, value = line.partition(b":")
            name = name.strip().lower()
            if name == b"content-length":
                length = int(value)
            elif name == b"transfer-encoding":
                raise RuntimeError("a chunked answer: this client reads Content-Length bodies only")
            elif name == b"connection" and value.strip().lower() == b"close":
                close = True
        answer = Answer(status, await reader.readexactly(length))
        if close:
            await self.close()
        return answer

    async def close(self) -> None:
        if self._writer is not None:
            self._writer.close()
            with contextlib.suppress(OSError):  # the server already closed it
                await self._writer.wait_closed()
        self._reader = self._writer = None


@dataclass
class LoadResult:
    """What a closed loop measured: latencies of the 2xx answers, and every other outcome."""

    seconds: float
    latencies_ms: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    #: (client, request body) of every acknowledged (2xx) request, to be verified afterwards
    acknowledged: list[tuple[int, dict[str, Any]]] = field(default_factory=list)


async def _closed_loop(
    url: str,
    key: str,
    clients: int,
    seconds: float,
    path: str,
    body_of: Callable[[int, int], dict[str, Any]],
) -> LoadResult:
    """``clients`` connections to ``url`` (``http://host:port``), each sending its next request
    as soon as the last is answered, for ``seconds``. ``body_of(client, n)`` is the body of the
    client's ``n``-th request."""
    host, _, port = url.removeprefix("http://").partition(":")
    connections = [Connection(host, int(port), key) for _ in range(clients)]
    result = LoadResult(seconds)
    deadline = time.perf_counter() + seconds

    async def work(client: int) -> None:
        connection = connections[client]
        n = 0
        while time.perf_counter() < deadline:
            body = body_of(client, n)
            n += 1
            payload = json.dumps(body, separators=(",", ":")).encode()
            start = time.perf_counter()
            try:
                answer = await connection.post(path, payload)
            except (OSError, asyncio.IncompleteReadError, ValueError) as exc:
                result.errors.append(f"{path}: {type(exc).__name__}: {exc}")
                await connection.close()
                continue
            elapsed = (time.perf_counter() - start) * 1000
            if answer.status // 100 != 2:
                result.errors.append(f"{path}: {answer.status} {answer.body[:300]!r}")
                continue
            result.latencies_ms.append(elapsed)
            result.acknowledged.append((client, body))

    start = time.perf_counter()
    try:
        await asyncio.gather(*(work(c) for c in range(clients)))
    finally:
        for connection in connections:
            await connection.close()
    result.seconds = time.perf_counter() - start
    return result


def closed_loop(
    url: str,
    key: str,
    clients: int,
    seconds: float,
    path: str,
    body_of: Callable[[int, int], dict[str, Any]],
) -> LoadResult:
    """:func:`_closed_loop` on an event loop of its own (uvloop's where it is installed, as the
    server's is)."""
    runner: Callable[..., Any] = asyncio.run
    with contextlib.suppress(ImportError):
        import uvloop

        runner = uvloop.run
    result: LoadResult = runner(_closed_loop(url, key, clients, seconds, path, body_of))
    return result
