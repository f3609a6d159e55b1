"""Who is looking: the inspector takes the same tenant keys as the HTTP API.

A key is entered once on ``/login`` and kept in an ``HttpOnly``, ``SameSite=Strict`` cookie
(``Secure`` over HTTPS), so page scripts never see it and other sites cannot send it; a client
may instead send ``Authorization: Bearer <key>`` as with the API. Every page checks the key
again (a revoked key stops working at once) and counts against the key's rate limit; a page
reaches the store of the key's tenant only. The admin key is refused: it manages tenants and
keys, not data. Forms that change data (the review queue) also refuse a request whose
``Origin`` is another site.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import quote, urlsplit

from fastapi import Request

from vigente.api import Vigente
from vigente.application.access import ServiceState, caller_of
from vigente.application.errors import ApiError
from vigente.application.roles import service_only
from vigente.http._deps import client_of

__all__ = ["COOKIE", "LoginRequired", "PageError", "Viewer", "check_origin", "safe_next", "viewer"]

COOKIE = "vigente_key"


class LoginRequired(Exception):
    """No usable key: the page sends the browser to ``/login`` (and forgets a bad cookie)."""

    def __init__(self, next_url: str, message: str | None = None, *, forget: bool = False):
        super().__init__(message or "log in with a tenant's API key")
        self.next_url = next_url
        self.message = message
        self.forget = forget


class PageError(Exception):
    """A refusal shown as an HTML page with its status (403, 429, …)."""

    def __init__(self, status: int, message: str, headers: dict[str, str] | None = None):
        super().__init__(message)
        self.status = status
        self.message = message
        self.headers = headers


@dataclass(frozen=True, slots=True)
class Viewer:
    """A request's tenant and its store."""

    tenant: str
    vg: Vigente


def _token(request: Request) -> str | None:
    header = request.headers.get("authorization", "")
    scheme, _, value = header.partition(" ")
    if scheme.lower() == "bearer" and value.strip():
        return value.strip()
    return request.cookies.get(COOKIE) or None


def state_of(request: Request) -> ServiceState:
    state: ServiceState = request.app.state.vigente
    return state


def safe_next(target: str | None) -> str:
    """A local path to return to after logging in (never another site)."""
    if not target or not target.startswith("/") or target.startswith("//") or "\\" in target:
        return "/"
    return target


def _here(request: Request) -> str:
    query = f"?{request.url.query}" if request.url.query else ""
    return request.url.path + query


def viewer(request: Request) -> Viewer:
    """The tenant of the request's key; raises :class:`LoginRequired` or :class:`PageError`."""
    token = _token(request)
    if token is None:
        raise LoginRequired(_here(request))
    state = state_of(request)
    try:
        caller = caller_of(state, token, client_of(request))
    except ApiError as exc:
        if exc.status == 401:
            raise LoginRequired(_here(request), exc.message, forget=True) from None
        raise PageError(exc.status, exc.message, exc.headers) from None
    if caller.tenant is None:
        raise PageError(
            403,
            "the admin key manages tenants and keys only: log in with a tenant's API key "
            "(POST /v1/admin/tenants/NAME/keys creates one)",
        )
    try:  # the inspector shows every participant's records: an operator's, never a model's
        service_only(caller.principal, "the inspector")
    except ApiError as exc:
        raise PageError(exc.status, exc.message) from None
    return Viewer(caller.tenant, state.registry.store(caller.tenant))


def check_origin(request: Request) -> None:
    """Refuse a form posted from another site (defence in depth beside SameSite=Strict)."""
    origin = request.headers.get("origin")
    if origin is None:  # not a browser form (a script with the key in its header)
        return
    host = request.headers.get("host", "")
    if urlsplit(origin).netloc != host:
        raise PageError(
            403,
            f"a form from {origin} may not change this inspector's data: use the inspector's "
            "own pages",
        )


def login_url(next_url: str) -> str:
    return "/login?next=" + quote(safe_next(next_url), safe="")
