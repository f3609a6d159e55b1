"""The knowledge axis: the rules that keep every answer once given unchanged, without a write
per question.

An answer to ``(t, k)`` reads the rows known at ``k``. Only a write dated ``k`` or earlier on the
knowledge axis can change it. Three rules keep such writes from happening silently:

- **A write learned now is dated by the store's clock**, inside its transaction, so it comes
  after every answer already given as known now. Such a write first *reserves* its place
  (:func:`learning_now`: a row committed before it is dated, released with the write), and an
  answer as known now is given as known just before the earliest write in flight
  (:func:`known_now`). So an ask as known now takes no lock and writes no row, yet a write that
  a concurrent question could not see is always dated after that question's ``k``.
- **An answer at an explicit past knowledge time fixes the answered horizon** there before it
  reads (:func:`fix_answer`), and a write dated at or before the horizon is refused
  (:func:`check_after`): an audit "as known on 1 March" stays what it was.
- **A back-dated write is a backfill.** A write whose knowledge time the caller gave and which
  lies before the store's clock (beyond the clock skew) may change answers given as known now
  since then; it is recorded as a :class:`Backfill` of kind ``back-dated``
  (:func:`record_back_dated`), so an audit lists it. A deliberate backfill behind the horizon
  (the corpus importer, ``import --backfill REASON``) says why.

No caller's clock runs ahead of the store's (:func:`vigente.time.check_not_ahead`), so the
horizon never passes the store's clock by more than the allowed skew.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from vigente.errors import AnsweredHistoryError, StoreError
from vigente.records.ledger import Backfill
from vigente.time import CLOCK_SKEW_SECONDS, Instant, current_instant

if TYPE_CHECKING:
    from vigente.store.base import Store

__all__ = [
    "BACK_DATED_REASON",
    "WRITE_LEASE_SECONDS",
    "check_after",
    "check_after_horizon",
    "fix_answer",
    "is_back_dated",
    "known_now",
    "learned_now",
    "learning_now",
    "record_back_dated",
    "record_backfill",
]

#: How long a reservation of a write learned now holds: a reservation older than this is a
#: writer that died before releasing it, and no longer holds answers back. A write holding its
#: transaction longer than :data:`WRITE_HOLD_SECONDS` is rolled back instead of committed late.
WRITE_LEASE_SECONDS = 120
WRITE_HOLD_SECONDS = 90
_MICROS = 1_000_000

BACK_DATED_REASON = (
    "written with a knowledge time before the store's clock: answers given as known now "
    "between that time and this write may differ when asked again"
)


def record_backfill(
    store: Store, kind: str, reason: str, statements: int, earliest: Instant, latest: Instant
) -> Backfill:
    """Inside the backfill's own transaction: record it, with the horizon it may pass."""
    backfill = Backfill(uuid.uuid4().hex[:16], current_instant(), kind, reason, statements,
                        earliest, latest, store.answered_horizon())  # fmt: skip
    store.append_backfill(backfill)
    return backfill


def check_after(horizon: Instant | None, earliest: Instant, what: str) -> None:
    """Refuse ``what`` (dated ``earliest`` at the soonest) when the store has already answered
    as known at that time or later (``horizon``, read inside the write's transaction)."""
    if horizon is not None and earliest <= horizon:
        raise AnsweredHistoryError(
            f"{what} is dated {earliest} on the knowledge axis, but this store has already "
            f"answered questions as known on {horizon}, and the write would change those "
            f"answers. The earliest knowledge time it may take is just after {horizon}: record "
            "what was learned late as a correction known from the moment you learned it (omit "
            "--known-at / known_at: learned now); the earlier answer stays as it was. A "
            "deliberate backfill of history says why, and is recorded for audits: "
            "`vigente import FILE --backfill REASON`, `vigente precedence … --backfill REASON`",
            horizon,
        )


def check_after_horizon(store: Store, earliest: Instant, what: str) -> None:
    """:func:`check_after` against the store's horizon (inside a write transaction)."""
    check_after(store.answered_horizon(), earliest, what)


def learned_now(horizon: Instant | None) -> Instant:
    """The knowledge time of a write learned now, inside its transaction: this moment, and
    after every answer given (none can be fixed until the transaction ends)."""
    at = current_instant()
    return at if horizon is None or horizon < at else Instant(horizon.micros + 1)


def is_back_dated(known_at: Instant, clock: Instant) -> bool:
    """A knowledge time before the store's clock by more than the clock skew."""
    return clock.micros - known_at.micros > CLOCK_SKEW_SECONDS * _MICROS


def record_back_dated(store: Store, kind: str, known: list[Instant], clock: Instant) -> None:
    """Inside a write's transaction: record the back-dated knowledge times among ``known`` (the
    caller's own, not the store's stamps) as one backfill of kind ``back-dated``."""
    back = [k for k in known if is_back_dated(k, clock)]
    if back:
        record_backfill(store, "back-dated", f"{kind}: {BACK_DATED_REASON}", len(back),
                        min(back), max(back))


@contextmanager
def learning_now(store: Store) -> Iterator[None]:
    """A write transaction that may date statements learned now: reserved first (committed, so
    every question reading from now on sees it in flight), released with the write. Inside a
    transaction already begun, it joins it (the outer one reserved, or dates nothing now)."""
    if store.in_transaction():
        with store.transaction():
            yield
        return
    reservation = uuid.uuid4().hex
    reserved_at = current_instant()
    store.reserve_write(reservation, reserved_at)
    committed = False
    try:
        with store.transaction():
            yield
            held = current_instant().micros - reserved_at.micros
            if held > WRITE_HOLD_SECONDS * _MICROS:
                raise StoreError(
                    f"this write held its transaction for {held // _MICROS} s, longer than the "
                    f"{WRITE_HOLD_SECONDS} s a write learned now may (questions as known now "
                    "would stop waiting for it): nothing was written. Split it into smaller "
                    "imports, or give the statements their knowledge time (known_at)"
                )
            store.release_write(reservation)
        committed = True
    finally:
        if not committed:
            store.release_write(reservation)


def known_now(store: Store, clock: Instant) -> Instant:
    """The knowledge time of an answer as known now, read without a lock: the store's clock, or
    just before the earliest write learned now still in flight (which will be dated after it).
    Reservations older than the lease are writers that died, and are passed over."""
    earliest = store.writes_in_flight_since(Instant(clock.micros - WRITE_LEASE_SECONDS * _MICROS))
    if earliest is None or earliest.micros > clock.micros:
        return clock
    return Instant(earliest.micros - 1)


def fix_answer(store: Store, known_at: Instant, now: Instant, *, pinned: bool) -> None:
    """Fix the horizon at ``known_at`` before an answer as known then is read (see the module
    docstring). ``pinned``: ``now`` is a caller's fixed clock, not this moment."""
    if pinned and not known_at < now:
        return  # the present of a pinned clock has not passed: the answer is not final yet
    store.fix_answered_horizon(known_at)
