"""The PostgreSQL store: every adapter of the backend on one pooled connection and transaction."""

from __future__ import annotations

from vigente.store.base import Store
from vigente.store.postgres.assembly import PostgresAssembly
from vigente.store.postgres.connection import WRITERS_KEY, redact
from vigente.store.postgres.documents import PostgresDocuments
from vigente.store.postgres.horizon import PostgresHorizon
from vigente.store.postgres.integrity import PostgresIntegrity
from vigente.store.postgres.ledger import PostgresLedger
from vigente.store.postgres.migrations import MIGRATIONS
from vigente.store.postgres.recall import PostgresRecall
from vigente.store.postgres.retrieval import PostgresRetrieval
from vigente.store.postgres.runtime import PostgresRuntime

__all__ = ["MIGRATIONS", "WRITERS_KEY", "PostgresStore", "redact"]


class PostgresStore(PostgresLedger, PostgresDocuments, PostgresRetrieval, PostgresRuntime,
                    PostgresAssembly, PostgresRecall, PostgresHorizon, PostgresIntegrity, Store):
    """A :class:`Store` in a PostgreSQL database (``postgresql://user@host:port/dbname``).

    ``min_size``/``max_size`` bound the connection pool (one connection per concurrent
    transaction or read); ``timeout`` is how long a caller waits for a free connection.
    """
