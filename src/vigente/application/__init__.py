"""The application layer: what a surface asks of vigente, transport-neutral.

The HTTP API (:mod:`vigente.http`), the MCP server (:mod:`vigente.mcp_server`) and the web
inspector are adapters over this package: each parses its transport into the request models of
:mod:`~vigente.application.models` and :mod:`~vigente.application.runtime`, calls a command or
a query here with the caller's store, and renders the dict it returns or the
:class:`~vigente.application.errors.ApiError` it raises. None of them imports another's
private modules (the import-linter contracts in ``pyproject.toml``; docs/architecture.md).

- :mod:`~vigente.application.access`: who is calling (keys, rate limits) —
  :func:`~vigente.application.access.caller_of`, :class:`~vigente.application.access.ServiceState`;
- :mod:`~vigente.application.tenants`: tenants and their keys (:class:`TenantRegistry`);
- :mod:`~vigente.application.evidence`: ``ask`` and ``verify_answer``;
- :mod:`~vigente.application.runtime`: the event log, ``assemble``, ``explain``, ``recall``;
- :mod:`~vigente.application.errors`: :class:`ApiError`, :class:`NotFound`, the error shape.
"""

from __future__ import annotations

from vigente.application.access import RateLimiter, ServiceState, caller_of
from vigente.application.errors import ApiError, NotFound, error_body
from vigente.application.tenants import Caller, TenantRegistry

__all__ = [
    "ApiError",
    "Caller",
    "NotFound",
    "RateLimiter",
    "ServiceState",
    "TenantRegistry",
    "caller_of",
    "error_body",
]
