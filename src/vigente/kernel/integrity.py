"""Stored instants that cannot be read back, found and repaired (``vigente check``).

Every instant vigente stores lies in the years 1 to 9999 in UTC, the range every surface can
print; the parsers refuse anything else. Stores written before that rule may hold a timestamp
that was inside the range in its own offset and outside it in UTC
(``9999-12-31T23:59:59-14:00``): the row is there, but reading it fails, and every question
that reaches it fails with it. :func:`check_store` lists such values; with ``repair`` it moves
each one to the nearest instant the range holds, which changes no answer inside the range:

- an end beyond the year 9999 becomes an open end (no instant of the range reaches either);
- a start beyond it becomes the last instant of the range; a value before the year 1, the first.

A store may also hold **future knowledge**: knowledge times after the store's clock, written by
a caller whose clock ran ahead (``now=9999-12-31``) before such clocks were refused. Such a row
freezes its lineage (every later write is dated before it) and answers as known now miss it;
a future answered horizon dates every write "learned now" in that future. :func:`check_store`
lists them too; the repair moves every such knowledge time to the moment of the repair (the
``i``-th distinct one, in order, to that moment + ``i`` µs: what was learned "in the future" is
learned now, and the order of the steps is kept).

A repair is recorded as a decision of kind ``store_repair`` naming every value and what it
became, so an audit sees that the row was moved and from where.
"""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING

from vigente.records.decisions import Decision
from vigente.records.ledger import UnreadableInstant
from vigente.time import CLOCK_SKEW_SECONDS, Instant

if TYPE_CHECKING:
    from vigente.store.base import Store

__all__ = ["check_store"]

def check_store(store: Store, *, repair: bool, now: Instant) -> list[UnreadableInstant]:
    """Every unreadable instant in ``store`` and every knowledge time after ``now`` (beyond the
    clock skew); with ``repair``, each moved and the repair recorded as a decision, in one
    transaction."""
    ahead = Instant(now.micros + CLOCK_SKEW_SECONDS * 1_000_000)
    if not repair:
        return store.unreadable_instants() + store.future_knowledge(ahead)
    with store.transaction():
        repaired = store.repair_unreadable_instants()
        repaired += store.repair_future_knowledge(ahead, now)
        if repaired:
            store.append_decision(Decision(
                decision_id=f"dec_{uuid.uuid4().hex[:16]}",
                kind="store_repair",
                subject="unreadable instants and future knowledge",
                recorded_at=now,
                payload={"repaired": [r.as_dict() for r in repaired]},
            ))
    return repaired
