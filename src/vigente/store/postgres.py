"""The PostgreSQL backend: a connection pool, ``tstzrange`` intervals, numbered migrations.

Valid and known intervals are ``tstzrange`` columns, half-open ``[)``, an open end being an
unbounded upper bound. A snapshot closed at the instant it was written has an empty known
interval, and an empty range forgets its bounds, so ``known_from``/``known_to`` are stored as
``timestamptz`` and the ``known`` range is generated from them. GiST indexes (``btree_gist``)
cover (subject, range) on both axes. ``date_flags`` remembers which instants were given as
calendar dates, so that they print back as dates. Text that is compared or sorted uses the
``"C"`` collation, so that ordering matches Python's and SQLite's whatever the database locale.

A transaction runs on one pooled connection, remembered per thread while it lasts, so one
:class:`PostgresStore` serves several threads; a read outside a transaction borrows a connection
for one statement. Writers of one timeline are serialised across processes by a transaction-scoped
advisory lock. Statements run in READ COMMITTED, so a writer that has waited for the lock reads
what the previous writer committed.
"""

from __future__ import annotations

import datetime as _dt
import functools
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
from vigente.records.versions import PrecedenceRule, Version, build_version
from vigente.store.base import Store, Timeline, Write
from vigente.store.postgres_assembly import ASSEMBLY_MIGRATIONS, PostgresAssembly
from vigente.store.postgres_check import PostgresCheck
from vigente.store.postgres_horizon import HORIZON_MIGRATIONS, PostgresHorizon
from vigente.store.postgres_recall import RECALL_MIGRATIONS, PostgresRecall
from vigente.store.postgres_records import RECORD_MIGRATIONS, PostgresRecords
from vigente.store.postgres_retrieval import (
    FIELD_MIGRATIONS,
    RETRIEVAL_MIGRATIONS,
    PostgresRetrieval,
)
from vigente.store.postgres_runtime import (
    CONTENT_TOKEN_MIGRATIONS,
    RUNTIME_MIGRATIONS,
    PostgresRuntime,
)
from vigente.time import Instant, Interval

__all__ = ["MIGRATIONS", "PostgresStore"]

Connection = psycopg.Connection[tuple[Any, ...]]
Cursor = psycopg.Cursor[tuple[Any, ...]]
Row = tuple[Any, ...]
_T = TypeVar("_T")

# Bits of date_flags: which instants were given as calendar dates (as in the SQLite backend).
_VF, _VT, _KF, _KT = 1, 2, 4, 8

_EPOCH = _dt.datetime(1970, 1, 1, tzinfo=_dt.UTC)
_NAIVE_EPOCH = _dt.datetime(1970, 1, 1)  # for timestamps read at UTC
_MICROSECOND = _dt.timedelta(microseconds=1)
_INSTANTS_LIMIT = 1 << 16  # instants a store keeps for lookups before the cache is emptied

#: Advisory lock key that serialises the migrations of one database ("vigente" in ASCII).
MIGRATION_LOCK_KEY = 0x76_69_67_65_6E_74_65

MIGRATIONS: list[list[str]] = [
    # 1: the kernel: subjects (lineage within a scope), the write journal, versions, precedence
    [
        "CREATE EXTENSION IF NOT EXISTS btree_gist",
        """CREATE TABLE subjects (
            subject_id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            lineage    text COLLATE "C" NOT NULL,
            scope_key  text COLLATE "C" NOT NULL,
            UNIQUE (lineage, scope_key)
        )""",
        """CREATE TABLE writes (
            write_id   bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            subject_id bigint NOT NULL REFERENCES subjects (subject_id),
            op         text NOT NULL CHECK (op IN ('record', 'retract')),
            source     text COLLATE "C" NOT NULL,
            value      text,
            valid      tstzrange NOT NULL CHECK (NOT isempty(valid) AND NOT lower_inf(valid)),
            known_at   timestamptz NOT NULL,
            date_flags smallint NOT NULL
        )""",
        "CREATE INDEX writes_timeline ON writes (subject_id, source, known_at)",
        """CREATE TABLE versions (
            seq        bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,  -- insertion order
            version_id text COLLATE "C" NOT NULL UNIQUE,
            subject_id bigint NOT NULL REFERENCES subjects (subject_id),
            source     text COLLATE "C" NOT NULL,
            value      text NOT NULL,
            valid      tstzrange NOT NULL CHECK (NOT isempty(valid) AND NOT lower_inf(valid)),
            known_from timestamptz NOT NULL,
            known_to   timestamptz CHECK (known_to >= known_from),  -- NULL: still held
            known      tstzrange NOT NULL
                       GENERATED ALWAYS AS (tstzrange(known_from, known_to, '[)')) STORED,
            date_flags smallint NOT NULL
        )""",
        "CREATE INDEX versions_valid ON versions USING gist (subject_id, valid)",
        "CREATE INDEX versions_known ON versions USING gist (subject_id, known)",
        "CREATE INDEX versions_order ON versions (subject_id, seq)",
        "CREATE INDEX versions_open ON versions (subject_id, source, seq) WHERE known_to IS NULL",
        """CREATE TABLE precedence_rules (
            seq        bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            rule_id    text COLLATE "C" NOT NULL UNIQUE,
            lineage    text COLLATE "C" NOT NULL,  -- '' = every lineage of the scope
            scope_key  text COLLATE "C" NOT NULL,
            sources    text NOT NULL,  -- JSON array, highest precedence first
            known_from timestamptz NOT NULL,
            known_to   timestamptz CHECK (known_to >= known_from),
            known      tstzrange NOT NULL
                       GENERATED ALWAYS AS (tstzrange(known_from, known_to, '[)')) STORED,
            date_flags smallint NOT NULL
        )""",
        "CREATE INDEX precedence_subject ON precedence_rules (lineage, scope_key, seq)",
    ],
]

