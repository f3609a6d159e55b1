"""vigente as an MCP server (the official ``mcp`` SDK, version 2).

* :func:`serve_stdio` — ``vigente mcp``: one local store, over stdin/stdout;
* :func:`http_app` — the streamable HTTP endpoint ``vigente serve`` mounts at ``/mcp``: each
  request carries a tenant's API key (``Authorization: Bearer vgk_…``, the keys of the HTTP
  API, with the same rate limit) and its tools see that tenant's store only.

Tools: ``ask_evidence``, ``search``, ``cite``, ``record_fact``, ``verify_answer``,
``record_event``, ``assemble_context``, ``explain_assembly``; resources:
``vigente://lineages`` and ``vigente://lineages/{lineage}``. (The package is ``mcp_server``
so that it never shadows the SDK's ``mcp``.)
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from typing import TYPE_CHECKING, Any

from vigente.api import Vigente
from vigente.application.roles import Principal, check_role
from vigente.mcp_server._server import INSTRUCTIONS, build_server

if TYPE_CHECKING:
    from vigente.application.access import ServiceState
    from vigente.application.tenants import TenantRegistry

__all__ = ["INSTRUCTIONS", "build_server", "http_app", "serve_stdio"]


def serve_stdio(vg: Vigente, *, conversation: str | None = None,
                participant: str | None = None) -> None:
    """Serve ``vg`` over stdio until the client closes the stream. The client is a model's:
    its role is ``agent`` (application/roles.py), scoped to ``conversation`` and
    ``participant`` when given."""
    check_role("agent", conversation, participant)
    principal = Principal("agent", "vigente mcp", conversation, participant)
    build_server(lambda _ctx: vg, lambda _ctx: principal).run("stdio")


def http_app(
    registry: TenantRegistry, state: ServiceState, *, host: str = "127.0.0.1"
) -> tuple[Any, Callable[[], AbstractAsyncContextManager[None]]]:
    """The ``/mcp`` ASGI endpoint over the registry's tenants, and the context manager that
    must run for its lifetime (the SDK's session manager)."""
    from vigente.mcp_server._http import http_endpoint

    return http_endpoint(registry, state, host=host)
