"""The PostgreSQL lookup path: pooled connections taken without the checkout test.

A lookup outside a transaction skips the pool's test of a connection (one round trip) and, if
the connection turns out dead, reads again on a tested one. These tests kill every pooled
connection behind the store's back and check that lookups of both kinds (a plain audit, and a
question asked as known now about an earlier date, which also reads what was held then) still
answer, with the answers they gave before; and that a lookup inside a write transaction (pipeline
mode) reads what one outside reads.
"""

from __future__ import annotations

import psycopg

from tests.postgres_server import kill_connections
from vigente import Vigente
from vigente.records.values import Scope
from vigente.store.postgres import PostgresStore
from vigente.time import parse_instant

NOW = "2026-09-29"


def _history(vg: Vigente) -> None:
    vg.record("l", 1, valid_from="2026-01-01", known_at="2026-01-01", source="s", now=NOW)
    vg.record("l", 2, valid_from="2026-03-01", known_at="2026-02-01", source="s", now=NOW)
    # learned late: from 2026-02-01 it was 3, known only on 2026-06-01
    vg.record("l", 3, valid_from="2026-02-01", known_at="2026-06-01", source="s", now=NOW)
    eu = {"region": "eu"}
    vg.record("l", 9, valid_from="2026-01-01", known_at="2026-01-01", source="s", scope=eu, now=NOW)



def _answers(vg: Vigente) -> list[str]:
    questions = [
        {"valid_at": "2026-02-15", "known_at": "2026-03-01"},  # an audit
        {"valid_at": "2026-02-15"},  # as known now about an earlier date: retrospective
        {"valid_at": "2026-04-01", "known_at": "2026-01-15"},
        {"valid_at": "2025-12-01", "known_at": "2026-05-01"},  # before the first period
    ]
    return [repr(vg.evidence("l", now=NOW, **q)) for q in questions]


def test_lookups_answer_after_every_pooled_connection_was_killed(postgres_url: str) -> None:
    store = PostgresStore(postgres_url, min_size=3, max_size=3)
    with Vigente(store) as vg:
        _history(vg)
        before = _answers(vg)
        assert "retrospective" in before[1]
        for _ in range(3):
            assert kill_connections(postgres_url) >= 1
            assert _answers(vg) == before


def test_a_lookup_in_a_transaction_reads_what_one_outside_reads(postgres_url: str) -> None:
    store = PostgresStore(postgres_url)
    with Vigente(store) as vg:
        _history(vg)
        t, k, now = (parse_instant(x) for x in ("2026-02-15", "2026-03-01", NOW))
        outside = (
            store.candidates("l", Scope(), t, k),
            store.candidates_and_held("l", Scope(), t, now, t),
        )
        with store.transaction():
            inside = [
                (store.candidates("l", Scope(), t, k),
                 store.candidates_and_held("l", Scope(), t, now, t))
                for _ in range(6)  # past psycopg's threshold for preparing a statement
            ]  # fmt: skip
        assert all(answer == outside for answer in inside)
        assert len(outside[0]) >= 2 and outside[1][1]


def test_lookups_do_not_depend_on_the_session_time_zone(postgres_url: str) -> None:
    """Lookups read instants as timestamps at UTC; a session in another zone (a half-hour
    offset, with daylight saving) gets the same answers, to the microsecond."""
    with Vigente.open(postgres_url) as vg:
        _history(vg)
        vg.record("m", 1, valid_from="2026-03-08T06:30:00.000001Z", known_at="2026-03-08",
                  source="s", now=NOW)  # fmt: skip
        utc = _answers(vg) + [repr(vg.evidence("m", valid_at="2026-03-09", now=NOW))]
    zoned = f"{postgres_url}&options=-cTimeZone%3DAmerica/St_Johns"
    with Vigente.open(zoned) as vg:
        with psycopg.connect(zoned) as conn:
            assert conn.execute("SHOW TimeZone").fetchone() == ("America/St_Johns",)
        assert _answers(vg) + [repr(vg.evidence("m", valid_at="2026-03-09", now=NOW))] == utc