MIGRATIONS += RECORD_MIGRATIONS
MIGRATIONS += RETRIEVAL_MIGRATIONS
MIGRATIONS += RUNTIME_MIGRATIONS  # the runtime graph (keep new migrations after this line)
MIGRATIONS += FIELD_MIGRATIONS  # retrieval: titles and references of documents as fields
MIGRATIONS += ASSEMBLY_MIGRATIONS  # recorded context assemblies (vigente.assemble)
MIGRATIONS += HORIZON_MIGRATIONS  # the answered knowledge horizon and recorded backfills
MIGRATIONS += RECALL_MIGRATIONS  # recall over the runtime graph (vigente.runtime.recall)
MIGRATIONS += CONTENT_TOKEN_MIGRATIONS  # token counts of raw results, kept at import (issue 23)

SELECT_SCHEMA_TABLE = "SELECT to_regclass('vigente_migrations')"
CREATE_SCHEMA_TABLE = "CREATE TABLE IF NOT EXISTS vigente_migrations (version integer PRIMARY KEY)"
SELECT_SCHEMA_VERSION = "SELECT coalesce(max(version), 0) FROM vigente_migrations"
INSERT_SCHEMA_VERSION = "INSERT INTO vigente_migrations (version) VALUES (%s)"
LOCK = "SELECT pg_advisory_xact_lock(%s)"

_VERSION_COLUMNS = """v.version_id, s.lineage, s.scope_key, v.source, v.value,
    lower(v.valid), upper(v.valid), v.known_from, v.known_to, v.date_flags"""

SELECT_SUBJECT = "SELECT subject_id FROM subjects WHERE lineage = %s AND scope_key = %s"
INSERT_SUBJECT = """INSERT INTO subjects (lineage, scope_key) VALUES (%s, %s)
    ON CONFLICT (lineage, scope_key) DO NOTHING RETURNING subject_id"""
INSERT_WRITE = """INSERT INTO writes (subject_id, op, source, value, valid, known_at, date_flags)
    VALUES (%s, %s, %s, %s, tstzrange(%s::timestamptz, %s::timestamptz, '[)'), %s, %s)
    RETURNING write_id"""
SELECT_LATEST_KNOWLEDGE = """SELECT w.known_at, w.date_flags
    FROM writes w JOIN subjects s USING (subject_id)
    WHERE s.lineage = %s AND s.scope_key = %s AND w.source = %s
    ORDER BY w.known_at DESC, w.write_id DESC LIMIT 1"""
SELECT_CURRENT = f"""SELECT {_VERSION_COLUMNS} FROM versions v JOIN subjects s USING (subject_id)
    WHERE s.lineage = %s AND s.scope_key = %s AND v.source = %s AND v.known_to IS NULL
    ORDER BY v.seq"""
SELECT_CURRENT_OVERLAPPING = f"""SELECT {_VERSION_COLUMNS} FROM versions v
    JOIN subjects s USING (subject_id)
    WHERE s.lineage = %s AND s.scope_key = %s AND v.source = %s AND v.known_to IS NULL
      AND v.valid && tstzrange(%s::timestamptz, %s::timestamptz, '[)')
    ORDER BY v.seq"""
INSERT_VERSION = """INSERT INTO versions
    (version_id, subject_id, source, value, valid, known_from, known_to, date_flags)
    VALUES (%s, %s, %s, %s, tstzrange(%s::timestamptz, %s::timestamptz, '[)'), %s, %s, %s)"""
CLOSE_VERSIONS = f"""UPDATE versions SET known_to = %s, date_flags = (date_flags & ~{_KT}) | %s
    WHERE version_id = ANY(%s) AND known_to IS NULL"""
# Bulk writes (Store.append_writes and friends): one statement for many rows, the rows passed
# as arrays and unnested server-side, in the order given (WITH ORDINALITY), so that identity
# columns (write_id, seq) are assigned in that order. COPY would be faster still, but libpq
# does not allow COPY in pipeline mode, in which every transaction runs. Instants travel as
# integer microseconds since the epoch (a bigint array is several times cheaper for the client
# to send than one of timestamps) and become timestamps on the server, exactly: whole days and
# the microseconds within a day, each far inside the integers a float8 holds exactly. The arrays
# go in binary (%b): psycopg's text form of a list costs some 20 µs an element.


def _from_micros(column: str) -> str:
    return (
        f"(timestamp 'epoch' + ({column} / 86400000000) * interval '1 day'"
        f" + ({column} %% 86400000000) * interval '1 microsecond') AT TIME ZONE 'UTC'"
    )


