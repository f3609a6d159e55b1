"""Stored instants outside the years 1–9999 in a PostgreSQL store: found and moved inside them.

Mixed into :class:`~vigente.store.postgres.PostgresStore`; see :mod:`vigente.kernel.integrity`.
PostgreSQL's ``timestamptz`` holds years up to 294276, which Python (and so psycopg) cannot
read back; intervals are ``tstzrange`` whose bounds are checked one by one (an infinite upper
bound is an open end, not a value to repair). A few columns hold microseconds (``bigint``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from typing import Any

from vigente.kernel.integrity import UnreadableInstant, describe_micros
from vigente.time import MAX_MICROS, MIN_MICROS, Instant

__all__ = ["PostgresCheck"]

_LOW = "'0001-01-01 00:00:00+00'::timestamptz"
_HIGH = "'10000-01-01 00:00:00+00'::timestamptz"
_FIRST = "'0001-01-01 00:00:00+00'::timestamptz"
_LAST = "'9999-12-31 23:59:59.999999+00'::timestamptz"

#: (table, key column, column, kind): kind is "ts" (timestamptz; an end when it ends in _to),
#: "range" (a tstzrange: lower then upper bound) or "micros" (bigint).
_COLUMNS: tuple[tuple[str, str, str, str], ...] = (
    ("versions", "version_id", "valid", "range"),
    ("versions", "version_id", "known_from", "ts"),
    ("versions", "version_id", "known_to", "ts"),
    ("writes", "write_id", "valid", "range"),
    ("writes", "write_id", "known_at", "ts"),
    ("precedence_rules", "rule_id", "known_from", "ts"),
    ("precedence_rules", "rule_id", "known_to", "ts"),
    ("document_versions", "version_id", "published", "ts"),
    ("document_versions", "version_id", "valid", "range"),
    ("document_versions", "version_id", "learned", "micros"),
    ("runtime_conversations", "conversation_id", "known_from", "ts"),
    ("runtime_records", "seq", "known_from", "ts"),
)


def _out(expr: str) -> str:
    return f"({expr} IS NOT NULL AND ({expr} < {_LOW} OR {expr} >= {_HIGH}))"


def _clamped(expr: str, *, is_end: bool) -> str:
    """SQL for the repaired value of ``expr`` (NULL: an open end)."""
    high = "NULL" if is_end else _LAST
    low = f"{_FIRST} + interval '1 microsecond'" if is_end else _FIRST
    return (f"CASE WHEN {expr} >= {_HIGH} THEN {high} WHEN {expr} < {_LOW} THEN {low} "
            f"ELSE {expr} END")


class PostgresCheck:
    _fetch: Callable[[str, Sequence[Any]], list[Any]]
    _execute: Callable[[str, Sequence[Any]], None]
    transaction: Callable[[], AbstractContextManager[None]]  # PostgresStore's

    def _unreadable(self) -> list[tuple[str, str, str, str, str, str]]:
        """(table, key, column label, SQL of the column, row key, stored text)."""
        found = []
        for table, key, column, kind in _COLUMNS:
            if kind == "micros":
                rows = self._fetch(
                    f"SELECT {key}::text, {column}::text FROM {table} WHERE {column} < %s OR "
                    f"{column} > %s ORDER BY {key}", (MIN_MICROS, MAX_MICROS))
                found += [(table, key, column, column, r, describe_micros(int(s)))
                          for r, s in rows]
                continue
            parts = ([("lower", f"lower({column})"), ("upper", f"upper({column})")]
                     if kind == "range" else [("", column)])
            for bound, expr in parts:
                label = f"{column} ({bound} bound)" if bound else column
                rows = self._fetch(f"SELECT {key}::text, {expr}::text FROM {table} "
                                   f"WHERE {_out(expr)} ORDER BY {key}", ())
                found += [(table, key, label, expr, r, s) for r, s in rows]
        return found

    def unreadable_instants(self) -> list[UnreadableInstant]:
        return [UnreadableInstant(table, row, label, stored)
                for table, _, label, _, row, stored in self._unreadable()]

    def repair_unreadable_instants(self) -> list[UnreadableInstant]:
        repaired = []
        with self.transaction():
            for table, key, label, expr, row, stored in self._unreadable():
                column = label.split(" ", 1)[0]
                shown = self._repair(table, key, column, label, expr, row)
                repaired.append(UnreadableInstant(table, row, label, stored, shown))
        return repaired

    def _repair(self, table: str, key: str, column: str, label: str, expr: str,
                row: str) -> str:
        where = f"WHERE {key}::text = %s"
        if label.endswith("(lower bound)"):
            new = f"tstzrange({_clamped('lower(' + column + ')', is_end=False)}, " \
                  f"upper({column}), '[)')"
            self._execute(f"UPDATE {table} SET {column} = {new} {where}", (row,))
            value = self._fetch(f"SELECT lower({column})::text FROM {table} {where}", (row,))
        elif label.endswith("(upper bound)"):
            new = f"tstzrange(lower({column}), " \
                  f"{_clamped('upper(' + column + ')', is_end=True)}, '[)')"
            self._execute(f"UPDATE {table} SET {column} = {new} {where}", (row,))
            value = self._fetch(f"SELECT upper({column})::text FROM {table} {where}", (row,))
        elif expr == column and table == "document_versions" and column == "learned":
            self._execute(f"UPDATE {table} SET {column} = GREATEST(%s, LEAST(%s, {column})) "
                          f"{where}", (MIN_MICROS, MAX_MICROS, row))
            micros = self._fetch(f"SELECT {column} FROM {table} {where}", (row,))[0][0]
            return Instant(int(micros)).isoformat()
        else:
            is_end = column.endswith("_to")
            self._execute(f"UPDATE {table} SET {column} = "
                          f"{_clamped(column, is_end=is_end)} {where}", (row,))
            value = self._fetch(f"SELECT {column}::text FROM {table} {where}", (row,))
        shown = value[0][0] if value else None
        return "open end" if shown is None else str(shown)
