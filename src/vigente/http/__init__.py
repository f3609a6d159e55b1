"""The HTTP API: a FastAPI application over the public :class:`~vigente.Vigente` API.

``create_app(ServiceConfig(root, admin_key=…))`` builds it; ``vigente serve`` runs it with
uvicorn. Each tenant has a store of its own (:mod:`vigente.application.tenants`); every
endpoint gets the store of the tenant its API key belongs to, so no endpoint can reach another
tenant's data. The routes are adapters over :mod:`vigente.application`.
"""

from __future__ import annotations

from vigente.application.tenants import ApiKey, Caller, NewKey, Tenant, TenantRegistry
from vigente.http._app import CONFIG_VARIABLE, ServiceConfig, app_from_environment, create_app
from vigente.http._errors import ErrorBody

__all__ = [
    "CONFIG_VARIABLE",
    "ApiKey",
    "Caller",
    "ErrorBody",
    "NewKey",
    "ServiceConfig",
    "Tenant",
    "TenantRegistry",
    "app_from_environment",
    "create_app",
]
