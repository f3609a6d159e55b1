"""What the kernel's ledger keeps besides versions and decisions: the backfills written behind
the answered horizon (:mod:`vigente.kernel.horizon`) and the stored instants that cannot be read
back (:mod:`vigente.kernel.integrity`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from vigente.time import Instant

__all__ = ["Backfill", "UnreadableInstant", "describe_micros"]


@dataclass(frozen=True, slots=True)
class Backfill:
    """A recorded write behind the answered horizon: what was written, when and why.

    ``earliest``/``latest`` are the knowledge times the backfill wrote; ``horizon`` the answered
    horizon it was allowed to pass (None when the store had answered nothing yet)."""

    backfill_id: str
    recorded_at: Instant
    kind: str
    reason: str
    statements: int
    earliest: Instant
    latest: Instant
    horizon: Instant | None

    def as_dict(self) -> dict[str, Any]:
        return {
            "backfill_id": self.backfill_id,
            "recorded_at": self.recorded_at.isoformat(),
            "kind": self.kind,
            "reason": self.reason,
            "statements": self.statements,
            "earliest": self.earliest.isoformat(),
            "latest": self.latest.isoformat(),
            "horizon": None if self.horizon is None else self.horizon.isoformat(),
            "behind_horizon": self.horizon is not None and self.earliest <= self.horizon,
        }


_MICROS_PER_YEAR = 365.2425 * 86_400 * 1_000_000


@dataclass(frozen=True, slots=True)
class UnreadableInstant:
    """One stored value outside the years 1–9999: where it is, what it holds, and (after a
    repair) what it became."""

    table: str
    row: str  # the row's key in its table
    column: str
    stored: str  # as the backend holds it
    repaired_to: str | None = None
    #: "unreadable" (outside the years 1-9999) or "future" (a knowledge time after the store's
    #: clock, written by a caller whose clock ran ahead before such clocks were refused)
    problem: str = "unreadable"

    def as_dict(self) -> dict[str, Any]:
        return {"table": self.table, "row": self.row, "column": self.column,
                "stored": self.stored, "repaired_to": self.repaired_to, "problem": self.problem}

    def __str__(self) -> str:
        where = f"{self.table} {self.row!r} {self.column}: {self.stored}"
        return where if self.repaired_to is None else f"{where} -> {self.repaired_to}"


def describe_micros(micros: int) -> str:
    """A stored microsecond count outside the printable range, in words a reader can place."""
    year = 1970 + micros / _MICROS_PER_YEAR
    return f"{micros} µs since 1970 (about the year {int(year)})"
