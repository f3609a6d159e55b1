"""PostgreSQL tables of the knowledge horizon (one row) and of recorded backfills.

Mixed into :class:`~vigente.store.postgres.PostgresStore`; the same shape as SQLite's (instants
as microseconds). Fixing the horizon at an explicit past knowledge time takes the writers' lock
exclusively, so it waits for the writes in flight and every later writer (which holds it shared)
reads the new horizon; an answer as known now takes no lock and writes nothing (it reads the
writes in flight instead); see :mod:`vigente.kernel.horizon`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from contextlib import AbstractContextManager
from typing import Any

from vigente.records.ledger import Backfill
from vigente.store.contracts import AnswerHorizon
from vigente.time import Instant

__all__ = ["HORIZON_MIGRATIONS", "IN_FLIGHT_MIGRATIONS", "PostgresHorizon"]

HORIZON_MIGRATIONS: list[list[str]] = [
    [
        """CREATE TABLE knowledge_horizon (
            id       smallint PRIMARY KEY CHECK (id = 1),
            answered bigint NOT NULL,
            is_date  boolean NOT NULL
        )""",
        """CREATE TABLE backfills (
            seq         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            backfill_id text COLLATE "C" NOT NULL UNIQUE,
            recorded_at bigint NOT NULL,
            kind        text NOT NULL,
            reason      text NOT NULL,
            statements  bigint NOT NULL,
            earliest    bigint NOT NULL,
            latest      bigint NOT NULL,
            horizon     bigint,
            date_flags  smallint NOT NULL
        )""",
        # when a document version recorded behind the horizon was learned (microseconds)
        "ALTER TABLE document_versions ADD COLUMN learned bigint",
    ],
]

# Writes learned now, reserved before they are dated (vigente.kernel.horizon.learning_now).
IN_FLIGHT_MIGRATIONS: list[list[str]] = [
    [
        """CREATE TABLE writes_in_flight (
            reservation_id text COLLATE "C" PRIMARY KEY,
            reserved_at    bigint NOT NULL
        )""",
    ],
]

SELECT_HORIZON = "SELECT answered, is_date FROM knowledge_horizon WHERE id = 1"
RAISE_HORIZON = """INSERT INTO knowledge_horizon (id, answered, is_date) VALUES (1, %s, %s)
    ON CONFLICT (id) DO UPDATE SET answered = excluded.answered, is_date = excluded.is_date
    WHERE excluded.answered > knowledge_horizon.answered"""
INSERT_BACKFILL = """INSERT INTO backfills (backfill_id, recorded_at, kind, reason, statements,
    earliest, latest, horizon, date_flags) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)"""
INSERT_RESERVATION = "INSERT INTO writes_in_flight (reservation_id, reserved_at) VALUES (%s, %s)"
DELETE_RESERVATION = "DELETE FROM writes_in_flight WHERE reservation_id = %s"
SELECT_IN_FLIGHT = "SELECT min(reserved_at) FROM writes_in_flight WHERE reserved_at >= %s"
SELECT_BACKFILLS = """SELECT backfill_id, recorded_at, kind, reason, statements, earliest,
    latest, horizon, date_flags FROM backfills ORDER BY seq"""


class PostgresHorizon(AnswerHorizon):
    _answered_seen: int
    transaction: Callable[[], AbstractContextManager[None]]
    _fetch: Callable[[str, Sequence[Any]], list[Any]]
    _execute: Callable[[str, Sequence[Any]], None]
    _join_writers: Callable[..., bool]

    _in_transaction: Callable[[], object]

    def answered_horizon(self) -> Instant | None:
        if self._in_transaction() is not None:
            self._join_writers(alone=False)  # no horizon is fixed until this write ends
        rows = self._fetch(SELECT_HORIZON, ())
        if not rows:
            return None
        answered, is_date = rows[0]
        self._answered_seen = max(self._answered_seen, answered)
        return Instant(answered, bool(is_date))

    def fix_answered_horizon(self, known_at: Instant) -> None:
        if known_at.micros <= self._answered_seen:
            return
        with self.transaction():
            self._join_writers(alone=True)  # wait for the writes in flight; hold off new ones
            self._execute(RAISE_HORIZON, (known_at.micros, known_at.is_date))
        self._answered_seen = max(self._answered_seen, known_at.micros)

    def in_transaction(self) -> bool:
        return self._in_transaction() is not None

    def reserve_write(self, reservation_id: str, at: Instant) -> None:
        if self._in_transaction() is not None:
            raise RuntimeError("a write is reserved before its transaction begins")
        with self.transaction():
            self._execute(INSERT_RESERVATION, (reservation_id, at.micros))

    def release_write(self, reservation_id: str) -> None:
        with self.transaction():
            self._execute(DELETE_RESERVATION, (reservation_id,))

    def writes_in_flight_since(self, since: Instant) -> Instant | None:
        rows = self._fetch(SELECT_IN_FLIGHT, (since.micros,))
        earliest = rows[0][0] if rows else None
        return None if earliest is None else Instant(earliest)

    def append_backfill(self, backfill: Backfill) -> None:
        b = backfill
        flags = int(b.earliest.is_date) | int(b.latest.is_date) << 1 | (
            int(b.horizon.is_date) << 2 if b.horizon is not None else 0
        )
        self._execute(INSERT_BACKFILL, (
            b.backfill_id, b.recorded_at.micros, b.kind, b.reason, b.statements,
            b.earliest.micros, b.latest.micros, None if b.horizon is None else b.horizon.micros,
            flags,
        ))  # fmt: skip

    def backfills(self) -> list[Backfill]:
        return list(_backfills(self._fetch(SELECT_BACKFILLS, ())))


def _backfills(rows: Iterable[Sequence[Any]]) -> Iterable[Backfill]:
    for bid, recorded, kind, reason, statements, earliest, latest, horizon, flags in rows:
        yield Backfill(
            bid, Instant(recorded), kind, reason, statements,
            Instant(earliest, bool(flags & 1)), Instant(latest, bool(flags & 2)),
            None if horizon is None else Instant(horizon, bool(flags & 4)),
        )
