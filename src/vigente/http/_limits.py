"""Request limits: the size of a request body and the rate of requests per API key.

The rate limit is a token bucket per key held in this process's memory: each key may send
``burst`` requests at once and ``rate`` per second on average. It is not shared between server
processes (several workers each allow the full rate) and it restarts empty on a restart; put a
shared limiter in front of the service when that matters.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

import anyio.lowlevel

from vigente.jsonlimits import (
    JSON_LIMITS,
    JSONLimitExceeded,
    JSONLimits,
    JSONMeter,
    JSONTooDeep,
)

__all__ = ["BodySizeLimit"]

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

_NO_BODY = frozenset({"GET", "HEAD", "OPTIONS"})
# a refused body up to this size is read and dropped before the 413 goes out
DRAIN_BYTES = 1 << 20
# a JSON body is measured as it arrives, this much at a time: a few C calls of well under a
# millisecond each, between which the event loop answers other requests
MEASURE_PIECE = 1 << 16


class BodySizeLimit:
    """ASGI middleware: refuse a request body larger than ``max_bytes`` with 413, before the
    application reads any of it (a declared Content-Length is checked first, then the bytes as
    they arrive); and a JSON body past one of the bounds of :class:`~vigente.jsonlimits.
    JSONLimits` before anything parses or walks it, measured as it arrives and refused as
    soon as it passes one (the rest unread): nested deeper than ``depth``, 400
    ``json_too_deep``; more members in one object, members, values, strings or digits of one
    number than allowed, 413 ``json_too_large``. Every endpoint sits behind it, ``/mcp``
    too (a JSON-RPC message is a body)."""

    def __init__(self, app: ASGIApp, max_bytes: int,
                 json_limits: JSONLimits = JSON_LIMITS) -> None:
        self.app = app
        self.max_bytes = max_bytes
        self.json_limits = json_limits

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] in _NO_BODY:
            await self.app(scope, receive, send)
            return
        headers = dict(scope.get("headers") or [])
        declared = headers.get(b"content-length")
        if declared is not None:
            try:
                size = int(declared)
            except ValueError:
                await _send_error(
                    send,
                    400,
                    "invalid_request",
                    "the Content-Length header is not a number: send the body's size in bytes",
                )
                return
            if size > self.max_bytes:
                if size <= DRAIN_BYTES:
                    await _drain(receive, 0)
                await self._too_large(send)
                return
        chunks: list[bytes] = []
        total, more = 0, False
        meter = JSONMeter(self.json_limits) if _is_json(headers.get(b"content-type")) else None
        try:
            while True:
                message = await receive()
                if message["type"] != "http.request":
                    break  # the client went away; the application sees the disconnect below
                chunk = message.get("body", b"")
                more = message.get("more_body", False)
                total += len(chunk)
                if total > self.max_bytes:
                    if more:
                        await _drain(receive, total)
                    await self._too_large(send)
                    return
                chunks.append(chunk)
                if meter is not None:
                    await _measure(meter, chunk)
                if not more:
                    break
            if meter is not None:
                meter.finish()
        except JSONLimitExceeded as exc:
            status = 400 if isinstance(exc, JSONTooDeep) else 413
            # refused before its end: the rest is read and dropped, not measured (no larger
            # than a body the server accepts), so that the client reads why
            ended = not more or await _drain(receive, total, self.max_bytes)
            await _send_error(send, status, exc.code, str(exc), close=not ended)
            return
        body = b"".join(chunks)
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)

    async def _too_large(self, send: Send) -> None:
        await _send_error(
            send,
            413,
            "request_too_large",
            f"the request body is larger than {self.max_bytes} bytes: send smaller batches (or "
            "start the server with a larger --max-body-bytes)",
        )


async def _measure(meter: JSONMeter, chunk: bytes) -> None:
    """Feed ``chunk`` to ``meter`` a piece at a time, letting other requests run between
    pieces (a server gets a body in pieces of at most this size anyway; an in-process client
    may hand it over whole)."""
    for start in range(0, len(chunk), MEASURE_PIECE):
        if start:
            await anyio.lowlevel.checkpoint()
        meter.feed(chunk[start:start + MEASURE_PIECE])


async def _drain(receive: Receive, read: int, most: int = DRAIN_BYTES) -> bool:
    """Read and drop the rest of a refused body, up to ``most`` bytes in all: a client still
    sending then gets the answer instead of a reset connection (beyond that, the server
    answers at once and the connection may be reset). True when the body was read to its
    end (the connection can carry the next request)."""
    while read <= most:
        message = await receive()
        if message["type"] != "http.request":
            return False
        read += len(message.get("body", b""))
        if not message.get("more_body", False):
            return True
    return False


def _is_json(content_type: bytes | None) -> bool:
    """A body the application will parse as JSON: declared so, or undeclared."""
    if content_type is None:
        return True
    media = content_type.split(b";", 1)[0].strip().lower()
    return media == b"application/json" or media.endswith(b"+json")


async def _send_error(
    send: Send, status: int, code: str, message: str, *, close: bool = True
) -> None:
    body = json.dumps({"error": {"status": status, "code": code, "message": message}}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    if close:  # the body may be unread: the connection cannot carry another request
        headers.append((b"connection", b"close"))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
