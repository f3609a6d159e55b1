"""The edge of every request: one access-log line naming the route's template, never its ids,
and a last-resort 500 for an exception nothing else answered.

A path holds ids (conversations, accounts, artifacts) that a purge must be able to erase; a log
line written before the purge cannot be. So the log names the endpoint as its template
(``/v1/conversations/{conversation}``), with the status and the time taken, and the server's
own access log (uvicorn's, which prints raw paths) is turned off by ``vigente serve``.

The same middleware opens the request's server span and records its duration (vigente.telemetry).

An unexpected exception becomes a 500 in the error shape, logged once with its type and stack
frames (never its message, which can quote the request), and
the connection stays open. (Starlette's own last-resort handler re-raises after answering, so
the server logged the traceback a second time and closed the connection: a keep-alive client's
next request was reset.)
"""

from __future__ import annotations

import json
import logging
import time
from typing import Any

from opentelemetry import propagate
from opentelemetry.trace import SpanKind, StatusCode

from vigente import telemetry

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


_PROPAGATED = (b"traceparent", b"tracestate", b"baggage")


def _parent(scope: Any) -> Any:
    """The caller's trace context from the W3C headers, or None (the span is then a root)."""
    carrier = {k.decode("latin-1"): v.decode("latin-1")
               for k, v in scope.get("headers", ()) if k in _PROPAGATED}
    return propagate.extract(carrier) if "traceparent" in carrier else None


class RequestLog:
    """ASGI middleware: the request's server span (joined to the caller's trace through
    ``traceparent``), its duration metrics, ``METHOD /template STATUS MS`` on the
    ``vigente.http.access`` logger, and a 500 in the error shape for an exception that reaches
    it. The span, the metrics and the log line name the route by its template and hold no
    query, no body and no header."""

    def __init__(self, app: Any, *, access_log: bool = True) -> None:
        self.app = app
        self.access_log = access_log

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        start = time.perf_counter()
        status: int | None = None  # None until the response starts
        method = str(scope.get("method", ""))

        async def sending(message: Any) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
            await send(message)

        with telemetry.span(method, {"http.request.method": method,
                                     "url.scheme": str(scope.get("scheme", "http"))},
                            kind=SpanKind.SERVER, context=_parent(scope)) as current:
            try:
                await self.app(scope, receive, sending)
            except Exception as exc:
                log.error("unexpected error on %s %s: %s", method, route_template(scope),
                          telemetry.exception_summary(exc))
                if status is not None:
                    raise  # the response is under way: only closing the connection can end it
                status, body = 500, _internal_body(exc)
                await send({"type": "http.response.start", "status": status,
                            "headers": [(b"content-type", b"application/json"),
                                        (b"content-length", str(len(body)).encode())]})
                await send({"type": "http.response.body", "body": body})
            finally:
                self._finish(current, scope, method, 500 if status is None else status,
                             time.perf_counter() - start)

    def _finish(self, current: Any, scope: Any, method: str, status: int,
                seconds: float) -> None:
        route = route_template(scope)
        if current.is_recording():
            current.update_name(f"{method} {route}")
            current.set_attributes({"http.route": route, "http.response.status_code": status})
            if status >= 500:
                current.set_attributes({"error.type": str(status)})
                current.set_status(StatusCode.ERROR)
        telemetry.record_operation("http", route, str(status), seconds)
        telemetry.record_http(method, route, status, seconds)
        if self.access_log:
            access_log.info("%s %s %d %.1fms", method, route, status, seconds * 1000,
                            extra={"http_method": method, "http_route": route,
                                   "http_status": status,
                                   "duration_ms": round(seconds * 1000, 3)})
