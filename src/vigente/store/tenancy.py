"""Where each tenant's store lives: one SQLite file per tenant, or one PostgreSQL schema.

A service with tenants (``vigente serve``) never mixes tenants in one store: each tenant gets a
store of its own, so a query of one tenant cannot name another tenant's rows — there is no
tenant column to forget in a ``WHERE``. :class:`TenantStores` maps a tenant name to the URL of
its store and creates the place it lives in:

* a folder: ``DIR/admin.db`` holds the service's own records (tenants, API keys) and
  ``DIR/tenants/NAME.db`` each tenant's store;
* a PostgreSQL URL: schema ``vigente_admin`` and one schema ``tenant_NAME`` per tenant, chosen by
  ``options=-csearch_path=…`` in each store's URL (docs/deployment.md). The extensions are
  created once in ``public`` first, so that dropping a tenant's schema never takes them along.

Tenant names are allow-listed (``[a-z][a-z0-9_]{0,39}``) because they become file names and
schema identifiers.
"""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import parse_qsl, urlsplit

from vigente.errors import InvalidName, StoreError

__all__ = ["TENANT_NAME", "TenantStores", "check_tenant_name", "folder_tenants", "tenant_file"]

#: What a tenant name may be: it becomes a file name and a schema name, never quoted.
TENANT_NAME = re.compile(r"[a-z][a-z0-9_]{0,39}")

_POSTGRES_SCHEMES = ("postgresql://", "postgres://")
_ADMIN_SCHEMA = "vigente_admin"
_ADMIN_FILE = "admin.db"  # in a folder root
_TENANTS_DIR = "tenants"  # in a folder root: NAME.db each
_TENANT_SCHEMA_PREFIX = "tenant_"

# The extensions every tenant schema uses, created once where every tenant sees them. A
# missing pgvector only matters for vector search, so its failure is not fatal here.
_CREATE_BTREE_GIST = "CREATE EXTENSION IF NOT EXISTS btree_gist SCHEMA public"
_CREATE_VECTOR = "CREATE EXTENSION IF NOT EXISTS vector SCHEMA public"
_CREATE_SCHEMA = "CREATE SCHEMA IF NOT EXISTS {}"
# the bytes of every relation (tables, indexes, TOAST) in the admin and tenant schemas
_SIZE_SQL = """
SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0)
FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE c.relkind IN ('r', 'm') AND (n.nspname = %s OR starts_with(n.nspname, %s))
"""


def check_tenant_name(name: str) -> str:
    """``name`` when it is a valid tenant name, else :class:`InvalidName` saying what is."""
    if not isinstance(name, str) or TENANT_NAME.fullmatch(name) is None:
        raise InvalidName(
            f"tenant name {name!r} is not allowed: use 1 to 40 lowercase letters, digits or "
            "underscores, starting with a letter (e.g. acme or team_2)"
        )
    return name


def tenant_file(folder: str | Path, name: str) -> Path:
    """Where tenant ``name``'s SQLite store lives in a service folder."""
    return Path(folder) / _TENANTS_DIR / f"{name}.db"


def folder_tenants(folder: str | Path) -> list[str] | None:
    """The tenants of a service folder (``vigente serve``'s layout), without creating
    anything; None when ``folder`` is not one."""
    root = Path(folder)
    if not root.is_dir() or not ((root / _ADMIN_FILE).exists() or (root / _TENANTS_DIR).is_dir()):
        return None
    return sorted(p.stem for p in (root / _TENANTS_DIR).glob("*.db"))


