"""The edge of every request: one access-log line naming the route's template, never its ids,
and a last-resort 500 for an exception nothing else answered.

A path holds ids (conversations, accounts, artifacts) that a purge must be able to erase; a log
line written before the purge cannot be. So the log names the endpoint as its template
(``/v1/conversations/{conversation}``), with the status and the time taken, and the server's
own access log (uvicorn's, which prints raw paths) is turned off by ``vigente serve``.

An unexpected exception becomes a 500 in the error shape, logged once with its traceback, and
the connection stays open. (Starlette's own last-resort handler re-raises after answering, so
the server logged the traceback a second time and closed the connection: a keep-alive client's
next request was reset.)
"""

from __future__ import annotations

import json
import logging
import time
from typing import Any

__all__ = ["RequestLog", "route_template"]

access_log = logging.getLogger("vigente.http.access")
log = logging.getLogger("vigente.http")


def route_template(scope: Any) -> str:
    """The template of the route that served ``scope``, or ``(no route)``."""
    route = scope.get("route")
    path = getattr(route, "path", None)
    if isinstance(path, str) and path:
        return path
    return "(no route)"


def _internal_body(exc: BaseException) -> bytes:
    message = (
        f"unexpected {type(exc).__name__}: this is a bug in vigente; please report it with the "
        "request that caused it"
    )
    return json.dumps({"error": {"status": 500, "code": "internal_error", "message": message}},
                      separators=(",", ":")).encode()


class RequestLog:
    """ASGI middleware: ``METHOD /template STATUS MS`` on the ``vigente.http.access`` logger
    for every request, and a 500 in the error shape for an exception that reaches it."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        start = time.perf_counter()
        status: int | None = None  # None until the response starts

        async def sending(message: Any) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
            await send(message)

        try:
            await self.app(scope, receive, sending)
        except Exception as exc:
            log.error("unexpected error on %s %s: %s", scope.get("method"),
                      route_template(scope), type(exc).__name__, exc_info=exc)
            if status is not None:
                raise  # the response is under way: only closing the connection can end it
            status, body = 500, _internal_body(exc)
            await send({"type": "http.response.start", "status": status,
                        "headers": [(b"content-type", b"application/json"),
                                    (b"content-length", str(len(body)).encode())]})
            await send({"type": "http.response.body", "body": body})
        finally:
            access_log.info("%s %s %d %.1fms", scope.get("method"), route_template(scope),
                            500 if status is None else status,
                            (time.perf_counter() - start) * 1000)
