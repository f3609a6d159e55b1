"""SQLite tables of the knowledge horizon (one row) and of recorded backfills.

Mixed into :class:`~vigente.store.sqlite.SQLiteStore`; see :mod:`vigente.kernel.horizon`.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable, Iterable
from contextlib import AbstractContextManager

from vigente.records.ledger import Backfill
from vigente.store.contracts import AnswerHorizon
from vigente.time import Instant

__all__ = ["HORIZON_MIGRATIONS", "IN_FLIGHT_MIGRATIONS", "SQLiteHorizon"]

HORIZON_MIGRATIONS: list[list[str]] = [
    [
        """CREATE TABLE knowledge_horizon (
            id       INTEGER PRIMARY KEY CHECK (id = 1),
            answered INTEGER NOT NULL,
            is_date  INTEGER NOT NULL
        )""",
        """CREATE TABLE backfills (
            backfill_id TEXT PRIMARY KEY,
            recorded_at INTEGER NOT NULL,
            kind        TEXT NOT NULL,
            reason      TEXT NOT NULL,
            statements  INTEGER NOT NULL,
            earliest    INTEGER NOT NULL,
            latest      INTEGER NOT NULL,
            horizon     INTEGER,
            date_flags  INTEGER NOT NULL
        )""",
        # when a document version recorded behind the horizon was learned (microseconds)
        "ALTER TABLE document_versions ADD COLUMN learned INTEGER",
    ],
]

# Writes learned now, reserved before they are dated (vigente.kernel.horizon.learning_now).
IN_FLIGHT_MIGRATIONS: list[list[str]] = [
    [
        """CREATE TABLE writes_in_flight (
            reservation_id TEXT PRIMARY KEY,
            reserved_at    INTEGER NOT NULL
        )""",
    ],
]

SELECT_HORIZON = "SELECT answered, is_date FROM knowledge_horizon WHERE id = 1"
# Never lowers the horizon; a later instant on the same microsecond keeps the first's precision.
RAISE_HORIZON = """INSERT INTO knowledge_horizon (id, answered, is_date) VALUES (1, ?, ?)
    ON CONFLICT (id) DO UPDATE SET answered = excluded.answered, is_date = excluded.is_date
    WHERE excluded.answered > knowledge_horizon.answered"""
INSERT_BACKFILL = """INSERT INTO backfills (backfill_id, recorded_at, kind, reason, statements,
    earliest, latest, horizon, date_flags) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"""
INSERT_RESERVATION = "INSERT INTO writes_in_flight (reservation_id, reserved_at) VALUES (?, ?)"
DELETE_RESERVATION = "DELETE FROM writes_in_flight WHERE reservation_id = ?"
SELECT_IN_FLIGHT = "SELECT min(reserved_at) FROM writes_in_flight WHERE reserved_at >= ?"
SELECT_BACKFILLS = """SELECT backfill_id, recorded_at, kind, reason, statements, earliest,
    latest, horizon, date_flags FROM backfills ORDER BY rowid"""


class SQLiteHorizon(AnswerHorizon):
    _conn: sqlite3.Connection
    _lock: threading.RLock
    _answered_seen: int
    _depth: int
    _writer_thread: int

    transaction: Callable[[], AbstractContextManager[None]]  # SQLiteStore's

    def answered_horizon(self) -> Instant | None:
        row = self._conn.execute(SELECT_HORIZON).fetchone()
        if row is None:
            return None
        self._answered_seen = max(self._answered_seen, row[0])
        return Instant(row[0], bool(row[1]))

    def fix_answered_horizon(self, known_at: Instant) -> None:
        # Already fixed that far by this connection: nothing to write (the common case of a
        # repeated audit question). Another connection may have fixed it further; raising it
        # again is harmless.
        if known_at.micros <= self._answered_seen:
            return
        with self.transaction():
            self._conn.execute(RAISE_HORIZON, (known_at.micros, int(known_at.is_date)))
        self._answered_seen = known_at.micros

    def in_transaction(self) -> bool:
        return self._depth > 0 and self._writer_thread == threading.get_ident()

    def reserve_write(self, reservation_id: str, at: Instant) -> None:
        if self.in_transaction():
            raise RuntimeError("a write is reserved before its transaction begins")
        with self.transaction():
            self._conn.execute(INSERT_RESERVATION, (reservation_id, at.micros))

    def release_write(self, reservation_id: str) -> None:
        with self.transaction():
            self._conn.execute(DELETE_RESERVATION, (reservation_id,))

    def writes_in_flight_since(self, since: Instant) -> Instant | None:
        (earliest,) = self._conn.execute(SELECT_IN_FLIGHT, (since.micros,)).fetchone()
        return None if earliest is None else Instant(earliest)

    def append_backfill(self, backfill: Backfill) -> None:
        b = backfill
        flags = int(b.earliest.is_date) | int(b.latest.is_date) << 1 | (
            int(b.horizon.is_date) << 2 if b.horizon is not None else 0
        )
        self._conn.execute(INSERT_BACKFILL, (
            b.backfill_id, b.recorded_at.micros, b.kind, b.reason, b.statements,
            b.earliest.micros, b.latest.micros, None if b.horizon is None else b.horizon.micros,
            flags,
        ))  # fmt: skip

    def backfills(self) -> list[Backfill]:
        return list(_backfills(self._conn.execute(SELECT_BACKFILLS)))


def _backfills(rows: Iterable[tuple[str, int, str, str, int, int, int, int | None, int]]
               ) -> Iterable[Backfill]:
    for bid, recorded, kind, reason, statements, earliest, latest, horizon, flags in rows:
        yield Backfill(
            bid, Instant(recorded), kind, reason, statements,
            Instant(earliest, bool(flags & 1)), Instant(latest, bool(flags & 2)),
            None if horizon is None else Instant(horizon, bool(flags & 4)),
        )
