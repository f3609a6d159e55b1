"""The ingest floor: the cheapest way to store the rows an import stored, for the kernel benchmark.

After the import, every row it left (subjects, the write journal, the snapshots, as stored) is
read back and written into a fresh database of the same backend, migrated by vigente (the same
schema, the same indexes and constraints), by one ``executemany`` per table in one transaction
on a plain connection with the store's settings. Nothing is parsed, validated, locked, read back
or split, and no snapshot is written twice (an import inserts a snapshot open and may close it
later): ``ingest / floor`` says how much the public import costs over storing its result, on the
same machine in the same run.
"""

from __future__ import annotations

import sqlite3
import time
from dataclasses import dataclass
from typing import Any, Protocol

from vigente.api import Vigente
from vigente.store.sqlite import CONNECTION_PRAGMAS

__all__ = ["IngestFloor", "StoredRows", "ingest_floor"]

Row = tuple[Any, ...]


@dataclass(frozen=True, slots=True)
class StoredRows:
    """Every row an import stored, table by table, in insertion order."""

    subjects: list[Row]
    writes: list[Row]
    versions: list[Row]


class IngestFloor(Protocol):
    def read(self, url: str) -> StoredRows:
        """The rows of a database built by an import."""

    def write(self, url: str, rows: StoredRows) -> None:
        """Insert ``rows`` into a fresh, migrated database: one executemany per table, one
        transaction (the part that is timed)."""

    def count(self, url: str) -> tuple[int, int, int]:
        """Rows in subjects, writes and versions."""


# -- SQLite ----------------------------------------------------------------------------------
_SQLITE_READ = {
    "subjects": "SELECT subject_id, lineage, scope_key FROM subjects ORDER BY subject_id",
    "writes": """SELECT write_id, subject_id, op, source, value, valid_from, valid_to, known_at,
        date_flags FROM writes ORDER BY write_id""",
    "versions": """SELECT version_id, subject_id, source, value, valid_from, valid_to,
        known_from, known_to, date_flags FROM versions ORDER BY rowid""",
}
_SQLITE_WRITE = {
    "subjects": "INSERT INTO subjects (subject_id, lineage, scope_key) VALUES (?, ?, ?)",
    "writes": """INSERT INTO writes (write_id, subject_id, op, source, value, valid_from,
        valid_to, known_at, date_flags) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)""",
    "versions": """INSERT INTO versions (version_id, subject_id, source, value, valid_from,
        valid_to, known_from, known_to, date_flags) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)""",
}


class SQLiteIngestFloor:
    """``sqlite3`` with the store's settings (WAL, ``synchronous = NORMAL``, its pragmas)."""

    def _connect(self, url: str) -> sqlite3.Connection:
        conn = sqlite3.connect(url, isolation_level=None)
        conn.execute("PRAGMA foreign_keys = ON")
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA synchronous = NORMAL")
        for pragma in CONNECTION_PRAGMAS:
            conn.execute(pragma)
        return conn

    def read(self, url: str) -> StoredRows:
        conn = self._connect(url)
        try:
            return StoredRows(*(conn.execute(_SQLITE_READ[table]).fetchall() for table in _TABLES))
        finally:
            conn.close()

    def write(self, url: str, rows: StoredRows) -> None:
        conn = self._connect(url)
        try:
            conn.execute("BEGIN IMMEDIATE")
            for table in _TABLES:
                conn.executemany(_SQLITE_WRITE[table], getattr(rows, table))
            conn.execute("COMMIT")
        finally:
            conn.close()

    def count(self, url: str) -> tuple[int, int, int]:
        conn = self._connect(url)
        try:
            return _counts(conn.execute(_COUNT).fetchone())
        finally:
            conn.close()


# -- PostgreSQL ------------------------------------------------------------------------------
_POSTGRES_READ = {
    "subjects": "SELECT subject_id, lineage, scope_key FROM subjects ORDER BY subject_id",
    "writes": """SELECT write_id, subject_id, op, source, value, valid, known_at, date_flags
        FROM writes ORDER BY write_id""",
    "versions": """SELECT version_id, subject_id, source, value, valid, known_from, known_to,
        date_flags FROM versions ORDER BY seq""",
}
# The journal keeps its ids (OVERRIDING SYSTEM VALUE); the snapshots get theirs (seq) in the
# same order, as an import's do.
_POSTGRES_WRITE = {
    "subjects": """INSERT INTO subjects (subject_id, lineage, scope_key) OVERRIDING SYSTEM VALUE
        VALUES (%s, %s, %s)""",
    "writes": """INSERT INTO writes (write_id, subject_id, op, source, value, valid, known_at,
        date_flags) OVERRIDING SYSTEM VALUE VALUES (%s, %s, %s, %s, %s, %s, %s, %s)""",
    "versions": """INSERT INTO versions (version_id, subject_id, source, value, valid,
        known_from, known_to, date_flags) VALUES (%s, %s, %s, %s, %s, %s, %s, %s)""",
}


class PostgresIngestFloor:
    """One ``psycopg`` connection (psycopg sends an ``executemany`` in pipeline mode)."""

    def read(self, url: str) -> StoredRows:
        import psycopg

        with psycopg.connect(url) as conn:
            return StoredRows(
                *(conn.execute(_POSTGRES_READ[table]).fetchall() for table in _TABLES)
            )

    def write(self, url: str, rows: StoredRows) -> None:
        import psycopg

        with psycopg.connect(url) as conn, conn.transaction(), conn.cursor() as cursor:
            for table in _TABLES:
                cursor.executemany(_POSTGRES_WRITE[table], getattr(rows, table))

    def count(self, url: str) -> tuple[int, int, int]:
        import psycopg

        with psycopg.connect(url) as conn:
            return _counts(conn.execute(_COUNT).fetchone())


_TABLES = ("subjects", "writes", "versions")
_COUNT = """SELECT (SELECT count(*) FROM subjects), (SELECT count(*) FROM writes),
    (SELECT count(*) FROM versions)"""


def _counts(row: Row | None) -> tuple[int, int, int]:
    assert row is not None
    return int(row[0]), int(row[1]), int(row[2])


def ingest_floor(backend: str, source_url: str, target_url: str) -> dict[str, Any]:
    """Store the rows of ``source_url`` again in the empty database ``target_url`` (migrated
    here); the time it took and whether the copy holds as many rows of each table."""
    floor: IngestFloor = PostgresIngestFloor() if backend == "postgres" else SQLiteIngestFloor()
    Vigente.open(target_url).close()  # the schema, indexes and constraints of the store
    rows = floor.read(source_url)
    start = time.perf_counter()
    floor.write(target_url, rows)
    elapsed = time.perf_counter() - start
    read = (len(rows.subjects), len(rows.writes), len(rows.versions))
    agrees = floor.count(target_url) == floor.count(source_url) == read
    return {"versions": len(rows.versions), "seconds": elapsed, "agrees": agrees}
