"""The access log: one line per request, naming the route's template, never its ids.

A path holds ids (conversations, accounts, artifacts) that a purge must be able to erase; a log
line written before the purge cannot be. So the log names the endpoint as its template
(``/v1/conversations/{conversation}``), with the status and the time taken, and the server's
own access log (uvicorn's, which prints raw paths) is turned off by ``vigente serve``.
"""

from __future__ import annotations

import logging
import time
from typing import Any

__all__ = ["AccessLog", "route_template"]

log = logging.getLogger("vigente.http.access")


def route_template(scope: Any) -> str:
    """The template of the route that served ``scope``, or ``(no route)``."""
    route = scope.get("route")
    path = getattr(route, "path", None)
    if isinstance(path, str) and path:
        return path
    return "(no route)"


class AccessLog:
    """ASGI middleware: ``METHOD /template STATUS MS`` on the ``vigente.http.access`` logger."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        start = time.perf_counter()
        status = 500

        async def sending(message: Any) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
            await send(message)

        try:
            await self.app(scope, receive, sending)
        finally:
            log.info("%s %s %d %.1fms", scope.get("method"), route_template(scope), status,
                     (time.perf_counter() - start) * 1000)
