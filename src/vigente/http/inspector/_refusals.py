"""How the inspector refuses a browser's request: an HTML page in its own layout, never the
API's JSON error.

- an inspector address (any path outside the API's, :data:`API_PATHS`) that names no page:
  404 "Page not found", naming the path, with a page that is close to it and a link to the start
  page; a method an address does not take (``GET`` of a form's target): 405, likewise;
- a page's address that does not validate (a malformed, missing or unknown query parameter,
  NUL): "Bad address", naming the parameter. The key is checked first, as the page itself
  would check it: a browser without a usable key logs in, then sees what is wrong;
- no usable key: the login page (:class:`LoginRequired`); a key that may not see the pages, or a
  spent rate limit: an error page (:class:`PageError`).

The API's paths keep the API's handlers (:func:`vigente.http._errors.install_error_handlers`,
installed before these): one JSON error shape for every error, unknown paths included.
"""

from __future__ import annotations

import difflib
import inspect
from collections.abc import Callable, Iterable
from http.client import responses
from typing import Any

from fastapi import APIRouter, FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException as StarletteHTTPException

from vigente.application.errors import ApiError
from vigente.errors import VigenteError
from vigente.http._errors import UnknownQueryParameters, vigente_status
from vigente.http.inspector._auth import (
    COOKIE,
    LoginRequired,
    PageError,
    login_url,
    safe_next,
    viewer,
)
from vigente.http.inspector._render import PageRoute, is_page, page

__all__ = ["API_PATHS", "NoPage", "install", "is_api_path", "login_page", "wants_page"]

#: The HTTP API's part of the service's paths; every other path is the inspector's (it is served
#: at ``/``): the versioned endpoints, the MCP endpoint, the OpenAPI document and FastAPI's usual
#: addresses of the API's documentation pages (not served, as they load scripts from a CDN: the
#: API's 404 there points to /openapi.json).
API_PATHS = ("/v1", "/mcp", "/openapi.json", "/docs", "/redoc")

_WHERE = {"query": "the query parameter", "path": "the address part", "header": "the header"}
_FIX = (
    "Correct the address in the address bar and load the page again, or open the page from "
    "the inspector's own links and forms."
)
_SHOWN_PATH = 200  # characters of an unknown path shown on its 404 page


class NoPage(Exception):
    """An inspector address that names no page although a route took it (``/assembly/`` with
    no id): answered as an unknown path is, with ``hint`` saying which address to use."""

    def __init__(self, hint: str):
        super().__init__(hint)
        self.hint = hint


def is_api_path(path: str) -> bool:
    """Whether ``path`` is the HTTP API's (JSON errors) rather than the inspector's (pages)."""
    return any(path == p or path.startswith(p + "/") for p in API_PATHS)


def wants_page(request: Request) -> bool:
    """Whether the client reads HTML: a browser opening an address sends ``text/html`` in its
    ``Accept``; an API client (``application/json``, or httpx's and curl's ``*/*``) does not,
    and gets the API's JSON error for an address that is no page."""
    return "text/html" in request.headers.get("accept", "").lower()


def login_page(next_url: str, *, status: int = 200, error: str | None = None) -> HTMLResponse:
    return page("login.html", status=status, next_url=safe_next(next_url), error=error)


def _login_answer(request: Request, exc: LoginRequired) -> Response:
    if request.method == "GET" and exc.message is None:
        return RedirectResponse(login_url(exc.next_url), status_code=303)
    response = login_page(exc.next_url, status=401, error=exc.message)
    if exc.forget:
        response.delete_cookie(COOKIE, path="/")
    return response


def _refusal_page(exc: PageError) -> Response:
    return page("error.html", status=exc.status, message=exc.message, headers=exc.headers)


async def _key_first(request: Request) -> Response | str | None:
    """For a page that asks for a key: what the page itself answers a request without a usable
    one (the login, a refusal), else the tenant's name; ``None`` for an open page."""
    route = request.scope.get("route")
    if not (isinstance(route, PageRoute) and route.needs_key):
        return None
    try:
        # the store is read to check the key: off the event loop, as the pages run
        who = await run_in_threadpool(viewer, request)
    except LoginRequired as exc:
        return _login_answer(request, exc)
    except PageError as exc:
        return _refusal_page(exc)
    return who.tenant


def _invalid_address(exc: RequestValidationError) -> str:
    """What is wrong with a page's address, parameter by parameter."""
    problems = []
    for err in exc.errors()[:10]:
        loc = [str(p) for p in err.get("loc", ())]
        where = _WHERE.get(loc[0], loc[0]) if loc else "the request"
        name = ".".join(loc[1:])
        if err.get("type") == "missing":
            problems.append(f"{where} {name!r} is required")
        else:
            problems.append(f"{where} {name!r}: {err.get('msg', 'invalid')}")
    return "this page's address is not valid: " + "; ".join(problems)


def _on_a_page(exc: ApiError) -> str:
    """The service's refusal of a request worded for a page: an unknown query parameter names
    what the page takes (the API says "endpoint", a wording its clients read)."""
    if not isinstance(exc, UnknownQueryParameters):
        return exc.message
    return f"{exc.listed()}: this page takes " + (
        ", ".join(exc.known) if exc.known else "no query parameters"
    )


