"""Who is calling: the bearer key of a request, its rate limit, and the store it may use.

Every data endpoint depends on :func:`tenant_store`: the key names one tenant, and the endpoint
receives that tenant's store and nothing else, so an endpoint has no way to reach another
tenant's data. Admin endpoints depend on :func:`admin_caller`.

Both are ``async``: FastAPI runs a plain ``def`` dependency in a worker thread, and handing a
request to a thread and back costs more than checking a key (one indexed read of the registry),
so they run on the event loop and only the endpoint itself goes to a thread.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Annotated

from fastapi import Depends, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from vigente.api import Vigente
from vigente.http._errors import ApiError
from vigente.http._limits import RateLimiter
from vigente.http.tenants import Caller, TenantRegistry

__all__ = ["AdminCaller", "ServiceState", "TenantStore", "admin_caller", "caller_of", "client_of",
           "tenant_store"]

#: Failed authentications a client address may make at once, and per second on average.
AUTH_FAILURE_BURST = 20
AUTH_FAILURE_RATE = 1.0

_bearer = HTTPBearer(auto_error=False, description="An API key: `Authorization: Bearer vgk_…`")


@dataclass
class ServiceState:
    """What the application shares between requests."""

    registry: TenantRegistry
    limiter: RateLimiter
    #: failed authentications per client address: a client that keeps sending wrong keys is
    #: refused (429) before its keys are checked, until its bucket refills
    auth_failures: RateLimiter = field(
        default_factory=lambda: RateLimiter(AUTH_FAILURE_RATE, AUTH_FAILURE_BURST)
    )


def client_of(request: Request) -> str | None:
    """The request's client address (None when the server does not know it)."""
    return request.client.host if request.client is not None else None


def _state(request: Request) -> ServiceState:
    state: ServiceState = request.app.state.vigente
    return state


def _too_many_failures(wait: float) -> ApiError:
    return ApiError(
        429,
        "rate_limited",
        f"too many failed authentications from this address (at most {AUTH_FAILURE_BURST} at "
        f"once, {AUTH_FAILURE_RATE:g} per second): check the key, and retry after "
        f"{RateLimiter.retry_after(wait)} s",
        {"Retry-After": RateLimiter.retry_after(wait)},
    )


def caller_of(
    state: ServiceState,
    credentials: HTTPAuthorizationCredentials | None,
    client: str | None = None,
) -> Caller:
    """The caller of a request, after its key and rate limit are checked. ``client``: the
    request's address, whose failed authentications are limited."""
    failures = f"client:{client}"
    if client is not None:
        wait = state.auth_failures.wait(failures)
        if wait is not None:
            raise _too_many_failures(wait)
    if credentials is None or not credentials.credentials:
        raise ApiError(
            401,
            "unauthorized",
            "no API key: send `Authorization: Bearer <key>` (an admin creates keys "
            "with POST /v1/admin/tenants/NAME/keys)",
            {"WWW-Authenticate": "Bearer"},
        )
    caller = state.registry.authenticate(credentials.credentials)
    if caller is None:
        if client is not None:
            state.auth_failures.take(failures)
        raise ApiError(
            401,
            "unauthorized",
            "unknown or revoked API key: check the key, or ask an admin for a new one",
            {"WWW-Authenticate": "Bearer"},
        )
    wait = state.limiter.take(caller.key_id)
    if wait is not None:
        raise ApiError(
            429,
            "rate_limited",
            f"too many requests for this key (at most {state.limiter.burst} at once, "
            f"{state.limiter.rate:g} per second): retry after "
            f"{RateLimiter.retry_after(wait)} s",
            {"Retry-After": RateLimiter.retry_after(wait)},
        )
    return caller


async def tenant_store(
    request: Request,
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
) -> Vigente:
    """The store of the tenant the request's key belongs to."""
    state = _state(request)
    caller = caller_of(state, credentials, client_of(request))
    if caller.tenant is None:
        raise ApiError(
            403,
            "forbidden",
            "the admin key manages tenants and keys only: use a tenant's API key for its data",
        )
    return state.registry.store(caller.tenant)


async def admin_caller(
    request: Request,
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
) -> TenantRegistry:
    """The registry, for a request made with the admin key."""
    state = _state(request)
    if not state.registry.has_admin_key:
        raise ApiError(
            403,
            "forbidden",
            "this server has no admin key: start it with VIGENTE_ADMIN_KEY set or "
            "with --admin-key-file",
        )
    caller = caller_of(state, credentials, client_of(request))
    if not caller.is_admin:
        raise ApiError(
            403,
            "forbidden",
            "this endpoint needs the admin key; a tenant's key only reaches its own data",
        )
    return state.registry


TenantStore = Annotated[Vigente, Depends(tenant_store)]
AdminCaller = Annotated[TenantRegistry, Depends(admin_caller)]