def _to_micros(value: str) -> str:
    # Whole days since the epoch, and the microseconds of the time of day (a time's epoch is
    # below 86,400 s: exact once rounded, whatever the server's type for it).
    utc = f"(({value}) AT TIME ZONE 'UTC')"
    return (
        f"({utc}::date - date '1970-01-01')::bigint * 86400000000"
        f" + round(extract(epoch FROM {utc}::time) * 1000000)::bigint"
    )


LOCK_MANY = "SELECT pg_advisory_xact_lock(key) FROM unnest(%b::bigint[]) AS t(key)"
LOCK_SHARED = "SELECT pg_advisory_xact_lock_shared(%s)"
# A bulk read goes request by request through the indexes. Inside a long import the planner's
# statistics are those of the tables before it (autovacuum cannot see uncommitted rows), and
# it may hash-join every request with every open snapshot instead (minutes for a round of
# 5,000 requests on 20,000 fresh timelines): nested loops and index scans for that statement.
INDEXED_JOINS = [
    "SET LOCAL enable_hashjoin = off",
    "SET LOCAL enable_mergejoin = off",
    "SET LOCAL enable_seqscan = off",
]
DEFAULT_JOINS = [
    "SET LOCAL enable_hashjoin TO DEFAULT",
    "SET LOCAL enable_mergejoin TO DEFAULT",
    "SET LOCAL enable_seqscan TO DEFAULT",
]
SELECT_SUBJECTS = """SELECT r.i, s.subject_id
    FROM unnest(%b::text[], %b::text[]) WITH ORDINALITY AS r(lineage, scope_key, i)
    JOIN subjects s ON s.lineage = r.lineage AND s.scope_key = r.scope_key"""
INSERT_SUBJECTS = """INSERT INTO subjects (lineage, scope_key)
    SELECT lineage, scope_key
      FROM unnest(%b::text[], %b::text[]) WITH ORDINALITY AS r(lineage, scope_key, i) ORDER BY i
    ON CONFLICT (lineage, scope_key) DO NOTHING"""
INSERT_WRITES = f"""INSERT INTO writes (subject_id, op, source, value, valid, known_at, date_flags)
    SELECT subject_id, op, source, value,
           tstzrange({_from_micros("valid_from")}, {_from_micros("valid_to")}, '[)'),
           {_from_micros("known_at")}, flags
      FROM unnest(%b::bigint[], %b::text[], %b::text[], %b::text[], %b::bigint[], %b::bigint[],
                  %b::bigint[], %b::smallint[]) WITH ORDINALITY
           AS r(subject_id, op, source, value, valid_from, valid_to, known_at, flags, i)
     ORDER BY i
    RETURNING write_id"""
# The latest knowledge of each timeline: its newest journal entry (writes_timeline).
SELECT_LATEST_KNOWLEDGE_MANY = """SELECT r.i, w.known_at, w.date_flags
    FROM unnest(%b::text[], %b::text[], %b::text[]) WITH ORDINALITY
         AS r(lineage, scope_key, source, i)
    JOIN subjects s ON s.lineage = r.lineage AND s.scope_key = r.scope_key
    CROSS JOIN LATERAL (
        SELECT known_at, date_flags FROM writes
         WHERE subject_id = s.subject_id AND source = r.source
         ORDER BY known_at DESC, write_id DESC LIMIT 1) w"""
# The open snapshots of each timeline over each period (versions_open), request by request,
# their instants as microseconds (cheaper to read than timestamps).
SELECT_CURRENT_OVERLAPPING_MANY = f"""SELECT r.i, v.version_id, s.lineage, s.scope_key, v.source,
           v.value, {_to_micros("lower(v.valid)")}, {_to_micros("upper(v.valid)")},
           {_to_micros("v.known_from")}, v.date_flags
    FROM unnest(%b::text[], %b::text[], %b::text[], %b::bigint[], %b::bigint[])
         WITH ORDINALITY AS r(lineage, scope_key, source, valid_from, valid_to, i)
    JOIN subjects s ON s.lineage = r.lineage AND s.scope_key = r.scope_key
    JOIN versions v ON v.subject_id = s.subject_id AND v.source = r.source
     AND v.known_to IS NULL
     AND v.valid && tstzrange({_from_micros("r.valid_from")}, {_from_micros("r.valid_to")}, '[)')
    ORDER BY r.i, v.seq"""
INSERT_VERSIONS = f"""INSERT INTO versions
    (version_id, subject_id, source, value, valid, known_from, known_to, date_flags)
    SELECT version_id, subject_id, source, value,
           tstzrange({_from_micros("valid_from")}, {_from_micros("valid_to")}, '[)'),
           {_from_micros("known_from")}, {_from_micros("known_to")}, flags
      FROM unnest(%b::text[], %b::bigint[], %b::text[], %b::text[], %b::bigint[], %b::bigint[],
                  %b::bigint[], %b::bigint[], %b::smallint[])
           WITH ORDINALITY AS r(version_id, subject_id, source, value, valid_from, valid_to,
                                known_from, known_to, flags, i)
     ORDER BY i"""