class TenantStores:
    """The URLs of the admin store and of each tenant's store under one root.

    ``root`` is a folder (created when missing) or a ``postgresql://`` URL.
    """

    def __init__(self, root: str | Path) -> None:
        text = str(root)
        self.postgres = text.startswith(_POSTGRES_SCHEMES)
        self.root = text
        if self.postgres:
            query = dict(parse_qsl(urlsplit(text).query))
            if "options" in query:
                raise StoreError(
                    "the PostgreSQL URL already sets options=…: vigente serve chooses each "
                    "tenant's schema through options=-csearch_path=…, so remove it from the URL"
                )
            self._prepare_postgres()
        else:
            folder = Path(text)
            if folder.exists() and not folder.is_dir():
                raise StoreError(
                    f"{folder} is a file: vigente serve keeps one SQLite file per tenant in a "
                    "folder; give a folder (it is created when missing) or a postgresql:// URL"
                )
            try:
                (folder / _TENANTS_DIR).mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise StoreError(
                    f"cannot create the data folder {folder} ({exc.strerror}): give a folder "
                    "this user may write to"
                ) from None

    def admin_url(self) -> str:
        """The store of the service's own records: tenants and API keys."""
        if self.postgres:
            return self._schema_url(_ADMIN_SCHEMA)
        return str(Path(self.root) / _ADMIN_FILE)

    def tenant_url(self, tenant: str) -> str:
        """The store of one tenant (its schema or file is created by :meth:`create`)."""
        name = check_tenant_name(tenant)
        if self.postgres:
            return self._schema_url(_TENANT_SCHEMA_PREFIX + name)
        return str(tenant_file(self.root, name))

    def create(self, tenant: str) -> str:
        """Make the place a tenant's store lives in; its URL."""
        name = check_tenant_name(tenant)
        if self.postgres:
            self._create_schema(_TENANT_SCHEMA_PREFIX + name)
        return self.tenant_url(name)

    def size(self) -> list[tuple[int, dict[str, str]]]:
        """The bytes the stores take, as ``(bytes, {"backend": …})``: the SQLite files under
        the folder, or the relations of the service's schemas in PostgreSQL."""
        if not self.postgres:
            total = sum(p.stat().st_size for p in Path(self.root).rglob("*") if p.is_file())
            return [(total, {"backend": "sqlite"})]
        import psycopg

        with psycopg.connect(self.root, autocommit=True, connect_timeout=10) as conn:
            row = conn.execute(_SIZE_SQL, (_ADMIN_SCHEMA, _TENANT_SCHEMA_PREFIX)).fetchone()
        return [(int(row[0] if row else 0), {"backend": "postgresql"})]

    # -- PostgreSQL ------------------------------------------------------------------------
    def _schema_url(self, schema: str) -> str:
        separator = "&" if urlsplit(self.root).query else ("" if self.root.endswith("?") else "?")
        return f"{self.root}{separator}options=-csearch_path%3D{schema}"

    def _prepare_postgres(self) -> None:
        import psycopg

        try:
            with psycopg.connect(self.root, autocommit=True, connect_timeout=10) as conn:
                conn.execute(_CREATE_BTREE_GIST)
                try:
                    conn.execute(_CREATE_VECTOR)
                except psycopg.Error:
                    pass  # vector search then reports its own error; everything else works
            self._create_schema(_ADMIN_SCHEMA)
        except psycopg.Error as exc:
            raise StoreError(
                f"cannot prepare the PostgreSQL database for tenants ({' '.join(str(exc).split())}"
                "): the role in the URL needs CREATE on the database (for the schemas) and the "
                "btree_gist extension must be installable or already created in public"
            ) from None

    def _create_schema(self, schema: str) -> None:
        import psycopg
        from psycopg import sql

        # schema is vigente_admin or tenant_ + a name that matched TENANT_NAME.
        try:
            with psycopg.connect(self.root, autocommit=True, connect_timeout=10) as conn:
                conn.execute(sql.SQL(_CREATE_SCHEMA).format(sql.Identifier(schema)))
        except psycopg.Error as exc:
            raise StoreError(
                f"cannot create schema {schema} ({' '.join(str(exc).split())}): the role in the "
                "URL needs CREATE on the database"
            ) from None
