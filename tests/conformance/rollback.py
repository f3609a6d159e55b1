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
    tables = [t for m in MIGRATIONS[first:] for sql in m
              for t in re.findall(r"CREATE TABLE (?:IF NOT EXISTS )?(\w+)", sql)]
    return [*(f"DROP TABLE {t}" for t in reversed(tables)),  # names from our own migrations
            f"DELETE FROM vigente_migrations WHERE version > {int(first)}"]  # noqa: S608
