"""The kernel benchmark's data: deterministic lineages written through the bitemporal split,
and the random keyed questions asked of them.

Each lineage is one timeline written by one source: successive values, each learned on its own
knowledge date (some announced before they start, some learned late), plus corrections on both
axes — a value corrected for a past sub-period (a valid-time split) and a change later learned to
have started earlier (a retroactive change of validity). Every correction closes the snapshots it
changes on the knowledge axis and appends corrected ones, as in the seed article.
"""

from __future__ import annotations

import datetime as _dt
import json
import random
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from vigente.time import Instant, parse_instant

__all__ = [
    "NOW",
    "SEED",
    "LineagePlan",
    "Query",
    "Statement",
    "make_queries",
    "plan_lineage",
]

SEED = 20260929
NOW = "2026-09-29"  # "now" for every write and question: the runs do not depend on the clock
SOURCE = "policy"
_FIRST_DAY = _dt.date(2020, 1, 1).toordinal()
# Share of questions asked "as known now" (the current answer); the rest are audits at a past k.
_CURRENT_SHARE = 0.25


def _day(ordinal: int) -> str:
    return _dt.date.fromordinal(ordinal).isoformat()


@dataclass(frozen=True, slots=True)
class Statement:
    """One ``record`` statement, with days as proleptic ordinals."""

    known: int
    valid_from: int
    valid_to: int | None
    value: int

    def line(self, lineage: str) -> str:
        obj: dict[str, Any] = {
            "op": "record",
            "lineage": lineage,
            "value": self.value,
            "source": SOURCE,
            "valid_from": _day(self.valid_from),
            "known_at": _day(self.known),
        }
        if self.valid_to is not None:
            obj["valid_to"] = _day(self.valid_to)
        return json.dumps(obj, separators=(",", ":"))


@dataclass(slots=True)
class LineagePlan:
    """The statements of one lineage and the ranges its lookups are drawn from."""

    lineage: str
    statements: list[Statement] = field(default_factory=list)
    rows: int = 0
    kinds: Counter[str] = field(default_factory=Counter)

    @property
    def valid_range(self) -> tuple[int, int]:
        starts = [s.valid_from for s in self.statements]
        return min(starts), max(starts)

    @property
    def known_range(self) -> tuple[int, int]:
        return self.statements[0].known, self.statements[-1].known


def plan_lineage(index: int, rows: int, seed: int = SEED) -> LineagePlan:
    """Statements whose bitemporal split stores exactly ``rows`` snapshots for one lineage.

    The plan keeps the timeline's current partition (``[valid_from, valid_to)`` and value of the
    open snapshots) to know how many snapshots each statement appends: a successor appends 2
    (the closed predecessor cut at the new start, and the new value), a correction inside a
    period appends 3 (before, corrected, after), moving a start earlier appends 2, and replacing
    one period exactly appends 1. The benchmark checks the total against the store.
    """
    rng = random.Random(f"{seed}:{index}")
    plan = LineagePlan(f"bench/rule-{index:05d}")
    start = _FIRST_DAY + rng.randint(0, 365)
    known = start + rng.randint(-30, 20)
    counter = 100 + rng.randint(0, 50)
    # The current partition: [valid_from, valid_to or None, value], contiguous and sorted.
    parts: list[list[Any]] = [[start, None, counter]]
    plan.statements.append(Statement(known, start, None, counter))
    plan.rows, plan.kinds["first"] = 1, 1
    while plan.rows < rows:
        left = rows - plan.rows
        counter += 1
        roll = rng.random()
        movable = [j for j in range(1, len(parts)) if parts[j][0] - parts[j - 1][0] >= 2]
        if left == 1:
            kind = "replace"
        elif roll < 0.25 and left >= 3:
            kind = "correct"
        elif roll < 0.45 and movable:
            kind = "move"
        else:
            kind = "succeed"
        if kind == "succeed":  # a new value from a later date, open-ended
            last_start = parts[-1][0]
            begin = last_start + rng.randint(10, 60)
            known = max(known + 1, begin + rng.randint(-30, 20))
            parts[-1][1] = begin
            parts.append([begin, None, counter])
            plan.statements.append(Statement(known, begin, None, counter))
            plan.rows += 2
        elif kind == "correct":  # a value corrected for a sub-period (valid-time split)
            j = rng.randrange(len(parts))
            vf, vt, value = parts[j]
            end = vt if vt is not None else vf + 90
            if end - vf < 3:
                j = len(parts) - 1
                vf, vt, value = parts[j]
                end = vf + 90
            a = rng.randint(vf + 1, end - 2)
            b = rng.randint(a + 1, end - 1)
            known += rng.randint(1, 10)
            parts[j : j + 1] = [[vf, a, value], [a, b, counter], [b, vt, value]]
            plan.statements.append(Statement(known, a, b, counter))
            plan.rows += 3
        elif kind == "move":  # a change later learned to have started earlier
            j = rng.choice(movable)
            earlier = rng.randint(parts[j - 1][0] + 1, parts[j][0] - 1)
            vt, value = parts[j][1], parts[j][2]
            known += rng.randint(1, 10)
            parts[j - 1][1] = earlier
            parts[j] = [earlier, vt, value]
            plan.statements.append(Statement(known, earlier, vt, value))
            plan.rows += 2
        else:  # replace one period exactly
            j = rng.randrange(len(parts))
            vf, vt, _ = parts[j]
            known += rng.randint(1, 10)
            parts[j] = [vf, vt, counter]
            plan.statements.append(Statement(known, vf, vt, counter))
            plan.rows += 1
        plan.kinds[kind] += 1
    return plan


@dataclass(frozen=True, slots=True)
class Query:
    """One keyed lookup: lineage, valid date, knowledge date (``None`` = as known now)."""

    lineage: str
    valid_at: str
    known_at: str | None

    def micros(self, now: Instant) -> tuple[int, int]:
        """``t`` and ``k`` as integer microseconds (``k`` is ``now`` when asked as known now)."""
        k = now if self.known_at is None else parse_instant(self.known_at)
        return parse_instant(self.valid_at).micros, k.micros


def make_queries(plans: list[LineagePlan], count: int, seed: int) -> list[Query]:
    """Random ``(lineage, t, k)``: t around the lineage's validity span, k an audit date in its
    knowledge span or (a quarter of the time) "now"."""
    rng = random.Random(f"{seed}:queries")
    queries = []
    for _ in range(count):
        plan = rng.choice(plans)
        first, last = plan.valid_range
        t = rng.randint(first - 30, last + 90)
        known_at = None
        if rng.random() >= _CURRENT_SHARE:
            k_first, k_last = plan.known_range
            known_at = _day(rng.randint(k_first - 10, k_last + 10))
        queries.append(Query(plan.lineage, _day(t), known_at))
    return queries
