"""Who is calling: the bearer key of a request, its rate limit, and the store it may use.

Every data endpoint depends on :func:`tenant_store`: the key names one tenant, and the endpoint
receives that tenant's store and nothing else, so an endpoint has no way to reach another
tenant's data. The runtime's endpoints depend on :func:`tenant_access`: the store and the key's
:class:`~vigente.application.roles.Principal` (its role and scope), which the application
layer checks. Admin endpoints depend on :func:`admin_caller`.

Both are ``async``: FastAPI runs a plain ``def`` dependency in a worker thread, and handing a
request to a thread and back costs more than checking a key (one indexed read of the registry),
so they run on the event loop and only the endpoint itself goes to a thread.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from fastapi import Depends, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from vigente.api import Vigente
from vigente.application.access import ServiceState, caller_of
from vigente.application.errors import ApiError
from vigente.application.roles import Principal
from vigente.application.tenants import Caller, TenantRegistry

__all__ = ["Access", "AdminCaller", "TenantAccess", "TenantStore", "admin_caller", "client_of",
           "tenant_access", "tenant_store"]

_bearer = HTTPBearer(auto_error=False, description="An API key: `Authorization: Bearer vgk_…`")


def _token(credentials: HTTPAuthorizationCredentials | None) -> str | None:
    return None if credentials is None else credentials.credentials


def client_of(request: Request) -> str | None:
    """The request's client address (None when the server does not know it)."""
    return request.client.host if request.client is not None else None


def _state(request: Request) -> ServiceState:
    state: ServiceState = request.app.state.vigente
    return state


def _tenant_caller(request: Request, credentials: HTTPAuthorizationCredentials | None
                   ) -> tuple[Caller, str]:
    caller = caller_of(_state(request), _token(credentials), client_of(request))
    if caller.tenant is None:
        raise ApiError(
            403,
            "forbidden",
            "the admin key manages tenants and keys only: use a tenant's API key for its data",
        )
    return caller, caller.tenant


async def tenant_store(
    request: Request,
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
) -> Vigente:
    """The store of the tenant the request's key belongs to."""
    _, tenant = _tenant_caller(request, credentials)
    return _state(request).registry.store(tenant)


@dataclass(frozen=True, slots=True)
class Access:
    """A runtime request's store and who it acts as (its key's role and scope)."""

    store: Vigente
    principal: Principal


async def tenant_access(
    request: Request,
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
) -> Access:
    """The store of the tenant the request's key belongs to, and the key's principal."""
    caller, tenant = _tenant_caller(request, credentials)
    return Access(_state(request).registry.store(tenant), caller.principal)


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
    caller = caller_of(state, _token(credentials), client_of(request))
    if not caller.is_admin:
        raise ApiError(
            403,
            "forbidden",
            "this endpoint needs the admin key; a tenant's key only reaches its own data",
        )
    return state.registry


TenantStore = Annotated[Vigente, Depends(tenant_store)]
TenantAccess = Annotated[Access, Depends(tenant_access)]
AdminCaller = Annotated[TenantRegistry, Depends(admin_caller)]
