"""The streamable HTTP endpoint of the MCP server, behind the HTTP API's keys.

A gate in front of the SDK's endpoint checks the bearer key and the key's rate limit (the HTTP
API's own, so a key has one budget for both surfaces) and refuses with the HTTP API's error
shape; the tools then find the tenant's store, and the key's role and scope, from the same
header of the request they serve.
The endpoint is stateless (each POST is answered on its own, as JSON), so any server process
can answer any request.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from typing import TYPE_CHECKING, Any

import anyio.to_thread
from fastapi.security.utils import get_authorization_scheme_param
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from starlette.datastructures import Headers
from starlette.responses import JSONResponse

from vigente.api import Vigente
from vigente.application.access import caller_of
from vigente.application.errors import ApiError, error_body
from vigente.mcp_server._server import build_server

if TYPE_CHECKING:
    from vigente.application.access import ServiceState
    from vigente.application.roles import Principal
    from vigente.application.tenants import Caller, TenantRegistry

__all__ = ["http_endpoint"]


def _token(authorization: str | None) -> str | None:
    """The bearer token of an ``Authorization`` header, or None."""
    scheme, token = get_authorization_scheme_param(authorization)
    if not authorization or scheme.lower() != "bearer" or not token:
        return None
    return token


def http_endpoint(
    registry: TenantRegistry, state: ServiceState, *, host: str
) -> tuple[Any, Callable[[], AbstractAsyncContextManager[None]]]:
    def caller(ctx: Context) -> Caller:
        headers = ctx.headers or {}
        token = _token(headers.get("authorization"))
        found = None if token is None else registry.authenticate(token)
        if found is None or found.tenant is None:
            raise ToolError("this request has no tenant API key: send Authorization: Bearer")
        return found

    def resolve(ctx: Context) -> Vigente:
        tenant = caller(ctx).tenant
        assert tenant is not None
        return registry.store(tenant)

    def principal_of(ctx: Context) -> Principal:
        # the key's role and scope, the same as over the HTTP API (application/roles.py)
        return caller(ctx).principal

    server = build_server(resolve, principal_of)
    starlette_app = server.streamable_http_app(
        streamable_http_path="/mcp", stateless_http=True, json_response=True, host=host
    )
    endpoint = next(r for r in starlette_app.routes if getattr(r, "path", None) == "/mcp")
    inner = endpoint.endpoint  # type: ignore[attr-defined]

    class Gate:
        """An ASGI app (an object, so that a Starlette ``Route`` passes it the raw scope)."""

        async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
            token = _token(Headers(scope=scope).get("authorization"))
            try:
                client = scope.get("client")
                address = client[0] if client else None
                caller = await anyio.to_thread.run_sync(caller_of, state, token, address)
                if caller.tenant is None:
                    raise ApiError(
                        403,
                        "forbidden",
                        "the admin key manages tenants and keys "
                        "only: use a tenant's API key for MCP",
                    )
            except ApiError as exc:
                response = JSONResponse(error_body(exc.status, exc.code, exc.message),
                                        status_code=exc.status, headers=exc.headers)
                await response(scope, receive, send)
                return
            await inner(scope, receive, send)

    return Gate(), server.session_manager.run