def _bad_address(
    status: int, message: str, tenant: str | None, headers: dict[str, str] | None = None
) -> Response:
    return page(
        "error.html",
        status=status,
        tenant=tenant,
        heading="Bad address",
        message=message,
        fix=_FIX,
        headers=headers,
    )


def _shown(path: str) -> str:
    return path if len(path) <= _SHOWN_PATH else path[:_SHOWN_PATH] + "…"


def _start_pages(routers: Iterable[APIRouter]) -> list[str]:
    """The pages a browser opens with no parameter: what a 404 may suggest instead."""
    return [
        route.path
        for router in routers
        for route in router.routes
        if isinstance(route, PageRoute)
        and "GET" in (route.methods or ())
        and not route.param_convertors
        and not any(p.field_info.is_required() for p in route.dependant.query_params)
    ]


async def _for_browser(request: Request, exc: Exception, handler: Any,
                       render: Callable[[str | None], Response]) -> Response:
    """A refusal on a page is ``render``-ed for the caller the key names (or the key's own
    refusal); anywhere else it is the API's ``handler``'s answer."""
    if not is_page(request):
        return await _answer(handler, request, exc)
    who = await _key_first(request)
    return who if isinstance(who, Response) else render(who)


async def _answer(handler: Any, request: Request, exc: Exception) -> Response:
    response = handler(request, exc)
    if inspect.isawaitable(response):
        response = await response
    assert isinstance(response, Response)
    return response


def install(app: FastAPI, routers: Iterable[APIRouter]) -> None:
    """Answer the refusals of the inspector's requests with pages (the pages are the routes of
    ``routers``); leave the API's to the API's handlers, which must be installed already."""
    kinds = (RequestValidationError, ApiError, StarletteHTTPException, VigenteError)
    api = {cls: app.exception_handlers.get(cls) for cls in kinds}
    missing = [cls.__name__ for cls, handler in api.items() if handler is None]
    if missing:
        raise RuntimeError(
            f"install the API's error handlers before the inspector (none for {missing})"
        )
    start_pages = _start_pages(routers)

    def not_found(request: Request, hint: str | None = None) -> Response:
        path = request.url.path
        close = difflib.get_close_matches(path, start_pages, n=1, cutoff=0.6)
        return page(
            "not_found.html",
            status=404,
            message=f"there is no page {_shown(path)} in the inspector",
            hint=hint,
            suggestion=close[0] if close and close[0] != path else None,
        )

    @app.exception_handler(LoginRequired)
    async def login_required(request: Request, exc: LoginRequired) -> Response:
        return _login_answer(request, exc)

    @app.exception_handler(PageError)
    async def page_error(_: Request, exc: PageError) -> Response:
        return _refusal_page(exc)

    @app.exception_handler(NoPage)
    async def no_page(request: Request, exc: NoPage) -> Response:
        return not_found(request, exc.hint)

    @app.exception_handler(RequestValidationError)
    async def invalid_request(request: Request, exc: RequestValidationError) -> Response:
        return await _for_browser(request, exc, api[RequestValidationError],
                                  lambda who: _bad_address(422, _invalid_address(exc), who))

    @app.exception_handler(ApiError)
    async def refused(request: Request, exc: ApiError) -> Response:
        # On a page, an ApiError comes from the service's checks of every request (an
        # unknown query parameter, NUL in a parameter): the browser gets a page.
        return await _for_browser(
            request, exc, api[ApiError],
            lambda who: _bad_address(exc.status, _on_a_page(exc), who, exc.headers))

    @app.exception_handler(VigenteError)
    async def store_refused(request: Request, exc: VigenteError) -> Response:
        # A page answers what it expects itself (an unknown id, a bad date); anything else the
        # store refuses is still a page in the layout for a browser, with the API's status.
        status, _ = vigente_status(exc)
        return await _for_browser(request, exc, api[VigenteError], lambda who: page(
            "error.html",
            status=status,
            tenant=who,
            heading=responses.get(status, "Refused").capitalize(),
            message=str(exc),
            fix=_FIX,
        ))

    @app.exception_handler(StarletteHTTPException)
    async def no_route(request: Request, exc: StarletteHTTPException) -> Response:
        # Routing found no page (404) or not with this method (405): by the path, since no
        # route was matched to tell a page from an endpoint, and outside the API's paths by
        # what the client reads (a JSON client that mistypes /v1 as /v2 gets JSON).
        if is_api_path(request.url.path) or not wants_page(request):
            return await _answer(api[StarletteHTTPException], request, exc)
        if exc.status_code == 404:
            return not_found(request)
        headers = dict(exc.headers or {})
        if exc.status_code == 405:
            allowed = headers.get("Allow") or "another method"
            message = (
                f"{request.method} is not allowed on {_shown(request.url.path)}: it takes {allowed}"
            )
        else:
            message = str(exc.detail)
        return page(
            "error.html",
            status=exc.status_code,
            heading=responses.get(exc.status_code, "Refused").capitalize(),
            message=message,
            fix=_FIX,
            headers=headers,
        )
