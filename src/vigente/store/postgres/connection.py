"""The PostgreSQL backend's connection: the pool, the transaction, advisory locks and the
messages that say what went wrong.

A transaction runs on one pooled connection, remembered per thread while it lasts, so one
store serves several threads; a read outside a transaction borrows a connection for one
statement. Writers of one timeline are serialised across processes by a transaction-scoped
advisory lock. Statements run in READ COMMITTED, so a writer that has waited for the lock reads
what the previous writer committed.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import os
import re
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, TypeVar
from urllib.parse import urlsplit, urlunsplit

import psycopg
from psycopg import errors as pg_errors
from psycopg.conninfo import conninfo_to_dict
from psycopg_pool import ConnectionPool

from vigente.errors import StoreError
from vigente.records.values import Scope
from vigente.store.contracts import Transactional
from vigente.store.postgres.migrations import (
    CREATE_SCHEMA_TABLE,
    INSERT_SCHEMA_VERSION,
    MIGRATION_LOCK_KEY,
    MIGRATIONS,
    schema_version,
)
from vigente.time import Instant

__all__ = ["WRITERS_KEY", "PostgresConnection", "redact"]


Connection = psycopg.Connection[tuple[Any, ...]]
Cursor = psycopg.Cursor[tuple[Any, ...]]
Row = tuple[Any, ...]
_T = TypeVar("_T")

LOCK = "SELECT pg_advisory_xact_lock(%s)"
LOCK_MANY = "SELECT pg_advisory_xact_lock(key) FROM unnest(%b::bigint[]) AS t(key)"
LOCK_SHARED = "SELECT pg_advisory_xact_lock_shared(%s)"


def _lock_key(*parts: str) -> int:
    """A stable signed 64-bit advisory-lock key (a collision only serialises more)."""
    digest = hashlib.blake2b(json.dumps(parts).encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)


#: Taken shared by every writing transaction, exclusively by one that writes too many
#: timelines to lock each (see PostgresConnection._join_writers).
WRITERS_KEY = _lock_key("writers")

# -- messages ------------------------------------------------------------------------------
_PASSWORD_PARAM = re.compile(r"(password\s*=\s*)('[^']*'|[^&\s]*)", re.IGNORECASE)


def redact(url: str) -> str:
    """``url`` with any password replaced by ``***`` (for messages and ``Store.url``)."""
    parts = urlsplit(url)
    if parts.password:
        host = parts.netloc.rpartition("@")[2]
        parts = parts._replace(netloc=f"{parts.username or ''}:***@{host}")
    return _PASSWORD_PARAM.sub(r"\1***", urlunsplit(parts))


def _diagnostic(exc: psycopg.Error) -> str:
    text = str(exc).strip() or type(exc).__name__
    return " ".join(text.split())


def _forked() -> StoreError:
    return StoreError(
        "a PostgresStore cannot be used across fork(): open a new store in each process"
    )


def _hint(exc: psycopg.Error, *, migrating: bool = False) -> str:
    if isinstance(exc, pg_errors.InsufficientPrivilege) and migrating:
        return (
            "creating or upgrading the schema needs CREATE on the schema (PostgreSQL 15+ no "
            "longer grants it on public) and on the database: open it once as the database "
            "owner, see docs/deployment.md"
        )
    if isinstance(exc, pg_errors.InsufficientPrivilege):
        return (
            "grant the user SELECT and INSERT on vigente's tables and UPDATE (known_to, "
            "date_flags) on versions and precedence_rules, see docs/deployment.md"
        )
    if isinstance(exc, pg_errors.DeadlockDetected):
        return (
            "another transaction was writing the same timelines in another order; this one was "
            "rolled back as a whole: retry it"
        )
    if isinstance(exc, pg_errors.LockNotAvailable):
        return "another writer held the timeline longer than lock_timeout; nothing was written"
    if isinstance(exc, pg_errors.ReadOnlySqlTransaction):
        return "the server is read-only (a standby?): point the URL at the primary"
    if isinstance(exc, pg_errors.TooManyConnections):
        return "the server has no free connections: lower the pool size or raise max_connections"
    if isinstance(exc, psycopg.OperationalError):
        return (
            "check that the server is running and reachable, and that the host, port, database, "
            "user and password in the URL are right"
        )
    return "this is unexpected: please report it with the message above"


class PostgresConnection(Transactional):
    """The pool and the transaction every adapter of the backend shares (its options:
    :class:`~vigente.store.postgres.PostgresStore`)."""

    def __init__(
        self,
        url: str,
        *,
        min_size: int = 1,
        max_size: int = 10,
        timeout: float = 30.0,
        connect_timeout: int = 10,
    ) -> None:
        self.url = redact(url)
        self._pid = os.getpid()
        self._local = threading.local()
        self._scopes: dict[str, Scope] = {}
        self._dates: dict[_dt.datetime, Instant] = {}  # instants read by lookups, shared
        self._times: dict[_dt.datetime, Instant] = {}
        self._cursors: dict[Connection, Cursor] = {}  # a binary cursor per pooled connection
        self._answered_seen = -(1 << 63)  # the answered horizon this store has seen (micros)
        try:
            options = conninfo_to_dict(url)
        except psycopg.ProgrammingError as exc:
            raise StoreError(
                f"invalid PostgreSQL URL {self.url!r} ({_diagnostic(exc)}): use "
                "postgresql://user:password@host:port/dbname"
            ) from None
        kwargs: dict[str, Any] = {"autocommit": True}
        if "connect_timeout" not in options:
            kwargs["connect_timeout"] = connect_timeout
        self._migrate(url, kwargs)
        self._pool: ConnectionPool[Connection] = ConnectionPool(
            url,
            kwargs=kwargs,
            min_size=min_size,
            max_size=max_size,
            timeout=timeout,
            # A pooled connection may have died (server restart, failover, idle timeout): test
            # it on checkout, at the cost of one empty round trip, and replace it if needed (a
            # lookup skips the test and retries on a tested connection instead: _lookup).
            check=self._check_connection,
            num_workers=2,
            name="vigente",
            open=False,
        )
        try:
            # Connect now, not in the pool's background threads: a bad URL or a full server is
            # reported here, and later calls never wait for the pool's first connection.
            self._pool.open(wait=True, timeout=timeout)
        except psycopg.Error as exc:
            self._pool.close()
            raise StoreError(
                f"cannot connect to PostgreSQL database {self.url!r} ({_diagnostic(exc)}): "
                f"{_hint(exc)}"
            ) from None

    # -- lifecycle -------------------------------------------------------------------------
    def _migrate(self, url: str, kwargs: dict[str, Any]) -> None:
        statement = ""
        stage = "connect to"
        try:
            with psycopg.connect(url, **kwargs) as conn:
                stage = "read the schema of"
                if schema_version(conn) == len(MIGRATIONS):
                    return
                stage = "migrate"
                with conn.transaction():
                    conn.execute(LOCK, (MIGRATION_LOCK_KEY,))  # one migrator at a time
                    conn.execute(CREATE_SCHEMA_TABLE)
                    done = schema_version(conn)
                    if done > len(MIGRATIONS):
                        raise StoreError(
                            f"database {self.url!r} was written by a newer vigente (schema "
                            f"{done}); upgrade vigente"
                        )
                    for number, statements in enumerate(MIGRATIONS[done:], start=done + 1):
                        for statement in statements:
                            conn.execute(statement)
                        conn.execute(INSERT_SCHEMA_VERSION, (number,))
        except psycopg.Error as exc:
            if statement.startswith("CREATE EXTENSION"):
                raise StoreError(
                    f"cannot create the btree_gist extension in {self.url!r} "
                    f"({_diagnostic(exc)}): install PostgreSQL's contrib modules, or ask the "
                    "database owner to run CREATE EXTENSION btree_gist; in this database"
                ) from None
            raise StoreError(
                f"cannot {stage} PostgreSQL database {self.url!r} ({_diagnostic(exc)}): "
                f"{_hint(exc, migrating=stage == 'migrate')}"
            ) from None

    def close(self) -> None:
        self._pool.close()

    def _check_connection(self, conn: Connection) -> None:
        """The pool's test of a connection on checkout, unless this thread's lookup skips it."""
        if not getattr(self._local, "unchecked", False):
            ConnectionPool.check_connection(conn)

    @contextmanager
    def _borrow(self) -> Iterator[Connection]:
        """A pooled connection for one unit of work; database errors become StoreError."""
        if os.getpid() != self._pid:
            raise _forked()
        try:
            with self._pool.connection() as conn:
                yield conn
        except psycopg.Error as exc:
            raise self._failed(exc) from None

    def _failed(self, exc: psycopg.Error) -> StoreError:
        return StoreError(
            f"PostgreSQL database {self.url!r} failed ({_diagnostic(exc)}): {_hint(exc)}"
        )

    @contextmanager
    def transaction(self) -> Iterator[None]:
        local = self._local
        if getattr(local, "conn", None) is not None:
            local.depth += 1
            try:
                yield
            finally:
                local.depth -= 1
            return
        # Pipeline mode: statements whose result is not read (locks, updates, inserts) are sent
        # without waiting; the next read or the commit collects them, so a write costs about
        # two round trips instead of five. An error surfaces there and rolls everything back.
        with self._borrow() as conn, conn.transaction(), conn.pipeline():
            # Valid while the transaction lasts: subject ids seen (even those it created), the
            # timelines it has locked and their latest knowledge (no one else can write a
            # timeline this transaction holds the lock of).
            local.conn, local.depth, local.subjects = conn, 1, {}
            local.locked, local.knowledge, local.writers = set(), {}, None
            try:
                yield
            finally:
                local.conn, local.depth, local.subjects = None, 0, {}
                local.locked = local.knowledge = local.writers = None

    # Writers hold a transaction-scoped advisory lock per timeline, after a shared lock on
    # WRITERS_KEY. The server's lock table is small (max_locks_per_transaction x
    # max_connections slots, 6,400 by default), so a transaction that would lock more than
    # bulk_locks timelines takes WRITERS_KEY exclusively instead: it then runs alone among
    # writers, and needs no other lock. Everyone takes WRITERS_KEY first, so the two kinds wait
    # for each other instead of deadlocking (a transaction that grows from a few timelines to
    # many upgrades its shared lock; two doing so at once deadlock, and one is rolled back).
    def _join_writers(self, *, alone: bool) -> bool:
        """Take WRITERS_KEY (shared, or ``alone``: exclusive) unless held; True when this
        transaction writes alone."""
        local = self._local
        if local.writers == "alone":
            return True
        if alone:
            self._execute(LOCK, (WRITERS_KEY,))
            local.writers = "alone"
            return True
        if local.writers is None:
            self._execute(LOCK_SHARED, (WRITERS_KEY,))
            local.writers = "shared"
        return False

    # -- statements ------------------------------------------------------------------------
    def _in_transaction(self) -> Connection | None:
        conn: Connection | None = getattr(self._local, "conn", None)
        return conn

    def _fetch(self, query: str, params: Sequence[Any] | dict[str, Any]) -> list[Row]:
        conn = self._in_transaction()
        if conn is not None:
            return conn.execute(query, params).fetchall()
        with self._borrow() as borrowed:
            return borrowed.execute(query, params).fetchall()

    def _read(self, query: str, params: Sequence[Any] | dict[str, Any]) -> list[Row]:
        """:meth:`_fetch` for a statement that only reads (the runtime graph's and the
        assembler's reads), its rows in binary (the same values, a third cheaper to load than
        text: no timestamps to parse). Outside a transaction it runs on a pooled connection
        taken without the checkout test, again on a tested one if that turns out dead
        (:meth:`_unchecked`), on the connection's reused cursor (:meth:`_lookup_cursor`)."""
        conn = self._in_transaction()
        if conn is not None:
            return conn.execute(query, params, binary=True).fetchall()

        def run(conn: Connection) -> list[Row]:
            cursor = self._lookup_cursor(conn)
            cursor.execute(query, params)
            return cursor.fetchall()

        return self._unchecked(run, run)

    def _read_many(self, query: str, params: Sequence[Sequence[Any] | dict[str, Any]]
                   ) -> list[list[Row]]:
        """:meth:`_read` of one statement for each of ``params``, pipelined: the statements go
        to the server together and their rows come back in one round trip (a statement after
        the client's own work costs a wake-up of the server's process, more than the plan
        of a small read); each statement keeps its own plan, order and limit."""
        if not params:
            return []

        def run(conn: Connection) -> list[list[Row]]:
            cursor = conn.cursor(binary=True) if in_transaction else self._lookup_cursor(conn)
            cursor.executemany(query, params, returning=True)
            out = [cursor.fetchall()]
            while cursor.nextset():
                out.append(cursor.fetchall())
            return out

        conn = self._in_transaction()
        in_transaction = conn is not None
        if conn is not None:
            return run(conn)
        return self._unchecked(run, run)

    def _lookup(self, query: str, params: dict[str, Any]) -> list[Row]:
        """A lookup's one statement, prepared on the server, its rows in binary, outside a
        transaction on a connection taken without the checkout test (:meth:`_unchecked`)."""
        conn = self._in_transaction()
        if conn is not None:
            return conn.execute(query, params, prepare=True, binary=True).fetchall()

        def run(conn: Connection) -> list[Row]:
            cursor = self._lookup_cursor(conn)
            cursor.execute(query, params, prepare=True)
            return cursor.fetchall()

        def again(conn: Connection) -> list[Row]:
            return conn.execute(query, params, prepare=True, binary=True).fetchall()

        return self._unchecked(run, again)

    def _unchecked(
        self, run: Callable[[Connection], _T], again: Callable[[Connection], _T]
    ) -> _T:
        """``run`` (a read) on a pooled connection taken without the checkout test (one round
        trip less) and given back without a commit (it is in autocommit); if the connection
        turns out dead, ``again`` on a tested one, so the caller sees no error."""
        if os.getpid() != self._pid:
            raise _forked()
        pool, local = self._pool, self._local
        local.unchecked = True
        try:
            conn = pool.getconn()
        except psycopg.Error as exc:
            raise self._failed(exc) from None
        finally:
            local.unchecked = False
        try:
            return run(conn)
        except psycopg.OperationalError as exc:
            if not conn.closed:
                raise self._failed(exc) from None
        except psycopg.Error as exc:
            raise self._failed(exc) from None
        finally:
            pool.putconn(conn)  # a closed one is replaced by the pool
        with self._borrow() as borrowed:
            return again(borrowed)

    def _lookup_cursor(self, conn: Connection) -> Cursor:
        """The binary cursor lookups and reads reuse on ``conn`` (one cursor a lookup costs
        about as much again as decoding its rows). A connection is used by one thread at a
        time, and so is its cursor; those of connections the pool has closed are dropped when
        a new one comes."""
        cursor = self._cursors.get(conn)
        if cursor is None:
            for old in list(self._cursors):
                if old.closed:
                    self._cursors.pop(old, None)
            cursor = self._cursors[conn] = conn.cursor(binary=True)
        return cursor

    def _execute(self, query: str, params: Sequence[Any]) -> None:
        conn = self._in_transaction()
        if conn is not None:
            conn.execute(query, params)
            return
        with self._borrow() as borrowed:
            borrowed.execute(query, params)

    def _execute_many(self, query: str, rows: Sequence[Sequence[Any]]) -> None:
        conn = self._in_transaction()
        if conn is not None:
            with conn.cursor() as cursor:
                cursor.executemany(query, rows)
            return
        with self._borrow() as borrowed, borrowed.cursor() as cursor:
            cursor.executemany(query, rows)
