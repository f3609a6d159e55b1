"""The knowledge horizon: the rule that keeps every answer once given unchanged.

An answer to ``(t, k)`` reads the rows known at ``k``. A later write dated ``k`` or earlier on the
knowledge axis would change it, so the store remembers the latest knowledge time it has answered
for (its *answered horizon*) and refuses, inside the write's transaction, any write dated at or
before it: a fact, a document version or a precedence rule. What was learned late is recorded
with a knowledge time after the horizon (a correction is a new snapshot, the old answer stays).

A question fixes the horizon before its rows are read, in a transaction of its own, so a write
in flight either commits before the question reads (and is in the answer) or sees the horizon
and is refused: no answer is given that a concurrent write could change. A question is fixed at
``k`` once ``k`` is in the past of the clock that answers it: always on the real clock (a question
as known now is in the past the moment it is answered); with a pinned clock (``now=…``, a replay)
only when ``k`` is before the pinned moment, which that clock never leaves.

A deliberate backfill of history (the corpus importer, a migration) may write behind the horizon:
it says so (``backfill="why"``) and is recorded as a :class:`Backfill` an audit can list.
"""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING

from vigente.errors import AnsweredHistoryError
from vigente.records.ledger import Backfill
from vigente.time import Instant, current_instant

if TYPE_CHECKING:
    from vigente.store.base import Store

__all__ = [
    "check_after",
    "check_after_horizon",
    "fix_answer",
    "learned_now",
    "record_backfill",
]


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
            "deliberate backfill of history is "
            "`vigente import FILE --backfill REASON`, recorded for audits",
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


def fix_answer(store: Store, known_at: Instant, now: Instant, *, pinned: bool) -> None:
    """Fix the horizon at ``known_at`` before an answer as known then is read (see the module
    docstring). ``pinned``: ``now`` is a caller's fixed clock, not this moment."""
    if pinned and not known_at < now:
        return  # the present of a pinned clock has not passed: the answer is not final yet
    store.fix_answered_horizon(known_at)
