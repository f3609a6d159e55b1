"""Property tests for DESIGN.md invariants 1–3 against an independent day-by-day oracle.

Writes are random record/retract statements from two sources over a small calendar; the oracle
replays, for every knowledge date k, the statements known by k onto a plain {day: value} map per
source. vigente's evidence must agree with it on every (t, k), and no answer at k0 may change
when statements learned after k0 are added.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from vigente import Vigente, parse_instant
from vigente.kernel.admission import status_of
from vigente.records.values import canonical_json

EPOCH = dt.date(2026, 1, 1)
DAYS = 40  # the calendar of valid dates used by the statements
HORIZON = 50  # questions go a bit past it, to exercise open ends
NOW = EPOCH + dt.timedelta(days=200)
L = "prop/limit"


def day(n: int) -> str:
    return (EPOCH + dt.timedelta(days=n)).isoformat()


@dataclass(frozen=True)
class Stmt:
    op: str
    source: str
    value: int | None
    valid_from: int
    valid_to: int | None
    known_at: int


@st.composite
def statements(draw: st.DrawFn) -> list[Stmt]:
    count = draw(st.integers(min_value=1, max_value=12))
    known = 0
    result = []
    for _ in range(count):
        known += draw(st.integers(min_value=0, max_value=3))  # knowledge never goes back
        start = draw(st.integers(min_value=0, max_value=DAYS - 1))
        end = draw(st.one_of(st.none(), st.integers(min_value=start + 1, max_value=DAYS)))
        op = draw(st.sampled_from(["record", "record", "record", "retract"]))
        value = draw(st.integers(min_value=0, max_value=3)) if op == "record" else None
        source = draw(st.sampled_from(["a", "b"]))
        result.append(Stmt(op, source, value, start, end, known))
    return result


def apply(vg: Vigente, s: Stmt) -> None:
    common: dict[str, Any] = dict(
        valid_from=day(s.valid_from),
        valid_to=None if s.valid_to is None else day(s.valid_to),
        known_at=day(s.known_at),
        source=s.source,
        now=NOW,
    )
    if s.op == "record":
        vg.record(L, s.value, **common)
    else:
        vg.retract(L, **common)


def oracle(stmts: list[Stmt], t: int, k: int) -> set[int]:
    """Distinct values the sources stated for day t, replaying what was known by day k."""
    per_source: dict[str, dict[int, int]] = {"a": {}, "b": {}}
    for s in stmts:
        if s.known_at > k:
            continue
        days = per_source[s.source]
        for d in range(s.valid_from, HORIZON if s.valid_to is None else s.valid_to):
            if s.op == "record":
                assert s.value is not None
                days[d] = s.value
            else:
                days.pop(d, None)
    return {days[t] for days in per_source.values() if t in days}


def answer(vg: Vigente, t: int, k: int) -> dict[str, Any]:
    e = vg.evidence(L, valid_at=day(t), known_at=day(k), now=NOW)
    return {
        "status": e.status.value,
        "values": e.values,
        "interpretation": e.interpretation.value,
        "statement": e.statement,
        "admitted": [
            (v.version_id, v.value_json, str(v.valid), str(v.known_from)) for v in e.admitted
        ],
    }


@settings(max_examples=60, deadline=None)
@given(statements())
def test_evidence_matches_the_day_by_day_oracle(stmts: list[Stmt]) -> None:
    with Vigente.open(":memory:") as vg:
        for s in stmts:
            apply(vg, s)
        last_k = stmts[-1].known_at
        for k in sorted({0, last_k, last_k + 1, *(s.known_at for s in stmts)}):
            for t in range(0, HORIZON - 5, 3):
                e = vg.evidence(L, valid_at=day(t), known_at=day(k), now=NOW)
                expected = oracle(stmts, t, k)
                assert {v for v in e.values} == expected, (t, k)
                # invariant 3: the status is a function of the distinct admissible values
                distinct = {v.value_json for v in e.admitted}
                assert e.status is status_of(len(distinct))
                assert sorted(canonical_json(v) for v in e.values) == sorted(distinct)


@settings(max_examples=60, deadline=None)
@given(statements())
def test_answers_about_the_past_never_change(stmts: list[Stmt]) -> None:
    """Invariant 2: an answer at k0 is identical before and after writes known after k0."""
    with Vigente.open(":memory:") as vg:
        frozen: dict[tuple[int, int], dict[str, Any]] = {}
        for s in stmts:
            for k0 in range(0, s.known_at):
                for t in range(0, HORIZON - 5, 4):
                    frozen.setdefault((t, k0), answer(vg, t, k0))
            apply(vg, s)
        for (t, k0), before in frozen.items():
            assert answer(vg, t, k0) == before, (t, k0)


@settings(max_examples=60, deadline=None)
@given(statements())
def test_a_timeline_never_overlaps_itself_at_any_knowledge_date(stmts: list[Stmt]) -> None:
    """Invariant 1: intervals are half-open; within one source's timeline, the snapshots known
    at any k never overlap, so a version ending at D and one starting at D never both apply."""
    with Vigente.open(":memory:") as vg:
        for s in stmts:
            apply(vg, s)
        rows = vg.history(L)
        for k in {s.known_at for s in stmts}:
            for source in ("a", "b"):
                known = sorted(
                    (r for r in rows if r.source == source and r.known_at(parse_instant(day(k)))),
                    key=lambda r: r.valid_from,
                )
                for left, right in zip(known, known[1:], strict=False):
                    assert left.valid_to is not None and left.valid_to <= right.valid_from
        # every stored row is a real interval and was closed only at a later-or-equal date
        for r in rows:
            assert r.valid_to is None or r.valid_from < r.valid_to
            assert r.known_to is None or r.known_from <= r.known_to
