"""Take a store back to the schema before a migration (for tests of what a migration does to a
store written before it): that migration and every one after it undone, their tables dropped."""

from __future__ import annotations

import re

__all__ = ["undo_from"]


def undo_from(store_url: str, table: str) -> list[str]:
    """SQL that undoes the migration creating ``table`` and every migration after it."""
    if store_url.startswith("postgres"):
        from vigente.store.postgres.migrations import MIGRATIONS
    else:
        from vigente.store.sqlite.migrations import MIGRATIONS
    first = next(i for i, m in enumerate(MIGRATIONS)
                 if any(f"CREATE TABLE {table}" in sql for sql in m))
    undo: list[str] = []
    dropped: set[str] = set()
    for sql in reversed([sql for m in MIGRATIONS[first:] for sql in m]):
        # names from our own migrations
        if created := re.search(r"CREATE TABLE (?:IF NOT EXISTS )?(\w+)", sql):
            undo.append(f"DROP TABLE {created[1]}")
            dropped.add(created[1])
        elif index := re.search(r"CREATE (?:UNIQUE )?INDEX (?:IF NOT EXISTS )?(\w+)", sql):
            undo.append(f"DROP INDEX IF EXISTS {index[1]}")
        elif added := re.search(r"ALTER TABLE (\w+) ADD COLUMN (\w+)", sql):
            if added[1] not in dropped:
                undo.append(f"ALTER TABLE {added[1]} DROP COLUMN {added[2]}")
    return [*undo, f"DELETE FROM vigente_migrations WHERE version > {int(first)}"]  # noqa: S608
