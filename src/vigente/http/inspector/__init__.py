"""The web inspector: server-rendered pages over the public API, served at ``/``.

Pages: the lineages (``/``) and a lineage's timeline on both time axes with a ``(t, k)``
picker (``/lineage``), search with a reference date (``/search``), the runtime's
conversations, branches, runs and assemblies (``/runtime``, ``/assembly/ID``) and the review
queue (``/review``). Jinja2 templates, one stylesheet and one small script shipped in the
package: no build step, nothing loaded from another site. Keys as in the HTTP API (see
:mod:`vigente.http.inspector._auth`). ``install(app)`` adds it to the service. A page's address
that does not validate (a malformed, missing or unknown query parameter) is answered with an
HTML page naming the parameter, not the API's JSON error.
"""

from __future__ import annotations

import inspect
from typing import Annotated, Any

from fastapi import APIRouter, Depends, FastAPI, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from fastapi.security import HTTPAuthorizationCredentials
from starlette.staticfiles import StaticFiles

from vigente.http._deps import caller_of
from vigente.http._errors import ApiError
from vigente.http.inspector import _evidence_pages, _review_pages, _runtime_pages
from vigente.http.inspector._auth import (
    COOKIE,
    LoginRequired,
    PageError,
    check_origin,
    login_url,
    safe_next,
    state_of,
)
from vigente.http.inspector._render import HERE, PageRoute, blank, form_of, is_page, page

__all__ = ["install"]


def _login_page(next_url: str, *, status: int = 200, error: str | None = None) -> HTMLResponse:
    return page("login.html", status=status, next_url=safe_next(next_url), error=error)


_WHERE = {"query": "the query parameter", "path": "the address part", "header": "the header"}
_FIX = (
    "Correct the address in the address bar and load the page again, or open the page from "
    "the inspector's own links and forms."
)


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


def _bad_address(status: int, message: str, headers: dict[str, str] | None = None) -> Response:
    return page(
        "error.html",
        status=status,
        heading="Bad address",
        message=message,
        fix=_FIX,
        headers=headers,
    )


async def _answer(handler: Any, request: Request, exc: Exception) -> Response:
    response = handler(request, exc)
    if inspect.isawaitable(response):
        response = await response
    assert isinstance(response, Response)
    return response


def _install_page_errors(app: FastAPI) -> None:
    """Answer a page's refused request with HTML; leave the API's JSON errors to the API's
    handlers (installed before: :func:`vigente.http._errors.install_error_handlers`)."""
    api = {cls: app.exception_handlers.get(cls) for cls in (RequestValidationError, ApiError)}
    missing = [cls.__name__ for cls, handler in api.items() if handler is None]
    if missing:
        raise RuntimeError(
            f"install the API's error handlers before the inspector (none for {missing})"
        )

    @app.exception_handler(RequestValidationError)
    async def invalid_request(request: Request, exc: RequestValidationError) -> Response:
        if is_page(request):
            return _bad_address(422, _invalid_address(exc))
        return await _answer(api[RequestValidationError], request, exc)

    @app.exception_handler(ApiError)
    async def refused(request: Request, exc: ApiError) -> Response:
        # On a page, an ApiError comes from the service's checks of every request (an
        # unknown query parameter, NUL in a parameter): the browser gets a page.
        if is_page(request):
            return _bad_address(exc.status, exc.message, exc.headers)
        return await _answer(api[ApiError], request, exc)


def install(app: FastAPI) -> None:
    """Serve the inspector's pages from ``app`` (at ``/``, beside ``/v1``)."""
    _install_page_errors(app)
    pages = APIRouter(include_in_schema=False, route_class=PageRoute)

    @app.exception_handler(LoginRequired)
    async def login_required(request: Request, exc: LoginRequired) -> Response:
        if request.method == "GET" and exc.message is None:
            return RedirectResponse(login_url(exc.next_url), status_code=303)
        response = _login_page(exc.next_url, status=401, error=exc.message)
        if exc.forget:
            response.delete_cookie(COOKIE, path="/")
        return response

    @app.exception_handler(PageError)
    async def page_error(_: Request, exc: PageError) -> Response:
        return page("error.html", status=exc.status, message=exc.message, headers=exc.headers)

    @pages.get("/login", response_class=HTMLResponse)
    def login_form(
        next: Annotated[str | None, Query(max_length=2048)] = None,  # noqa: A002
    ) -> HTMLResponse:
        """The form that takes a tenant's key."""
        return _login_page(next or "/")

    @pages.post("/login")
    def login(request: Request, form: Annotated[dict[str, str], Depends(form_of)]) -> Response:
        """Check the key, keep it in an HttpOnly cookie, go back to the page asked for."""
        check_origin(request)
        target = safe_next(form.get("next"))
        token = blank(form.get("key"))
        if token is None:
            return _login_page(target, status=400, error="enter a tenant's API key (vgk_…)")
        state = state_of(request)
        try:
            caller = caller_of(
                state, HTTPAuthorizationCredentials(scheme="Bearer", credentials=token)
            )
        except ApiError as exc:
            return _login_page(target, status=exc.status, error=exc.message)
        if caller.tenant is None:
            return _login_page(
                target,
                status=403,
                error="the admin key manages tenants and keys only: enter a tenant's API key",
            )
        response = RedirectResponse(target, status_code=303)
        response.set_cookie(
            COOKIE,
            token,
            httponly=True,
            samesite="strict",
            secure=request.url.scheme == "https",
            path="/",
        )
        return response

    @pages.post("/logout")
    def logout(request: Request) -> Response:
        """Forget the key kept in the cookie."""
        check_origin(request)
        response = RedirectResponse("/login", status_code=303)
        response.delete_cookie(COOKIE, path="/")
        return response

    app.include_router(pages)
    app.include_router(_evidence_pages.router)
    app.include_router(_runtime_pages.router)
    app.include_router(_review_pages.router)
    app.mount("/static", StaticFiles(directory=HERE / "static"), name="inspector-static")