CLOSE_VERSIONS_AT = f"""UPDATE versions v SET known_to = {_from_micros("c.known_to")},
    date_flags = (v.date_flags & ~{_KT}) | c.flag
    FROM unnest(%b::text[], %b::bigint[], %b::smallint[]) AS c(version_id, known_to, flag)
    WHERE v.version_id = c.version_id AND v.known_to IS NULL"""
# The rows of the Store.candidates contract, as the SQLite backend's SELECT_CANDIDATES, with
# range operators. The lineage's subjects (one per scope) come from one index scan. Two GiST
# scans find every row of the subject asked about, each read once with the columns a version
# needs: its rows valid at t (the admitted ones and the neighbours on the knowledge axis are
# among them) and its rows known at k (the neighbours on the validity axis). The edges (the
# knowledge replaced last by k and learned first after it; the period ending last at or before t
# and the one starting first after it) are window aggregates over the few rows each scan
# returns, so no row is read twice or fetched again by its key. The groups are disjoint, so
# UNION ALL returns each row once. The subject's own rows come back with a NULL lineage and
# scope (the caller knows them); the first column is the insertion order. Instants come back as
# timestamps at UTC (exact): psycopg reads a timestamptz into the session's time zone, about
# 1 µs a value when that zone is not Python's own UTC (Etc/UTC is not).
_SUBJECTS = """
WITH scopes AS MATERIALIZED (
    SELECT subject_id, scope_key FROM subjects WHERE lineage = %(lineage)s
), subject AS (
    SELECT subject_id FROM scopes WHERE scope_key = %(scope)s
)"""
_ROW_COLUMNS = """seq, version_id, source, value, lower(valid) AT TIME ZONE 'UTC' AS vf,
           upper(valid) AT TIME ZONE 'UTC' AS vt, known_from AT TIME ZONE 'UTC' AS kf,
           known_to AT TIME ZONE 'UTC' AS kt, date_flags"""
_ROW = "seq, version_id, NULL, NULL, source, value, vf, vt, kf, kt, date_flags"
# The subject's rows valid at t, with c: a candidate (known at k, replaced last by k, learned
# first after k) and h: known at %(e)s.
_VALID_AT_T = f"""
  SELECT {_ROW_COLUMNS},
         known @> %(k)s::timestamptz
         OR known_to = max(known_to) FILTER (WHERE known_to <= %(k)s::timestamptz) OVER ()
         OR known_from = min(known_from) FILTER (WHERE known_from > %(k)s::timestamptz) OVER ()
         AS c,
         {{held}} AS h
    FROM versions
   WHERE subject_id = (SELECT subject_id FROM subject)
     AND valid @> %(t)s::timestamptz AND NOT isempty(known)"""
# The subject's rows known at k ending last at or before t or starting first after t, then the
# rows of other scopes valid at t and known at k.
_KNOWN_AT_K_AND_OTHER_SCOPES = f"""
UNION ALL
SELECT {_ROW}{{flags}} FROM (
  SELECT {_ROW_COLUMNS},
         upper(valid) = max(upper(valid)) FILTER (WHERE upper(valid) <= %(t)s::timestamptz)
                        OVER ()
         OR lower(valid) = min(lower(valid)) FILTER (WHERE lower(valid) > %(t)s::timestamptz)
                           OVER () AS c
    FROM versions
   WHERE subject_id = (SELECT subject_id FROM subject) AND known @> %(k)s::timestamptz) r
 WHERE c
UNION ALL
SELECT o.seq, o.version_id, %(lineage)s, os.scope_key, o.source, o.value,
       lower(o.valid) AT TIME ZONE 'UTC', upper(o.valid) AT TIME ZONE 'UTC',
       o.known_from AT TIME ZONE 'UTC', o.known_to AT TIME ZONE 'UTC', o.date_flags{{flags}}
  FROM scopes os JOIN versions o USING (subject_id)
 WHERE os.scope_key <> %(scope)s
   AND o.valid @> %(t)s::timestamptz AND o.known @> %(k)s::timestamptz
ORDER BY 1"""
SELECT_CANDIDATES = f"""{_SUBJECTS}
SELECT {_ROW} FROM ({_VALID_AT_T.format(held="false")}) r
 WHERE c{_KNOWN_AT_K_AND_OTHER_SCOPES.format(flags="")}"""
# The same, and the rows of the subject valid at t and known at %(e)s (what the store held
# then: all among the rows valid at t), in one round trip; two more columns say which list a
# row belongs to.
SELECT_CANDIDATES_AND_HELD = f"""{_SUBJECTS}
SELECT {_ROW}, c, h FROM ({_VALID_AT_T.format(held="known @> %(e)s::timestamptz")}) r
 WHERE c OR h{_KNOWN_AT_K_AND_OTHER_SCOPES.format(flags=", true, false")}"""
SELECT_HISTORY = f"""SELECT {_VERSION_COLUMNS} FROM versions v JOIN subjects s USING (subject_id)
    WHERE s.lineage = %s ORDER BY v.seq"""
