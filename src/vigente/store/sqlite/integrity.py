"""Stored instants outside the years 1–9999 in a SQLite store: found and moved inside them.

Mixed into :class:`~vigente.store.sqlite.SQLiteStore`; see :mod:`vigente.kernel.integrity`.
Instants are microseconds in INTEGER columns; an open end is ``OPEN_END``, which is not a value
to repair.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from contextlib import AbstractContextManager

from vigente.records.ledger import UnreadableInstant, describe_micros
from vigente.store.contracts import Integrity
from vigente.time import MAX_MICROS, MIN_MICROS, Instant

__all__ = ["INSTANT_COLUMNS", "KNOWLEDGE_COLUMNS", "SQLiteIntegrity"]

OPEN_END = 1 << 62  # as in vigente.store.sqlite

#: (table, key column, instant column, is an end): every column that holds a caller's instant.
INSTANT_COLUMNS: tuple[tuple[str, str, str, bool], ...] = (
    ("versions", "version_id", "valid_from", False),
    ("versions", "version_id", "valid_to", True),
    ("versions", "version_id", "known_from", False),
    ("versions", "version_id", "known_to", True),
    ("writes", "write_id", "valid_from", False),
    ("writes", "write_id", "valid_to", True),
    ("writes", "write_id", "known_at", False),
    ("precedence_rules", "rule_id", "known_from", False),
    ("precedence_rules", "rule_id", "known_to", True),
    ("document_versions", "version_id", "published", False),
    ("document_versions", "version_id", "valid_from", False),
    ("document_versions", "version_id", "valid_to", True),
    ("document_versions", "version_id", "learned", False),
    ("runtime_conversations", "conversation_id", "known_from", False),
    ("runtime_records", "seq", "known_from", False),
)


#: (table, key column, instant column): every column that holds a knowledge time.
KNOWLEDGE_COLUMNS: tuple[tuple[str, str, str], ...] = (
    ("versions", "version_id", "known_from"),
    ("versions", "version_id", "known_to"),
    ("writes", "write_id", "known_at"),
    ("precedence_rules", "rule_id", "known_from"),
    ("precedence_rules", "rule_id", "known_to"),
    ("document_versions", "version_id", "published"),
    ("document_versions", "version_id", "learned"),
    ("runtime_conversations", "conversation_id", "known_from"),
    ("runtime_records", "seq", "known_from"),
    ("knowledge_horizon", "id", "answered"),
)


def repaired_micros(micros: int, *, is_end: bool) -> int:
    """The instant inside the range that answers every question in it as ``micros`` did."""
    if micros > MAX_MICROS:
        return OPEN_END if is_end else MAX_MICROS
    return MIN_MICROS + 1 if is_end else MIN_MICROS


class SQLiteIntegrity(Integrity):
    _conn: sqlite3.Connection

    transaction: Callable[[], AbstractContextManager[None]]  # SQLiteStore's

    def _unreadable(self) -> list[tuple[str, str, str, bool, object, int]]:
        found = []
        for table, key, column, is_end in INSTANT_COLUMNS:
            rows = self._conn.execute(
                f"SELECT {key}, {column} FROM {table} WHERE {column} IS NOT NULL AND "
                f"{column} != ? AND ({column} < ? OR {column} > ?) ORDER BY {key}",
                (OPEN_END, MIN_MICROS, MAX_MICROS),
            ).fetchall()
            found += [(table, key, column, is_end, row_key, micros) for row_key, micros in rows]
        return found

    def unreadable_instants(self) -> list[UnreadableInstant]:
        return [UnreadableInstant(table, str(row), column, describe_micros(micros))
                for table, _, column, _, row, micros in self._unreadable()]

    def repair_unreadable_instants(self) -> list[UnreadableInstant]:
        repaired = []
        with self.transaction():
            for table, key, column, is_end, row, micros in self._unreadable():
                new = repaired_micros(micros, is_end=is_end)
                self._conn.execute(f"UPDATE {table} SET {column} = ? WHERE {key} = ?", (new, row))
                shown = "open end" if new == OPEN_END else Instant(new).isoformat()
                repaired.append(UnreadableInstant(table, str(row), column,
                                                  describe_micros(micros), shown))
        return repaired

    def _future(self, after: Instant) -> list[tuple[str, str, str, object, int]]:
        found = []
        for table, key, column in KNOWLEDGE_COLUMNS:
            rows = self._conn.execute(
                f"SELECT {key}, {column} FROM {table} WHERE {column} IS NOT NULL AND "
                f"{column} != ? AND {column} > ? AND {column} <= ? ORDER BY {key}",
                (OPEN_END, after.micros, MAX_MICROS),
            ).fetchall()
            found += [(table, key, column, row_key, micros) for row_key, micros in rows]
        return found

    def future_knowledge(self, after: Instant) -> list[UnreadableInstant]:
        return [UnreadableInstant(table, str(row), column, Instant(micros).isoformat(),
                                  problem="future")
                for table, _, column, row, micros in self._future(after)]

    def repair_future_knowledge(self, after: Instant, to: Instant) -> list[UnreadableInstant]:
        repaired = []
        with self.transaction():
            found = self._future(after)
            moved = {m: to.micros + i for i, m in enumerate(sorted({f[4] for f in found}))}
            for table, key, column, row, micros in found:
                self._conn.execute(f"UPDATE {table} SET {column} = ? WHERE {key} = ?",
                                   (moved[micros], row))
                repaired.append(UnreadableInstant(table, str(row), column,
                                                  Instant(micros).isoformat(),
                                                  Instant(moved[micros]).isoformat(), "future"))
        return repaired
