"""A real uvicorn server on a free loopback port, in a thread, for the HTTP and MCP tests, and
a server with one tenant with the MCP SDK's client to reach it."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import httpx
import httpx2
import pytest
import uvicorn
from mcp.client import Client
from mcp.client.streamable_http import streamable_http_client

__all__ = [
    "Tenant",
    "mcp_over_http",
    "running",
    "service_root",
    "serving_tenant",
    "tool_text",
    "with_mcp",
]


@contextmanager
def running(app: Any) -> Iterator[str]:
    """Serve ``app`` on 127.0.0.1 (a port the kernel picks) until the block ends; its URL."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("the test server did not start")
        time.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(30)
        sock.close()


@dataclass
class Tenant:
    """A running server with one tenant (``acme``): its URL, a client, the tenant's key (as a
    header and as the bare token) and the tenant's store URL (for the API and the CLI)."""

    url: str
    client: httpx.Client
    key: dict[str, str]
    token: str
    store: str


@contextmanager
def serving_tenant(root: str, admin_key: str, seed: Callable[[str], None],
                   **config: Any) -> Iterator[Tenant]:
    """A real server over the stores under ``root`` with one tenant whose store ``seed`` fills
    before the block starts (``config``: more of the ServiceConfig)."""
    from vigente.http import ServiceConfig, create_app
    from vigente.store.tenancy import TenantStores

    app = create_app(ServiceConfig(root, admin_key=admin_key, rate=10_000, burst=10_000,
                                   **config))
    admin = {"Authorization": f"Bearer {admin_key}"}
    with running(app) as url, httpx.Client(base_url=url, timeout=60) as client:
        client.post("/v1/admin/tenants", json={"name": "acme"}, headers=admin).raise_for_status()
        token = client.post("/v1/admin/tenants/acme/keys",
            json={"role": "service"}, headers=admin).json()["key"]
        store = TenantStores(root).tenant_url("acme")
        seed(store)
        yield Tenant(url, client, {"Authorization": f"Bearer {token}"}, token, store)


def service_root(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """Where a service's tenant stores live for a fixture parametrized by backend: a folder of
    SQLite files, or the session's PostgreSQL server."""
    if request.param == "sqlite":
        return str(tmp_path / "data")
    url: str = request.getfixturevalue("postgres_url")
    return url


async def mcp_over_http(url: str, token: str, session: Callable[[Client], Awaitable[None]]) -> None:
    """Run ``session`` with the MCP SDK's client connected to ``url``'s ``/mcp`` with the
    tenant key ``token``."""
    headers = {"Authorization": f"Bearer {token}"}
    async with httpx2.AsyncClient(headers=headers, timeout=60) as http:
        transport = streamable_http_client(f"{url}/mcp", http_client=http)
        async with Client(transport, read_timeout_seconds=60) as client:
            await session(client)


def with_mcp(tenant: Tenant, session: Callable[[Client], Awaitable[None]]) -> None:
    """Run ``session`` with the MCP SDK's client connected to the tenant's ``/mcp``."""
    anyio.run(mcp_over_http, tenant.url, tenant.token, session)


def tool_text(result: Any) -> str:
    """The text blocks of an MCP tool result."""
    return "".join(getattr(block, "text", "") for block in result.content)