SELECT_HISTORY_SCOPED = f"""SELECT {_VERSION_COLUMNS} FROM versions v
    JOIN subjects s USING (subject_id)
    WHERE s.lineage = %s AND s.scope_key = %s ORDER BY v.seq"""
SELECT_LINEAGES = "SELECT lineage, scope_key FROM subjects ORDER BY lineage, scope_key"
SELECT_VERSIONS_BY_ID = f"""SELECT {_VERSION_COLUMNS} FROM versions v
    JOIN subjects s USING (subject_id) WHERE v.version_id = ANY(%s) ORDER BY v.seq"""
INSERT_PRECEDENCE = """INSERT INTO precedence_rules
    (rule_id, lineage, scope_key, sources, known_from, known_to, date_flags)
    VALUES (%s, %s, %s, %s, %s, %s, %s)"""
CLOSE_PRECEDENCE = f"""UPDATE precedence_rules SET known_to = %s,
    date_flags = (date_flags & ~{_KT}) | %s WHERE rule_id = %s AND known_to IS NULL"""
SELECT_PRECEDENCE = """SELECT rule_id, lineage, scope_key, sources, known_from, known_to,
    date_flags FROM precedence_rules WHERE lineage = %s AND scope_key = %s ORDER BY seq"""


# -- instants ------------------------------------------------------------------------------
def _datetime(instant: Instant | None) -> _dt.datetime | None:
    return None if instant is None else _EPOCH + _dt.timedelta(microseconds=instant.micros)


def _micros(instant: Instant | None) -> int | None:
    return None if instant is None else instant.micros


@functools.lru_cache(maxsize=1 << 12)
def _scope_key(scope: Scope) -> str:
    """``scope.key`` (canonical JSON), computed once per scope: bulk writes ask for it per row."""
    return scope.key


