"""The ``Store.candidates_and_held`` contract on every backend: a backend's own reading (one
statement on SQLite, one round trip on PostgreSQL) returns exactly what the contract's default
does with two calls of ``candidates``, on a history with corrections on both axes, two sources,
two scopes and a retraction."""

from __future__ import annotations

import itertools

from vigente import Vigente
from vigente.records.values import Scope
from vigente.store.base import Store

NOW = "2026-09-29"
DATES = [
    "2023-12-01",
    "2024-01-01",
    "2024-02-15",
    "2024-03-01",
    "2024-04-10",
    "2024-06-01",
    "2024-07-01",
    "2024-09-01",
    "2025-01-01",
    NOW,
]


def history(vg: Vigente) -> None:
    common = {"now": NOW}
    vg.record("rate", 10, valid_from="2024-01-01", known_at="2024-01-01", source="a", **common)
    vg.record("rate", 12, valid_from="2024-06-01", known_at="2024-03-01", source="a", **common)
    # a past sub-period corrected (a valid-time split), then a change learned to start earlier
    vg.record(
        "rate",
        11,
        valid_from="2024-02-15",
        valid_to="2024-04-10",
        known_at="2024-07-01",
        source="a",
        **common,
    )
    vg.record("rate", 12, valid_from="2024-04-10", known_at="2024-09-01", source="a", **common)
    # a second source that disagrees for a while, then withdraws part of it
    vg.record("rate", 13, valid_from="2024-03-01", known_at="2024-03-01", source="b", **common)
    vg.retract(
        "rate",
        valid_from="2024-06-01",
        valid_to="2024-07-01",
        known_at="2025-01-01",
        source="b",
        **common,
    )
    # another scope of the same lineage
    vg.record(
        "rate",
        9,
        valid_from="2024-01-01",
        known_at="2024-01-01",
        source="a",
        scope={"country": "it"},
        **common,
    )


def test_candidates_and_held_read_at_once_what_two_reads_give(vg: Vigente) -> None:
    history(vg)
    store = vg.store
    seen_held = seen_candidates = 0
    for scope in (Scope(), Scope.of({"country": "it"})):
        for t, k, e in itertools.product(DATES, DATES, DATES):
            args = ("rate", scope, vg.instant(t), vg.instant(k), vg.instant(e))
            got = store.candidates_and_held(*args)
            expected = Store.candidates_and_held(store, *args)
            assert got == expected, (scope, t, k, e)
            assert got[0] == store.candidates(*args[:4])
            seen_candidates += len(got[0])
            seen_held += len(got[1])
    assert seen_candidates > 0 and seen_held > 0  # the grid asks questions that find rows


def test_an_unknown_lineage_has_no_candidates_and_held_nothing(vg: Vigente) -> None:
    history(vg)
    at = vg.instant("2024-06-01")
    assert vg.store.candidates_and_held("nothing", Scope(), at, at, at) == ([], [])
