"""Templates, the page response (with its security headers), form bodies and the route classes
of the pages (:class:`PageRoute`, whose refusals of a request are HTML, not the API's JSON;
:class:`OpenPageRoute` for the login form, which needs no key)."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any, ClassVar
from urllib.parse import parse_qsl, quote

from fastapi import Request
from fastapi.responses import HTMLResponse
from jinja2 import Environment, FileSystemLoader, StrictUndefined, select_autoescape
from starlette.responses import Response

from vigente import telemetry
from vigente.http._access import route_template
from vigente.http._paths import IdRoute

__all__ = ["HERE", "OpenPageRoute", "PageRoute", "blank", "form_of", "is_page", "page"]

HERE = Path(__file__).parent
log = logging.getLogger("vigente.http")

_env = Environment(
    loader=FileSystemLoader(HERE / "templates"),
    autoescape=select_autoescape(["html"]),
    undefined=StrictUndefined,
    trim_blocks=True,
    lstrip_blocks=True,
    # a value a record does not have (a document without a source) prints nothing, never "None"
    finalize=lambda value: "" if value is None else value,
)
_env.filters["json"] = lambda value: json.dumps(value, ensure_ascii=False, sort_keys=True)
# An id as one path segment of a link (`/assembly/{{ id | segment }}`): `/`, `?`, `#` … encoded.
_env.filters["segment"] = lambda value: quote(str(value), safe="")

#: Pages load nothing but their own scripts and styles (no CDN, no inline script).
_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
        "form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
    "Cache-Control": "no-store",
}


def page(
    template: str,
    *,
    status: int = 200,
    tenant: str | None = None,
    active: str = "",
    headers: dict[str, str] | None = None,
    **context: Any,
) -> HTMLResponse:
    """Render a page of the inspector."""
    html = _env.get_template(template).render(tenant=tenant, active=active, **context)
    return HTMLResponse(html, status_code=status, headers={**_HEADERS, **(headers or {})})


def blank(value: str | None) -> str | None:
    """An empty form field is an unset one."""
    if value is None:
        return None
    value = value.strip()
    return value or None


async def form_of(request: Request) -> dict[str, str]:
    """The fields of an ``application/x-www-form-urlencoded`` body (the last of repeated
    names); the service's body size limit applies before this reads it."""
    body = await request.body()
    text = body.decode("utf-8", errors="replace")
    return dict(parse_qsl(text, keep_blank_values=True))


class PageRoute(IdRoute):
    """A route of the inspector: a page for a browser. A request it refuses before the page
    runs (a malformed, missing or unknown query parameter) is answered with an HTML page, not
    the API's JSON error (see :mod:`vigente.http.inspector._refusals`)."""

    #: The page shows a tenant's data: a browser without a usable key is sent to log in before
    #: it is told what is wrong with the address, as the page itself would send it.
    needs_key: ClassVar[bool] = True

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        """The page's handler, answering an unexpected exception (a bug) with an HTML 500 page
        in the layout rather than the API's JSON 500; an exception the service has a handler
        for (a refusal, a login, an unknown object) goes on to that handler."""
        handler = super().get_route_handler()

        async def answered(request: Request) -> Response:
            try:
                return await handler(request)
            except Exception as exc:
                if _handled(request, exc):
                    raise
                log.error("unexpected error on %s %s: %s", request.method,
                          route_template(request.scope), telemetry.exception_summary(exc))
                return page(
                    "error.html",
                    status=500,
                    heading="Internal error",
                    message=f"unexpected {type(exc).__name__}: this is a bug in vigente; "
                    "please report it with the address that caused it",
                    fix="Go back, or open the page from the inspector's own links.",
                )

        return answered


def _handled(request: Request, exc: Exception) -> bool:
    """Whether the service has its own handler for ``exc`` (not the last-resort one)."""
    handlers = request.app.exception_handlers
    return any(
        cls in handlers for cls in type(exc).__mro__ if cls not in (Exception, BaseException)
    )


class OpenPageRoute(PageRoute):
    """A page anyone may load: the login form and logging out."""

    needs_key = False


def is_page(request: Request) -> bool:
    """Whether ``request`` was routed to a page of the inspector."""
    return isinstance(request.scope.get("route"), PageRoute)
