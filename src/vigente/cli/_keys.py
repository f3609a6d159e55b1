"""``vigente keys``: a service's tenant keys and their roles, from the machine that holds its
data (the admin API's key operations, without the admin key: whoever can open the registry
already holds every tenant's store). ``--db`` is the folder or PostgreSQL URL ``vigente
serve`` serves."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict

import click

from vigente.application.roles import ROLES
from vigente.application.tenants import ApiKey, TenantRegistry
from vigente.cli._app import cli

__all__: list[str] = []

_DEFAULT = "vigente-data"


@contextmanager
def _registry(ctx: click.Context) -> Iterator[TenantRegistry]:
    root = ctx.ensure_object(dict).get("db") or os.environ.get("VIGENTE_DATA") or _DEFAULT
    registry = TenantRegistry(root)
    try:
        yield registry
    finally:
        registry.close()


def _show(key: ApiKey, as_json: bool, token: str | None = None) -> None:
    data = {**asdict(key), **({"key": token} if token else {})}
    if as_json:
        click.echo(json.dumps(data, ensure_ascii=False))
        return
    scope = ", ".join(f"{k} {v}" for k, v in (("conversation", key.conversation),
                                              ("participant", key.participant)) if v)
    state = f"revoked {key.revoked_at}" if key.revoked_at else "in force"
    click.echo(f"{key.key_id}  {key.role}{' (legacy: no role recorded)' if key.legacy else ''}"
               f"{f'  scoped to {scope}' if scope else ''}  {state}"
               f"{f'  {key.label}' if key.label else ''}")
    if token:
        click.echo(f"key: {token}   (shown once: the registry keeps its SHA-256)")


_ROLE = click.option("--role", type=click.Choice(ROLES), default="agent", show_default=True,
                     help="service: the application's own logging (trusted); agent: a "
                     "model-facing client (what it logs is its claim; it reads one "
                     "participant's view).")
_CONVERSATION = click.option("--conversation", metavar="ID",
                             help="An agent key only: the one conversation it may use.")
_PARTICIPANT = click.option("--participant", metavar="ID",
                            help="With --conversation: the participant the key acts as.")
_JSON = click.option("--json", "as_json", is_flag=True, help="One JSON object per key.")


@cli.group("keys")
def keys_group() -> None:
    """Tenant API keys and their roles (the service's registry at --db)."""


@keys_group.command("create")
@click.argument("tenant")
@_ROLE
@_CONVERSATION
@_PARTICIPANT
@click.option("--label", help="A note for people (never shown to a model).")
@_JSON
@click.pass_context
def create(ctx: click.Context, tenant: str, role: str, conversation: str | None,
           participant: str | None, label: str | None, as_json: bool) -> None:
    """A new key of TENANT with its role (and an agent's optional scope)."""
    with _registry(ctx) as registry:
        new = registry.create_key(tenant, label=label, role=role, conversation=conversation,
                                  participant=participant)
    _show(new.key, as_json, new.token)


@keys_group.command("list")
@click.argument("tenant")
@_JSON
@click.pass_context
def list_keys(ctx: click.Context, tenant: str, as_json: bool) -> None:
    """TENANT's keys with their roles (never the secrets)."""
    with _registry(ctx) as registry:
        for key in registry.keys(tenant):
            _show(key, as_json)


@keys_group.command("role")
@click.argument("key_id")
@_ROLE
@_CONVERSATION
@_PARTICIPANT
@_JSON
@click.pass_context
def set_role(ctx: click.Context, key_id: str, role: str, conversation: str | None,
             participant: str | None, as_json: bool) -> None:
    """Set KEY_ID's role and scope, its secret unchanged.

    From now on: how a key created before roles existed (read as an agent's) becomes the
    application's service key."""
    with _registry(ctx) as registry:
        _show(registry.set_role(key_id, role, conversation=conversation,
                                participant=participant), as_json)


@keys_group.command("revoke")
@click.argument("key_id")
@_JSON
@click.pass_context
def revoke(ctx: click.Context, key_id: str, as_json: bool) -> None:
    """Revoke KEY_ID from now on."""
    with _registry(ctx) as registry:
        _show(registry.revoke_key(key_id), as_json)
