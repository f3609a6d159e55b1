"""The SQLite and PostgreSQL schemas are written by hand, once per dialect; this proves they agree.

Both dialects must keep the same tables with the same columns, so that a row means the same on
either backend and a migration added to one is not forgotten in the other. What a dialect spells
its own way is declared below with its reason; any other difference fails, naming the table and
column. A test also checks that a purge reaches every table that holds a conversation's rows.
"""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path

import psycopg
import pytest

from vigente.store import open_store
from vigente.store.postgres import runtime as postgres_runtime
from vigente.store.postgres.retrieval import CREATE_VECTORS
from vigente.store.sqlite import runtime as sqlite_runtime

#: Tables only SQLite has, and why PostgreSQL needs none.
SQLITE_ONLY_TABLES = {
    "retrieval_fts": "FTS5 index of passages; PostgreSQL keeps a tsvector column (search)",
    "retrieval_fields_fts": "FTS5 index of fields; PostgreSQL keeps a tsvector column (search)",
    "retrieval_terms": "FTS5 vocabulary for rarest-term matching; PostgreSQL reads tsvector stats",
    "retrieval_field_terms": "the same vocabulary for fields",
    "sqlite_sequence": "SQLite's own AUTOINCREMENT counters",
}
#: FTS5 keeps shadow tables beside each index: ``<index>_config``, ``_data``, ``_docsize``,
#: ``_idx``, ``_content``.
FTS5_SHADOWS = ("_config", "_data", "_docsize", "_idx", "_content")

#: Columns only PostgreSQL has, and what SQLite uses instead.
POSTGRES_ONLY_COLUMNS = {
    "seq": "insertion order as a column; SQLite reads its rowid",
    "search": "the tsvector that PostgreSQL's full-text search reads; SQLite has FTS5 tables",
}
#: Columns the dialects name differently: (table, PostgreSQL name) -> SQLite name.
RENAMED_COLUMNS = {
    ("retrieval_vectors", "embedding"): "vector",  # a pgvector ``vector``; SQLite stores bytes
}
#: A PostgreSQL range column stands for SQLite's pair of columns ``<name>_from``/``<name>_to``.
RANGE_TYPES = {"tstzrange"}


def sqlite_schema(path: Path) -> dict[str, set[str]]:
    """Every table of a migrated SQLite store, with its column names."""
    open_store(str(path)).close()
    with closing(sqlite3.connect(path)) as con:
        tables = [name for (name,) in con.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")]
        return {name: {row[1] for row in con.execute(f"PRAGMA table_xinfo('{name}')")}
                for name in tables}


def postgres_schema(url: str) -> dict[str, set[str]]:
    """Every table of a migrated PostgreSQL store (the vector table too, which the store
    creates on first use), with its column names in SQLite's spelling."""
    open_store(url).close()
    with psycopg.connect(url, autocommit=True) as con:
        for statement in CREATE_VECTORS:
            con.execute(statement)
        rows = con.execute("""SELECT table_name, column_name, data_type, udt_name
            FROM information_schema.columns WHERE table_schema = current_schema()
            ORDER BY table_name, ordinal_position""").fetchall()
    schema: dict[str, set[str]] = {}
    for table, column, _type, udt in rows:
        columns = schema.setdefault(table, set())
        if udt in RANGE_TYPES:
            columns |= {f"{column}_from", f"{column}_to", column}
        else:
            columns.add(RENAMED_COLUMNS.get((table, column), column))
    return schema


def without_sqlite_only(schema: dict[str, set[str]]) -> dict[str, set[str]]:
    def declared(table: str) -> bool:
        return table in SQLITE_ONLY_TABLES or any(
            table == base + shadow for base in SQLITE_ONLY_TABLES for shadow in FTS5_SHADOWS)
    return {table: columns for table, columns in schema.items() if not declared(table)}


@pytest.fixture
def schemas(tmp_path: Path, postgres_url: str) -> tuple[dict[str, set[str]], dict[str, set[str]]]:
    return sqlite_schema(tmp_path / "schema.db"), postgres_schema(postgres_url)


def test_both_dialects_keep_the_same_tables(schemas) -> None:
    lite, pg = schemas
    assert sorted(set(without_sqlite_only(lite)) ^ set(pg)) == [], (
        "a table is in one dialect's migrations only: add it to the other's "
        "(or declare why in SQLITE_ONLY_TABLES)")


def test_both_dialects_keep_the_same_columns(schemas) -> None:
    lite, pg = schemas
    differences = {}
    for table, pg_columns in pg.items():
        lite_columns = lite.get(table, set())
        only_pg = {c for c in pg_columns - lite_columns
                   if c not in POSTGRES_ONLY_COLUMNS and f"{c}_from" not in pg_columns}
        only_lite = {c for c in lite_columns - pg_columns}
        if only_pg or only_lite:
            differences[table] = {"postgres only": sorted(only_pg),
                                  "sqlite only": sorted(only_lite)}
    assert differences == {}


def test_the_declared_differences_are_still_there(schemas) -> None:
    """A declaration that no longer matches the schemas is stale: the test would hide nothing."""
    lite, pg = schemas
    assert set(SQLITE_ONLY_TABLES) <= set(lite)
    assert set(SQLITE_ONLY_TABLES).isdisjoint(pg)
    assert all(any(column in columns for columns in pg.values())
               for column in POSTGRES_ONLY_COLUMNS)
    assert all(sqlite_name in lite[table] for (table, _), sqlite_name in RENAMED_COLUMNS.items())


@pytest.mark.parametrize("purge_tables", [sqlite_runtime.PURGE_TABLES,
                                          postgres_runtime.PURGE_TABLES],
                         ids=["sqlite", "postgres"])
def test_a_purge_reaches_every_table_that_holds_a_conversation(schemas, purge_tables) -> None:
    lite, pg = schemas
    for schema in (lite, pg):
        holding = {table for table, columns in schema.items() if "conversation_id" in columns}
        assert holding - {"runtime_conversations"} == set(purge_tables)
