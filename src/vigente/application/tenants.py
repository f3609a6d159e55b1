"""Tenants and their API keys, kept as facts in the service's own vigente store.

The registry is itself a bitemporal store (``admin.db`` or schema ``vigente_admin``): a tenant
is the lineage ``tenant/NAME`` and a key the lineage ``key/KEY_ID`` whose value names its tenant
and the SHA-256 of the key. Creating a key records it from now on; revoking retracts it from now
on, so the registry keeps, like every vigente store, when each key was valid and when that was
known. The key itself is shown once, when it is created, and never stored.

A key is ``vgk_<key id>_<secret>``: 32 random bytes of secret, so one SHA-256 is enough (a slow
password hash protects guessable passwords, which these are not). Keys are compared in constant
time. A key carries a role (application/roles.py): ``service`` for the application's own
logging, ``agent`` for a model-facing client, optionally scoped to one conversation and one
participant of it. A key recorded without a role (before roles existed) is an agent key, until
an admin sets its role (:meth:`TenantRegistry.set_role`: a new version of the key's record,
the secret unchanged). Each tenant's data lives in a store of its own
(:class:`~vigente.store.tenancy.TenantStores`), opened on first use and kept open.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import hmac
import re
import secrets
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from vigente import telemetry
from vigente.api import Vigente
from vigente.application.roles import Principal, Role, check_role
from vigente.errors import InvalidInput
from vigente.kernel.answer import Status
from vigente.store.tenancy import TenantStores, check_tenant_name

__all__ = ["ApiKey", "Caller", "NewKey", "Tenant", "TenantRegistry", "NotRegistered"]

_SOURCE = "vigente-admin"
_KEY = re.compile(r"vgk_([0-9a-f]{16})_([A-Za-z0-9_-]{43})")
_TENANT_PREFIX = "tenant/"
_KEY_PREFIX = "key/"


class NotRegistered(InvalidInput):
    """A tenant or API key that the registry does not hold."""


@dataclass(frozen=True, slots=True)
class Tenant:
    name: str
    created_at: str


@dataclass(frozen=True, slots=True)
class ApiKey:
    """A key as the registry lists it (never the secret)."""

    key_id: str
    tenant: str
    label: str | None
    created_at: str
    revoked_at: str | None
    role: Role = "agent"
    conversation: str | None = None
    participant: str | None = None
    #: the key was recorded before keys had roles, and no admin has set one: read as agent
    legacy: bool = False


@dataclass(frozen=True, slots=True)
class NewKey:
    """A key just created: ``token`` is shown this once and stored only as its hash."""

    key: ApiKey
    token: str


@dataclass(frozen=True, slots=True)
class Caller:
    """Who sent a request: a tenant's key, or the admin key (``tenant`` is None); its role
    and scope (an agent's conversation and participant)."""

    key_id: str
    tenant: str | None
    role: Role = "agent"
    conversation: str | None = None
    participant: str | None = None

    @property
    def is_admin(self) -> bool:
        return self.tenant is None

    @property
    def principal(self) -> Principal:
        """Who the key's requests act as (application/roles.py)."""
        return Principal(self.role, f"{self.role} key {self.key_id}", self.conversation,
                         self.participant)


def _role_of(value: dict[str, Any]) -> tuple[Role, str | None, str | None]:
    """A stored key's role and scope; a key stored without a role is an agent key."""
    role = value.get("role") or "agent"
    return (role if role in ("service", "agent") else "agent",  # type: ignore[return-value]
            value.get("conversation"), value.get("participant"))


def _role_value(role: Role, conversation: str | None, participant: str | None
                ) -> dict[str, Any]:
    return {"role": role, "conversation": conversation, "participant": participant}


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()


def _now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


class TenantRegistry:
    """Tenants, their keys and their stores under one root (a folder or a PostgreSQL URL).

    ``admin_key`` (optional) is the key that may create tenants and keys; without it the admin
    endpoints refuse every request.
    """

    def __init__(self, root: str | Path, *, admin_key: str | None = None) -> None:
        self.stores = TenantStores(root)
        self._admin = Vigente.open(self.stores.admin_url())
        self._admin_digest = None if not admin_key else _digest(admin_key)
        self._open: dict[str, Vigente] = {}
        self._lock = threading.Lock()

    @property
    def has_admin_key(self) -> bool:
        return self._admin_digest is not None

    def close(self) -> None:
        with self._lock:
            for vg in self._open.values():
                vg.close()
            self._open.clear()
        self._admin.close()

    # -- authentication --------------------------------------------------------------------
    def authenticate(self, token: str) -> Caller | None:
        """The caller a bearer token stands for, or None for an unknown or revoked key."""
        if self._admin_digest is not None and hmac.compare_digest(
            _digest(token), self._admin_digest
        ):
            return Caller("admin", None)
        match = _KEY.fullmatch(token)
        if match is None:
            return None
        value = self._current(_KEY_PREFIX + match.group(1))
        if value is None or not hmac.compare_digest(_digest(token), str(value.get("sha256"))):
            return None
        return Caller(match.group(1), str(value["tenant"]), *_role_of(value))

    def _current(self, lineage: str) -> dict[str, Any] | None:
        now = _now()
        with telemetry.quiet():  # a key check is the service's bookkeeping, not an answer
            evidence = self._admin.evidence(lineage, valid_at=now, now=now)
        if evidence.status is not Status.SUPPORTED or not isinstance(evidence.values[0], dict):
            return None
        return evidence.values[0]

    # -- tenants ---------------------------------------------------------------------------
    def create_tenant(self, name: str) -> Tenant:
        """Register a tenant and create its (empty) store."""
        check_tenant_name(name)
        with self._lock:
            if self._current(_TENANT_PREFIX + name) is not None:
                raise InvalidInput(f"tenant {name!r} already exists: choose another name")
            url = self.stores.create(name)
            Vigente.open(url).close()  # create and migrate it now, not on the first request
            now = _now()
            self._admin.record(
                _TENANT_PREFIX + name,
                {"created_at": now.isoformat()},
                valid_from=now,
                known_at=now,
                source=_SOURCE,
                now=now,
            )
        return Tenant(name, now.isoformat())

    def tenants(self) -> list[Tenant]:
        found = []
        for lineage, _ in self._admin.lineages():
            if lineage.startswith(_TENANT_PREFIX):
                value = self._current(lineage)
                if value is not None:
                    found.append(Tenant(lineage[len(_TENANT_PREFIX) :], str(value["created_at"])))
        return sorted(found, key=lambda t: t.name)

    def check_tenant(self, name: str) -> str:
        check_tenant_name(name)
        if self._current(_TENANT_PREFIX + name) is None:
            raise NotRegistered(
                f"no tenant {name!r}: create it with POST /v1/admin/tenants, or list them with "
                "GET /v1/admin/tenants"
            )
        return name

    def store(self, tenant: str) -> Vigente:
        """The tenant's store (opened on first use, then shared by its requests)."""
        with self._lock:
            vg = self._open.get(tenant)
            if vg is None:
                vg = Vigente.open(self.stores.tenant_url(tenant))
                self._open[tenant] = vg
            return vg

    # -- keys ------------------------------------------------------------------------------
    def create_key(self, tenant: str, *, label: str | None = None, role: str = "agent",
                   conversation: str | None = None, participant: str | None = None) -> NewKey:
        """A new key of ``tenant`` with ``role`` (default ``agent``: trust is granted
        explicitly), an agent's optionally scoped to ``conversation`` and ``participant``."""
        checked = check_role(role, conversation, participant)
        self.check_tenant(tenant)
        key_id = secrets.token_hex(8)
        token = f"vgk_{key_id}_{secrets.token_urlsafe(32)}"
        now = _now()
        value = {
            "tenant": tenant,
            "sha256": _digest(token),
            "label": label,
            "created_at": now.isoformat(),
            **_role_value(checked, conversation, participant),
        }
        self._admin.record(
            _KEY_PREFIX + key_id, value, valid_from=now, known_at=now, source=_SOURCE, now=now
        )
        return NewKey(ApiKey(key_id, tenant, label, now.isoformat(), None, checked,
                             conversation, participant), token)

    def set_role(self, key_id: str, role: str, *, conversation: str | None = None,
                 participant: str | None = None) -> ApiKey:
        """Give a key a role and scope from now on (its secret stays; the record keeps the
        role it had before, and when it changed): how a key created before roles existed
        becomes a service key."""
        checked = check_role(role, conversation, participant)
        key = self._key(key_id) if re.fullmatch(r"[0-9a-f]{16}", key_id) else None
        if key is None or key.revoked_at is not None:
            raise NotRegistered(
                f"no API key {key_id!r} in force: list a tenant's keys with "
                "GET /v1/admin/tenants/NAME/keys")
        held = self._current(_KEY_PREFIX + key_id)
        assert held is not None
        now = _now()
        self._admin.record(
            _KEY_PREFIX + key_id, {**held, **_role_value(checked, conversation, participant)},
            valid_from=now, known_at=now, source=_SOURCE, now=now,
        )
        changed = self._key(key_id)
        assert changed is not None
        return changed

    def keys(self, tenant: str) -> list[ApiKey]:
        self.check_tenant(tenant)
        found = []
        for lineage, _ in self._admin.lineages():
            if lineage.startswith(_KEY_PREFIX):
                key = self._key(lineage[len(_KEY_PREFIX) :])
                if key is not None and key.tenant == tenant:
                    found.append(key)
        return sorted(found, key=lambda k: k.created_at)

    def _key(self, key_id: str) -> ApiKey | None:
        held = [v for v in self._admin.history(_KEY_PREFIX + key_id)
                if v.known_to is None and isinstance(v.value, dict)]
        if not held:
            return None
        in_force = [v for v in held if v.valid_to is None]
        latest = max(in_force or held, key=lambda v: v.valid_from)
        value = cast(dict[str, Any], latest.value)  # (held: only dict values)
        ends = [v.valid_to for v in held if v.valid_to is not None]
        return ApiKey(
            key_id,
            str(value["tenant"]),
            value.get("label"),
            str(value["created_at"]),
            None if in_force or not ends else max(ends).isoformat(),
            *_role_of(value),
            legacy="role" not in value,
        )

    def revoke_key(self, key_id: str) -> ApiKey:
        """Stop a key from now on (its record stays, with the time it was revoked)."""
        key = self._key(key_id) if re.fullmatch(r"[0-9a-f]{16}", key_id) else None
        if key is None:
            raise NotRegistered(
                f"no API key {key_id!r}: list a tenant's keys with GET /v1/admin/tenants/NAME/keys"
            )
        if key.revoked_at is not None:
            return key
        now = _now()
        self._admin.retract(
            _KEY_PREFIX + key_id, valid_from=now, known_at=now, source=_SOURCE, now=now
        )
        revoked = self._key(key_id)
        assert revoked is not None
        return revoked
