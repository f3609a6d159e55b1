"""Stored instants outside the years 1–9999 in a PostgreSQL store: found and moved inside them.

Mixed into :class:`~vigente.store.postgres.PostgresStore`; see :mod:`vigente.kernel.integrity`.
PostgreSQL's ``timestamptz`` holds years up to 294276, which Python (and so psycopg) cannot
read back; intervals are ``tstzrange`` whose bounds are checked one by one (an infinite upper
bound is an open end, not a value to repair). A few columns hold microseconds (``bigint``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from typing import Any, NamedTuple

from vigente.records.ledger import UnreadableInstant, describe_micros
from vigente.store.contracts import Integrity
from vigente.time import MAX_MICROS, MIN_MICROS, Instant

__all__ = ["PostgresIntegrity"]

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


#: (table, key column, column, kind): every column that holds a knowledge time ("ts":
#: timestamptz, NULL an open end; "micros": bigint).
_KNOWLEDGE: tuple[tuple[str, str, str, str], ...] = (
    ("versions", "version_id", "known_from", "ts"),
    ("versions", "version_id", "known_to", "ts"),
    ("writes", "write_id", "known_at", "ts"),
    ("precedence_rules", "rule_id", "known_from", "ts"),
    ("precedence_rules", "rule_id", "known_to", "ts"),
    ("document_versions", "version_id", "published", "ts"),
    ("document_versions", "version_id", "learned", "micros"),
    ("runtime_conversations", "conversation_id", "known_from", "ts"),
    ("runtime_records", "seq", "known_from", "ts"),
    ("knowledge_horizon", "id", "answered", "micros"),
)


def _out(expr: str) -> str:
    return f"({expr} IS NOT NULL AND ({expr} < {_LOW} OR {expr} >= {_HIGH}))"


def _clamped(expr: str, *, is_end: bool) -> str:
    """SQL for the repaired value of ``expr`` (NULL: an open end)."""
    high = "NULL" if is_end else _LAST
    low = f"{_FIRST} + interval '1 microsecond'" if is_end else _FIRST
    return (f"CASE WHEN {expr} >= {_HIGH} THEN {high} WHEN {expr} < {_LOW} THEN {low} "
            f"ELSE {expr} END")


class _Found(NamedTuple):
    """One unreadable value: its table, key column and column, which part of the column holds
    it (``lower``/``upper`` of a range, a ``ts`` or ``micros`` column), the row, as stored."""

    table: str
    key: str
    column: str
    part: str
    row: str
    stored: str

    @property
    def label(self) -> str:
        return f"{self.column} ({self.part} bound)" if self.part in ("lower", "upper") \
            else self.column


class PostgresIntegrity(Integrity):
    _fetch: Callable[[str, Sequence[Any]], list[Any]]
    _execute: Callable[[str, Sequence[Any]], None]
    transaction: Callable[[], AbstractContextManager[None]]  # PostgresStore's

    def _unreadable(self) -> list[_Found]:
        found = []
        for table, key, column, kind in _COLUMNS:
            if kind == "micros":
                rows = self._fetch(
                    f"SELECT {key}::text, {column}::text FROM {table} WHERE {column} < %s OR "
                    f"{column} > %s ORDER BY {key}", (MIN_MICROS, MAX_MICROS))
                found += [_Found(table, key, column, kind, r, describe_micros(int(v)))
                          for r, v in rows]
                continue
            for part in ("lower", "upper") if kind == "range" else ("ts",):
                expr = f"{part}({column})" if kind == "range" else column
                rows = self._fetch(f"SELECT {key}::text, {expr}::text FROM {table} "
                                   f"WHERE {_out(expr)} ORDER BY {key}", ())
                found += [_Found(table, key, column, part, r, v) for r, v in rows]
        return found

    def unreadable_instants(self) -> list[UnreadableInstant]:
        return [UnreadableInstant(f.table, f.row, f.label, f.stored) for f in self._unreadable()]

    def repair_unreadable_instants(self) -> list[UnreadableInstant]:
        with self.transaction():
            return [UnreadableInstant(f.table, f.row, f.label, f.stored, self._repair(f))
                    for f in self._unreadable()]

    def _repair(self, f: _Found) -> str:
        """Move ``f`` inside the range; what it became (``open end`` for an end beyond it)."""
        table, column, where = f.table, f.column, f"WHERE {f.key}::text = %s"
        if f.part == "micros":
            self._execute(f"UPDATE {table} SET {column} = GREATEST(%s, LEAST(%s, {column})) "
                          f"{where}", (MIN_MICROS, MAX_MICROS, f.row))
            micros = self._fetch(f"SELECT {column} FROM {table} {where}", (f.row,))[0][0]
            return Instant(int(micros)).isoformat()
        if f.part == "lower":
            new = f"tstzrange({_clamped(f'lower({column})', is_end=False)}, upper({column}), '[)')"
            read = f"lower({column})"
        elif f.part == "upper":
            new = f"tstzrange(lower({column}), {_clamped(f'upper({column})', is_end=True)}, '[)')"
            read = f"upper({column})"
        else:
            new, read = _clamped(column, is_end=column.endswith("_to")), column
        self._execute(f"UPDATE {table} SET {column} = {new} {where}", (f.row,))
        value = self._fetch(f"SELECT {read}::text FROM {table} {where}", (f.row,))
        return "open end" if not value or value[0][0] is None else str(value[0][0])

    def _future(self, after: Instant) -> list[tuple[str, str, str, str, str, Instant]]:
        found = []
        for table, key, column, kind in _KNOWLEDGE:
            if kind == "micros":
                rows = self._fetch(
                    f"SELECT {key}::text, {column} FROM {table} WHERE {column} > %s AND "
                    f"{column} <= %s ORDER BY {key}", (after.micros, MAX_MICROS))
                found += [(table, key, column, kind, r, Instant(int(v))) for r, v in rows]
                continue
            rows = self._fetch(
                f"SELECT {key}::text, {column} FROM {table} WHERE {column} > %s AND "
                f"{column} < {_HIGH} ORDER BY {key}", (after.datetime,))
            found += [(table, key, column, kind, r, Instant.from_datetime(v)) for r, v in rows]
        return found

    def future_knowledge(self, after: Instant) -> list[UnreadableInstant]:
        return [UnreadableInstant(table, row, column, at.isoformat(), problem="future")
                for table, _, column, _, row, at in self._future(after)]

    def repair_future_knowledge(self, after: Instant, to: Instant) -> list[UnreadableInstant]:
        repaired = []
        with self.transaction():
            found = self._future(after)
            order = sorted({f[5].micros for f in found})
            moved = {m: Instant(to.micros + i) for i, m in enumerate(order)}
            for table, key, column, kind, row, at in found:
                new = moved[at.micros]
                value: Any = new.micros if kind == "micros" else new.datetime
                self._execute(f"UPDATE {table} SET {column} = %s WHERE {key}::text = %s",
                              (value, row))
                repaired.append(UnreadableInstant(table, row, column, at.isoformat(),
                                                  new.isoformat(), "future"))
        return repaired