def _instant(value: _dt.datetime, flags: int, bit: int) -> Instant:
    return Instant((value - _EPOCH) // _MICROSECOND, bool(flags & bit))


def _open_instant(value: _dt.datetime | None, flags: int, bit: int) -> Instant | None:
    return None if value is None else _instant(value, flags, bit)


def _flags(*pairs: tuple[Instant | None, int]) -> int:
    return sum(bit for instant, bit in pairs if instant is not None and instant.is_date)


def _version(row: Row, scopes: dict[str, Scope]) -> Version:
    version_id, lineage, scope_key, source, value, vf, vt, kf, kt, flags = row
    scope = scopes.get(scope_key)
    if scope is None:
        scope = scopes[scope_key] = Scope.from_key(scope_key)
    return Version(
        version_id=version_id,
        lineage=lineage,
        scope=scope,
        source=source,
        value_json=value,
        valid_from=_instant(vf, flags, _VF),
        valid_to=_open_instant(vt, flags, _VT),
        known_from=_instant(kf, flags, _KF),
        known_to=_open_instant(kt, flags, _KT),
    )


def _lock_key(*parts: str) -> int:
    """A stable signed 64-bit advisory-lock key (a collision only serialises more)."""
    digest = hashlib.blake2b(json.dumps(parts).encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)


#: Taken shared by every writing transaction, exclusively by one that writes too many
#: timelines to lock each (see PostgresStore._join_writers).
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


class PostgresStore(PostgresRecords, PostgresRetrieval, PostgresRuntime, PostgresAssembly,
                    PostgresRecall, PostgresHorizon, PostgresCheck, Store):
    """A :class:`Store` in a PostgreSQL database (``postgresql://user@host:port/dbname``).

    ``min_size``/``max_size`` bound the connection pool (one connection per concurrent
    transaction or read); ``timeout`` is how long a caller waits for a free connection.
    """

    #: Timelines one transaction locks one by one at most; beyond, it writes alone (the server's
    #: lock table holds about 64 x max_connections locks). Set it on a store to change it.
    bulk_locks: int = 1_000

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
                if _schema_version(conn) == len(MIGRATIONS):
                    return
                stage = "migrate"
                with conn.transaction():
                    conn.execute(LOCK, (MIGRATION_LOCK_KEY,))  # one migrator at a time
                    conn.execute(CREATE_SCHEMA_TABLE)
                    done = _schema_version(conn)
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

    def lock_timeline(self, lineage: str, scope: Scope, source: str) -> None:
        # Held until the transaction ends; other processes' writers of the timeline wait. An
        # import takes every lock up front, so its statements do not ask again.
        timeline = (lineage, scope.key, source)
        locked: set[tuple[str, str, str]] | None = getattr(self._local, "locked", None)
        if locked is None:  # outside a transaction a lock ends with its statement
            self._execute(LOCK, (_lock_key("timeline", *timeline),))
            return
        if timeline in locked:
            return
        if not self._join_writers(alone=False):
            self._execute(LOCK, (_lock_key("timeline", *timeline),))
        locked.add(timeline)

    def lock_timelines(self, timelines: Sequence[Timeline]) -> None:
        locked: set[tuple[str, str, str]] | None = getattr(self._local, "locked", None)
        if locked is None:  # outside a transaction a lock ends with its statement
            super().lock_timelines(timelines)
            return
        new = [
            timeline
            for timeline in dict.fromkeys((t.lineage, _scope_key(t.scope), t.source)
                                          for t in timelines)  # fmt: skip
            if timeline not in locked
        ]
        if not new:
            return
        if not self._join_writers(alone=len(locked) + len(new) > self.bulk_locks):
            self._execute(LOCK_MANY, ([_lock_key("timeline", *t) for t in new],))
        locked.update(new)

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

    def _subject(self, lineage: str, scope: Scope) -> int:
        """The id of ``(lineage, scope)``, created if needed (writes run in a transaction)."""
        key = (lineage, scope.key)
        cache: dict[tuple[str, str], int] | None = getattr(self._local, "subjects", None)
        if cache is not None and key in cache:
            return cache[key]
        rows = self._fetch(SELECT_SUBJECT, key)
        if not rows:
            # ON CONFLICT returns nothing when another transaction created it meanwhile; the
            # next statement (READ COMMITTED) sees that committed row.
            rows = self._fetch(INSERT_SUBJECT, key) or self._fetch(SELECT_SUBJECT, key)
        subject = int(rows[0][0])
        if cache is not None:
            cache[key] = subject
        return subject

    def _subjects(self, keys: Sequence[tuple[str, str]]) -> list[int]:
        """The ids of many ``(lineage, scope key)``, created if needed, in a few statements."""
        cache: dict[tuple[str, str], int] | None = getattr(self._local, "subjects", None)
        known = {} if cache is None else cache  # outside a transaction nothing is kept
        missing = sorted({key for key in keys if key not in known})
        if missing:
            found = self._select_subjects(missing)
            new = [key for key in missing if key not in found]
            if new:
                # Created in sorted order: two writers creating the same subjects wait for each
                # other instead of deadlocking. ON CONFLICT skips those another transaction made
                # meanwhile; the next statement (READ COMMITTED) sees them committed.
                self._execute(INSERT_SUBJECTS, ([k[0] for k in new], [k[1] for k in new]))
                found.update(self._select_subjects(new))
            known.update(found)
        return [known[key] for key in keys]

    def _select_subjects(self, keys: Sequence[tuple[str, str]]) -> dict[tuple[str, str], int]:
        rows = self._fetch(SELECT_SUBJECTS, ([k[0] for k in keys], [k[1] for k in keys]))
        return {keys[int(i) - 1]: int(subject) for i, subject in rows}

    def _versions(self, rows: list[Row]) -> list[Version]:
        return [_version(row, self._scopes) for row in rows]

    # -- journal ---------------------------------------------------------------------------
    def append_write(self, write: Write) -> int:
        (row,) = self._fetch(
            INSERT_WRITE,
            (
                self._subject(write.lineage, write.scope),
                write.op,
                write.source,
                write.value_json,
                _datetime(write.valid_from),
                _datetime(write.valid_to),
                _datetime(write.known_at),
                _flags((write.valid_from, _VF), (write.valid_to, _VT), (write.known_at, _KF)),
            ),
        )
        timeline = (write.lineage, write.scope.key, write.source)
        knowledge = self._known_timelines()
        if knowledge is not None and timeline in knowledge:
            # Knowledge never goes back; on a tie the newest write is the latest (as in the query)
            latest = knowledge[timeline]
            if latest is None or write.known_at >= latest:
                knowledge[timeline] = write.known_at
        return int(row[0])

    def _known_timelines(self) -> dict[tuple[str, str, str], Instant | None] | None:
        """Latest knowledge of the timelines this transaction has locked (None outside one)."""
        knowledge: dict[tuple[str, str, str], Instant | None] | None = getattr(
            self._local, "knowledge", None
        )
        return knowledge

    def latest_knowledge(self, lineage: str, scope: Scope, source: str) -> Instant | None:
        timeline = (lineage, scope.key, source)
        knowledge = self._known_timelines()
        if knowledge is not None and timeline in knowledge:
            return knowledge[timeline]
        rows = self._fetch(SELECT_LATEST_KNOWLEDGE, timeline)
        latest = _instant(rows[0][0], rows[0][1], _KF) if rows else None
        if knowledge is not None and timeline in self._local.locked:
            knowledge[timeline] = latest
        return latest

    def append_writes(self, writes: Sequence[Write]) -> list[int]:
        if len(writes) < 2:
            return [self.append_write(write) for write in writes]
        subjects = self._subjects([(w.lineage, _scope_key(w.scope)) for w in writes])
        params = (
            subjects,
            [w.op for w in writes],
            [w.source for w in writes],
            [w.value_json for w in writes],
            [w.valid_from.micros for w in writes],
            [_micros(w.valid_to) for w in writes],
            [w.known_at.micros for w in writes],
            [_flags((w.valid_from, _VF), (w.valid_to, _VT), (w.known_at, _KF)) for w in writes],
        )
        rows = self._fetch(INSERT_WRITES, params)
        # Identities are drawn in the order the rows are inserted (ORDER BY i): increasing.
        write_ids = sorted(int(row[0]) for row in rows)
        knowledge = self._known_timelines()
        if knowledge is not None:
            for w in writes:
                timeline = (w.lineage, _scope_key(w.scope), w.source)
                if timeline in knowledge:
                    latest = knowledge[timeline]
                    if latest is None or w.known_at >= latest:
                        knowledge[timeline] = w.known_at
        return write_ids

    def _fetch_indexed(self, query: str, params: Sequence[Any]) -> list[Row]:
        """:meth:`_fetch` with the planner held to nested loops over indexes (INDEXED_JOINS)."""
        if self._in_transaction() is None:
            return self._fetch(query, params)
        for setting in INDEXED_JOINS:
            self._execute(setting, ())
        try:
            return self._fetch(query, params)
        finally:
            for setting in DEFAULT_JOINS:
                self._execute(setting, ())

    def latest_knowledge_many(self, timelines: Sequence[Timeline]) -> list[Instant | None]:
        keys = [(lineage, _scope_key(scope), source) for lineage, scope, source in timelines]
        knowledge = self._known_timelines() or {}
        ask = [key for key in dict.fromkeys(keys) if key not in knowledge]
        found: dict[tuple[str, str, str], Instant | None] = dict.fromkeys(ask)
        if ask:
            params = ([k[0] for k in ask], [k[1] for k in ask], [k[2] for k in ask])
            for i, known_at, flags in self._fetch_indexed(SELECT_LATEST_KNOWLEDGE_MANY, params):
                found[ask[int(i) - 1]] = _instant(known_at, flags, _KF)
            cache = self._known_timelines()
            if cache is not None:
                locked = self._local.locked
                cache.update((key, found[key]) for key in ask if key in locked)
        return [knowledge[key] if key in knowledge else found[key] for key in keys]

    # -- versions --------------------------------------------------------------------------
    def current_versions(self, lineage: str, scope: Scope, source: str) -> list[Version]:
        return self._versions(self._fetch(SELECT_CURRENT, (lineage, scope.key, source)))

    def current_versions_overlapping(
        self, lineage: str, scope: Scope, source: str, valid: Interval
    ) -> list[Version]:
        params = (lineage, scope.key, source, _datetime(valid.start), _datetime(valid.end))
        return self._versions(self._fetch(SELECT_CURRENT_OVERLAPPING, params))

    def current_versions_overlapping_many(
        self, requests: Sequence[tuple[Timeline, Interval]]
    ) -> list[list[Version]]:
        if len(requests) < 2:
            return super().current_versions_overlapping_many(requests)
        params = (
            [timeline.lineage for timeline, _ in requests],
            [_scope_key(timeline.scope) for timeline, _ in requests],
            [timeline.source for timeline, _ in requests],
            [valid.start.micros for _, valid in requests],
            [_micros(valid.end) for _, valid in requests],
        )
        found: list[list[Version]] = [[] for _ in requests]
        scopes = self._scopes
        rows = self._fetch_indexed(SELECT_CURRENT_OVERLAPPING_MANY, params)
        for i, version_id, lineage, scope_key, source, value, vf, vt, kf, flags in rows:
            scope = scopes.get(scope_key)
            if scope is None:
                scope = scopes[scope_key] = Scope.from_key(scope_key)
            found[i - 1].append(Version(
                version_id, lineage, scope, source, value, Instant(vf, bool(flags & _VF)),
                None if vt is None else Instant(vt, bool(flags & _VT)),
                Instant(kf, bool(flags & _KF)), None,
            ))  # fmt: skip
        return found

    def append_versions(self, versions: Sequence[Version]) -> None:
        if not versions:
            return
        subjects = self._subjects([(v.lineage, _scope_key(v.scope)) for v in versions])
        params = (
            [v.version_id for v in versions],
            subjects,
            [v.source for v in versions],
            [v.value_json for v in versions],
            [v.valid_from.micros for v in versions],
            [_micros(v.valid_to) for v in versions],
            [v.known_from.micros for v in versions],
            [_micros(v.known_to) for v in versions],
            [
                _flags((v.valid_from, _VF), (v.valid_to, _VT), (v.known_from, _KF),
                       (v.known_to, _KT))
                for v in versions
            ],
        )  # fmt: skip
        self._execute(INSERT_VERSIONS, params)

    def close_versions(self, version_ids: Sequence[str], known_to: Instant) -> None:
        if version_ids:
            flag = _KT if known_to.is_date else 0
            self._execute(CLOSE_VERSIONS, (_datetime(known_to), flag, list(version_ids)))

    def close_versions_at(self, closes: Sequence[tuple[str, Instant]]) -> None:
        if closes:
            self._execute(
                CLOSE_VERSIONS_AT,
                (
                    [version_id for version_id, _ in closes],
                    [known_to.micros for _, known_to in closes],
                    [_KT if known_to.is_date else 0 for _, known_to in closes],
                ),
            )

    def candidates(
        self, lineage: str, scope: Scope, valid_at: Instant, known_at: Instant
    ) -> list[Version]:
        params = {
            "lineage": lineage,
            "scope": _scope_key(scope),
            "t": _datetime(valid_at),
            "k": _datetime(known_at),
        }
        return self._lookup_versions(self._lookup(SELECT_CANDIDATES, params), lineage, scope)

    def candidates_and_held(
        self, lineage: str, scope: Scope, valid_at: Instant, known_at: Instant, held_at: Instant
    ) -> tuple[list[Version], list[Version]]:
        params = {
            "lineage": lineage,
            "scope": _scope_key(scope),
            "t": _datetime(valid_at),
            "k": _datetime(known_at),
            "e": _datetime(held_at),
        }
        rows = self._lookup(SELECT_CANDIDATES_AND_HELD, params)
        versions = self._lookup_versions(rows, lineage, scope)
        candidates = [v for v, row in zip(versions, rows, strict=True) if row[11]]
        held = [v for v, row in zip(versions, rows, strict=True) if row[12]]
        return candidates, held

    def _lookup_versions(self, rows: list[Row], lineage: str, scope: Scope) -> list[Version]:
        """Rows of a lookup (insertion order first, a NULL lineage and scope key for the
        subject asked about) as versions. Instants are shared through two bounded caches, of
        calendar dates and of other instants, keyed by the timestamp read (at UTC)."""
        dates, times = self._dates, self._times
        if len(dates) + len(times) >= _INSTANTS_LIMIT:
            dates.clear()
            times.clear()
        result = []
        for row in rows:
            _, version_id, name, scope_key, source, value, vf, vt, kf, kt, flags = row[:11]
            cache = dates if flags & _VF else times
            valid_from = cache.get(vf) or self._new_instant(cache, vf)
            valid_to = None
            if vt is not None:
                cache = dates if flags & _VT else times
                valid_to = cache.get(vt) or self._new_instant(cache, vt)
            cache = dates if flags & _KF else times
            known_from = cache.get(kf) or self._new_instant(cache, kf)
            known_to = None
            if kt is not None:
                cache = dates if flags & _KT else times
                known_to = cache.get(kt) or self._new_instant(cache, kt)
            result.append(
                build_version(
                    version_id,
                    lineage if name is None else name,
                    scope if scope_key is None else self._scope(scope_key),
                    source,
                    value,
                    valid_from,
                    valid_to,
                    known_from,
                    known_to,
                )
            )
        return result

    def _new_instant(self, cache: dict[_dt.datetime, Instant], value: _dt.datetime) -> Instant:
        """The instant of a timestamp at UTC (naive), remembered in ``cache``."""
        micros = (value - _NAIVE_EPOCH) // _MICROSECOND
        instant = cache[value] = Instant(micros, cache is self._dates)
        return instant

    def _scope(self, key: str) -> Scope:
        scope = self._scopes.get(key)
        if scope is None:
            scope = self._scopes[key] = Scope.from_key(key)
        return scope

    def history(self, lineage: str, scope: Scope | None = None) -> list[Version]:
        if scope is None:
            return self._versions(self._fetch(SELECT_HISTORY, (lineage,)))
        return self._versions(self._fetch(SELECT_HISTORY_SCOPED, (lineage, scope.key)))

    def versions_by_id(self, version_ids: Sequence[str]) -> list[Version]:
        if not version_ids:
            return []
        return self._versions(self._fetch(SELECT_VERSIONS_BY_ID, (list(version_ids),)))

    def lineages(self) -> list[tuple[str, Scope]]:
        return [(lineage, Scope.from_key(key)) for lineage, key in self._fetch(SELECT_LINEAGES, ())]

    # -- precedence rules ------------------------------------------------------------------
    def append_precedence(self, rule: PrecedenceRule) -> None:
        self._execute(
            INSERT_PRECEDENCE,
            (
                rule.rule_id,
                rule.lineage or "",
                rule.scope.key,
                json.dumps(list(rule.sources)),
                _datetime(rule.known_from),
                _datetime(rule.known_to),
                _flags((rule.known_from, _KF), (rule.known_to, _KT)),
            ),
        )

    def close_precedence(self, rule_id: str, known_to: Instant) -> None:
        flag = _KT if known_to.is_date else 0
        self._execute(CLOSE_PRECEDENCE, (_datetime(known_to), flag, rule_id))

    def precedence_rules(self, lineage: str | None, scope: Scope) -> list[PrecedenceRule]:
        key = (lineage or "", scope.key)
        if self._in_transaction() is not None:
            # The kernel reads the rules, then closes and appends (set_precedence) without
            # locking a timeline; this lock keeps two concurrent setters from both closing the
            # same rule. Outside a transaction a read needs no lock.
            self._execute(LOCK, (_lock_key("precedence", *key),))
        return [
            PrecedenceRule(
                rule_id=rule_id,
                lineage=rule_lineage or None,
                scope=Scope.from_key(scope_key),
                sources=tuple(json.loads(sources)),
                known_from=_instant(kf, flags, _KF),
                known_to=_open_instant(kt, flags, _KT),
            )
            for rule_id, rule_lineage, scope_key, sources, kf, kt, flags in self._fetch(
                SELECT_PRECEDENCE, key
            )
        ]


def _schema_version(conn: Connection) -> int:
    """The number of migrations applied (0 for an empty database)."""
    row = conn.execute(SELECT_SCHEMA_TABLE).fetchone()
    if row is None or row[0] is None:
        return 0
    row = conn.execute(SELECT_SCHEMA_VERSION).fetchone()
    return 0 if row is None else int(row[0])
