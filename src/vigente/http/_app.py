"""The application factory: routers, error shape, limits, tenants; the MCP endpoint mounted."""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from fastapi import Depends, FastAPI, Request

from vigente import telemetry
from vigente.application.access import RateLimiter, ServiceState
from vigente.application.errors import ApiError
from vigente.application.tenants import TenantRegistry
from vigente.http import _admin, _evidence, _review, _runtime, inspector
from vigente.http._access import RequestLog
from vigente.http._errors import UnknownQueryParameters, install_error_handlers
from vigente.http._limits import BodySizeLimit

__all__ = ["CONFIG_VARIABLE", "ServiceConfig", "app_from_environment", "create_app"]

#: The environment variable through which ``vigente serve --workers N`` hands its configuration
#: (JSON) to the worker processes, each of which builds its own application from it.
CONFIG_VARIABLE = "VIGENTE_SERVE_CONFIG"


@dataclass(frozen=True, slots=True)
class ServiceConfig:
    """How the service runs.

    ``root`` is a folder (one SQLite file per tenant) or a ``postgresql://`` URL (one schema
    per tenant). ``rate``/``burst``: the token bucket of each key (requests per second, and at
    once). ``max_body_bytes``: the largest request body. ``mcp``: mount the MCP server's
    streamable HTTP endpoint at ``/mcp`` (the same keys). ``host``: the address served, which
    sets the MCP endpoint's DNS-rebinding protection (on for loopback addresses).
    """

    root: str | Path
    admin_key: str | None = None
    rate: float = 20.0
    burst: int = 100
    max_body_bytes: int = 8 * 1024 * 1024
    mcp: bool = True
    host: str = "127.0.0.1"
    #: load the embedding model (when installed) in the background at start, so that no
    #: request pays for it; ``vigente serve`` turns it on
    preload_model: bool = False
    #: the ``vigente.http.access`` log line per request (route template, status, time)
    access_log: bool = True
    #: telemetry from the ``OTEL_*`` variables, and ``/metrics`` (Prometheus, the admin key)
    metrics: bool = False

    def to_environment(self) -> str:
        """This configuration as the JSON that :func:`app_from_environment` reads."""
        return json.dumps({**asdict(self), "root": str(self.root)})


def app_from_environment() -> FastAPI:
    """The application a worker process of ``vigente serve --workers N`` serves: built from the
    configuration in ``$VIGENTE_SERVE_CONFIG`` (uvicorn imports this factory in each worker)."""
    try:
        config = ServiceConfig(**json.loads(os.environ[CONFIG_VARIABLE]))
    except (KeyError, TypeError, ValueError) as exc:
        raise RuntimeError(
            f"${CONFIG_VARIABLE} does not hold a service configuration ({exc}): start the "
            "workers with `vigente serve --workers N`"
        ) from None
    return create_app(config)


async def known_query(request: Request) -> None:
    """Refuse query parameters the endpoint does not take (a misspelt ``?stale=true`` would
    otherwise be ignored without a word) and NUL in parameters."""
    values = [*request.query_params.values(), *request.path_params.values()]
    if any("\x00" in str(v) for v in values):
        raise ApiError(
            422,
            "invalid_request",
            "a path or query parameter contains NUL (%00), which no store can hold: remove it",
        )
    route = request.scope.get("route")
    dependant = getattr(route, "dependant", None)
    if dependant is None or not request.query_params:
        return
    known: set[str] = set()
    pending = [dependant]
    while pending:
        current = pending.pop()
        known.update(p.alias for p in current.query_params)
        pending.extend(current.dependencies)
    unknown = sorted(set(request.query_params) - known)
    if unknown:
        raise UnknownQueryParameters(unknown, sorted(known))


def create_app(config: ServiceConfig) -> FastAPI:
    """The vigente HTTP API (and MCP endpoint) over the tenants under ``config.root``."""
    from vigente import __version__

    if config.metrics or telemetry.telemetry_requested():
        telemetry.configure_from_environment(prometheus=config.metrics)
    registry = TenantRegistry(config.root, admin_key=config.admin_key)
    state = ServiceState(registry, RateLimiter(config.rate, config.burst))
    mcp_app: Any = None
    if config.mcp:
        from vigente.mcp_server import http_app

        mcp_app, mcp_lifespan = http_app(registry, state, host=config.host)

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        async with AsyncExitStack() as stack:
            stack.callback(registry.close)
            stack.callback(telemetry.watch_store_size(registry.stores.size))
            if config.preload_model:
                from vigente.retrieval.embed import warm_up

                warm_up()
            if mcp_app is not None:
                await stack.enter_async_context(mcp_lifespan())
            yield

    app = FastAPI(
        title="vigente",
        version=__version__,
        summary="What an LLM agent may treat as true, for which date, as known when.",
        description=(
            "A bitemporal evidence store over HTTP. Every request carries a tenant's API key "
            "(`Authorization: Bearer vgk_…`) and sees that tenant's store only. Errors have "
            'one shape: `{"error": {"status", "code", "message"}}`, the message saying what '
            "to change."
        ),
        lifespan=lifespan,
        dependencies=[Depends(known_query)],
        # FastAPI's /docs and /redoc pages load their scripts from a CDN: not served.
        docs_url=None,
        redoc_url=None,
        # FastAPI's own spans record the query string (a search's words) and its logs the
        # exception messages: vigente's RequestLog records the request instead (template only)
        telemetry={"tracing": False, "metrics": False, "logs": False},
    )
    app.state.vigente = state
    install_error_handlers(app)
    app.include_router(_evidence.router)
    app.include_router(_review.router)
    app.include_router(_runtime.router)
    app.include_router(_admin.router)
    app.include_router(_admin.metrics_router)
    inspector.install(app)  # the web inspector's pages at /

    @app.get("/v1/health", tags=["service"])
    def health() -> dict[str, str]:
        """Liveness: no key needed."""
        return {"status": "ok", "version": __version__}

    if mcp_app is not None:
        app.router.add_route(
            "/mcp", mcp_app, methods=["GET", "POST", "DELETE"], include_in_schema=False
        )
    app.add_middleware(BodySizeLimit, max_bytes=config.max_body_bytes)
    # outermost: its span, metrics and log line cover every answer, the limits' too
    app.add_middleware(RequestLog, access_log=config.access_log)
    return app
