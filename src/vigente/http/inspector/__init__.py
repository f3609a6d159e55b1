"""The web inspector: server-rendered pages over the public API, served at ``/``.

Pages: the lineages (``/``) and a lineage's timeline on both time axes with a ``(t, k)``
picker (``/lineage``), search with a reference date (``/search``), the runtime's
conversations, branches, runs and assemblies (``/runtime``, ``/assembly/ID``) and the review
queue (``/review``). Jinja2 templates, one stylesheet and one small script shipped in the
package: no build step, nothing loaded from another site. Keys as in the HTTP API (see
:mod:`vigente.http.inspector._auth`). ``install(app)`` adds it to the service.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, FastAPI, Query, Request
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
from vigente.http.inspector._render import HERE, blank, form_of, page

__all__ = ["install"]


def _login_page(next_url: str, *, status: int = 200, error: str | None = None) -> HTMLResponse:
    return page("login.html", status=status, next_url=safe_next(next_url), error=error)


def install(app: FastAPI) -> None:
    """Serve the inspector's pages from ``app`` (at ``/``, beside ``/v1``)."""

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

    @app.get("/login", response_class=HTMLResponse, include_in_schema=False)
    def login_form(
        next: Annotated[str | None, Query(max_length=2048)] = None,  # noqa: A002
    ) -> HTMLResponse:
        """The form that takes a tenant's key."""
        return _login_page(next or "/")

    @app.post("/login", include_in_schema=False)
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

    @app.post("/logout", include_in_schema=False)
    def logout(request: Request) -> Response:
        """Forget the key kept in the cookie."""
        check_origin(request)
        response = RedirectResponse("/login", status_code=303)
        response.delete_cookie(COOKIE, path="/")
        return response

    app.include_router(_evidence_pages.router)
    app.include_router(_runtime_pages.router)
    app.include_router(_review_pages.router)
    app.mount("/static", StaticFiles(directory=HERE / "static"), name="inspector-static")
