"""The lookup floor: the cheapest way to read the rows a lookup admits, for the kernel benchmark.

One indexed SQL statement per lookup, sent from Python on a connection of its own, returning the
admitted rows of the lineage's subject at ``(t, k)`` as plain tuples: no exclusions, no
neighbours, no decoding into values, no decision and no statement. The row is everything a
:class:`~vigente.records.versions.Version` holds apart from the lineage and scope the caller asked
about: ``(version_id, source, value, valid_from, valid_to, known_from, known_to, date_flags)``.
A lookup through :meth:`Vigente.evidence` does all of that and more, so ``lookup / floor`` says
how much the rest of the public answer costs over the bare read, on the same machine in the same
run (a yardstick that does not grow with the store, as a linear scan does).

The statement uses the same index a lookup uses (SQLite: the covering ``versions_valid``;
PostgreSQL: the GiST indexes on the ranges) and the same connection settings as the store.
"""

from __future__ import annotations

import datetime as _dt
import sqlite3
from typing import Any, Protocol

from vigente.store.sqlite import CONNECTION_PRAGMAS

__all__ = ["FloorRow", "LookupFloor", "open_floor"]

FloorRow = tuple[Any, ...]

_EPOCH = _dt.datetime(1970, 1, 1, tzinfo=_dt.UTC)

#: The rows valid at t and known at k of one subject, through versions_valid (subject_id,
#: valid_from, ...): the lineage's rows starting at or before t, filtered inside the index.
SQLITE_FLOOR = """SELECT v.version_id, v.source, v.value, v.valid_from, v.valid_to,
    v.known_from, v.known_to, v.date_flags
  FROM subjects s JOIN versions v USING (subject_id)
 WHERE s.lineage = ? AND s.scope_key = ?
   AND v.valid_from <= ? AND v.valid_to > ? AND v.known_from <= ? AND v.known_to > ?"""

#: The same on PostgreSQL, with range containment over the GiST indexes on (subject, range).
POSTGRES_FLOOR = """SELECT v.version_id, v.source, v.value, lower(v.valid), upper(v.valid),
    v.known_from, v.known_to, v.date_flags
  FROM subjects s JOIN versions v USING (subject_id)
 WHERE s.lineage = %s AND s.scope_key = %s
   AND v.valid @> %s::timestamptz AND v.known @> %s::timestamptz"""


class LookupFloor(Protocol):
    def prepare(self, t: int, k: int) -> tuple[Any, Any]:
        """``t`` and ``k`` (microseconds) as the statement's parameters (done before timing)."""

    def read(self, lineage: str, scope_key: str, t: Any, k: Any) -> list[FloorRow]:
        """The admitted rows, one statement."""

    def version_ids(self, rows: list[FloorRow]) -> set[str]:
        """The version ids of rows returned by :meth:`read` (to check agreement)."""

    def close(self) -> None: ...


class SQLiteFloor:
    """One ``sqlite3`` connection with the store's pragmas; the statement is cached by
    ``sqlite3`` after its first use, as the store's are."""

    def __init__(self, path: str) -> None:
        self._conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        for pragma in CONNECTION_PRAGMAS:
            self._conn.execute(pragma)

    def prepare(self, t: int, k: int) -> tuple[int, int]:
        return t, k

    def read(self, lineage: str, scope_key: str, t: int, k: int) -> list[FloorRow]:
        return self._conn.execute(SQLITE_FLOOR, (lineage, scope_key, t, t, k, k)).fetchall()

    def version_ids(self, rows: list[FloorRow]) -> set[str]:
        return {row[0] for row in rows}

    def close(self) -> None:
        self._conn.close()


class PostgresFloor:
    """One ``psycopg`` connection in autocommit (no pool, no check on checkout); psycopg
    prepares the statement on the server after its first few uses (the store's lookups
    prepare theirs at once; both are prepared before the timed lookups)."""

    def __init__(self, url: str) -> None:
        import psycopg

        self._conn = psycopg.connect(url, autocommit=True)

    def prepare(self, t: int, k: int) -> tuple[_dt.datetime, _dt.datetime]:
        return (
            _EPOCH + _dt.timedelta(microseconds=t),
            _EPOCH + _dt.timedelta(microseconds=k),
        )

    def read(
        self, lineage: str, scope_key: str, t: _dt.datetime, k: _dt.datetime
    ) -> list[FloorRow]:
        return self._conn.execute(POSTGRES_FLOOR, (lineage, scope_key, t, k)).fetchall()

    def version_ids(self, rows: list[FloorRow]) -> set[str]:
        return {row[0] for row in rows}

    def close(self) -> None:
        self._conn.close()


def open_floor(backend: str, url: str) -> LookupFloor:
    """The floor reader for a database made by the benchmark's ``backend`` (by name)."""
    if backend == "postgres":
        return PostgresFloor(url)
    return SQLiteFloor(url)
