"""Storage: the one :class:`Store` contract and its backends."""

from __future__ import annotations

from vigente.errors import StoreError
from vigente.store.base import Store, Write
from vigente.store.sqlite import SQLiteStore

__all__ = ["SQLiteStore", "Store", "Write", "open_store"]

_POSTGRES_SCHEMES = ("postgresql://", "postgres://")


def open_store(url: str) -> Store:
    """Open a store by URL: ``postgresql://…`` for PostgreSQL, else a SQLite file path
    (or ``:memory:``)."""
    if url.startswith(_POSTGRES_SCHEMES):
        try:
            from vigente.store.postgres import PostgresStore
        except ImportError as exc:  # psycopg missing
            raise StoreError(
                f"PostgreSQL support is not installed ({exc}): pip install 'vigente[postgres]'"
            ) from None
        store: Store = PostgresStore(url)
        return store
    if "://" in url:
        raise StoreError(
            f"unknown database URL {url!r}: use a SQLite file path or postgresql://user@host/db"
        )
    return SQLiteStore(url)
