"""Admin endpoints (the admin key only): tenants and their API keys."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Response

from vigente import telemetry
from vigente.application import models as m
from vigente.application.errors import NotFound
from vigente.application.tenants import ApiKey, NotRegistered, TenantRegistry
from vigente.http._deps import AdminCaller
from vigente.http._errors import ERROR_RESPONSES

__all__ = ["metrics_router", "router"]

router = APIRouter(prefix="/v1/admin", responses=ERROR_RESPONSES, tags=["admin"])


def _key(key: ApiKey) -> dict[str, Any]:
    return {
        "key_id": key.key_id,
        "tenant": key.tenant,
        "label": key.label,
        "created_at": key.created_at,
        "revoked_at": key.revoked_at,
        "role": key.role,
        "conversation": key.conversation,
        "participant": key.participant,
        "legacy": key.legacy,
    }


def _known(registry: TenantRegistry, tenant: str) -> str:
    try:
        return registry.check_tenant(tenant)
    except NotRegistered as exc:
        raise NotFound(str(exc)) from None


@router.post("/tenants", response_model=m.TenantOut, status_code=201)
def create_tenant(body: m.TenantIn, registry: AdminCaller) -> dict[str, Any]:
    """Create a tenant and its own, empty store."""
    tenant = registry.create_tenant(body.name)
    return {"name": tenant.name, "created_at": tenant.created_at}


@router.get("/tenants", response_model=m.TenantsOut)
def tenants(registry: AdminCaller) -> dict[str, Any]:
    return {"tenants": [{"name": t.name, "created_at": t.created_at} for t in registry.tenants()]}


@router.post("/tenants/{tenant}/keys", response_model=m.NewKeyOut, status_code=201)
def create_key(tenant: str, body: m.KeyIn, registry: AdminCaller) -> dict[str, Any]:
    """A new API key for the tenant with its role (default `agent`: a model-facing client;
    `service` for the application's own logging) and, for an agent, an optional scope. The
    key is in this response only; the server keeps its SHA-256."""
    created = registry.create_key(_known(registry, tenant), label=body.label, role=body.role,
                                  conversation=body.conversation, participant=body.participant)
    return {**_key(created.key), "key": created.token}


@router.get("/tenants/{tenant}/keys", response_model=m.KeysOut)
def keys(tenant: str, registry: AdminCaller) -> dict[str, Any]:
    """The tenant's keys, revoked ones with the time they were revoked (never the secret)."""
    return {"keys": [_key(k) for k in registry.keys(_known(registry, tenant))]}


@router.put("/keys/{key_id}/role", response_model=m.KeyOut)
def set_role(key_id: str, body: m.RoleIn, registry: AdminCaller) -> dict[str, Any]:
    """Set a key's role and scope from now on, its secret unchanged (how a key created before
    roles existed, read as `agent`, becomes the application's `service` key)."""
    try:
        return _key(registry.set_role(key_id, body.role, conversation=body.conversation,
                                      participant=body.participant))
    except NotRegistered as exc:
        raise NotFound(str(exc)) from None


@router.delete("/keys/{key_id}", response_model=m.KeyOut)
def revoke_key(key_id: str, registry: AdminCaller) -> dict[str, Any]:
    """Revoke a key from now on: later requests with it get 401."""
    try:
        return _key(registry.revoke_key(key_id))
    except NotRegistered as exc:
        raise NotFound(str(exc)) from None


metrics_router = APIRouter(responses=ERROR_RESPONSES, tags=["service"])


# (outside the OpenAPI document, as an operator's endpoint beside /v1: not an API operation)
@metrics_router.get("/metrics", response_class=Response, include_in_schema=False)
def metrics(_: AdminCaller) -> Response:
    """The service's metrics in the Prometheus text format (the admin key only: a tenant's key
    is refused). Served when the service runs with ``--metrics``."""
    exposition = telemetry.prometheus_exposition()
    if exposition is None:
        raise NotFound(
            "metrics are off: start the service with `vigente serve --metrics` (the otel extra: "
            "pip install 'vigente[otel]')"
        )
    body, content_type = exposition
    return Response(body, media_type=content_type)
