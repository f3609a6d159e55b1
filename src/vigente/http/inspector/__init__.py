"""The web inspector: server-rendered pages over the public API, served at ``/``.

Pages: the lineages (``/``) and a lineage's timeline on both time axes with a ``(t, k)``
picker (``/lineage``), search with a reference date (``/search``), the runtime's
conversations, branches, runs and assemblies (``/runtime``, ``/assembly/ID``) and the review
queue (``/review``). Jinja2 templates, one stylesheet and one small script shipped in the
package: no build step, nothing loaded from another site. Keys as in the HTTP API (see
:mod:`vigente.http.inspector._auth`). ``install(app)`` adds it to the service. A page's address
that does not validate (a malformed, missing or unknown query parameter), or that names no
page, is answered with an HTML page in the inspector's layout, not the API's JSON error (see
:mod:`vigente.http.inspector._refusals`).
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, FastAPI, Query, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from starlette.staticfiles import StaticFiles

from vigente.application.access import caller_of
from vigente.application.errors import ApiError
from vigente.http._deps import client_of
from vigente.http.inspector import _evidence_pages, _refusals, _review_pages, _runtime_pages
from vigente.http.inspector._auth import COOKIE, check_origin, safe_next, state_of
from vigente.http.inspector._refusals import login_page
from vigente.http.inspector._render import HERE, OpenPageRoute, blank, form_of

__all__ = ["install"]


def install(app: FastAPI) -> None:
    """Serve the inspector's pages from ``app`` (at ``/``, beside ``/v1``)."""
    pages = APIRouter(include_in_schema=False, route_class=OpenPageRoute)

    @pages.get("/login", response_class=HTMLResponse)
    def login_form(
        next: Annotated[str | None, Query(max_length=2048)] = None,  # noqa: A002
    ) -> HTMLResponse:
        """The form that takes a tenant's key."""
        return login_page(next or "/")

    @pages.post("/login")
    def login(request: Request, form: Annotated[dict[str, str], Depends(form_of)]) -> Response:
        """Check the key, keep it in an HttpOnly cookie, go back to the page asked for."""
        check_origin(request)
        target = safe_next(form.get("next"))
        token = blank(form.get("key"))
        if token is None:
            return login_page(target, status=400, error="enter a tenant's API key (vgk_…)")
        state = state_of(request)
        try:
            caller = caller_of(
                state, token,
                client_of(request),
            )
        except ApiError as exc:
            return login_page(target, status=exc.status, error=exc.message)
        if caller.tenant is None:
            return login_page(
                target,
                status=403,
                error="the admin key manages tenants and keys only: enter a tenant's API key",
            )
        if not caller.principal.trusted:
            return login_page(
                target,
                status=403,
                error="an agent key is a model's: the inspector shows every participant's "
                "records, so it takes a service key",
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

    routers = [pages, _evidence_pages.router, _runtime_pages.router, _review_pages.router]
    _refusals.install(app, routers)
    for router in routers:
        app.include_router(router)
    app.mount("/static", StaticFiles(directory=HERE / "static"), name="inspector-static")
